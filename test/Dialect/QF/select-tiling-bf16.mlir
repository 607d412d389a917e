// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="batch-sizes=1,8,64" | FileCheck %s

// bf16 activations: only the tensor-core kernel reads them (the matvec's
// half2 arithmetic is f16), so it takes bf16 ops at every batch, M = 1
// included, whatever the crossover; with a dynamic M every batch gets its
// own mma tiling.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @bf16_every_batch
func.func @bf16_every_batch(%x1: tensor<1x4096xbf16>, %x: tensor<?x1024xbf16>) {
  %kv = qf.weight_ref "kv" : !qf.weight<1024x4096, #int4>
  // CHECK: tiling = #qf.tiling<mma, block_m = 16,
  %0 = qf.fused_matmul %x1, %kv : tensor<1x4096xbf16>, !qf.weight<1024x4096, #int4> -> tensor<1x1024xbf16>
  %w = qf.weight_ref "w" : !qf.weight<256x1024, #int4>
  // CHECK: qf.batch_tilings = [#qf.batch_tiling<batch = 64, tiling = #qf.tiling<mma, block_m = 32,
  // CHECK-NOT: matvec
  // CHECK-SAME: tiling = #qf.tiling<mma, block_m = 16,
  %1 = qf.fused_matmul %x, %w : tensor<?x1024xbf16>, !qf.weight<256x1024, #int4> -> tensor<?x256xbf16>
  return
}

// -----

// At batch 512 cuBLAS on a dequantized copy is chosen for speed, but the
// fallback's silu_mul kernel reads f16 only: a gated bf16 matmul keeps the
// tensor-core kernel there, and a plain bf16 one takes the fallback.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @bf16_gated_large_batch
func.func @bf16_gated_large_batch(%x: tensor<512x512xbf16>) {
  %wg = qf.weight_ref "gate" : !qf.weight<1024x512, #int4>
  %wu = qf.weight_ref "up" : !qf.weight<1024x512, #int4>
  // CHECK: activation = #qf<activation silu_mul>
  // CHECK-SAME: tiling = #qf.tiling<mma,
  %0 = qf.fused_matmul %x, %wg up(%wu : !qf.weight<1024x512, #int4>) {activation = #qf<activation silu_mul>}
         : tensor<512x512xbf16>, !qf.weight<1024x512, #int4> -> tensor<512x1024xbf16>
  // CHECK: tiling = #qf.tiling<dequant_gemm
  %1 = qf.fused_matmul %x, %wg : tensor<512x512xbf16>, !qf.weight<1024x512, #int4> -> tensor<512x1024xbf16>
  return
}
