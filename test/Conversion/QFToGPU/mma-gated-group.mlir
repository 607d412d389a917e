// RUN: qfuse-opt %s -split-input-file --qf-to-gpu="batch-sizes=16" -verify-diagnostics | FileCheck %s

// silu_mul on the tensor-core kernel: each n warp of a k group has a twin
// streaming the up weight (twice the warps of the tiling), the gate warps
// hand their sums to the up warps through shared memory, and the up warps
// store silu(gate) * up.
#e = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<14336x4096, #e, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
// CHECK-LABEL: func.func @gated
// CHECK: qf.launches = [#qf.launch<batch = 16, block = [256, 1, 1], {{.*}}grid = [1, 224, 1], kernel = @qf_kernels::@qf_mma_0_m16, params = ["x", "codes", "scales", "up_codes", "up_scales", "y"]
// CHECK-LABEL: llvm.func @qf_mma_0_m16(
// CHECK: nvvm.mma.sync
// CHECK: nvvm.barrier0
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: ex2.approx.ftz.f32
func.func @gated(%x: tensor<?x4096xf16>) -> tensor<?x14336xf16> {
  %g = qf.weight_ref "gate_proj" : !w
  %u = qf.weight_ref "up_proj" : !w
  %y = qf.fused_matmul %x, %g up(%u : !w) {activation = #qf<activation silu_mul>, tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 2, stages = 3>} : tensor<?x4096xf16>, !w -> tensor<?x14336xf16>
  return %y : tensor<?x14336xf16>
}

// -----

// A qf.group (q/k/v) on the tensor-core kernel: one launch whose grid y
// covers every member's N / block_n blocks (4096 / 64 + 2 x 1024 / 64),
// each block taking its member's weight and output.
#e = #qf.enc<int4, group = 128, scale = f16>
#l = #qf.layout<tiled, tile_n = 32, tile_k = 32>
// CHECK-LABEL: func.func @qkv
// CHECK: qf.launches = [#qf.launch<batch = 16, block = [128, 1, 1], {{.*}}grid = [1, 96, 1], kernel = @qf_kernels::@qf_mma_0_m16, params = ["x", "codes", "scales", "y", "codes.1", "scales.1", "y.1", "codes.2", "scales.2", "y.2"]
// CHECK: qf.launches = []
// CHECK: qf.launches = []
func.func @qkv(%x: tensor<?x4096xf16>) -> (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>) {
  %q = qf.weight_ref "q" : !qf.weight<4096x4096, #e, #l>
  %k = qf.weight_ref "k" : !qf.weight<1024x4096, #e, #l>
  %v = qf.weight_ref "v" : !qf.weight<1024x4096, #e, #l>
  %yq = qf.fused_matmul %x, %q {qf.group = 0 : i64, tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 2, stages = 3>} : tensor<?x4096xf16>, !qf.weight<4096x4096, #e, #l> -> tensor<?x4096xf16>
  %yk = qf.fused_matmul %x, %k {qf.group = 0 : i64, tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 2, stages = 3>} : tensor<?x4096xf16>, !qf.weight<1024x4096, #e, #l> -> tensor<?x1024xf16>
  %yv = qf.fused_matmul %x, %v {qf.group = 0 : i64, tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 2, stages = 3>} : tensor<?x4096xf16>, !qf.weight<1024x4096, #e, #l> -> tensor<?x1024xf16>
  return %yq, %yk, %yv : tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>
}

// -----

// silu_mul has no bias, and gate and up meet inside one block, so not
// across a cluster.
#e = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<14336x4096, #e, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
func.func @gated_cluster(%x: tensor<?x4096xf16>) -> tensor<?x14336xf16> {
  %g = qf.weight_ref "gate_proj" : !w
  %u = qf.weight_ref "up_proj" : !w
  // expected-error@+1 {{silu_mul combines gate and up inside a block; cluster_k = 2 is not supported with it}}
  %y = qf.fused_matmul %x, %g up(%u : !w) {activation = #qf<activation silu_mul>, tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 2, stages = 3, cluster_k = 2>} : tensor<?x4096xf16>, !w -> tensor<?x14336xf16>
  return %y : tensor<?x14336xf16>
}

// -----

// A block holds at most 16 warps: the up twins count.
#e = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<14336x4096, #e, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
func.func @gated_too_many_warps(%x: tensor<?x4096xf16>) -> tensor<?x14336xf16> {
  %g = qf.weight_ref "gate_proj" : !w
  %u = qf.weight_ref "up_proj" : !w
  // expected-error@+1 {{block_n / 32 x split_k x 2 (silu_mul) = 32 warps; at most 16 fit a block}}
  %y = qf.fused_matmul %x, %g up(%u : !w) {activation = #qf<activation silu_mul>, tiling = #qf.tiling<mma, block_m = 16, block_n = 128, block_k = 64, split_k = 4, stages = 3>} : tensor<?x4096xf16>, !w -> tensor<?x14336xf16>
  return %y : tensor<?x14336xf16>
}
