//===- WeightLayouts.cpp - one checkpoint tensor, each packed layout ------===//

#include "qfuse/runtime/artifact/WeightLayouts.h"

#include "qfuse/runtime/Error.h"

#include "qfuse/format/Layout.h"

namespace qfuse::runtime {
namespace {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// "origin: weight 'w@tiled_n32_k32' (packed from 'w', int4, ..., [N, K])".
std::string describeWeight(const WeightSpec &weight,
                           const std::string &origin) {
  return origin + ": weight '" + weight.name + "' (" +
         (weight.checkpointName() != weight.name ? "packed from '" + weight.checkpointName() + "', "
                                       : std::string()) +
         weight.encoding + ", [" + std::to_string(weight.n) + ", " +
         std::to_string(weight.k) + "])";
}

} // namespace

RowMajorViews viewsOf(const format::TensorMap &components) {
  RowMajorViews views;
  for (const auto &[name, tensor] : components)
    views[name] = {format::dtypeName(tensor.dtype), tensor.shape,
                   tensor.data.data(), tensor.data.size()};
  return views;
}

void checkRowMajorComponents(const WeightSpec &weight, const RowMajorViews &raw,
                             const std::string &origin) {
  const std::string what = describeWeight(weight, origin);
  for (const format::ComponentSpec &spec : weight.components) {
    auto it = raw.find(spec.name);
    if (it == raw.end())
      throw Error(what + ": missing component '" + spec.name + "' (" +
                  format::describe(spec.dtype, spec.shape) + ")");
    const RowMajorView &component = it->second;
    if (component.dtype != format::dtypeName(spec.dtype) ||
        component.shape != spec.shape)
      throw Error(what + ": component '" + spec.name + "' must be " +
                  format::describe(spec.dtype, spec.shape) + ", found " +
                  component.dtype + " " + shapeText(component.shape));
    const size_t bytes = static_cast<size_t>(format::numElements(spec.shape)) *
                         format::dtypeBytes(spec.dtype);
    if (component.size != bytes)
      throw Error(what + ": component '" + spec.name + "' has " +
                  std::to_string(component.size) + " bytes, expected " +
                  std::to_string(bytes));
  }
}

bool needsNoRepack(const WeightSpec &weight) {
  return weight.layoutAttr.isRowMajor() &&
         !format::sortsColumns(weight.encodingAttr);
}

format::TensorMap packForLayout(const WeightSpec &weight,
                                const RowMajorViews &raw,
                                const std::string &origin,
                                const LayoutRepacker *device) {
  checkRowMajorComponents(weight, raw, origin);
  format::TensorMap rowMajor, packed;
  for (const format::ComponentSpec &spec : weight.components) {
    format::Tensor tensor;
    tensor.dtype = spec.dtype;
    tensor.shape = spec.shape;
    const RowMajorView &component = raw.at(spec.name);
    tensor.data.assign(component.data, component.data + component.size);
    rowMajor.emplace(spec.name, std::move(tensor));
  }
  if (needsNoRepack(weight))
    return rowMajor;
  if (device && (*device)(weight, rowMajor, packed))
    return packed;
  std::string error;
  if (!format::repack(weight.encodingAttr, weight.layoutAttr, rowMajor,
                      weight.n, weight.k, packed, error))
    throw Error(describeWeight(weight, origin) +
                ": cannot repack to layout \"" + weight.layout +
                "\": " + error);
  return packed;
}

std::vector<const WeightSpec *> weightEntriesFor(const Artifact &artifact,
                                                 const std::string &name,
                                                 const std::string &origin) {
  std::vector<const WeightSpec *> entries = artifact.weightsPackedFrom(name);
  if (entries.empty())
    if (const WeightSpec *weight = artifact.findWeight(name))
      entries.push_back(weight);
  if (entries.empty())
    throw Error(origin + ": cannot bind weight '" + name +
                "': not declared in 'weights' (neither an entry nor the "
                "source of one)");
  return entries;
}

} // namespace qfuse::runtime
