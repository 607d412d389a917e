//===- FuzzConfig.cpp - libFuzzer: the C++ config.json readers -------------===//
//
// The input is one config.json. Both C++ readers must accept it or throw
// qfuse::Error: the reference's ModelConfig::parse (the rules of
// testdata/model-configs, shared with the Python frontend) and the
// checkpoint's parseCheckpointConfig. An accepted ModelConfig must write
// itself back (toJson) as text that parses equal, and its derived sizes
// must stay within ConfigLimits (no product wraps).
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "qfuse/reference/ModelConfig.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"

using namespace qfuse::reference;
using qfuse::fuzz::propertyFailed;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  try {
    qfuse::runtime::parseCheckpointConfig(text, "config.json");
  } catch (const qfuse::Error &) {
  }
  try {
    ModelConfig config = ModelConfig::parse(text, "config.json");
    if (config.qWidth() < 1 || config.qWidth() > ConfigLimits::kQWidth)
      propertyFailed("accepted q width " + std::to_string(config.qWidth()));
    for (Projection p :
         {Projection::Q, Projection::K, Projection::V, Projection::O,
          Projection::Gate, Projection::Up, Projection::Down,
          Projection::LmHead}) {
      const int64_t n = config.outFeatures(p), k = config.inFeatures(p);
      if (n < 1 || k < 1 || n > ConfigLimits::kWeightElements / k)
        propertyFailed(std::string("accepted ") + projectionName(p) + " [" +
                       std::to_string(n) + ", " + std::to_string(k) + "]");
      config.hasBias(p);
    }
    std::string written = config.toJson();
    ModelConfig back = ModelConfig::parse(written, "toJson");
    if (back.toJson() != written)
      propertyFailed("toJson does not read back equal:\n" + written + "\n" +
                     back.toJson());
  } catch (const qfuse::Error &) {
  }
  return 0;
}
