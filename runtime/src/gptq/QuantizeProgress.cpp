//===- QuantizeProgress.cpp - an interrupted quantize run, on disk --------===//

#include "qfuse/runtime/gptq/QuantizeProgress.h"

#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/BackgroundRemoval.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/FormatTensors.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace qfuse::runtime {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char *kManifest = "manifest.json";
constexpr const char *kFormat = "qfuse-quantize-progress";
constexpr int kVersion = 1;
/// The layer file's metadata: its modules, [{"name", "n", "k"}, ...].
constexpr const char *kModulesKey = "qfuse.progress.modules";

std::string numbered(const char *stem, int64_t layer) {
  char text[64];
  std::snprintf(text, sizeof(text), "%s-%05lld.safetensors", stem,
                (long long)layer);
  return text;
}

/// Files this class writes, or wrote in earlier versions (the calibration
/// inputs-* files): what removeStale may delete.
bool ours(const std::string &name) {
  return name.find(".partial-") != std::string::npos ||
         (name.rfind("layer-", 0) == 0 || name.rfind("inputs-", 0) == 0);
}

} // namespace

std::string QuantizeProgress::directoryFor(const std::string &outDir) {
  return outDir + "/.qfuse-progress";
}

QuantizeProgress::QuantizeProgress(std::string outDir, RunIdentity identity,
                                   int64_t numLayers, bool resume)
    : dir_(directoryFor(outDir)), identity_(std::move(identity)),
      numLayers_(numLayers) {
  std::error_code ec;
  if (!fs::exists(path(kManifest), ec))
    return; // nothing recorded: from layer 0
  if (!resume)
    throw Error("'" + dir_ + "' holds the progress of an interrupted run "
                "into '" + outDir + "': pass --resume to continue it, or "
                "remove '" + dir_ + "' to start over");
  readManifest(identity_);
  removeStale();
}

void QuantizeProgress::readManifest(const RunIdentity &identity) {
  const std::string file = path(kManifest);
  auto damaged = [&](const std::string &what) {
    return Error("progress manifest '" + file + "': " + what + "; remove '" +
                 dir_ + "' to start over");
  };
  std::ifstream in(file);
  json doc;
  try {
    in >> doc;
  } catch (const json::exception &e) {
    throw damaged(std::string("not JSON: ") + e.what());
  }
  try {
    if (doc.value("format", "") != kFormat || doc.value("version", 0) != kVersion)
      throw damaged(std::string("expected format \"") + kFormat +
                    "\", version " + std::to_string(kVersion));
    RunIdentity recorded;
    for (const json &field : doc.at("identity"))
      recorded.fields.emplace_back(field.at(0).get<std::string>(),
                                   field.at(1).get<std::string>());
    const std::string why = differences(recorded, identity);
    if (!why.empty())
      throw Error("cannot resume from '" + dir_ +
                  "': it was made by a run with other inputs, so continuing "
                  "would not give that run's results:\n" + why +
                  "Run with those inputs again, or remove '" + dir_ +
                  "' to start over");
    if (doc.at("num_layers").get<int64_t>() != numLayers_)
      throw damaged("it records " +
                    std::to_string(doc.at("num_layers").get<int64_t>()) +
                    " layers, the model has " + std::to_string(numLayers_));
    for (const json &layer : doc.at("layers")) {
      layerFiles_.push_back(layer.at("file").get<std::string>());
      reports_.push_back(layer.at("report").dump());
    }
    if (layersDone() > numLayers_)
      throw damaged("more layers done than the model has");
  } catch (const json::exception &e) {
    throw damaged(std::string("malformed: ") + e.what());
  }
  std::error_code ec;
  for (const std::string &name : layerFiles_)
    if (!fs::exists(path(name), ec))
      throw damaged("its layer file '" + name + "' is missing");
}

void QuantizeProgress::removeStale() const {
  std::set<std::string> keep(layerFiles_.begin(), layerFiles_.end());
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (ours(name) && !keep.count(name))
      fs::remove(entry.path(), ec);
  }
}

std::vector<QuantizedWeight>
QuantizeProgress::loadLayer(int64_t layer,
                            const format::Encoding &encoding) const {
  if (layer < 0 || layer >= layersDone())
    throw Error("progress: layer " + std::to_string(layer) + " of " +
                std::to_string(layersDone()) + " recorded is not there");
  std::vector<QuantizedWeight> out;
  {
    const SafetensorsFile file =
        SafetensorsFile::open(path(layerFiles_[size_t(layer)]));
    auto it = file.metadata().find(kModulesKey);
    if (it == file.metadata().end())
      throw Error("progress file '" + file.path() + "' has no \"" +
                  kModulesKey + "\"; remove '" + dir_ + "' to start over");
    for (const json &module : json::parse(it->second)) {
      QuantizedWeight w;
      w.name = module.at("name").get<std::string>();
      w.encoding = encoding;
      w.n = module.at("n").get<int64_t>();
      w.k = module.at("k").get<int64_t>();
      w.packed = std::make_shared<const format::TensorMap>(
          readFormatTensors(file, w.name + "."));
      std::string error;
      if (!format::checkComponents(encoding, *w.packed, w.n, w.k, error))
        throw Error("progress file '" + file.path() + "': module '" + w.name +
                    "': " + error + "; remove '" + dir_ + "' to start over");
      out.push_back(std::move(w));
    }
  }
  return out;
}

void QuantizeProgress::recordLayer(
    int64_t layer, const std::vector<Module> &modules,
    const std::string &reportJson) {
  if (layer != layersDone() || layer >= numLayers_)
    throw Error("progress: layer " + std::to_string(layer) +
                " recorded after " + std::to_string(layersDone()) +
                " of " + std::to_string(numLayers_) + " layers");
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec)
    throw Error("cannot create '" + dir_ + "': " + ec.message());

  const std::string layerFile = numbered("layer", layer);
  SafetensorsWriter quantized;
  json list = json::array();
  for (const Module &m : modules) {
    addFormatTensors(quantized, m.name + ".", m.packed);
    list.push_back({{"name", m.name}, {"n", m.n}, {"k", m.k}});
  }
  quantized.setMetadata(kModulesKey, list.dump());
  quantized.write(path(layerFile));

  std::vector<std::string> files = layerFiles_, reports = reports_;
  files.push_back(layerFile);
  reports.push_back(reportJson);
  writeManifest(files, reports);
  layerFiles_ = std::move(files);
  reports_ = std::move(reports);
  removeStale();
}

void QuantizeProgress::writeManifest(const std::vector<std::string> &layerFiles,
                                     const std::vector<std::string> &reports) const {
  json identity = json::array();
  for (const auto &[name, value] : identity_.fields)
    identity.push_back({name, value});
  json layers = json::array();
  for (size_t i = 0; i < layerFiles.size(); ++i)
    layers.push_back(
        {{"file", layerFiles[i]}, {"report", json::parse(reports[i])}});
  const json doc = {{"format", kFormat},
                    {"version", kVersion},
                    {"num_layers", numLayers_},
                    {"identity", identity},
                    {"layers", layers}};
  writeFileAtomically(path(kManifest), doc.dump(1) + "\n");
}

void QuantizeProgress::finish() { removeDirectoryInBackground(dir_); }

} // namespace qfuse::runtime
