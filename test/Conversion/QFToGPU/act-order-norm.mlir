// RUN: qfuse-opt %s -split-input-file --qf-to-gpu="batch-sizes=1,16" | FileCheck %s

// An act_order qf.group whose RMSNorm prologue came from
// qf-fuse-act-order-norm: per batch, one norm launch gathers x and gamma
// through the first member's perm and writes the normalized rows in sorted
// column order (scratch "permuted"), and the group's kernel reads them; no
// permute launch, no prologue in the kernel. Under differing perms (2) the
// fallback runs a plain norm launch into scratch "normed" for its gemms.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#l1 = #qf.layout<tiled, tile_n = 1, tile_k = 32>
#l32 = #qf.layout<tiled, tile_n = 32, tile_k = 32>
!wq = !qf.weight<4096x4096, #ao, #l1>
!wk = !qf.weight<1024x4096, #ao, #l1>
// CHECK-LABEL: func.func @qkv
// CHECK: qf.fused_matmul
// CHECK-SAME: qf.launch_guards = array<i32: 1, 1, 2, 2, 2, 2, 2, 2, 2, 1, 1, 2, 2, 2, 2, 2, 2, 2>
// CHECK-SAME: qf.launches = [#qf.launch<args = [#qf.arg<activations "input">, #qf.arg<operand 2>, #qf.arg<component "perm">, #qf.arg<scratch "permuted">], batch = 1, {{[^>]*}}kernel = @qf_kernels::@qf_rms_norm_h4096_eps1em05_perm, layout = #tiled_1x32, member = 0, params = ["x", "gamma", "perm", "y"], shared_bytes = 16512, step = "rms_norm">
// CHECK-SAME: #qf.launch<batch = 1, {{[^>]*}}input = "permuted", kernel = @qf_kernels::@qf_matvec_0_m1, params = ["x", "codes", "scales", "y", "codes.1", "scales.1", "y.1", "codes.2", "scales.2", "y.2"]
// CHECK-SAME: #qf.launch<args = [#qf.arg<activations "input">, #qf.arg<operand 2>, #qf.arg<scratch "normed">], batch = 1, {{[^>]*}}kernel = @qf_kernels::@qf_rms_norm_h4096_eps1em05, {{[^>]*}}params = ["x", "gamma", "y"], {{[^>]*}}step = "rms_norm">
// CHECK-SAME: step = "dequantize"
// CHECK-SAME: #qf.fallback_gemm<batch = 1, into = "y", member = 2>
// CHECK-SAME: kernel = @qf_kernels::@qf_rms_norm_h4096_eps1em05_perm, layout = #tiled_32x32, member = 0
// CHECK-SAME: #qf.launch<batch = 16, {{[^>]*}}input = "permuted", kernel = @qf_kernels::@qf_mma_1_m16, layout = #tiled_32x32
// CHECK-SAME: kernel = @qf_kernels::@qf_rms_norm_h4096_eps1em05, layout = #tiled_32x32
// CHECK-SAME: #qf.fallback_gemm<batch = 16, into = "y", member = 2>]
// CHECK-NOT: qf_permute
// CHECK: qf.launches = []
// CHECK: qf.launches = []
// The row of 4096 is staged: x and gamma in shared memory (16 KB beside the
// 128 bytes of partial sums), stored there and the perm entries loaded as
// 16-byte vectors before the block sum's barrier; the gathers after it
// read shared memory only.
// CHECK-DAG: llvm.mlir.global internal @qf_rms_norm_h4096_eps1em05_perm_x() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<4096 x f16>
// CHECK-DAG: llvm.mlir.global internal @qf_rms_norm_h4096_eps1em05_perm_gamma() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<4096 x f16>
// CHECK: llvm.func @qf_rms_norm_h4096_eps1em05_perm(%arg0: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %arg1: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %arg2: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %arg3: !llvm.ptr<1> {llvm.noalias})
// CHECK-COUNT-2: llvm.load {{.*}}invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK-COUNT-2: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK-COUNT-2: llvm.load {{.*}}invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: nvvm.barrier0
// CHECK-NOT: llvm.load {{.*}}!llvm.ptr<1>
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> f16
// CHECK-NOT: llvm.load {{.*}}!llvm.ptr<1>
// CHECK: llvm.return
func.func @qkv(%x: tensor<?x4096xf16>, %g: tensor<4096xf16>) -> (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>) {
  %wq = qf.weight_ref "q" : !wq
  %wk = qf.weight_ref "k" : !wk
  %wv = qf.weight_ref "v" : !wk
  %q = qf.fused_matmul %x, %wq norm(%g : tensor<4096xf16>) {norm_eps = 1.0e-05 : f32, qf.group = 0 : i64, tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>, layout = #l32>]} : tensor<?x4096xf16>, !wq -> tensor<?x4096xf16>
  %k = qf.fused_matmul %x, %wk norm(%g : tensor<4096xf16>) {norm_eps = 1.0e-05 : f32, qf.group = 0 : i64, tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>, layout = #l32>]} : tensor<?x4096xf16>, !wk -> tensor<?x1024xf16>
  %v = qf.fused_matmul %x, %wv norm(%g : tensor<4096xf16>) {norm_eps = 1.0e-05 : f32, qf.group = 0 : i64, tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>, layout = #l32>]} : tensor<?x4096xf16>, !wk -> tensor<?x1024xf16>
  return %q, %k, %v : tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>
}

// -----

// A lone act_order weight with a prologue on the tensor-core kernel: the
// permuted norm replaces the permute launch, unguarded (one perm).
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#l32 = #qf.layout<tiled, tile_n = 32, tile_k = 32>
!w = !qf.weight<4096x14336, #ao, #l32>
// CHECK-LABEL: func.func @down
// CHECK-NOT: qf.launch_guards
// A row of 14336 does not fit shared memory twice: x and gamma are
// gathered from global memory.
// CHECK: qf.launches = [#qf.launch<args = [#qf.arg<activations "input">, #qf.arg<operand 2>, #qf.arg<component "perm">, #qf.arg<scratch "permuted">], batch = 16, {{[^>]*}}kernel = @qf_kernels::@qf_rms_norm_h14336_eps1em05_perm, {{[^>]*}}shared_bytes = 128, step = "rms_norm">, #qf.launch<batch = 16, {{[^>]*}}input = "permuted", kernel = @qf_kernels::@qf_mma_0_m16, params = ["x", "codes", "scales", "y"]{{[^>]*}}>]
// CHECK-NOT: @qf_rms_norm_h14336_eps1em05_perm_x
func.func @down(%x: tensor<16x14336xf16>, %g: tensor<14336xf16>) -> tensor<16x4096xf16> {
  %w = qf.weight_ref "down" : !w
  %y = qf.fused_matmul %x, %w norm(%g : tensor<14336xf16>) {norm_eps = 1.0e-05 : f32, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>} : tensor<16x14336xf16>, !w -> tensor<16x4096xf16>
  return %y : tensor<16x4096xf16>
}
