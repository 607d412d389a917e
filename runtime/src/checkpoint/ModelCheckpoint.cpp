//===- ModelCheckpoint.cpp - A Hugging Face model directory ---------------===//

#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"

#include "qfuse/runtime/Error.h"

#include "StrictJson.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <sys/stat.h>

namespace qfuse::runtime {
namespace {

using nlohmann::json;

bool isRegularFile(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

std::string readText(const std::string &path, const std::string &what) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream)
    throw Error(what + " '" + path + "': cannot open: " + qfuse::systemErrorText(errno));
  std::ostringstream contents;
  contents << stream.rdbuf();
  if (stream.bad())
    throw Error(what + " '" + path + "': read failed");
  return contents.str();
}

/// config.json's integer `key`, 0 when absent; throws when not an integer
/// (or one past int64, which would wrap).
int64_t optionalInt(const json &object, const char *key,
                    const std::string &where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null())
    return 0;
  if (!it->is_number_integer() ||
      (it->is_number_unsigned() &&
       it->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
    throw Error(where + ": '" + key + "' must be an integer, found " +
                it->dump());
  return it->get<int64_t>();
}

/// config.json's string `key`, `fallback` when absent or null; throws when
/// not a string.
std::string optionalString(const json &object, const char *key,
                           const char *fallback, const std::string &where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null())
    return fallback;
  if (!it->is_string())
    throw Error(where + ": '" + key + "' must be a string, found " +
                it->dump());
  return it->get<std::string>();
}

bool optionalBool(const json &object, const char *key, bool fallback,
                  const std::string &where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null())
    return fallback;
  if (!it->is_boolean())
    throw Error(where + ": '" + key + "' must be true or false, found " +
                it->dump());
  return it->get<bool>();
}

/// AutoGPTQ: {"quant_method": "gptq", "bits": 4, "group_size": 128,
/// "desc_act": false, "sym": true}.
void parseGPTQ(const json &q, CheckpointConfig &config,
               const std::string &where) {
  config.quantization = CheckpointQuantization::GPTQ;
  config.bits = static_cast<int>(optionalInt(q, "bits", where));
  config.groupSize = optionalInt(q, "group_size", where);
  config.descAct = optionalBool(q, "desc_act", false, where);
  config.symmetric = optionalBool(q, "sym", true, where);
  auto format = q.find("checkpoint_format");
  if (format != q.end() && format->is_string() && *format != "gptq")
    throw Error(where + ": checkpoint_format \"" + format->get<std::string>() +
                "\" is not supported (only AutoGPTQ's \"gptq\", which "
                "stores zero points minus one)");
  if (config.bits != 4 && config.bits != 8)
    throw Error(where + ": GPTQ bits = " + std::to_string(config.bits) +
                " (supported: 4, 8)");
}

/// compressed-tensors: {"quant_method": "compressed-tensors", "format":
/// "pack-quantized", "config_groups": {"group_0": {"weights": {"num_bits":
/// 4, "group_size": 128, "strategy": "group", "symmetric": true}}}}.
void parseCompressedTensors(const json &q, CheckpointConfig &config,
                            const std::string &where) {
  config.quantization = CheckpointQuantization::CompressedTensors;
  auto format = q.find("format");
  if (format == q.end() || !format->is_string() ||
      *format != "pack-quantized")
    throw Error(where + ": compressed-tensors format " +
                (format == q.end() ? std::string("(absent)")
                                   : format->dump()) +
                " is not supported (only \"pack-quantized\")");
  auto groups = q.find("config_groups");
  if (groups == q.end() || !groups->is_object() || groups->empty())
    throw Error(where + ": compressed-tensors without config_groups");
  bool first = true;
  for (const auto &[name, group] : groups->items()) {
    const std::string gwhere = where + ".config_groups." + name;
    auto weights = group.find("weights");
    if (weights == group.end() || !weights->is_object())
      throw Error(gwhere + ": no 'weights' scheme");
    const int bits = static_cast<int>(optionalInt(*weights, "num_bits", gwhere));
    const std::string strategy = optionalString(*weights, "strategy", "group", gwhere);
    const int64_t groupSize =
        strategy == "channel" ? 0 : optionalInt(*weights, "group_size", gwhere);
    if (strategy != "channel" && strategy != "group")
      throw Error(gwhere + ": weight strategy \"" + strategy +
                  "\" is not supported (group, channel)");
    const bool symmetric = optionalBool(*weights, "symmetric", true, gwhere);
    if (!first && (bits != config.bits || groupSize != config.groupSize ||
                   symmetric != config.symmetric))
      throw Error(gwhere + ": differs from the first config group; one "
                           "scheme for every linear layer is supported");
    config.bits = bits;
    config.groupSize = groupSize;
    config.symmetric = symmetric;
    auto actorder = weights->find("actorder");
    config.descAct = actorder != weights->end() && actorder->is_string() &&
                     *actorder == "group";
    first = false;
  }
  if (config.bits != 4 && config.bits != 8)
    throw Error(where + ": num_bits = " + std::to_string(config.bits) +
                " (supported: 4, 8)");
}

} // namespace

std::string_view checkpointQuantizationName(CheckpointQuantization q) {
  switch (q) {
  case CheckpointQuantization::None:
    return "unquantized";
  case CheckpointQuantization::GPTQ:
    return "AutoGPTQ";
  case CheckpointQuantization::CompressedTensors:
    return "compressed-tensors pack-quantized";
  }
  return "?";
}

CheckpointConfig parseCheckpointConfig(const std::string &text,
                                       const std::string &source) {
  json root = detail::parseStrictJson(text, "'" + source + "'");
  const std::string where = "'" + source + "'";
  if (!root.is_object())
    throw Error(where + ": expected a JSON object");
  CheckpointConfig config;
  config.text = text;
  if (auto it = root.find("architectures");
      it != root.end() && it->is_array())
    for (const json &name : *it)
      if (name.is_string())
        config.architectures.push_back(name.get<std::string>());
  config.modelType = optionalString(root, "model_type", "", where);
  config.vocabSize = optionalInt(root, "vocab_size", where);
  config.hiddenSize = optionalInt(root, "hidden_size", where);
  config.numLayers = optionalInt(root, "num_hidden_layers", where);
  config.numHeads = optionalInt(root, "num_attention_heads", where);
  config.numKvHeads = optionalInt(root, "num_key_value_heads", where);
  if (auto it = root.find("tie_word_embeddings");
      it != root.end() && !it->is_null()) {
    if (!it->is_boolean())
      throw Error(where + ": 'tie_word_embeddings' must be true or false");
    config.tieWordEmbeddings = it->get<bool>();
  }

  auto q = root.find("quantization_config");
  if (q == root.end() || q->is_null())
    return config;
  const std::string qwhere = where + ": quantization_config";
  if (!q->is_object())
    throw Error(qwhere + ": expected an object");
  config.quantMethod = optionalString(*q, "quant_method", "", qwhere);
  if (config.quantMethod == "gptq")
    parseGPTQ(*q, config, qwhere);
  else if (config.quantMethod == "compressed-tensors")
    parseCompressedTensors(*q, config, qwhere);
  else
    throw Error(qwhere + ": quant_method \"" + config.quantMethod +
                "\" is not supported (gptq, compressed-tensors "
                "pack-quantized; or an fp16/bf16 checkpoint, quantized at "
                "load)");
  return config;
}

ModelCheckpoint ModelCheckpoint::open(const std::string &dir) {
  ModelCheckpoint checkpoint;
  checkpoint.dir_ = dir;
  const std::string configPath = dir + "/config.json";
  if (!isRegularFile(configPath))
    throw Error("checkpoint '" + dir + "': no config.json");
  checkpoint.config_ =
      parseCheckpointConfig(readText(configPath, "config"), configPath);

  const std::string indexPath = dir + "/model.safetensors.index.json";
  const std::string singlePath = dir + "/model.safetensors";
  if (isRegularFile(indexPath)) {
    checkpoint.openIndex(indexPath);
    return checkpoint;
  }
  if (!isRegularFile(singlePath))
    throw Error("checkpoint '" + dir +
                "': neither model.safetensors nor "
                "model.safetensors.index.json");
  checkpoint.files_.push_back(SafetensorsFile::open(singlePath));
  for (const TensorInfo &info : checkpoint.files_[0].tensors())
    checkpoint.where_.emplace(info.name, 0);
  checkpoint.searched_ = singlePath;
  return checkpoint;
}

void ModelCheckpoint::openIndex(const std::string &indexPath) {
  const std::string where = "index '" + indexPath + "'";
  json index = detail::parseStrictJson(readText(indexPath, "index"), where);
  if (!index.is_object() || !index.contains("weight_map") ||
      !index["weight_map"].is_object())
    throw Error(where + ": expected an object with a 'weight_map' object");
  // Shard file name -> the tensors the index puts there. A repeated tensor
  // name inside weight_map is already a duplicate-key error.
  std::map<std::string, std::set<std::string>> shards;
  for (const auto &[tensor, shard] : index["weight_map"].items()) {
    if (!shard.is_string())
      throw Error(where + ": weight_map['" + tensor +
                  "'] must be a file name, found " + shard.dump());
    const std::string file = shard.get<std::string>();
    if (file.empty() || file.find('/') != std::string::npos)
      throw Error(where + ": weight_map['" + tensor + "'] = \"" + file +
                  "\" is not a file name in the checkpoint directory");
    shards[file].insert(tensor);
  }
  if (shards.empty())
    throw Error(where + ": empty weight_map");
  for (const auto &[file, listed] : shards) {
    const std::string path = dir_ + "/" + file;
    if (!isRegularFile(path))
      throw Error(where + ": shard '" + file + "' (holding '" +
                  *listed.begin() + "' and " +
                  std::to_string(listed.size() - 1) +
                  " more tensors) does not exist in '" + dir_ + "'");
    files_.push_back(SafetensorsFile::open(path));
    for (const std::string &tensor : listed)
      if (!files_.back().contains(tensor))
        throw Error(where + ": lists tensor '" + tensor + "' in shard '" +
                    file + "', which does not hold it");
  }
  // Every tensor in exactly one shard, the one the index names.
  for (size_t at = 0; at < files_.size(); ++at) {
    for (const TensorInfo &info : files_[at].tensors()) {
      auto [it, inserted] = where_.emplace(info.name, at);
      if (!inserted)
        throw Error(where + ": tensor '" + info.name + "' appears in both '" +
                    files_[it->second].path() + "' and '" +
                    files_[at].path() + "'");
    }
  }
  size_t at = 0;
  for (const auto &[file, listed] : shards) {
    for (const TensorInfo &info : files_[at].tensors())
      if (!listed.count(info.name))
        throw Error(where + ": shard '" + file + "' holds tensor '" +
                    info.name + "', which the index does not assign to it");
    ++at;
  }
  searched_ = indexPath + " (" + std::to_string(files_.size()) + " shard" +
              (files_.size() == 1 ? "" : "s") + ")";
}

bool ModelCheckpoint::contains(std::string_view name) const {
  return where_.count(std::string(name)) != 0;
}

const TensorInfo *ModelCheckpoint::find(std::string_view name,
                                        const SafetensorsFile **file) const {
  auto it = where_.find(std::string(name));
  if (it == where_.end())
    return nullptr;
  if (file)
    *file = &files_[it->second];
  return files_[it->second].find(name);
}

TensorView ModelCheckpoint::view(std::string_view name) const {
  const SafetensorsFile *file = nullptr;
  const TensorInfo *info = find(name, &file);
  if (!info)
    throw Error("checkpoint '" + dir_ + "': tensor '" + std::string(name) +
                "' not found in " + searched_);
  return file->view(*info);
}

std::string ModelCheckpoint::searched() const { return searched_; }

} // namespace qfuse::runtime
