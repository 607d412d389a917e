//===- Tensor.cpp - byte buffers with a dtype and a shape -----------------===//

#include "qfuse/format/Tensor.h"

namespace qfuse::format {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::U8:
    return "U8";
  case DType::I8:
    return "I8";
  case DType::I32:
    return "I32";
  case DType::I64:
    return "I64";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::F32:
    return "F32";
  case DType::F8E4M3:
    return "F8_E4M3";
  case DType::F8E8M0:
    return "F8_E8M0";
  }
  return "?";
}

size_t dtypeBytes(DType dtype) {
  switch (dtype) {
  case DType::U8:
  case DType::I8:
  case DType::F8E4M3:
  case DType::F8E8M0:
    return 1;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I32:
  case DType::F32:
    return 4;
  case DType::I64:
    return 8;
  }
  return 0;
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  return count;
}

std::string describe(DType dtype, const std::vector<int64_t> &shape) {
  std::string text = std::string(dtypeName(dtype)) + " [";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape)
    : dtype(dtype), shape(std::move(shape)),
      data(size_t(format::numElements(this->shape)) * dtypeBytes(dtype), 0) {}

TensorView Tensor::view() const {
  TensorView v;
  v.dtype = dtype;
  v.shape = shape;
  v.data = data.data();
  v.numBytes = data.size();
  return v;
}

std::vector<int32_t> int32Values(const Tensor &t) {
  std::vector<int32_t> v(t.data.size() / 4);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = int32_t(uint32_t(t.data[4 * i]) | uint32_t(t.data[4 * i + 1]) << 8 |
                   uint32_t(t.data[4 * i + 2]) << 16 |
                   uint32_t(t.data[4 * i + 3]) << 24);
  return v;
}

Tensor int32Tensor(const std::vector<int32_t> &values) {
  Tensor t(DType::I32, {int64_t(values.size())});
  for (size_t i = 0; i < values.size(); ++i)
    for (int b = 0; b < 4; ++b)
      t.data[4 * i + b] = uint8_t(uint32_t(values[i]) >> (8 * b));
  return t;
}

bool checkTensor(const TensorView &view, const std::string &what, DType dtype,
                 const std::vector<int64_t> &shape, std::string &error,
                 const std::string &why) {
  if (view.dtype != dtype || view.shape != shape) {
    error = what + ": expected " + describe(dtype, shape) + ", got " +
            describe(view.dtype, view.shape) + (why.empty() ? "" : " (" + why + ")");
    return false;
  }
  size_t needed = size_t(numElements(shape)) * dtypeBytes(dtype);
  if (view.numBytes < needed || (needed > 0 && view.data == nullptr)) {
    error = what + ": " + describe(dtype, shape) + " needs " +
            std::to_string(needed) + " bytes, got " +
            std::to_string(view.numBytes);
    return false;
  }
  return true;
}

} // namespace qfuse::format
