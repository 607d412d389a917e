// RUN: qfuse-opt %s -split-input-file --qf-to-gpu="batch-sizes=1,16" | FileCheck %s

// An act_order qf.group (q/k/v after qf-fuse-shared-input): per batch, one
// launch permutes the shared input by the first member's perm, and one
// kernel (the matvec at batch 1, mma at 16) reads the three weights as plain
// ones. Those launches hold under the contract that the members' perms are
// equal (qf.launch_guards 1); the dequantize + cuBLAS fallback, which reads
// each member's own perm, runs where they differ (2).
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#l1 = #qf.layout<tiled, tile_n = 1, tile_k = 32>
#l32 = #qf.layout<tiled, tile_n = 32, tile_k = 32>
!wq = !qf.weight<4096x4096, #ao, #l1>
!wk = !qf.weight<1024x4096, #ao, #l1>
// CHECK-LABEL: func.func @qkv
// CHECK: qf.fused_matmul
// CHECK-SAME: qf.launch_guards = array<i32: 1, 1, 2, 2, 2, 2, 2, 2, 1, 1, 2, 2, 2, 2, 2, 2>
// CHECK-SAME: qf.launches = [
// CHECK-SAME: kernel = @qf_kernels::@qf_permute_k4096, layout = #tiled_1x32, member = 0, params = ["x", "perm", "xp"]
// CHECK-SAME: #qf.launch<batch = 1, {{[^>]*}}input = "permuted", kernel = @qf_kernels::@qf_matvec_0_m1, params = ["x", "codes", "scales", "y", "codes.1", "scales.1", "y.1", "codes.2", "scales.2", "y.2"]
// CHECK-SAME: step = "dequantize"
// CHECK-SAME: #qf.fallback_gemm<batch = 1, into = "y", member = 0>
// CHECK-SAME: #qf.fallback_gemm<batch = 1, into = "y", member = 2>
// CHECK-SAME: kernel = @qf_kernels::@qf_permute_k4096, layout = #tiled_32x32, member = 0
// CHECK-SAME: #qf.launch<batch = 16, {{[^>]*}}input = "permuted", kernel = @qf_kernels::@qf_mma_1_m16, layout = #tiled_32x32, params = ["x", "codes", "scales", "y", "codes.1", "scales.1", "y.1", "codes.2", "scales.2", "y.2"]
// CHECK-SAME: #qf.fallback_gemm<batch = 16, into = "y", member = 2>]
// CHECK: qf.launches = []
// CHECK: qf.launches = []
func.func @qkv(%x: tensor<?x4096xf16>) -> (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>) {
  %wq = qf.weight_ref "q" : !wq
  %wk = qf.weight_ref "k" : !wk
  %wv = qf.weight_ref "v" : !wk
  %q = qf.fused_matmul %x, %wq {qf.group = 0 : i64, tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>, layout = #l32>]} : tensor<?x4096xf16>, !wq -> tensor<?x4096xf16>
  %k = qf.fused_matmul %x, %wk {qf.group = 0 : i64, tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>, layout = #l32>]} : tensor<?x4096xf16>, !wk -> tensor<?x1024xf16>
  %v = qf.fused_matmul %x, %wv {qf.group = 0 : i64, tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>, layout = #l32>]} : tensor<?x4096xf16>, !wk -> tensor<?x1024xf16>
  return %q, %k, %v : tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>
}

// -----

// act_order gate/up under silu_mul (qf-fuse-gated-mlp): the same at batch
// 16, where the fallback dequantizes gate and up into scratch and runs the
// silu_mul kernel.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#l32 = #qf.layout<tiled, tile_n = 32, tile_k = 32>
!w = !qf.weight<1024x4096, #ao, #l32>
// CHECK-LABEL: func.func @gate_up
// CHECK: qf.launch_guards = array<i32: 1, 1, 2, 2, 2, 2, 2>
// CHECK-SAME: kernel = @qf_kernels::@qf_permute_k4096, layout = #tiled_32x32, member = 0
// CHECK-SAME: input = "permuted", kernel = @qf_kernels::@qf_mma_0_m16, params = ["x", "codes", "scales", "up_codes", "up_scales", "y"]
// CHECK-SAME: step = "dequantize", weight = "weight"
// CHECK-SAME: #qf.fallback_gemm<batch = 16, into = "gate", member = 0>
// CHECK-SAME: step = "dequantize", weight = "up"
// CHECK-SAME: #qf.fallback_gemm<batch = 16, into = "up", member = 0>
// CHECK-SAME: step = "silu_mul"
func.func @gate_up(%x: tensor<16x4096xf16>) -> tensor<16x1024xf16> {
  %wg = qf.weight_ref "gate" : !w
  %wu = qf.weight_ref "up" : !w
  %a = qf.fused_matmul %x, %wg up(%wu : !w) {activation = #qf<activation silu_mul>, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>} : tensor<16x4096xf16>, !w -> tensor<16x1024xf16>
  return %a : tensor<16x1024xf16>
}
