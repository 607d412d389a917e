// RUN: qfuse-opt %s --qf-to-gpu="batch-sizes=1,16" | FileCheck %s
// RUN: qfuse-opt %s --qf-to-gpu="batch-sizes=1,16 permute-staged-max-k=0" | FileCheck %s --check-prefix=GATHER

// permute-staged-max-k=0: every permute gathers from global memory (its own
// kernel name, no shared row).
// GATHER-LABEL: func.func @act_order
// GATHER: kernel = @qf_kernels::@qf_permute_k4096_g, layout = #tiled_1x32, member = 0, params = ["x", "perm", "xp"], shared_bytes = 0, step = "permute">
// GATHER-NOT: qf_permute_k4096_row
// GATHER: llvm.func @qf_permute_k4096_g(

// act_order (issue 20, part 1): per batch, a launch permutes the
// activations into the weight's sorted column order (x -> scratch
// `permuted`, through the weight's `perm`), and the kernel, the matvec at
// batch 1 as the mma at 16, reads the act_order weight as a plain one: its
// parameters have no perm, and its record says it reads the permuted input.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#l1 = #qf.layout<tiled, tile_n = 1, tile_k = 32>
#l32 = #qf.layout<tiled, tile_n = 32, tile_k = 32>
!w = !qf.weight<4096x4096, #ao, #l1>
// CHECK-LABEL: func.func @act_order
// CHECK: qf.launches = [#qf.launch<args = [#qf.arg<activations "input">, #qf.arg<component "perm">, #qf.arg<scratch "permuted">], {{[^>]*}}grid = [2, 1, 1], kernel = @qf_kernels::@qf_permute_k4096, layout = #tiled_1x32, member = 0, params = ["x", "perm", "xp"], shared_bytes = 8192, step = "permute">
// CHECK-SAME: #qf.launch<batch = 1, {{[^>]*}}dynamic_shared_bytes = 0, {{[^>]*}}input = "permuted", kernel = @qf_kernels::@qf_matvec_0_m1, params = ["x", "codes", "scales", "y"]
// CHECK-SAME: #qf.launch<args = [#qf.arg<activations "input">, #qf.arg<component "perm">, #qf.arg<scratch "permuted">], {{[^>]*}}grid = [2, 16, 1], kernel = @qf_kernels::@qf_permute_k4096, layout = #tiled_32x32, member = 0, params = ["x", "perm", "xp"], shared_bytes = 8192, step = "permute">
// CHECK-SAME: #qf.launch<batch = 16, {{[^>]*}}input = "permuted", kernel = @qf_kernels::@qf_mma_1_m16, layout = #tiled_32x32, params = ["x", "codes", "scales", "y"]
func.func @act_order(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "w" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>, layout = #l32>]} : tensor<?x4096xf16>, !w -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}

// K = 18944 (Qwen2.5-7B's down_proj) at batch 8 on the matvec: the kernel
// holds no activations in shared memory, so K x batch has no limit.
!wd = !qf.weight<3584x18944, #ao, #l1>
// CHECK-LABEL: func.func @down_b8
// CHECK: kernel = @qf_kernels::@qf_permute_k18944
// CHECK-SAME: #qf.launch<batch = 8, {{[^>]*}}dynamic_shared_bytes = 0, {{[^>]*}}input = "permuted", kernel = @qf_kernels::@qf_matvec_2_m8, params = ["x", "codes", "scales", "y"]
func.func @down_b8(%x: tensor<8x18944xf16>) -> tensor<8x3584xf16> {
  %w = qf.weight_ref "down" : !wd
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>} : tensor<8x18944xf16>, !wd -> tensor<8x3584xf16>
  return %y : tensor<8x3584xf16>
}
// The row is copied into shared memory in 16-byte vectors; after the
// barrier each thread writes 8 sorted columns of its block's chunk: two
// 16-byte perm loads, 8 shared loads, one 16-byte store.
// CHECK: llvm.func @qf_permute_k4096(
// CHECK: llvm.load {{.*}} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.store {{.*}} : vector<4xi32>, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-2: llvm.load {{.*}} : !llvm.ptr<1> -> vector<4xi32>
// CHECK-COUNT-8: llvm.load {{.*}} : !llvm.ptr<3> -> i16
// CHECK: llvm.store {{.*}} : vector<4xi32>, !llvm.ptr<1>
// CHECK: llvm.func @qf_mma_1_m16(
