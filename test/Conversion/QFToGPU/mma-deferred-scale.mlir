// RUN: qfuse-opt %s -split-input-file --qf-to-gpu | FileCheck %s

// Deferred scaling in the tensor-core kernel: with few m tiles and long
// groups, B fragments stay unscaled (q - z, exact in f16), each group's
// partial sums are folded in with one f32 fma per accumulator (16 per m
// tile), and no half2 multiply is left; at block_m = 64 (four m tiles) the
// per-fragment multiply is cheaper and stays.
#e = #qf.enc<int4, group = 128, scale = f16>
#l = #qf.layout<tiled, tile_n = 32, tile_k = 32>
!w = !qf.weight<4096x4096, #e, #l>
// CHECK-LABEL: llvm.func @qf_mma_0_m16(
// CHECK-NOT: llvm.fmul {{.*}} : vector<2xf16>
// CHECK-COUNT-16: llvm.intr.fma({{.*}}) : (f32, f32, f32) -> f32
// CHECK-NOT: llvm.fmul {{.*}} : vector<2xf16>
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @qf_mma_1_m64(
// CHECK-NOT: llvm.intr.fma({{.*}}) : (f32, f32, f32) -> f32
// CHECK-COUNT-64: llvm.fmul {{.*}} : vector<2xf16>
// CHECK-NOT: llvm.intr.fma({{.*}}) : (f32, f32, f32) -> f32
// CHECK: llvm.return
func.func @deferred(%x: tensor<16x4096xf16>) -> tensor<16x4096xf16> {
  %w = qf.weight_ref "w" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 2, stages = 3>}
         : tensor<16x4096xf16>, !w -> tensor<16x4096xf16>
  return %y : tensor<16x4096xf16>
}
func.func @per_fragment(%x: tensor<64x4096xf16>) -> tensor<64x4096xf16> {
  %w = qf.weight_ref "w" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 64, block_n = 64, block_k = 128, split_k = 2, stages = 3>}
         : tensor<64x4096xf16>, !w -> tensor<64x4096xf16>
  return %y : tensor<64x4096xf16>
}

// -----

// Per-channel scales fold once, in the epilogue: one f32 multiply per
// output, after the K loop and the split-K sum.
#e = #qf.enc<int8, per_channel, scale = bf16>
#l = #qf.layout<tiled, tile_n = 32, tile_k = 32>
!w = !qf.weight<1024x4096, #e, #l>
// CHECK-LABEL: llvm.func @qf_mma_0_m32(
// CHECK-NOT: llvm.fmul {{.*}} : vector<2xf16>
// CHECK: nvvm.mma.sync
// CHECK-NOT: llvm.fmul {{.*}} : vector<2xf16>
// CHECK: llvm.fmul {{.*}} : f32
// CHECK: llvm.return
func.func @per_channel(%x: tensor<32x4096xf16>) -> tensor<32x1024xf16> {
  %w = qf.weight_ref "w" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 32, block_n = 32, block_k = 64, split_k = 4, stages = 3>}
         : tensor<32x4096xf16>, !w -> tensor<32x1024xf16>
  return %y : tensor<32x1024xf16>
}
