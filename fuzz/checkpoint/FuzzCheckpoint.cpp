//===- FuzzCheckpoint.cpp - libFuzzer: model directories and weight loading -===//
//
// The input is a Hugging Face model directory and the artifact entries to
// load from it, as files joined by kPartSeparator (FuzzSupport.h):
//
//   config.json
//   weights.json   what an artifact would ask for: [{"weight": name,
//                  "shape": [N, K], "encoding": ..., "layout": ...},
//                  {"tensor": name, "shape": [...], "dtype": "f16"}, ...]
//   model.safetensors                       (one more part), or
//   model.safetensors.index.json, model-0000i-of-0000n.safetensors, ...
//
// ModelCheckpoint::open must accept the directory or throw qfuse::Error;
// then each entry goes the CPU side of the loader's way (WeightSources.h:
// checkpointWeight or checkpointTensor, then packForLayout into the
// layout), and must succeed or throw qfuse::Error.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "qfuse/format/Layout.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/artifact/WeightLayouts.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"

#include <nlohmann/json.hpp>

using namespace qfuse::runtime;
using qfuse::fuzz::ScratchDir;
using nlohmann::json;

namespace {

/// Sizes an artifact could name without the harness itself allocating
/// gigabytes: the artifact validator's own bounds are larger.
constexpr int64_t kMaxExtent = int64_t(1) << 16;
constexpr int64_t kMaxElements = int64_t(1) << 22;

/// An artifact weight entry as Artifact::parse fills it, or nullopt when
/// the harness's own description is not usable.
std::optional<WeightSpec> weightSpec(const json &entry) {
  const json name = entry.value("weight", json());
  const json shape = entry.value("shape", json());
  if (!name.is_string() || !shape.is_array() || shape.size() != 2 ||
      !shape[0].is_number_integer() || !shape[1].is_number_integer())
    return std::nullopt;
  WeightSpec spec;
  spec.name = name.get<std::string>();
  spec.n = shape[0].get<int64_t>();
  spec.k = shape[1].get<int64_t>();
  if (spec.n < 1 || spec.k < 1 || spec.n > kMaxExtent || spec.k > kMaxExtent ||
      spec.n * spec.k > kMaxElements)
    return std::nullopt;
  const json encoding = entry.value("encoding", json());
  const json layout = entry.value("layout", json("row_major"));
  if (!encoding.is_string() || !layout.is_string())
    return std::nullopt;
  spec.encoding = encoding.get<std::string>();
  spec.layout = layout.get<std::string>();
  std::string error;
  if (!qfuse::format::parseEncoding(spec.encoding, spec.encodingAttr, error) ||
      !qfuse::format::componentSpecs(spec.encodingAttr, spec.n, spec.k,
                                     spec.components, error) ||
      !qfuse::format::parseLayout(spec.layout, spec.layoutAttr, error) ||
      !qfuse::format::verifyWeight(spec.encodingAttr, spec.layoutAttr, spec.n,
                                   spec.k, error))
    return std::nullopt;
  spec.layoutComponents = qfuse::format::layoutComponentSpecs(
      spec.encodingAttr, spec.layoutAttr, spec.n, spec.k);
  return spec;
}

std::optional<TensorSpec> tensorSpec(const json &entry) {
  const json name = entry.value("tensor", json());
  const json shape = entry.value("shape", json());
  if (!name.is_string() || !shape.is_array() || shape.size() > 4)
    return std::nullopt;
  TensorSpec spec;
  spec.name = name.get<std::string>();
  int64_t elements = 1;
  for (const json &extent : shape) {
    if (!extent.is_number_integer() || extent.get<int64_t>() < 1 ||
        extent.get<int64_t>() > kMaxExtent)
      return std::nullopt;
    spec.shape.push_back(extent.get<int64_t>());
    elements *= spec.shape.back();
  }
  const json dtypeName = entry.value("dtype", json("f16"));
  if (!dtypeName.is_string())
    return std::nullopt;
  std::optional<DType> dtype = parseArtifactDType(dtypeName.get<std::string>());
  if (!dtype || elements > kMaxElements)
    return std::nullopt;
  spec.dtype = *dtype;
  return spec;
}

void writeDirectory(ScratchDir &dir,
                    const std::vector<std::string_view> &parts) {
  dir.clear();
  dir.write("config.json", parts[0]);
  if (parts.size() == 3) {
    dir.write("model.safetensors", parts[2]);
  } else if (parts.size() > 3) {
    dir.write("model.safetensors.index.json", parts[2]);
    const size_t shards = parts.size() - 3;
    char name[64];
    for (size_t i = 0; i < shards; ++i) {
      std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors",
                    i + 1, shards);
      dir.write(name, parts[3 + i]);
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<std::string_view> parts = qfuse::fuzz::splitParts(data, size);
  if (parts.size() < 2 || parts.size() > 8)
    return 0;
  json entries = json::parse(parts[1].begin(), parts[1].end(), nullptr,
                             /*allow_exceptions=*/false);
  if (!entries.is_array())
    entries = json::array();

  ScratchDir &dir = ScratchDir::get();
  writeDirectory(dir, parts);
  try {
    ModelCheckpoint checkpoint = ModelCheckpoint::open(dir.path());
    for (const SafetensorsFile &file : checkpoint.files())
      for (const TensorInfo &info : file.tensors())
        checkpoint.view(info.name);
    for (const json &entry : entries) {
      if (!entry.is_object())
        continue;
      try {
        if (std::optional<WeightSpec> weight = weightSpec(entry)) {
          qfuse::format::TensorMap rowMajor =
              checkpointWeight(checkpoint, *weight);
          packForLayout(*weight, viewsOf(rowMajor), "fuzz");
        } else if (std::optional<TensorSpec> tensor = tensorSpec(entry)) {
          checkpointTensor(checkpoint, *tensor);
        }
      } catch (const qfuse::Error &) {
      }
    }
  } catch (const qfuse::Error &) {
  }
  return 0;
}
