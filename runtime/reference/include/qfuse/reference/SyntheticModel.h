//===- SyntheticModel.h - Small random HF models ----------------*- C++ -*-===//
//
// A model directory as Hugging Face writes it -- config.json and
// model.safetensors with Hugging Face's tensor names -- filled with
// deterministic random weights scaled like a real initialization, so the
// whole pipeline (frontend, compiler, runtime, reference) can run end to end
// without downloading a checkpoint:
//
//   linear weights   N(0, 1 / in_features)  (std 1/sqrt(in): outputs O(1))
//   norm weights     1 + N(0, 0.1^2)
//   embeddings       N(0, 1)
//   biases           N(0, 0.1^2)
//
// The normal draws are Box-Muller over std::mt19937_64, not
// std::normal_distribution (whose algorithm each standard library picks), so
// a seed gives the same weights with any library; the rounding to f16/bf16
// absorbs libm's last-bit differences in log/sin/cos.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_REFERENCE_SYNTHETICMODEL_H
#define QFUSE_REFERENCE_SYNTHETICMODEL_H

#include "qfuse/reference/ModelConfig.h"
#include "qfuse/reference/ModelWeights.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qfuse::reference {

enum class StorageType { F16, BF16 };

struct SyntheticOptions {
  uint64_t seed = 0;
  StorageType dtype = StorageType::F16;
};

/// The presets of `qfuse-synthetic-model --config-preset`:
///   tiny-llama   Llama, hidden 256, 4 heads / 2 kv heads of 64, 2 layers,
///                intermediate 512, vocab 1024, Llama 3 rope (theta 5e5,
///                llama3 scaling), untied
///   tiny-qwen2   Qwen2, the same shapes, q/k/v biases, theta 1e6, tied
///                embeddings
/// Every projection's in_features is a multiple of 128, so every named
/// encoding (int4-g128, nf4, nvfp4, ...) fits.
ModelConfig syntheticPreset(std::string_view name);
/// The preset names, for help texts.
std::vector<std::string> syntheticPresetNames();

/// Random weights for `config` (already rounded to `options.dtype`, so they
/// are exactly what the file holds). lm_head is absent from the file when
/// the config ties embeddings; the returned lmHead is then the embedding.
ModelWeights syntheticWeights(const ModelConfig &config,
                              const SyntheticOptions &options);

/// Writes config.json and model.safetensors for `config` into `dir`
/// (created if needed) and returns the weights written. Throws qfuse::Error
/// naming the path on I/O failure.
ModelWeights writeSyntheticModel(const ModelConfig &config,
                                 const std::string &dir,
                                 const SyntheticOptions &options);

} // namespace qfuse::reference

#endif // QFUSE_REFERENCE_SYNTHETICMODEL_H
