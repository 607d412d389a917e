//===- Checkpoint.h - checkpoint layouts <-> qf components -----*- C++ -*-===//
//
// Converters between the tensors of one quantized linear layer as common
// checkpoints store them (../shared/notes/formats.md) and the qf row-major
// components of Packing.h, in both directions. The `from*` functions take
// views of the checkpoint's tensors (names without the module prefix) plus
// the facts its config gives, check every shape against them (the message
// names the tensor and the expected shape), and produce a PackedWeight whose
// dequantized values are exactly the checkpoint's formula. The `to*`
// functions write the checkpoint tensors back; from(to(x)) == x.
//
// All integer words are little-endian int32 as in safetensors; "bits" below
// is the code width b, and "per" = 32 / b codes per word.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_CHECKPOINT_IMPORTERS_H
#define QFUSE_RUNTIME_CHECKPOINT_IMPORTERS_H

#include "qfuse/format/Packing.h"

#include <optional>
#include <string>

namespace qfuse::format {

/// What a checkpoint's config says about one linear layer.
struct LinearConfig {
  int64_t n = 0;           // out_features
  int64_t k = 0;           // in_features
  int bits = 4;            // code width: 4 or 8
  int64_t groupSize = 128; // <= 0: one group per output channel (GPTQ's -1)
};

//===----------------------------------------------------------------------===//
// AutoGPTQ / GPTQ "v1"
//===----------------------------------------------------------------------===//
//
//   qweight  I32 [K * b / 32, N]   qweight[r, n] bits b*j.. = q[r * per + j, n]
//   qzeros   I32 [G, N * b / 32]   qzeros[g, c] bits b*j.. = z[g, c * per + j] - 1
//   scales   F16 [G, N]            (BF16 / F32 accepted and kept)
//   g_idx    I32 [K]               optional; group of each input column
//   w[n, k] = scales[g_idx[k], n] * (q[k, n] - z[g_idx[k], n])
//
// -> uint4/uint8 with zero = int, or int4/int8 when every z is 2^(b-1) (the
// symmetric case, z = 8 for 4 bits; the code bytes are the same). act_order
// only when g_idx differs from k / group. A stored zero of 2^b - 1 (z = 2^b,
// v1's wrap-around for z = 0) cannot be expressed and is rejected.
struct GPTQv1Tensors {
  TensorView qweight, qzeros, scales;
  std::optional<TensorView> gIdx;
};
bool fromGPTQv1(const GPTQv1Tensors &tensors, const LinearConfig &config,
                PackedWeight &out, std::string &error);
/// Writes "qweight", "qzeros", "scales" and "g_idx" (k / group unless
/// act_order). Needs int4/uint4/int8/uint8 with zero = int or none and no
/// zero point equal to 0.
bool toGPTQv1(const PackedWeight &weight, TensorMap &tensors,
              std::string &error);

//===----------------------------------------------------------------------===//
// compressed-tensors "pack-quantized" (LLM Compressor)
//===----------------------------------------------------------------------===//
//
//   weight_packed      I32 [N, ceil(K * b / 32)]  element k at bit k*b of the
//                                                 row's words, value q + 2^(b-1)
//   weight_scale       F16/BF16/F32 [N, G]        G = 1 for strategy "channel"
//   weight_zero_point  I32 [ceil(N * b / 32), G]  asymmetric only; packed along
//                                                 dim 0, value zp + 2^(b-1)
//   weight_g_idx       I32 [K]                    actorder = group only
//   weight_shape       I64/I32 [2] = [N, K]       optional
//   w = (q - zp) * scale  (zp = 0 when symmetric)
//
// -> int4/int8 when symmetric (4-bit codes keep their bytes; 8-bit codes
// flip bit 7 to two's complement), uint4/uint8 with zero = int otherwise.
struct CompressedTensorsPacked {
  TensorView weightPacked, weightScale;
  std::optional<TensorView> weightZeroPoint, weightGIdx, weightShape;
};
bool fromCompressedTensors(const CompressedTensorsPacked &tensors,
                           const LinearConfig &config, PackedWeight &out,
                           std::string &error);
/// Writes "weight_packed", "weight_scale", "weight_shape" (I64), and
/// "weight_zero_point" / "weight_g_idx" where the encoding has them.
bool toCompressedTensors(const PackedWeight &weight, TensorMap &tensors,
                         std::string &error);

//===----------------------------------------------------------------------===//
// compressed-tensors "nvfp4-pack-quantized"
//===----------------------------------------------------------------------===//
//
//   weight_packed        U8 [N, K / 2]        element 2j in the low nibble,
//                                             2j+1 in the high; sign<<3 | idx
//   weight_scale         F8_E4M3 [N, K / 16]  (U8 holding the same bytes accepted)
//   weight_global_scale  F32 [1] (or [])      448 * 6 / amax
//   w = fp4 * weight_scale / weight_global_scale
//
// -> fp4e2m1, group = 16, scale = f8E4M3FN, global_scale: the same bytes.
struct NVFP4Tensors {
  TensorView weightPacked, weightScale, weightGlobalScale;
};
bool fromNVFP4(const NVFP4Tensors &tensors, int64_t n, int64_t k,
               PackedWeight &out, std::string &error);
/// Writes "weight_packed", "weight_scale" (F8_E4M3), "weight_global_scale".
bool toNVFP4(const PackedWeight &weight, TensorMap &tensors,
             std::string &error);

//===----------------------------------------------------------------------===//
// bitsandbytes NF4
//===----------------------------------------------------------------------===//
//
//   weight  U8 [N * K / 2, 1] (or [N * K / 2])  W flattened row-major; byte j
//                                               holds element 2j in the HIGH
//                                               nibble, 2j+1 in the low
//   absmax  F32 [N * K / blocksize]             one per block of `blocksize`
//   w = kNF4Table[code] * absmax[block]
//
// -> nf4, group = blocksize, scale = f32. Blocks must not cross rows
// (K % blocksize == 0). Double-quantized absmax must be dequantized first.
struct BnbNF4Tensors {
  TensorView weight, absmax;
};
bool fromBnbNF4(const BnbNF4Tensors &tensors, int64_t n, int64_t k,
                int64_t blocksize, PackedWeight &out, std::string &error);
/// Writes "weight" U8 [N*K/2, 1] and "absmax" F32; needs nf4 with group
/// scales (any float scale type: widening to f32 is exact), no act_order.
bool toBnbNF4(const PackedWeight &weight, TensorMap &tensors,
              std::string &error);

//===----------------------------------------------------------------------===//
// AWQ (GEMM layout)
//===----------------------------------------------------------------------===//
//
//   qweight  I32 [K, N / 8]  packed along the OUTPUT dim: nibble slot i
//                            (bits 4i..4i+3) of word c holds column
//                            8c + ORDER[i], ORDER = [0, 2, 4, 6, 1, 3, 5, 7]
//   qzeros   I32 [G, N / 8]  same interleave, z itself (no -1)
//   scales   F16 [G, N]      (BF16 / F32 accepted and kept)
//   w[n, k] = scales[k / group, n] * (q[k, n] - z[k / group, n])
//
// -> uint4 with zero = int (int4 when every z is 8). 4 bits only.
struct AWQTensors {
  TensorView qweight, qzeros, scales;
};
bool fromAWQ(const AWQTensors &tensors, const LinearConfig &config,
             PackedWeight &out, std::string &error);
/// Writes "qweight", "qzeros", "scales"; needs int4 or uint4 with zero = int,
/// no act_order.
bool toAWQ(const PackedWeight &weight, TensorMap &tensors, std::string &error);

} // namespace qfuse::format

#endif // QFUSE_RUNTIME_CHECKPOINT_IMPORTERS_H
