// RUN: qfuse-opt %s --qf-to-gpu="batch-sizes=1,2,4,8" | FileCheck %s

// A dynamic batch compiles one kernel per batch size; each launch says
// which. Split-K (k/v projection shape, 2 warps per row) keeps the grid at
// N / block_n blocks and reduces in shared memory.
#e = #qf.enc<uint4, group = 128, scale = f16, zero = int>
#l = #qf.layout<tiled, tile_n = 1, tile_k = 32>
!w = !qf.weight<1024x4096, #e, #l>

// CHECK-LABEL: func.func @k_proj
// CHECK: qf.launches = [#qf.launch<batch = 1, {{.*}}grid = [512, 1, 1], kernel = @qf_kernels::@qf_matvec_0_m1, params = ["x", "codes", "scales", "zeros", "y"], shared_bytes = 16>,
// CHECK-SAME: #qf.launch<batch = 2, {{.*}}kernel = @qf_kernels::@qf_matvec_0_m2, {{.*}}shared_bytes = 32>,
// CHECK-SAME: #qf.launch<batch = 4, {{.*}}kernel = @qf_kernels::@qf_matvec_0_m4, {{.*}}shared_bytes = 64>,
// CHECK-SAME: #qf.launch<batch = 8, {{.*}}kernel = @qf_kernels::@qf_matvec_0_m8, {{.*}}shared_bytes = 128>]
// CHECK-DAG: llvm.func @qf_matvec_0_m1(
// CHECK-DAG: llvm.func @qf_matvec_0_m2(
// CHECK-DAG: llvm.func @qf_matvec_0_m4(
// CHECK-DAG: llvm.func @qf_matvec_0_m8(
func.func @k_proj(%x: tensor<?x4096xf16>) -> tensor<?x1024xf16> {
  %w = qf.weight_ref "model.layers.0.self_attn.k_proj" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 2, k_unroll = 2, split_k = 2>}
         : tensor<?x4096xf16>, !w -> tensor<?x1024xf16>
  return %y : tensor<?x1024xf16>
}
