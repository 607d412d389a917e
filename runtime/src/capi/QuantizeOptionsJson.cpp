//===- QuantizeOptionsJson.cpp - qfuse_quantize's options ----------------===//

#include "QuantizeOptionsJson.h"

#include "qfuse/runtime/Error.h"

#include <nlohmann/json.hpp>

#include <string>

namespace qfuse::capi {

using runtime::QuantizeModelOptions;

QuantizeModelOptions quantizeOptionsFromJson(const char *optionsJson) {
  nlohmann::json o;
  try {
    o = nlohmann::json::parse(optionsJson);
  } catch (const nlohmann::json::exception &e) {
    throw qfuse::Error(std::string("options_json is not JSON: ") + e.what());
  }
  if (!o.is_object())
    throw qfuse::Error("options_json must be a JSON object");
  QuantizeModelOptions options;
  // Every key must be known: a misspelt option is an error, not a default.
  for (const auto &item : o.items()) {
    // Named copies: C++17 lambdas cannot capture structured bindings.
    const std::string &key = item.key();
    const nlohmann::json &value = item.value();
    auto str = [&]() {
      if (!value.is_string())
        throw qfuse::Error("option '" + key + "' must be a string");
      return value.get<std::string>();
    };
    auto num = [&]() {
      if (!value.is_number())
        throw qfuse::Error("option '" + key + "' must be a number");
      return value;
    };
    auto integer = [&](bool nonNegative) {
      if (!value.is_number_integer() ||
          (nonNegative && !value.is_number_unsigned()))
        throw qfuse::Error("option '" + key + "' must be " +
                           (nonNegative ? "a non-negative integer"
                                        : "an integer"));
      return value;
    };
    auto flag = [&]() {
      if (!value.is_boolean())
        throw qfuse::Error("option '" + key + "' must be true or false");
      return value.get<bool>();
    };
    if (key == "model")
      options.modelDir = str();
    else if (key == "encoding")
      options.encoding = str();
    else if (key == "calibration")
      options.calibration = str();
    else if (key == "out")
      options.outDir = str();
    else if (key == "format")
      options.format = str();
    else if (key == "seq_len")
      options.seqLen = integer(false).get<int64_t>();
    else if (key == "fp16_artifact")
      options.fp16Artifact = str();
    else if (key == "gptq_artifact")
      options.gptqArtifact = str();
    else if (key == "decode_artifact")
      options.decodeArtifact = str();
    else if (key == "damp")
      options.damp = num().get<double>();
    else if (key == "act_order")
      options.actOrder = flag();
    else if (key == "static_groups")
      options.staticGroups = flag();
    else if (key == "overwrite")
      options.overwrite = flag();
    else if (key == "resume")
      options.resume = flag();
    else if (key == "save_progress")
      options.saveProgress = flag();
    else if (key == "seed")
      options.seed = integer(true).get<uint64_t>();
    else if (key == "device")
      options.device = integer(true).get<int>();
    else
      throw qfuse::Error("unknown option '" + key +
                         "' (model, encoding, calibration, out, format, "
                         "seq_len, fp16_artifact, gptq_artifact, "
                         "decode_artifact, damp, act_order, static_groups, "
                         "overwrite, resume, save_progress, seed, device)");
  }
  return options;
}

} // namespace qfuse::capi
