// RUN: qfuse-opt %s --qf-select-tiling="batch=3" --qf-choose-layout | FileCheck %s --check-prefix=BATCH3
// RUN: qfuse-opt %s --qf-select-tiling="batch=8" --qf-choose-layout | FileCheck %s --check-prefix=MMA
// RUN: qfuse-opt %s --qf-select-tiling="batch=17" --qf-choose-layout | FileCheck %s --check-prefix=MMA
// RUN: qfuse-opt %s --qf-select-tiling="batch=512 dequant-gemm-min-m=0" --qf-choose-layout | FileCheck %s --check-prefix=MMA

// 2-, 3- and 8-bit codebooks and float zero points are lowered by the
// tensor-core kernel (TensorCoreSupport.h no longer refuses them), so the
// cost model picks it past the measured crossover as for every weight it
// takes (docs/defaults.md: codebooks are table codes, from batch 5 on a
// weight this large; float zero points decode as integers, from batch 2),
// and qf-choose-layout stores their codes in the mma fragment layout; below
// it the matvec keeps them (row_major codebooks, as before).
#cb2 = #qf.enc<codebook, bits = 2, table = "t2" : f16, group = 128, scale = f16>
#cb3 = #qf.enc<codebook, bits = 3, table = "t3" : f16, group = 128, scale = f16>
#cb8 = #qf.enc<codebook, bits = 8, table = "t8" : f16, per_channel, scale = f16>
#u4zf = #qf.enc<uint4, group = 128, scale = f16, zero = float>
#u8zf = #qf.enc<uint8, group = 128, scale = f16, zero = float>

// BATCH3-LABEL: @formats
// BATCH3-COUNT-3: qf.fused_matmul {{.*}}tiling = #qf.tiling<matvec
// BATCH3-COUNT-2: qf.fused_matmul {{.*}}tiling = #qf.tiling<mma
// MMA: #tiled_32x32 = #qf.layout<tiled, tile_n = 32, tile_k = 32>
// MMA-LABEL: @formats
// MMA-COUNT-5: qf.fused_matmul {{.*}}tiling = #qf.tiling<{{w?}}mma, {{.*}}, #tiled_32x32> ->
func.func @formats(%x: tensor<?x4096xf16>) -> (tensor<?x4096xf16>, tensor<?x4096xf16>, tensor<?x4096xf16>, tensor<?x4096xf16>, tensor<?x4096xf16>) {
  %w0 = qf.weight_ref "cb2" : !qf.weight<4096x4096, #cb2>
  %0 = qf.fused_matmul %x, %w0 : tensor<?x4096xf16>, !qf.weight<4096x4096, #cb2> -> tensor<?x4096xf16>
  %w1 = qf.weight_ref "cb3" : !qf.weight<4096x4096, #cb3>
  %1 = qf.fused_matmul %x, %w1 : tensor<?x4096xf16>, !qf.weight<4096x4096, #cb3> -> tensor<?x4096xf16>
  %w2 = qf.weight_ref "cb8" : !qf.weight<4096x4096, #cb8>
  %2 = qf.fused_matmul %x, %w2 : tensor<?x4096xf16>, !qf.weight<4096x4096, #cb8> -> tensor<?x4096xf16>
  %w3 = qf.weight_ref "u4" : !qf.weight<4096x4096, #u4zf>
  %3 = qf.fused_matmul %x, %w3 : tensor<?x4096xf16>, !qf.weight<4096x4096, #u4zf> -> tensor<?x4096xf16>
  %w4 = qf.weight_ref "u8" : !qf.weight<4096x4096, #u8zf>
  %4 = qf.fused_matmul %x, %w4 : tensor<?x4096xf16>, !qf.weight<4096x4096, #u8zf> -> tensor<?x4096xf16>
  return %0, %1, %2, %3, %4 : tensor<?x4096xf16>, tensor<?x4096xf16>, tensor<?x4096xf16>, tensor<?x4096xf16>, tensor<?x4096xf16>
}
