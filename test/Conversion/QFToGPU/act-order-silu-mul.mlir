// RUN: qfuse-opt %s -split-input-file --qf-to-gpu="batch-sizes=1,16,512" | FileCheck %s

// An act_order down_proj whose silu_mul prologue came from
// qf-fuse-act-order-silu-mul: per batch, one launch (a block per row)
// computes silu(gate) * up into shared memory and writes it in sorted
// column order (scratch "permuted"), which the matvec (1) and the tensor-core
// kernel (16) read; no silu_mul launch, no permute launch, no guard (any
// perm is exact). The batch on the fallback (512, dequant_gemm) runs the
// plain elementwise kernel into scratch "activated" for its gemm.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#l1 = #qf.layout<tiled, tile_n = 1, tile_k = 32>
#l32 = #qf.layout<tiled, tile_n = 32, tile_k = 32>
!w = !qf.weight<4096x14336, #ao, #l1>
!act = tensor<?x14336xf16>
// CHECK-LABEL: func.func @down
// CHECK-NOT: qf.launch_guards
// CHECK: qf.launches = [#qf.launch<args = [#qf.arg<activations "input">, #qf.arg<operand 2>, #qf.arg<component "perm">, #qf.arg<scratch "permuted">], batch = 1, block = [1024, 1, 1], {{[^>]*}}grid = [1, 1, 1], kernel = @qf_kernels::@qf_permute_silu_mul_k14336, layout = #tiled_1x32, member = 0, params = ["gate", "up", "perm", "xp"], shared_bytes = 28672, step = "silu_mul_prologue">
// CHECK-SAME: #qf.launch<batch = 1, {{[^>]*}}input = "permuted", kernel = @qf_kernels::@qf_matvec_0_m1, params = ["x", "codes", "scales", "y"]
// CHECK-SAME: #qf.launch<args = [#qf.arg<activations "input">, #qf.arg<operand 2>, #qf.arg<component "perm">, #qf.arg<scratch "permuted">], batch = 16, {{[^>]*}}grid = [1, 16, 1], kernel = @qf_kernels::@qf_permute_silu_mul_k14336, layout = #tiled_32x32, {{[^>]*}}step = "silu_mul_prologue">
// CHECK-SAME: #qf.launch<batch = 16, {{[^>]*}}input = "permuted", kernel = @qf_kernels::@qf_mma_1_m16, layout = #tiled_32x32
// CHECK-SAME: #qf.launch<args = [#qf.arg<activations "input">, #qf.arg<operand 2>, #qf.arg<scratch "activated">, #qf.arg<i32 917504>], batch = 512, {{[^>]*}}kernel = @qf_kernels::@qf_silu_mul_v8, {{[^>]*}}params = ["gate", "up", "y", "n"], {{[^>]*}}step = "silu_mul_prologue">
// CHECK-SAME: step = "dequantize"
// CHECK-SAME: #qf.fallback_gemm<batch = 512, into = "y", member = 0>]
// CHECK-NOT: qf_permute_k
// Each product is computed once: the row's gate and up in 16-byte loads,
// silu(g) * u rounded to f16 (the elementwise kernel's code) into the
// shared row; after the barrier each thread writes 8 sorted columns (two
// 16-byte perm loads, 8 shared loads, one 16-byte store).
// CHECK: llvm.func @qf_permute_silu_mul_k14336(%arg0: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %arg1: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %arg2: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %arg3: !llvm.ptr<1> {llvm.noalias})
// CHECK: llvm.load {{.*}} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.load {{.*}} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: ex2.approx.ftz.f32
// CHECK: llvm.fptrunc {{.*}} : f32 to f16
// CHECK: llvm.store {{.*}} : vector<4xi32>, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-2: llvm.load {{.*}} : !llvm.ptr<1> -> vector<4xi32>
// CHECK-COUNT-8: llvm.load {{.*}} : !llvm.ptr<3> -> i16
// CHECK: llvm.store {{.*}} : vector<4xi32>, !llvm.ptr<1>
// CHECK: llvm.return
func.func @down(%g: !act, %u: !act) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "down" : !w
  %y = qf.fused_matmul %g, %w silu_mul(%u : !act) {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>, layout = #l32>, #qf.batch_tiling<batch = 512, tiling = #qf.tiling<dequant_gemm>>]} : !act, !w -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}

// -----

// Beside it, an act_order matmul without the prologue keeps the permute
// launch, staged in shared memory as before.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#l1 = #qf.layout<tiled, tile_n = 1, tile_k = 32>
!w = !qf.weight<4096x14336, #ao, #l1>
!act = tensor<1x14336xf16>
// CHECK-LABEL: func.func @both
// CHECK: kernel = @qf_kernels::@qf_permute_silu_mul_k14336, {{[^>]*}}shared_bytes = 28672, step = "silu_mul_prologue">
// CHECK: kernel = @qf_kernels::@qf_permute_k14336, {{[^>]*}}shared_bytes = 28672, step = "permute">
// CHECK: llvm.func @qf_permute_silu_mul_k14336(
// CHECK: llvm.func @qf_permute_k14336(
// CHECK: nvvm.barrier0
func.func @both(%g: !act, %u: !act, %x: !act) -> (tensor<1x4096xf16>, tensor<1x4096xf16>) {
  %w = qf.weight_ref "down" : !w
  %w2 = qf.weight_ref "other" : !w
  %y = qf.fused_matmul %g, %w silu_mul(%u : !act) {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>} : !act, !w -> tensor<1x4096xf16>
  %z = qf.fused_matmul %x, %w2 {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>} : !act, !w -> tensor<1x4096xf16>
  return %y, %z : tensor<1x4096xf16>, tensor<1x4096xf16>
}

// -----

// A row past 48 KB (K = 28672, a 70B model's intermediate size) is not
// staged: a block per 2048 sorted columns gathers gate and up at perm[j]
// and computes each product there, once.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#l1 = #qf.layout<tiled, tile_n = 1, tile_k = 32>
!w = !qf.weight<8192x28672, #ao, #l1>
!act = tensor<1x28672xf16>
// CHECK-LABEL: func.func @long_row
// CHECK: block = [256, 1, 1], {{[^>]*}}grid = [14, 1, 1], kernel = @qf_kernels::@qf_permute_silu_mul_k28672_g, {{[^>]*}}shared_bytes = 0, step = "silu_mul_prologue">
// CHECK: llvm.func @qf_permute_silu_mul_k28672_g(
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-2: llvm.load {{.*}} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.load {{.*}} : !llvm.ptr<1> -> i16
// CHECK: llvm.load {{.*}} : !llvm.ptr<1> -> i16
// CHECK: ex2.approx.ftz.f32
// CHECK: llvm.store {{.*}} : vector<4xi32>, !llvm.ptr<1>
// CHECK: llvm.return
func.func @long_row(%g: !act, %u: !act) -> tensor<1x8192xf16> {
  %w = qf.weight_ref "down" : !w
  %y = qf.fused_matmul %g, %w silu_mul(%u : !act) {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>} : !act, !w -> tensor<1x8192xf16>
  return %y : tensor<1x8192xf16>
}
