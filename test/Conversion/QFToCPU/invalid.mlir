// RUN: qfuse-opt %s -split-input-file --qf-to-cpu -verify-diagnostics

#e = #qf.enc<int4, group = 128, scale = f16>
#l = #qf.layout<tiled, tile_n = 16, tile_k = 64, interleave = 4>
func.func @undefined_tiled_order(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e, #l>) -> tensor<1x256xf16> {
  // expected-error@+1 {{qf-to-cpu: the tiled layout has a defined byte order only for 4-bit codes with tile_n = 1 (Layout.h) or tile_n = tile_k = 32 (MmaLayout.h), without interleave; got #qf.layout<tiled, tile_n = 16, tile_k = 64, interleave = 4> over 4-bit codes}}
  %y = qf.fused_matmul %x, %w : tensor<1x4096xf16>, !qf.weight<256x4096, #e, #l> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

#e = #qf.enc<int8, per_channel, scale = f16>
#l = #qf.layout<tiled, tile_n = 1, tile_k = 16>
func.func @tiled_int8(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e, #l>) -> tensor<1x256xf16> {
  // expected-error@+1 {{over 8-bit codes}}
  %y = qf.fused_matmul %x, %w : tensor<1x4096xf16>, !qf.weight<256x4096, #e, #l> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

#e = #qf.enc<int4, group = 4, scale = f16>
#l = #qf.layout<tiled, tile_n = 1, tile_k = 4>
func.func @partial_word(%x: tensor<1x12xf16>, %w: !qf.weight<8x12, #e, #l>) -> tensor<1x8xf16> {
  // expected-error@+1 {{qf-to-cpu: the tiled layout reorders whole 32-bit words of codes, but a row holds 12 codes (K = 12)}}
  %y = qf.fused_matmul %x, %w : tensor<1x12xf16>, !qf.weight<8x12, #e, #l> -> tensor<1x8xf16>
  return %y : tensor<1x8xf16>
}

// -----

#e = #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>
#l = #qf.layout<tiled, tile_n = 32, tile_k = 32>
func.func @mma_sparse(%x: tensor<1x512xf16>, %w: !qf.weight<64x512, #e, #l>) -> tensor<1x64xf16> {
  // expected-error@+1 {{qf-to-cpu: the mma fragment layout #qf.layout<tiled, tile_n = 32, tile_k = 32> is defined for dense 2-, 3-, 4- and 8-bit codes (MmaLayout.h); got 4-bit codes with 2:4}}
  %y = qf.fused_matmul %x, %w : tensor<1x512xf16>, !qf.weight<64x512, #e, #l> -> tensor<1x64xf16>
  return %y : tensor<1x64xf16>
}
