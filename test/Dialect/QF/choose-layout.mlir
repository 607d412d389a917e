// RUN: qfuse-opt %s -split-input-file --qf-choose-layout | FileCheck %s

// Matvec kernels over int4/uint4 codes read their weight tiled: one tile per
// lane load (tile_k = vec_bytes * 8 / 4), nibbles of each 32-bit word in the
// order [0, 2, 4, 6, 1, 3, 5, 7]. Llama-3-8B q_proj, int4 g128, at M = 1.
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #int4>
// CHECK: #tiled_1x32 = #qf.layout<tiled, tile_n = 1, tile_k = 32>
// CHECK-LABEL: @int4_matvec
func.func @int4_matvec(%x: tensor<1x4096xf16>) -> tensor<1x4096xf16> {
  // CHECK: %[[W:.*]] = qf.weight_ref "model.layers.0.self_attn.q_proj" : !qf.weight<4096x4096, #int4_g128, #tiled_1x32>
  // CHECK: qf.fused_matmul %{{.*}}, %[[W]] {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>} : tensor<1x4096xf16>, !qf.weight<4096x4096, #int4_g128, #tiled_1x32>
  %w = qf.weight_ref "model.layers.0.self_attn.q_proj" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>} : tensor<1x4096xf16>, !w -> tensor<1x4096xf16>
  return %y : tensor<1x4096xf16>
}

// -----

// Integer 4-bit formats are tiled (uint4 with zero points, int4 under 2:4,
// where tile_k counts the kept codes); table formats (NVFP4, NF4, 4-bit
// codebooks) decode a byte at a time through a table and stay row_major.
#uint4 = #qf.enc<uint4, group = 128, scale = f16, zero = int>
#nvfp4 = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>
#nf4 = #qf.enc<nf4, group = 64, scale = f32>
#cb4 = #qf.enc<codebook, bits = 4, table = "lut.layer0" : f32, per_channel, scale = f16>
#sp4 = #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>
#mv = #qf.tiling<matvec, block_n = 4, k_unroll = 2>
// CHECK-LABEL: @four_bit_formats
func.func @four_bit_formats(%x: tensor<1x1536xf16>) {
  // CHECK: qf.weight_ref "uint4" : !qf.weight<256x1536, #uint4_g128, #tiled_1x32>
  // CHECK: qf.weight_ref "nvfp4" : !qf.weight<1536x1536, #fp4e2m1_g16>
  // CHECK: qf.weight_ref "nf4" : !qf.weight<8960x1536, #nf4_g64>
  // CHECK: qf.weight_ref "codebook" : !qf.weight<1536x1536, #codebook_pc>
  // CHECK: qf.weight_ref "sparse" : !qf.weight<1536x1536, #int4_g128_2of4, #tiled_1x32>
  %a = qf.weight_ref "uint4" : !qf.weight<256x1536, #uint4>
  %b = qf.weight_ref "nvfp4" : !qf.weight<1536x1536, #nvfp4>
  %c = qf.weight_ref "nf4" : !qf.weight<8960x1536, #nf4>
  %d = qf.weight_ref "codebook" : !qf.weight<1536x1536, #cb4>
  %e = qf.weight_ref "sparse" : !qf.weight<1536x1536, #sp4>
  %0 = qf.fused_matmul %x, %a {tiling = #mv} : tensor<1x1536xf16>, !qf.weight<256x1536, #uint4> -> tensor<1x256xf16>
  %1 = qf.fused_matmul %x, %b {tiling = #mv} : tensor<1x1536xf16>, !qf.weight<1536x1536, #nvfp4> -> tensor<1x1536xf16>
  %2 = qf.fused_matmul %x, %c {tiling = #mv} : tensor<1x1536xf16>, !qf.weight<8960x1536, #nf4> -> tensor<1x8960xf16>
  %3 = qf.fused_matmul %x, %d {tiling = #mv} : tensor<1x1536xf16>, !qf.weight<1536x1536, #cb4> -> tensor<1x1536xf16>
  %4 = qf.fused_matmul %x, %e {tiling = #mv} : tensor<1x1536xf16>, !qf.weight<1536x1536, #sp4> -> tensor<1x1536xf16>
  return
}

// -----

// Narrower loads, smaller tiles: 8 bytes -> 16 codes, 4 bytes -> 8 codes.
#int4 = #qf.enc<int4, group = 8, scale = f16>
// CHECK-DAG: #tiled_1x16 = #qf.layout<tiled, tile_n = 1, tile_k = 16>
// CHECK-DAG: #tiled_1x8 = #qf.layout<tiled, tile_n = 1, tile_k = 8>
// CHECK-LABEL: @narrow_loads
func.func @narrow_loads(%x: tensor<1x4104xf16>, %z: tensor<1x4112xf16>) {
  // CHECK: qf.weight_ref "vec8" : !qf.weight<4096x4112, #int4_g8, #tiled_1x16>
  // CHECK: qf.weight_ref "vec4" : !qf.weight<4096x4104, #int4_g8, #tiled_1x8>
  %a = qf.weight_ref "vec8" : !qf.weight<4096x4112, #int4>
  %b = qf.weight_ref "vec4" : !qf.weight<4096x4104, #int4>
  %0 = qf.fused_matmul %z, %a {tiling = #qf.tiling<matvec, block_n = 4, vec_bytes = 8, k_unroll = 4>} : tensor<1x4112xf16>, !qf.weight<4096x4112, #int4> -> tensor<1x4096xf16>
  %1 = qf.fused_matmul %x, %b {tiling = #qf.tiling<matvec, block_n = 4, vec_bytes = 4, k_unroll = 4>} : tensor<1x4104xf16>, !qf.weight<4096x4104, #int4> -> tensor<1x4096xf16>
  return
}

// -----

// Kept row_major: 8-bit and 16-bit codes, a 3-bit codebook, mma tilings,
// and fused matmuls without a tiling.
#int8 = #qf.enc<int8, per_channel, scale = f16>
#fp8 = #qf.enc<fp8e4m3, per_channel, scale = f32>
#sp = #qf.enc<f16, sparse = 2:4>
#cb3 = #qf.enc<codebook, bits = 3, table = "lut" : f16, group = 128, scale = f16>
#int4 = #qf.enc<int4, group = 128, scale = f16>
#mv = #qf.tiling<matvec, block_n = 4, k_unroll = 4>
// CHECK-LABEL: @kept_row_major
func.func @kept_row_major(%x: tensor<1x4096xf16>) {
  // CHECK-NEXT: qf.weight_ref "int8" : !qf.weight<4096x4096, #int8_pc>{{$}}
  // CHECK-NEXT: qf.weight_ref "fp8" : !qf.weight<4096x4096, #fp8e4m3_pc>{{$}}
  // CHECK-NEXT: qf.weight_ref "sparse" : !qf.weight<4096x4096, #f16_2of4>{{$}}
  // CHECK-NEXT: qf.weight_ref "codebook3" : !qf.weight<4096x4096, #codebook_g128>{{$}}
  // CHECK-NEXT: qf.weight_ref "untiled" : !qf.weight<1024x4096, #int4_g128>{{$}}
  // CHECK-NOT: tiled_
  // CHECK: return
  %a = qf.weight_ref "int8" : !qf.weight<4096x4096, #int8>
  %b = qf.weight_ref "fp8" : !qf.weight<4096x4096, #fp8>
  %c = qf.weight_ref "sparse" : !qf.weight<4096x4096, #sp>
  %d = qf.weight_ref "codebook3" : !qf.weight<4096x4096, #cb3>
  %f = qf.weight_ref "untiled" : !qf.weight<1024x4096, #int4>
  %0 = qf.fused_matmul %x, %a {tiling = #mv} : tensor<1x4096xf16>, !qf.weight<4096x4096, #int8> -> tensor<1x4096xf16>
  %1 = qf.fused_matmul %x, %b {tiling = #mv} : tensor<1x4096xf16>, !qf.weight<4096x4096, #fp8> -> tensor<1x4096xf16>
  %2 = qf.fused_matmul %x, %c {tiling = #mv} : tensor<1x4096xf16>, !qf.weight<4096x4096, #sp> -> tensor<1x4096xf16>
  %3 = qf.fused_matmul %x, %d {tiling = #mv} : tensor<1x4096xf16>, !qf.weight<4096x4096, #cb3> -> tensor<1x4096xf16>
  %5 = qf.fused_matmul %x, %f : tensor<1x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<1x1024xf16>
  return
}

// -----

// One weight_ref feeding a matvec (decode), an mma (prefill) and a
// dequantize: each kernel gets a clone in its layout (pair-interleaved rows
// for the matvec, 32x32 B-fragment tiles for mma), the dequantize keeps the
// original.
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<14336x4096, #int4>
// CHECK-LABEL: @mixed_consumers
func.func @mixed_consumers(%x: tensor<1x4096xf16>, %p: tensor<64x4096xf16>) -> tensor<14336x4096xf16> {
  // CHECK: %[[ROW:.*]] = qf.weight_ref "model.layers.0.mlp.gate_proj" : !qf.weight<14336x4096, #int4_g128>
  // CHECK-DAG: %[[MMA:.*]] = qf.weight_ref "model.layers.0.mlp.gate_proj" : !qf.weight<14336x4096, #int4_g128, #tiled_32x32>
  // CHECK-DAG: %[[TILED:.*]] = qf.weight_ref "model.layers.0.mlp.gate_proj" : !qf.weight<14336x4096, #int4_g128, #tiled_1x32>
  // CHECK: qf.fused_matmul %{{.*}}, %[[TILED]] {tiling = #qf.tiling<matvec
  // CHECK: qf.fused_matmul %{{.*}}, %[[MMA]] {tiling = #qf.tiling<mma
  // CHECK: qf.dequantize %[[ROW]]
  %w = qf.weight_ref "model.layers.0.mlp.gate_proj" : !w
  %0 = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>} : tensor<1x4096xf16>, !w -> tensor<1x14336xf16>
  %1 = qf.fused_matmul %p, %w {tiling = #qf.tiling<mma, block_m = 64, block_n = 128, block_k = 64, split_k = 2, stages = 3>} : tensor<64x4096xf16>, !w -> tensor<64x14336xf16>
  %d = qf.dequantize %w : !w -> tensor<14336x4096xf16>
  return %d : tensor<14336x4096xf16>
}

// -----

// Two matvecs wanting different tiles: one clone each, the original goes.
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<1024x4096, #int4>
// CHECK-LABEL: @two_tiled_layouts
func.func @two_tiled_layouts(%x: tensor<1x4096xf16>, %z: tensor<8x4096xf16>) {
  // CHECK-NEXT: %[[A:.*]] = qf.weight_ref "model.layers.0.self_attn.k_proj" : !qf.weight<1024x4096, #int4_g128, #tiled_1x32>
  // CHECK-NEXT: %[[B:.*]] = qf.weight_ref "model.layers.0.self_attn.k_proj" : !qf.weight<1024x4096, #int4_g128, #tiled_1x16>
  // CHECK-NEXT: qf.fused_matmul %{{.*}}, %[[A]]
  // CHECK-NEXT: qf.fused_matmul %{{.*}}, %[[B]]
  %w = qf.weight_ref "model.layers.0.self_attn.k_proj" : !w
  %0 = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 2, k_unroll = 2, split_k = 2>} : tensor<1x4096xf16>, !w -> tensor<1x1024xf16>
  %1 = qf.fused_matmul %z, %w {tiling = #qf.tiling<matvec, block_m = 8, block_n = 4, vec_bytes = 8, k_unroll = 2, split_k = 4>} : tensor<8x4096xf16>, !w -> tensor<8x1024xf16>
  return
}

// -----

// Weights that are not a qf.weight_ref (a function argument) or that
// already have a layout keep their type.
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #int4>
!t = !qf.weight<4096x4096, #int4, #qf.layout<tiled, tile_n = 16, tile_k = 64, interleave = 4>>
// CHECK-LABEL: @not_retyped
func.func @not_retyped(%x: tensor<1x4096xf16>, %w: !w) {
  // CHECK: qf.fused_matmul %{{.*}}, %{{.*}} {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>} : tensor<1x4096xf16>, !qf.weight<4096x4096, #int4_g128> ->
  // CHECK: qf.weight_ref "already" : !qf.weight<4096x4096, #int4_g128, #tiled_16x64>
  %0 = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>} : tensor<1x4096xf16>, !w -> tensor<1x4096xf16>
  %t = qf.weight_ref "already" : !t
  %1 = qf.fused_matmul %x, %t {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>} : tensor<1x4096xf16>, !t -> tensor<1x4096xf16>
  return
}

// -----

// 8-bit codes under an mma tiling get the 32x32 B-fragment layout too
// (1024-byte tiles, MmaLayout.h); under a matvec tiling they stay row_major
// (@kept_row_major above).
#int8 = #qf.enc<int8, per_channel, scale = f16>
#u8 = #qf.enc<uint8, group = 128, scale = f16, zero = int>
#fp8 = #qf.enc<fp8e4m3, per_channel, scale = f32>
#mma = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 3>
// CHECK-LABEL: @eight_bit_mma
func.func @eight_bit_mma(%x: tensor<16x4096xf16>) {
  // CHECK-NEXT: qf.weight_ref "int8" : !qf.weight<4096x4096, #int8_pc, #tiled_32x32>
  // CHECK-NEXT: qf.weight_ref "uint8" : !qf.weight<1024x4096, #uint8_g128, #tiled_32x32>
  // CHECK-NEXT: qf.weight_ref "fp8" : !qf.weight<4096x4096, #fp8e4m3_pc, #tiled_32x32>
  %a = qf.weight_ref "int8" : !qf.weight<4096x4096, #int8>
  %b = qf.weight_ref "uint8" : !qf.weight<1024x4096, #u8>
  %c = qf.weight_ref "fp8" : !qf.weight<4096x4096, #fp8>
  %0 = qf.fused_matmul %x, %a {tiling = #mma} : tensor<16x4096xf16>, !qf.weight<4096x4096, #int8> -> tensor<16x4096xf16>
  %1 = qf.fused_matmul %x, %b {tiling = #mma} : tensor<16x4096xf16>, !qf.weight<1024x4096, #u8> -> tensor<16x1024xf16>
  %2 = qf.fused_matmul %x, %c {tiling = #mma} : tensor<16x4096xf16>, !qf.weight<4096x4096, #fp8> -> tensor<16x4096xf16>
  return
}
