// RUN: qfuse-opt %s -split-input-file --qf-to-gpu -verify-diagnostics

// What the GPTQ block kernel generator rejects, naming the grid.

func.func @nvfp4(%w: tensor<4x32xf32>, %u: tensor<32x32xf32>) -> (tensor<4x32xi8>, tensor<4x32xf32>, tensor<4x2xf32>) {
  // expected-error@+1 {{has no GPU kernel for grid #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>: NVFP4's global scale is not an operand of the op}}
  %c, %e, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>}
    : (tensor<4x32xf32>, tensor<32x32xf32>) -> (tensor<4x32xi8>, tensor<4x32xf32>, tensor<4x2xf32>)
  return %c, %e, %s : tensor<4x32xi8>, tensor<4x32xf32>, tensor<4x2xf32>
}

// -----

func.func @wide(%w: tensor<4x256xf32>, %u: tensor<256x256xf32>) -> (tensor<4x256xi8>, tensor<4x256xf32>, tensor<4x2xf32>) {
  // expected-error@+1 {{the block holds 256 columns; the kernel keeps at most 128 in a warp's registers}}
  %c, %e, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<int4, group = 128, scale = f16>}
    : (tensor<4x256xf32>, tensor<256x256xf32>) -> (tensor<4x256xi8>, tensor<4x256xf32>, tensor<4x2xf32>)
  return %c, %e, %s : tensor<4x256xi8>, tensor<4x256xf32>, tensor<4x2xf32>
}
