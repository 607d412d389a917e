//===- ReferenceBuffers.h - a reference function's buffers -----*- C++ -*-===//
//
// The parameters of a JIT-compiled reference function as qfuse-cpu-check
// fills them: memref descriptors over owned bytes, and random 16-bit
// activations.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TOOLS_QFUSE_CPU_CHECK_REFERENCEBUFFERS_H
#define QFUSE_TOOLS_QFUSE_CPU_CHECK_REFERENCEBUFFERS_H

#include "mlir/IR/BuiltinTypes.h"

#include "qfuse/format/Numerics.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace qfuse::cpucheck {

using mlir::MemRefType;
using mlir::Type;

/// A memref descriptor of rank <= 2 as the C interface passes it.
struct Descriptor {
  void *allocated = nullptr;
  void *aligned = nullptr;
  int64_t offset = 0;
  int64_t sizesAndStrides[4] = {0, 0, 0, 0};
};

/// One parameter of a reference function: its name, memref type, bytes.
struct Buffer {
  std::string name;
  MemRefType type;
  std::vector<uint8_t> bytes;
  Descriptor desc;
};

inline unsigned elementBytes(Type t) {
  return (t.getIntOrFloatBitWidth() + 7) / 8;
}

/// The memref's shape with M (the dynamic dimension) substituted.
inline llvm::SmallVector<int64_t> concreteShape(MemRefType type, int64_t m) {
  llvm::SmallVector<int64_t> shape(type.getShape());
  for (int64_t &d : shape)
    if (mlir::ShapedType::isDynamic(d))
      d = m;
  return shape;
}

/// 16-bit activations (f16 or bf16) to and from float.
inline uint16_t toAct(float v, Type t) {
  return t.isBF16() ? qfuse::format::floatToBFloat16(v)
                    : qfuse::format::floatToHalf(v);
}
inline float fromAct(uint16_t h, Type t) {
  return t.isBF16() ? qfuse::format::bfloat16ToFloat(h)
                    : qfuse::format::halfToFloat(h);
}

/// Random 16-bit values in [lo, hi), rounded to `t`; the rounded floats
/// go to `values`.
inline std::vector<uint8_t> randomAct(int64_t count, Type t, float lo, float hi,
                                      std::mt19937_64 &rng,
                                      std::vector<float> &values) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<uint8_t> bytes(size_t(count) * 2);
  values.resize(size_t(count));
  for (int64_t i = 0; i < count; ++i) {
    uint16_t h = toAct(dist(rng), t);
    bytes[2 * i] = h & 0xFF;
    bytes[2 * i + 1] = h >> 8;
    values[i] = fromAct(h, t);
  }
  return bytes;
}

} // namespace qfuse::cpucheck

#endif // QFUSE_TOOLS_QFUSE_CPU_CHECK_REFERENCEBUFFERS_H
