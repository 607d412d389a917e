//===- Tensor.h - byte buffers with a dtype and a shape --------*- C++ -*-===//
//
// The unit that packed weights and checkpoint tensors are made of: raw
// little-endian bytes (as safetensors stores them), an element type named as
// safetensors names it, and a row-major shape. `Tensor` owns its bytes;
// `TensorView` points into someone else's (an mmap'ed safetensors file).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_TENSOR_H
#define QFUSE_FORMAT_TENSOR_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace qfuse::format {

/// Element types of stored buffers (the safetensors dtypes that occur).
enum class DType { U8, I8, I32, I64, F16, BF16, F32, F8E4M3, F8E8M0 };

/// The safetensors spelling: "U8", "I32", "F16", "F8_E4M3", "F8_E8M0", ...
const char *dtypeName(DType dtype);
/// Bytes per element.
size_t dtypeBytes(DType dtype);
/// "I32 [64, 4096]": for error messages.
std::string describe(DType dtype, const std::vector<int64_t> &shape);

int64_t numElements(const std::vector<int64_t> &shape);

/// A read-only view of little-endian tensor bytes owned elsewhere.
struct TensorView {
  DType dtype = DType::U8;
  std::vector<int64_t> shape;
  const uint8_t *data = nullptr;
  /// Bytes available at `data`; must be numElements(shape) * dtypeBytes.
  size_t numBytes = 0;
};

/// A tensor that owns its bytes.
struct Tensor {
  DType dtype = DType::U8;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  Tensor() = default;
  /// Zero-filled storage for `shape`.
  Tensor(DType dtype, std::vector<int64_t> shape);

  TensorView view() const;
  int64_t numElements() const { return format::numElements(shape); }
};

/// The values of `t`'s bytes read as little-endian int32 (an I32 tensor's).
std::vector<int32_t> int32Values(const Tensor &t);
/// A 1-D I32 tensor holding `values`.
Tensor int32Tensor(const std::vector<int32_t> &values);

/// Named tensors, e.g. the components of a packed weight or the tensors of
/// one checkpoint layer ("qweight", "qzeros", ...).
using TensorMap = std::map<std::string, Tensor>;

/// Checks that `view` has `dtype` and `shape` and enough bytes; otherwise
/// sets error to "<what>: expected I32 [64, 4096], got I32 [32, 4096]" (plus
/// `why` if given) and returns false.
bool checkTensor(const TensorView &view, const std::string &what, DType dtype,
                 const std::vector<int64_t> &shape, std::string &error,
                 const std::string &why = "");

} // namespace qfuse::format

#endif // QFUSE_FORMAT_TENSOR_H
