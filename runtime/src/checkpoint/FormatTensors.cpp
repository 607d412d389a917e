//===- FormatTensors.cpp - qfuse_format tensors in safetensors files ------===//

#include "qfuse/runtime/checkpoint/FormatTensors.h"

#include "qfuse/runtime/Error.h"

namespace qfuse::runtime {

std::optional<format::TensorView> formatView(const TensorView &view) {
  static constexpr format::DType kTypes[] = {
      format::DType::U8,   format::DType::I8,     format::DType::I32,
      format::DType::I64,  format::DType::F16,    format::DType::BF16,
      format::DType::F32,  format::DType::F8E4M3, format::DType::F8E8M0};
  for (format::DType type : kTypes)
    if (safetensorsName(view.info->dtype) == format::dtypeName(type))
      return format::TensorView{type, view.info->shape, view.data, view.size};
  return std::nullopt;
}

DType safetensorsDType(format::DType dtype, const std::string &tensor) {
  std::optional<DType> type = parseSafetensorsDType(format::dtypeName(dtype));
  if (!type)
    throw Error("tensor '" + tensor + "': dtype " + format::dtypeName(dtype) +
                " has no safetensors spelling");
  return *type;
}

void addFormatTensors(SafetensorsWriter &writer, const std::string &prefix,
                      const format::TensorMap &tensors) {
  for (const auto &[name, tensor] : tensors)
    writer.add(prefix + name, safetensorsDType(tensor.dtype, prefix + name),
               tensor.shape, tensor.data.data(), tensor.data.size());
}

void addFormatTensors(SafetensorsWriter &writer, const std::string &prefix,
                      std::shared_ptr<const format::TensorMap> tensors) {
  for (const auto &[name, tensor] : *tensors)
    writer.add(prefix + name, safetensorsDType(tensor.dtype, prefix + name),
               tensor.shape, tensors, tensor.data.data(), tensor.data.size());
}

format::TensorMap readFormatTensors(const SafetensorsFile &file,
                                    const std::string &prefix) {
  format::TensorMap out;
  for (const TensorInfo &info : file.tensors()) {
    if (info.name.compare(0, prefix.size(), prefix) != 0)
      continue;
    const TensorView view = file.view(info);
    std::optional<format::TensorView> converted = formatView(view);
    if (!converted)
      throw Error("'" + file.path() + "': tensor '" + info.name +
                  "' has dtype " + std::string(safetensorsName(info.dtype)) +
                  ", which a packed weight never has");
    format::Tensor t;
    t.dtype = converted->dtype;
    t.shape = converted->shape;
    t.data.assign(view.data, view.data + view.size);
    out.emplace(info.name.substr(prefix.size()), std::move(t));
  }
  return out;
}

} // namespace qfuse::runtime
