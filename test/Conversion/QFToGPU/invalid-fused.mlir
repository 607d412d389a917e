// RUN: qfuse-opt %s -split-input-file --qf-to-gpu -verify-diagnostics

// The tensor-core kernel does not fuse the RMSNorm prologue (it does fuse
// silu_mul and qf.group: mma-gated-group.mlir).
#e = #qf.enc<int4, group = 128, scale = f16>
func.func @mma_norm(%x: tensor<64x4096xf16>, %w: !qf.weight<256x4096, #e>, %g: tensor<4096xf16>) -> tensor<64x256xf16> {
  // expected-error@+1 {{the tensor-core (mma) kernel does not fuse an RMSNorm prologue; it runs only with the matvec tiling (M <= 8)}}
  %y = qf.fused_matmul %x, %w norm(%g : tensor<4096xf16>) {norm_eps = 1.0e-05 : f32, tiling = #qf.tiling<mma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<64x4096xf16>, !qf.weight<256x4096, #e> -> tensor<64x256xf16>
  return %y : tensor<64x256xf16>
}

// -----

// A warp's rows are gate and up rows of the same outputs: an odd count
// cannot be split.
#e = #qf.enc<int8, per_channel, scale = f16>
func.func @odd_rows(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e>) -> tensor<1x256xf16> {
  // expected-error@+1 {{silu_mul streams the gate and up rows of each output together: rows per warp (block_n / 4 row groups = 1) must be even}}
  %y = qf.fused_matmul %x, %w up(%w : !qf.weight<256x4096, #e>) {activation = #qf<activation silu_mul>, tiling = #qf.tiling<matvec, block_n = 4>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

#e = #qf.enc<int8, group = 128, scale = f16, act_order>
func.func @gated_act_order(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e>) -> tensor<1x256xf16> {
  // expected-error@+1 {{silu_mul with act_order: gate and up have their own column permutations, which one gathered copy of the activations cannot serve}}
  %y = qf.fused_matmul %x, %w up(%w : !qf.weight<256x4096, #e>) {activation = #qf<activation silu_mul>, tiling = #qf.tiling<matvec, block_n = 8>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

// The GPU matmul kernels read and write f16 activations; bf16 is refused
// instead of being read as if its bits were f16 (qf-to-cpu lowers it).
#e = #qf.enc<nf4, group = 64, scale = f32>
func.func @bf16_activations(%x: tensor<16x512xbf16>, %w: !qf.weight<256x512, #e, #qf.layout<tiled, tile_n = 32, tile_k = 32>>) -> tensor<16x256xbf16> {
  // expected-error@+1 {{activations must be f16 for the GPU kernels (they accumulate in f32), got 'bf16'}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 3>} : tensor<16x512xbf16>, !qf.weight<256x512, #e, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<16x256xbf16>
  return %y : tensor<16x256xbf16>
}
