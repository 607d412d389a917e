//===- ArtifactParser.h - Reads and checks an artifact's JSON ---*- C++ -*-===//
//
// Private to runtime/src/artifact. The parser that turns an artifact's JSON
// into an Artifact, checking every field as it reads it. Its definitions are
// split by job: ArtifactParser.cpp reads the top level, kernels, weights,
// tensors, buffers and the model; ArtifactSteps.cpp reads the plans and
// checks each step against what it launches or multiplies.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_ARTIFACT_ARTIFACTPARSER_H
#define QFUSE_RUNTIME_ARTIFACT_ARTIFACTPARSER_H

#include "qfuse/runtime/artifact/Artifact.h"

#include "qfuse/runtime/Error.h"

#include <nlohmann/json.hpp>

#include <array>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace qfuse::runtime::detail {

using nlohmann::json;

/// `range`'s items separated by ", ".
template <typename Range> std::string joined(const Range &range) {
  std::string out;
  for (const auto &item : range) {
    if (!out.empty())
      out += ", ";
    out += std::string(item);
  }
  return out;
}

/// The contents of the artifact file `path`; throws naming it when it
/// cannot be read.
std::string readArtifactText(const std::string &path);

/// The matrix a gemm step multiplies by: its [N, K] and how errors name it
/// ("weight 'w' [256, 512]").
struct GemmShape {
  int64_t n = 0, k = 0;
  std::string text;
};

/// Validates one artifact; every error names the source and the JSON path.
/// A variant of an artifact set is parsed with `prefix` "variants[i]", which
/// starts every path its errors name.
class ArtifactParser {
public:
  explicit ArtifactParser(std::string source, std::string prefix = "")
      : prefix_(std::move(prefix)) {
    artifact_.source = std::move(source);
  }

  Artifact run(const json &root);

private:
  [[noreturn]] void fail(const std::string &where,
                         const std::string &what) const {
    throw Error("artifact '" + artifact_.source + "': " + located(where) +
                ": " + what);
  }
  /// `where` under the prefix: "top level.format" -> "variants[1].format".
  std::string located(const std::string &where) const;

  const json &member(const json &object, const std::string &where,
                     const char *key) const;
  const json *optionalMember(const json &object, const char *key) const;
  std::string string(const json &object, const std::string &where,
                     const char *key) const;
  int64_t integer(const json &value, const std::string &where, int64_t lo,
                  int64_t hi) const;
  const json &array(const json &object, const std::string &where,
                    const char *key) const;
  void requireObject(const json &value, const std::string &where) const;
  void rejectUnknownKeys(const json &object, const std::string &where,
                         std::initializer_list<std::string_view> known) const;
  /// Fails at `where` unless the file's version is at least `introduced`.
  void requireVersion(int64_t introduced, const std::string &where,
                      const std::string &feature) const;
  bool optionalFlag(const json &object, const std::string &where,
                    const char *key) const;
  std::string uniqueName(const json &object, const std::string &where,
                         std::set<std::string> &seen, const char *what) const;

  void parseTarget(const json &root);
  void checkPtxFeatures(const std::string &features) const;
  void parseKernels(const json &root);
  void readCode(const json &object, const std::string &where, std::string &ptx,
                std::vector<uint8_t> &cubin);
  void parseWeights(const json &root);
  void parseTensors(const json &root);
  void parseBuffers(const json &root);
  void parseBufferRole(const json &entry, const std::string &where,
                       BufferSpec &buffer) const;
  void parseIo(const json &root, const char *key,
               std::vector<std::string> &out);
  void parsePlans(const json &root);
  Step parseStep(const json &value, const std::string &where);
  void parseLaunchOp(const nlohmann::json &value, const std::string &where,
                     Step &step);
  void checkDequantizeLaunch(const Step &step, const std::string &where) const;
  void checkLaunchShapes(const Step &step, const Kernel &kernel,
                         const std::string &where) const;
  Step parseGemm(const json &value, const std::string &where);
  DType gemmDType(const GemmStep &gemm, const std::string &where) const;
  GemmShape namedWeightShape(const GemmStep &gemm,
                             const std::string &where) const;
  GemmShape weightBufferShape(const GemmStep &gemm,
                              const std::string &where) const;
  const BufferSpec &gemmBuffer(const std::string &name,
                               const std::string &where) const;
  void checkGemmOperands(const GemmStep &gemm, const GemmShape &shape,
                         const std::string &where) const;
  void checkGemmBias(const GemmStep &gemm, const GemmShape &shape,
                     const std::string &where) const;
  void parseModel(const json &root);
  Arg parseArg(const json &value, const KernelParam &param,
               const std::string &where);
  void parseRoofline(const json &root);
  void parseEncoding(WeightSpec &weight, const std::string &where);
  void parseLayout(WeightSpec &weight, const std::string &where);
  std::array<uint32_t, 3> parseDims(const json &step, const std::string &where,
                                    const char *key,
                                    const std::array<int64_t, 3> &limits);

  std::string prefix_;
  Artifact artifact_;
};

} // namespace qfuse::runtime::detail

#endif // QFUSE_RUNTIME_ARTIFACT_ARTIFACTPARSER_H
