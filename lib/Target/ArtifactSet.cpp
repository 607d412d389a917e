//===- ArtifactSet.cpp - one artifact per chip, in one file ---------------===//

#include "ArtifactSet.h"

#include "qfuse/format/ArtifactVersion.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
namespace qf {

std::string renderArtifactSet(ArrayRef<std::string> variants) {
  std::string out = "{\n  \"format\": \"" +
                    std::string(qfuse::format::kArtifactSetFormat) +
                    "\",\n  \"version\": " +
                    std::to_string(qfuse::format::kArtifactSetVersion) +
                    ",\n  \"variants\": [\n";
  for (size_t i = 0; i < variants.size(); ++i) {
    out += StringRef(variants[i]).rtrim('\n').str();
    out += i + 1 < variants.size() ? ",\n" : "\n";
  }
  out += "  ]\n}\n";
  return out;
}

} // namespace qf
} // namespace mlir
