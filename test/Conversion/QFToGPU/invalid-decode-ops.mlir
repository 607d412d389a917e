// RUN: qfuse-opt %s -split-input-file --qf-to-gpu -verify-diagnostics

// What the decode-op kernel generators reject.

func.func @bf16_norm(%x: tensor<1x4096xbf16>, %g: tensor<4096xbf16>) -> tensor<1x4096xbf16> {
  // expected-error@+1 {{'qf.rms_norm' op activations must be f16 for the GPU kernels (they accumulate in f32), got 'bf16'}}
  %y = qf.rms_norm %x, %g {eps = 1.0e-05 : f32} : tensor<1x4096xbf16>, tensor<4096xbf16> -> tensor<1x4096xbf16>
  return %y : tensor<1x4096xbf16>
}

// -----

func.func @bf16_add(%x: tensor<1x4096xbf16>) -> tensor<1x4096xbf16> {
  // expected-error@+1 {{'qf.add' op activations must be f16 for the GPU kernels (they accumulate in f32), got 'bf16'}}
  %y = qf.add %x, %x : tensor<1x4096xbf16>
  return %y : tensor<1x4096xbf16>
}

// -----

func.func @bf16_embedding(%t: tensor<1000x256xbf16>, %ids: tensor<1xi32>) -> tensor<1x256xbf16> {
  // expected-error@+1 {{'qf.embedding' op the embedding table must be f16 for the GPU kernels (they accumulate in f32), got 'bf16'}}
  %y = qf.embedding %t, %ids : tensor<1000x256xbf16>, tensor<1xi32> -> tensor<1x256xbf16>
  return %y : tensor<1x256xbf16>
}

// -----

func.func @bf16_attention(%q: tensor<1x256xbf16>, %k: tensor<1x128xbf16>, %kc: tensor<64x128xbf16>, %pos: tensor<1xi32>) -> tensor<1x256xbf16> {
  // expected-error@+1 {{'qf.attention' op activations and caches must be f16 for the GPU kernels (they accumulate in f32), got 'bf16'}}
  %o, %kc1, %vc1 = qf.attention %q, %k, %k, %kc, %kc, %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64} : (tensor<1x256xbf16>, tensor<1x128xbf16>, tensor<1x128xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>, tensor<1xi32>) -> (tensor<1x256xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>)
  return %o : tensor<1x256xbf16>
}

// -----

// head_dim 96 (Phi-3-small style): a key is not a power-of-two number of
// 16-byte lane chunks.
func.func @head_dim_96(%q: tensor<1x384xf16>, %k: tensor<1x192xf16>, %kc: tensor<64x192xf16>, %pos: tensor<1xi32>) -> tensor<1x384xf16> {
  // expected-error@+1 {{'qf.attention' op head_dim = 96 is not supported by the attention kernel; expected 8, 16, 32, 64, 128 or 256}}
  %o, %kc1, %vc1 = qf.attention %q, %k, %k, %kc, %kc, %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 96 : i64} : (tensor<1x384xf16>, tensor<1x192xf16>, tensor<1x192xf16>, tensor<64x192xf16>, tensor<64x192xf16>, tensor<1xi32>) -> (tensor<1x384xf16>, tensor<64x192xf16>, tensor<64x192xf16>)
  return %o : tensor<1x384xf16>
}

// -----

func.func @odd_head_dim(%x: tensor<1x14xf16>, %pos: tensor<1xi32>) -> tensor<1x14xf16> {
  // expected-error@+1 {{'qf.rotary' op head_dim must be positive and even, got 7}}
  %y = qf.rotary %x, %pos {head_dim = 7 : i64, theta = 10000.0 : f64} : tensor<1x14xf16>, tensor<1xi32> -> tensor<1x14xf16>
  return %y : tensor<1x14xf16>
}

// -----

func.func @llama3_degenerate(%x: tensor<1x128xf16>, %pos: tensor<1xi32>) -> tensor<1x128xf16> {
  // expected-error@+1 {{'qf.rotary' op llama3 rope scaling needs high_freq_factor > low_freq_factor (the smoothing divides by their difference), got 1 and 1}}
  %y = qf.rotary %x, %pos {head_dim = 64 : i64, theta = 500000.0 : f64, scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 1.0 : f64, original_max_position = 8192 : i64} : tensor<1x128xf16>, tensor<1xi32> -> tensor<1x128xf16>
  return %y : tensor<1x128xf16>
}

// -----

func.func @wide_norm(%x: tensor<1x262144xf16>, %g: tensor<262144xf16>) -> tensor<1x262144xf16> {
  // expected-error@+1 {{'qf.rms_norm' op row width 262144 needs 32 vectors of 8 halves per thread of a 1024-thread block; the kernel holds at most 16}}
  %y = qf.rms_norm %x, %g {eps = 1.0e-05 : f32} : tensor<1x262144xf16>, tensor<262144xf16> -> tensor<1x262144xf16>
  return %y : tensor<1x262144xf16>
}
