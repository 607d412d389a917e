//===- qfuse-synthetic-model.cpp - Write a small random HF model ----------===//
//
//   qfuse-synthetic-model --config-preset tiny-llama --out DIR --seed 1
//                         [--dtype f16|bf16]
//   qfuse-synthetic-model --config config.json --out DIR --seed 1
//
// Writes DIR/config.json and DIR/model.safetensors (SyntheticModel.h), and
// a byte-level BPE tokenizer for its vocabulary (tokenizer.json,
// tokenizer_config.json with Llama-3's chat template, generation_config.json;
// qfuse/text/SyntheticTokenizer.h), for tests and `make demo`, which need a
// model without downloading one.
//
//===----------------------------------------------------------------------===//

#include "qfuse/reference/SyntheticModel.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/text/SyntheticTokenizer.h"
#include "qfuse/text/TokenizerError.h"

#include <cstdlib>
#include <iostream>
#include <string>

namespace {

const char *kUsage =
    "usage: qfuse-synthetic-model (--config-preset PRESET | --config FILE) "
    "--out DIR [--seed N] [--dtype f16|bf16]\n"
    "  PRESET: tiny-llama | tiny-qwen2\n"
    "  FILE: a Hugging Face config.json (or its directory), for random "
    "weights of any shape the reference reads\n";

[[noreturn]] void usageError(const std::string &what) {
  std::cerr << "qfuse-synthetic-model: " << what << "\n" << kUsage;
  std::exit(2);
}

} // namespace

int main(int argc, char **argv) {
  using namespace qfuse::reference;
  std::string preset, configPath, out, dtype = "f16";
  uint64_t seed = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (i + 1 >= argc)
      usageError(arg + " needs a value");
    std::string value = argv[++i];
    if (arg == "--config-preset") {
      preset = value;
    } else if (arg == "--config") {
      configPath = value;
    } else if (arg == "--out") {
      out = value;
    } else if (arg == "--dtype") {
      dtype = value;
    } else if (arg == "--seed") {
      char *end = nullptr;
      seed = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end || value[0] == '-')
        usageError("--seed '" + value + "' is not a non-negative integer");
    } else {
      usageError("unknown option '" + arg + "'");
    }
  }
  if (preset.empty() == configPath.empty() || out.empty())
    usageError("--out and one of --config-preset and --config are required");
  if (dtype != "f16" && dtype != "bf16")
    usageError("--dtype '" + dtype + "': expected f16 or bf16");

  try {
    ModelConfig config = configPath.empty() ? syntheticPreset(preset)
                                            : ModelConfig::load(configPath);
    SyntheticOptions options;
    options.seed = seed;
    options.dtype = dtype == "bf16" ? StorageType::BF16 : StorageType::F16;
    writeSyntheticModel(config, out, options);
    qfuse::text::writeSyntheticTokenizer(out, config.vocabSize);
    std::cout << "wrote " << out << "/config.json, " << out
              << "/model.safetensors ("
              << (configPath.empty() ? preset : configPath) << ", seed " << seed
              << ", " << dtype << ") and its tokenizer (tokenizer.json, "
              << "tokenizer_config.json, generation_config.json)\n";
  } catch (const std::exception &e) {
    std::cerr << "qfuse-synthetic-model: " << qfuse::errorText(e) << "\n";
    return 1;
  }
  return 0;
}
