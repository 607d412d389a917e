//===- CheckpointUtils.h - shared pieces of the checkpoint converters -----===//
//
// Private to the library: config checks, the integer encodings GPTQ, AWQ and
// compressed-tensors map to, g_idx handling and scale copies, so that each
// converter file is only its layout's index arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_SRC_CHECKPOINTUTILS_H
#define QFUSE_FORMAT_SRC_CHECKPOINTUTILS_H

#include "qfuse/runtime/checkpoint/Importers.h"

#include "qfuse/format/ScalarIO.h"

#include <string>

namespace qfuse::format::detail {

inline bool fail(std::string &error, const std::string &message) {
  error = message;
  return false;
}

/// n, k positive, bits 4 or 8 (or only `onlyBits` when given).
bool checkConfig(const LinearConfig &config, const std::string &layout,
                 std::string &error, int onlyBits = 0);

/// Scale groups along K: 1 for groupSize <= 0, else ceil(K / groupSize).
int64_t configGroups(const LinearConfig &config);

/// "N = 4096, K = 512, bits = 4, group = 128": for shape messages.
std::string configText(const LinearConfig &config);

/// The scale type of a float scale tensor (F16, BF16 or F32).
bool scaleTypeOf(const TensorView &scales, const std::string &what,
                 ScalarType &type, std::string &error);

/// int4/int8 (symmetric) or uint4/uint8 with zero = int, group or per
/// channel, optional act_order.
Encoding integerEncoding(int bits, bool symmetric, int64_t groupSize,
                         ScalarType scaleType, bool actOrder);

/// Reads an optional checkpoint g_idx [K]: checks its shape and range and
/// decides whether it is the trivial k / group (then act_order is off).
bool readGIdx(const std::optional<TensorView> &gIdx, const std::string &what,
              const LinearConfig &config, std::vector<int32_t> &values,
              bool &actOrder, std::string &error);

/// An empty PackedWeight of the given encoding: validated, every component
/// allocated and zeroed.
bool allocateWeight(const Encoding &enc, int64_t n, int64_t k,
                    PackedWeight &out, std::string &error);

/// The integer encodings GPTQ and compressed-tensors pack-quantized store:
/// dense int4/uint4/int8/uint8 with integer zero points and float scales.
/// `layout` names the checkpoint format in the message.
bool checkIntegerCheckpointEncoding(const Encoding &enc,
                                    const std::string &layout,
                                    std::string &error);

/// Writes the act-order group index into the "g_idx" component.
void storeGIdx(PackedWeight &weight, const std::vector<int32_t> &gIdx);

/// Copies a [rows, cols] matrix of `elementBytes`-sized values, transposed.
void transposeCopy(const uint8_t *src, int64_t rows, int64_t cols,
                   size_t elementBytes, uint8_t *dst);

/// The component, which allocateWeight created.
inline Tensor &component(PackedWeight &w, const char *name) {
  return w.components[name];
}
inline const Tensor &component(const PackedWeight &w, const char *name) {
  return w.components.find(name)->second;
}

/// Word `index` of an I32 tensor, as unsigned bits.
inline uint32_t wordAt(const TensorView &view, int64_t index) {
  return loadLE32(view.data + 4 * index);
}

} // namespace qfuse::format::detail

#endif // QFUSE_FORMAT_SRC_CHECKPOINTUTILS_H
