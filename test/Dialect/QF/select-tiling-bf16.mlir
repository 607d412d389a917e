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
  // CHECK: qf.batch_tilings = [#qf.batch_tiling<batch = 64, tiling = #qf.tiling<mma, block_m = 64,
  // CHECK-NOT: matvec
  // CHECK-SAME: tiling = #qf.tiling<mma, block_m = 16,
  %1 = qf.fused_matmul %x, %w : tensor<?x1024xbf16>, !qf.weight<256x1024, #int4> -> tensor<?x256xbf16>
  return
}
