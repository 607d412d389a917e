// RUN: qfuse-opt %s -split-input-file --qf-to-gpu -verify-diagnostics

// What the GPTQ block kernel generator rejects, naming the grid, and the
// verifier's rules for NVFP4's global scale (one f32 per row, an operand).

func.func @nvfp4_missing_global_scale(%w: tensor<4x32xf32>, %u: tensor<32x32xf32>) -> (tensor<4x32xi8>, tensor<4x32xf32>, tensor<4x2xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op grid #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale> has a global scale: pass 'global_scale(...)', one f32 per row}}
  %c, %e, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>}
    : (tensor<4x32xf32>, tensor<32x32xf32>) -> (tensor<4x32xi8>, tensor<4x32xf32>, tensor<4x2xf32>)
  return %c, %e, %s : tensor<4x32xi8>, tensor<4x32xf32>, tensor<4x2xf32>
}

// -----

func.func @nvfp4_static_missing_global_scale(%w: tensor<4x32xf32>, %u: tensor<32x32xf32>, %s: tensor<4x32xf32>) -> (tensor<4x32xi8>, tensor<4x32xf32>) {
  // expected-error@+1 {{has a global scale: pass 'global_scale(...)', one f32 per row}}
  %c, %e = qf.gptq_block_update %w, %u scales(%s : tensor<4x32xf32>) {grid = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>}
    : (tensor<4x32xf32>, tensor<32x32xf32>) -> (tensor<4x32xi8>, tensor<4x32xf32>)
  return %c, %e : tensor<4x32xi8>, tensor<4x32xf32>
}

// -----

func.func @global_scale_not_nvfp4(%w: tensor<4x32xf32>, %u: tensor<32x32xf32>, %g: tensor<4xf32>) -> (tensor<4x32xi8>, tensor<4x32xf32>, tensor<4x1xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op 'global_scale(...)' belongs to NVFP4 grids (global_scale in the encoding), not to #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>}}
  %c, %e, %s = qf.gptq_block_update %w, %u global_scale(%g : tensor<4xf32>) {grid = #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>}
    : (tensor<4x32xf32>, tensor<32x32xf32>) -> (tensor<4x32xi8>, tensor<4x32xf32>, tensor<4x1xf32>)
  return %c, %e, %s : tensor<4x32xi8>, tensor<4x32xf32>, tensor<4x1xf32>
}

// -----

func.func @global_scale_shape(%w: tensor<4x32xf32>, %u: tensor<32x32xf32>, %g: tensor<32xf32>) -> (tensor<4x32xi8>, tensor<4x32xf32>, tensor<4x2xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op global_scale must be [4] (one per row), got 'tensor<32xf32>'}}
  %c, %e, %s = qf.gptq_block_update %w, %u global_scale(%g : tensor<32xf32>) {grid = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>}
    : (tensor<4x32xf32>, tensor<32x32xf32>) -> (tensor<4x32xi8>, tensor<4x32xf32>, tensor<4x2xf32>)
  return %c, %e, %s : tensor<4x32xi8>, tensor<4x32xf32>, tensor<4x2xf32>
}

// -----

func.func @global_scale_rank(%w: tensor<4x32xf32>, %u: tensor<32x32xf32>, %g: tensor<4x1xf32>) -> (tensor<4x32xi8>, tensor<4x32xf32>, tensor<4x2xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op operand #2 must be 1D tensor of 32-bit float values, but got 'tensor<4x1xf32>'}}
  %c, %e, %s = qf.gptq_block_update %w, %u global_scale(%g : tensor<4x1xf32>) {grid = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>}
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
