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

// Only the tensor-core kernel reads bf16 activations (the matvec's half2
// arithmetic and the cuBLAS steps are f16): a bf16 op with a matvec tiling
// or a dense weight is refused instead of being read as if its bits were
// f16 (qf-to-cpu lowers both; mma-bf16.mlir has the kernel).
#e = #qf.enc<nf4, group = 64, scale = f32>
func.func @bf16_matvec(%x: tensor<4x512xbf16>, %w: !qf.weight<256x512, #e>) -> tensor<4x256xbf16> {
  // expected-error@+1 {{has bf16 activations, which only the tensor-core (mma) kernel reads; batch 4 has the tiling #qf.tiling<matvec, block_n = 8>}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 8>} : tensor<4x512xbf16>, !qf.weight<256x512, #e> -> tensor<4x256xbf16>
  return %y : tensor<4x256xbf16>
}

// -----


// The matvec reads no bf16: a matvec tiling given by hand for bf16
// activations is refused (qf-select-tiling never gives one).
#act = #qf.enc<int4, group = 128, scale = f16, act_order>
func.func @bf16_act_order(%x: tensor<1x4096xbf16>, %a: !qf.weight<4096x4096, #act>) -> tensor<1x4096xbf16> {
  // expected-error@+1 {{has bf16 activations, which only the tensor-core (mma) kernel reads; batch 1 has the tiling #qf.tiling<matvec, block_n = 8>}}
  %0 = qf.fused_matmul %x, %a {tiling = #qf.tiling<matvec, block_n = 8>} : tensor<1x4096xbf16>, !qf.weight<4096x4096, #act> -> tensor<1x4096xbf16>
  return %0 : tensor<1x4096xbf16>
}

// -----

func.func @bf16_norm(%x: tensor<1x4096xbf16>, %w: !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>, %g: tensor<4096xbf16>) -> tensor<1x4096xbf16> {
  // expected-error@+1 {{(the tensor-core kernel cannot take it: it does not fuse the RMSNorm prologue)}}
  %0 = qf.fused_matmul %x, %w norm(%g : tensor<4096xbf16>) {norm_eps = 1.0e-05 : f32, tiling = #qf.tiling<matvec, block_n = 8>} : tensor<1x4096xbf16>, !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>> -> tensor<1x4096xbf16>
  return %0 : tensor<1x4096xbf16>
}
