//===- ModelCheckpoint.h - A Hugging Face model directory -------*- C++ -*-===//
//
// The files of a Hugging Face checkpoint, validated before any tensor is
// read:
//
//   DIR/config.json                      the model's config (required)
//   DIR/model.safetensors                one file, or
//   DIR/model.safetensors.index.json     {"weight_map": {tensor: shard}}
//   DIR/model-00001-of-00002.safetensors ... the shards it names
//
// With an index, every shard it names must exist and hold exactly the
// tensors the index assigns to it, and no tensor may appear in two shards
// (a checkpoint that is assembled wrongly fails here, naming the tensor and
// the files, instead of loading the wrong bytes). Lookups that fail name
// the tensor and the files searched.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_CHECKPOINT_MODELCHECKPOINT_H
#define QFUSE_RUNTIME_CHECKPOINT_MODELCHECKPOINT_H

#include "qfuse/runtime/checkpoint/Safetensors.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace qfuse::runtime {

/// How a checkpoint's linear layers are stored (config.json's
/// quantization_config, ../shared/notes/formats.md).
enum class CheckpointQuantization {
  None,              // fp16 / bf16 / f32 `<name>.weight`
  GPTQ,              // AutoGPTQ v1: qweight, qzeros, scales, g_idx
  CompressedTensors, // compressed-tensors "pack-quantized"
};
std::string_view checkpointQuantizationName(CheckpointQuantization q);

/// What the runtime reads from config.json.
struct CheckpointConfig {
  std::string text; // config.json as read
  std::vector<std::string> architectures;
  std::string modelType;
  int64_t vocabSize = 0; // 0 where absent
  int64_t hiddenSize = 0;
  int64_t numLayers = 0;
  int64_t numHeads = 0;
  int64_t numKvHeads = 0;
  /// tie_word_embeddings; absent means transformers' PretrainedConfig
  /// default (tied) unless the architecture's config overrides it.
  std::optional<bool> tieWordEmbeddings;

  CheckpointQuantization quantization = CheckpointQuantization::None;
  std::string quantMethod; // quantization_config.quant_method as written
  int bits = 0;            // code width of quantized linears
  int64_t groupSize = 0;   // <= 0: one group per output channel
  bool descAct = false;    // GPTQ act_order
  bool symmetric = true;
};

class ModelCheckpoint {
public:
  /// Reads config.json and opens (maps) every safetensors file; throws
  /// qfuse::Error naming the directory and the file at fault.
  static ModelCheckpoint open(const std::string &dir);

  const std::string &dir() const { return dir_; }
  const CheckpointConfig &config() const { return config_; }
  /// The safetensors files, in the order they were opened.
  const std::vector<SafetensorsFile> &files() const { return files_; }

  bool contains(std::string_view name) const;
  /// The entry of `name` (nullptr when absent) and, through `file`, the
  /// file that holds it.
  const TensorInfo *find(std::string_view name,
                         const SafetensorsFile **file = nullptr) const;
  /// The bytes of `name`; throws naming the tensor and the files searched.
  TensorView view(std::string_view name) const;
  /// "model.safetensors" or "model.safetensors.index.json (3 shards)", for
  /// errors: where a missing tensor was looked for.
  std::string searched() const;

private:
  ModelCheckpoint() = default;
  void openIndex(const std::string &indexPath);

  std::string dir_;
  std::string searched_;
  CheckpointConfig config_;
  std::vector<SafetensorsFile> files_;
  // Tensor name -> index into files_.
  std::unordered_map<std::string, size_t> where_;
};

/// Parses config.json text; `source` names it in errors.
CheckpointConfig parseCheckpointConfig(const std::string &text,
                                       const std::string &source);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_CHECKPOINT_MODELCHECKPOINT_H
