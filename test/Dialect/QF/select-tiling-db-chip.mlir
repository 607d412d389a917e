// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="tuning-db=%S/Inputs/tuning-db-h200.json chip=sm_90" 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="tuning-db=%S/Inputs/tuning-db-h200.json chip=sm_89" 2>&1 | FileCheck %s --check-prefix=SM89
// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="tuning-db=%S/Inputs/tuning-db-h200.json chip=sm_80" 2>&1 | FileCheck %s --check-prefix=SM80

// A tuning database measured on the H200 (sm_90) compiled for another chip,
// as each variant of an artifact set is (docs/artifact.md, Artifact sets):
// an entry that chip cannot run gives way to the cost model's tiling
// instead of failing in the kernel generator. cluster_k needs sm_90, the
// block must fit the chip's shared memory (99 KB on sm_89), fp8 needs sm_89.

#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #int4>
// SM90-LABEL: @cluster
// SM90: tiling = #qf.tiling<mma, block_m = 64, block_n = 128, block_k = 64, split_k = 2, stages = 3, cluster_k = 2>
// SM89-LABEL: @cluster
// SM89-NOT: cluster_k
// SM80-LABEL: @cluster
// SM80-NOT: cluster_k
func.func @cluster(%x: tensor<128x4096xf16>) -> tensor<128x4096xf16> {
  %w = qf.weight_ref "a" : !w
  %y = qf.fused_matmul %x, %w : tensor<128x4096xf16>, !w -> tensor<128x4096xf16>
  return %y : tensor<128x4096xf16>
}

// -----

#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #int4>
// SM90-LABEL: @shared
// SM90: tiling = #qf.tiling<mma, block_m = 128, block_n = 128, block_k = 64, stages = 5>
// SM80-LABEL: @shared
// SM80: tiling = #qf.tiling<mma, block_m = 128, block_n = 128, block_k = 64, stages = 5>
// SM89-LABEL: @shared
// SM89-NOT: stages = 5
func.func @shared(%x: tensor<16x4096xf16>) -> tensor<16x4096xf16> {
  %w = qf.weight_ref "b" : !w
  %y = qf.fused_matmul %x, %w : tensor<16x4096xf16>, !w -> tensor<16x4096xf16>
  return %y : tensor<16x4096xf16>
}

// -----

#fp8 = #qf.enc<fp8e4m3, per_channel, scale = f32>
!w = !qf.weight<4096x4096, #fp8>
// SM90-LABEL: @fp8
// SM90: tiling = #qf.tiling<matvec, block_n = 4, split_k = 2>
// SM89-LABEL: @fp8
// SM89: tiling = #qf.tiling<matvec, block_n = 4, split_k = 2>
// SM80-LABEL: @fp8
// SM80: tiling = #qf.tiling<dequant_gemm>
func.func @fp8(%x: tensor<1x4096xf16>) -> tensor<1x4096xf16> {
  %w = qf.weight_ref "c" : !w
  %y = qf.fused_matmul %x, %w : tensor<1x4096xf16>, !w -> tensor<1x4096xf16>
  return %y : tensor<1x4096xf16>
}
