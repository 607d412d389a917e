// RUN: qfuse-opt %s -split-input-file --qf-to-gpu -verify-diagnostics

#e = #qf.enc<int4, group = 128, scale = f16>
func.func @no_tiling(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e>) -> tensor<1x256xf16> {
  // expected-error@+1 {{has no tiling; run qf-select-tiling first}}
  %y = qf.fused_matmul %x, %w : tensor<1x4096xf16>, !qf.weight<256x4096, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

#e = #qf.enc<int4, group = 128, scale = f16>
func.func @needs_tiled_layout(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e>) -> tensor<1x256xf16> {
  // expected-error@+1 {{int4/uint4 matvec kernels read the pair-interleaved #qf.layout<tiled, tile_n = 1, ...>; run qf-choose-layout}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

#e = #qf.enc<int4, group = 4, scale = f16, act_order>
#l = #qf.layout<tiled, tile_n = 1, tile_k = 32>
func.func @act_order_group(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e, #l>) -> tensor<1x256xf16> {
  // expected-error@+1 {{group size 4 does not align with the kernel's 8-code words and 32-code loads}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e, #l> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

// Under 2:4 a group counts logical columns: 8 columns are 4 kept codes.
#e = #qf.enc<int4, group = 8, scale = f16, sparse = 2:4>
#l = #qf.layout<tiled, tile_n = 1, tile_k = 32>
func.func @sparse_group(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e, #l>) -> tensor<1x256xf16> {
  // expected-error@+1 {{group size 8 does not align with the kernel's 16-code words and 64-code loads (logical columns under 2:4)}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e, #l> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

#e = #qf.enc<f16, sparse = 2:4>
func.func @sparse_meta_bytes(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e>) -> tensor<1x256xf16> {
  // expected-error@+1 {{2:4 kernels load whole bytes of metadata: a lane's vec_bytes = 4 holds 2 kept values; at least 4 (two quads) are needed}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, vec_bytes = 4>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

// 3-bit codes end on a word boundary every 3 words (32 codes): a row of
// K = 1000 codes (375 bytes) is not whole 12-byte chunks.
#e = #qf.enc<codebook, bits = 3, table = dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : tensor<8xf16>, per_channel, scale = f16>
func.func @codebook3_chunks(%x: tensor<1x1000xf16>, %w: !qf.weight<256x1000, #e>) -> tensor<1x256xf16> {
  // expected-error@+1 {{3-bit codes end on a word boundary every 3 words: a lane's chunk of 3 x vec_bytes = 12 bytes does not divide a row's 375 packed bytes (K = 1000)}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, vec_bytes = 4>} : tensor<1x1000xf16>, !qf.weight<256x1000, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

#e = #qf.enc<int8, per_channel, scale = f16>
func.func @row_groups(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e>) -> tensor<1x256xf16> {
  // expected-error@+1 {{block_n = 2 is not a multiple of the 4 row groups of a block}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 2>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

#e = #qf.enc<int8, per_channel, scale = f16>
func.func @vec_bytes(%x: tensor<1x4100xf16>, %w: !qf.weight<256x4100, #e>) -> tensor<1x256xf16> {
  // expected-error@+1 {{vec_bytes = 16 does not divide a row's 4100 packed bytes (K = 4100)}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec>} : tensor<1x4100xf16>, !qf.weight<256x4100, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

#e = #qf.enc<int8, group = 2, scale = f16>
func.func @group_alignment(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e>) -> tensor<1x256xf16> {
  // expected-error@+1 {{group size 2 does not align with the kernel's 4-code words and 16-code loads}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

#e = #qf.enc<int8, per_channel, scale = f16>
func.func @too_many_loads(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e>) -> tensor<1x256xf16> {
  // expected-error@+1 {{k_unroll = 4 x 4 rows x 16 bytes exceeds the 128 bytes of code loads in flight a lane can hold}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 16, k_unroll = 4>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}
