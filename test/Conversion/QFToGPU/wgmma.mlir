// RUN: qfuse-opt %s -split-input-file --qf-to-gpu="chip=sm_90a" -verify-diagnostics | FileCheck %s
// RUN: not qfuse-opt %s -split-input-file --qf-to-gpu="chip=sm_90" 2>&1 | FileCheck %s --check-prefix=SM90

// #qf.tiling<wgmma, ...> lowers to the tensor-core kernel with warpgroup
// MMAs (sm_90a): one warpgroup of four 32-row warps, the same cp.async
// pipeline and weight layout, the decoded weights as wgmma's register A
// operand, the activation tile (128-byte swizzled, K-major) as B through a
// matrix descriptor, m64nNk16 with N = block_m.
#e = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #e, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
// CHECK-LABEL: func.func @wgmma
// CHECK: grid = [2, 32, 1], kernel = @qf_kernels::@qf_wgmma_0_m128
// CHECK-LABEL: llvm.func @qf_wgmma_0_m128(
// CHECK-SAME: nvvm.maxntid = array<i32: 128, 1, 1>
// CHECK-NOT: nvvm.ldmatrix
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: wgmma.wait_group.sync.aligned 0;
// SM90: the wgmma kernel needs sm_90a (qfuse-compile --chip=sm_90a); target is sm_90
func.func @wgmma(%x: tensor<128x4096xf16>) -> tensor<128x4096xf16> {
  %w = qf.weight_ref "w" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>}
         : tensor<128x4096xf16>, !w -> tensor<128x4096xf16>
  return %y : tensor<128x4096xf16>
}

// -----

// A warpgroup per k group, the activation tile one 128-byte swizzle row
// deep: other shapes are refused with the contract.
#e = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #e, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
func.func @wgmma_split(%x: tensor<128x4096xf16>) -> tensor<128x4096xf16> {
  %w = qf.weight_ref "w" : !w
  // expected-error@+1 {{the wgmma kernel takes block_n = 128 (a warpgroup per k group and weight) and block_k = 64; got #qf.tiling<wgmma, block_m = 64, block_n = 64, block_k = 64, split_k = 2, stages = 3>}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 64, block_k = 64, split_k = 2, stages = 3>}
         : tensor<128x4096xf16>, !w -> tensor<128x4096xf16>
  return %y : tensor<128x4096xf16>
}

// -----

// silu_mul on wgmma: a warpgroup each for gate and up per k group (warps
// 0-3 stream gate, 4-7 up, each issuing its own wgmmas on the shared
// activation tile); the gate warpgroup parks its sums in shared memory and
// the up warpgroup stores silu(gate) * up. One k group: a producer
// warpgroup (warps 8-11) issues the copies, so the block has 384 threads,
// 48 bytes of mbarriers (3 slots, full and empty) after the pipeline, and
// the gate and up warpgroups meet at a named barrier of 256 threads.
#e = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<14336x4096, #e, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
// CHECK-LABEL: func.func @wgmma_gated
// CHECK: block = [384, 1, 1], {{.*}}grid = [1, 112, 1], kernel = @qf_kernels::@qf_wgmma_0_m128, params = ["x", "codes", "scales", "up_codes", "up_scales", "y"]
// CHECK-LABEL: llvm.func @qf_wgmma_0_m128(
// CHECK-SAME: nvvm.maxnreg = 168 : i32, nvvm.maxntid = array<i32: 384, 1, 1>
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.barrier0
// CHECK: nvvm.cp.async.mbarrier.arrive
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK: nvvm.barrier id = {{.*}} number_of_threads = {{.*}}
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier id
// CHECK: ex2.approx.ftz.f32
func.func @wgmma_gated(%x: tensor<128x4096xf16>) -> tensor<128x14336xf16> {
  %g = qf.weight_ref "gate_proj" : !w
  %u = qf.weight_ref "up_proj" : !w
  %y = qf.fused_matmul %x, %g up(%u : !w) {activation = #qf<activation silu_mul>, tiling = #qf.tiling<wgmma, block_m = 128, block_n = 128, block_k = 64, stages = 3>} : tensor<128x4096xf16>, !w -> tensor<128x14336xf16>
  return %y : tensor<128x14336xf16>
}
