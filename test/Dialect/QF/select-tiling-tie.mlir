// RUN: qfuse-opt %s --qf-select-tiling="batch=8 mma-tie-break=true" | FileCheck %s
// RUN: qfuse-opt %s --qf-select-tiling="batch=8" | FileCheck %s --check-prefix=OFF

// Predictions within 1% of the fastest are a tie, broken toward the least
// blocks' work (CostModel.cpp selectMma, docs/cost-model.md). Llama-3-8B's
// int8 down_proj at batch 8: every candidate is predicted memory-bound
// (17.94 us). The first in candidate order (128-wide blocks in clusters
// of 4) was the slowest of them in the training sweep, the tie-break's pick
// (64-wide blocks split 4 ways, clusters of 2) near the fastest
// (docs/cost-model.md).
#i8 = #qf.enc<int8, per_channel, scale = f16>
// CHECK-LABEL: @down
// CHECK: tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 4, stages = 3, cluster_k = 2>
// Without the tie-break (the default until it is timed on the zoo), the
// first of the tie.
// OFF: tiling = #qf.tiling<mma, block_m = 16, block_n = 128, block_k = 128, split_k = 2, stages = 3, cluster_k = 4>
func.func @down(%x: tensor<8x14336xf16>) -> tensor<8x4096xf16> {
  %w = qf.weight_ref "down" : !qf.weight<4096x14336, #i8>
  %y = qf.fused_matmul %x, %w : tensor<8x14336xf16>, !qf.weight<4096x14336, #i8> -> tensor<8x4096xf16>
  return %y : tensor<8x4096xf16>
}
