// Decode ops at the shapes of real models, batch dynamic: Llama-3-8B
// (hidden 4096, 32 / 8 heads of 128, intermediate 14336, vocab 128256),
// Qwen2-7B (hidden 3584, 28 / 4 heads of 128, vocab 152064), Qwen2-0.5B
// (hidden 896, 14 / 2 heads of 64), Gemma-style head_dim 256 and a
// 32-wide head, and Llama-2-70B's hidden 8192.
func.func @ops(%h: tensor<?x4096xf16>, %g: tensor<4096xf16>, %q: tensor<?x4096xf16>, %k: tensor<?x1024xf16>, %kc: tensor<8192x1024xf16>, %pos: tensor<?xi32>,
               %mlp: tensor<?x14336xf16>, %logits: tensor<?x152064xf16>, %embed: tensor<128256x4096xf16>, %ids: tensor<?xi32>,
               %h2: tensor<?x3584xf16>, %g2: tensor<3584xf16>, %q2: tensor<?x3584xf16>, %k2: tensor<?x512xf16>, %kc2: tensor<4096x512xf16>,
               %q3: tensor<?x896xf16>, %k3: tensor<?x128xf16>, %kc3: tensor<4096x128xf16>,
               %q4: tensor<?x2048xf16>, %k4: tensor<?x256xf16>, %kc4: tensor<1024x256xf16>,
               %q5: tensor<?x512xf16>, %k5: tensor<?x128xf16>, %kc5: tensor<1024x128xf16>,
               %h6: tensor<?x8192xf16>, %g6: tensor<8192xf16>)
    -> (tensor<?x4096xf16>, tensor<?x4096xf16>, tensor<8192x1024xf16>, tensor<?x14336xf16>, tensor<?xi32>, tensor<?x4096xf16>, tensor<?x3584xf16>, tensor<?x3584xf16>, tensor<?x896xf16>, tensor<?x2048xf16>, tensor<?x512xf16>, tensor<?x8192xf16>) {
  %n = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<?x4096xf16>, tensor<4096xf16> -> tensor<?x4096xf16>
  %qr = qf.rotary %q, %pos {head_dim = 128 : i64, theta = 500000.0 : f64, scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64, original_max_position = 8192 : i64} : tensor<?x4096xf16>, tensor<?xi32> -> tensor<?x4096xf16>
  %kr = qf.rotary %k, %pos {head_dim = 128 : i64, theta = 500000.0 : f64, scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64, original_max_position = 8192 : i64} : tensor<?x1024xf16>, tensor<?xi32> -> tensor<?x1024xf16>
  %o, %kco, %vco = qf.attention %qr, %kr, %k, %kc, %kc, %pos {num_heads = 32 : i64, num_kv_heads = 8 : i64, head_dim = 128 : i64} : (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<8192x1024xf16>, tensor<8192x1024xf16>, tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<8192x1024xf16>, tensor<8192x1024xf16>)
  %a = qf.silu_mul %mlp, %mlp : tensor<?x14336xf16>
  %r = qf.add %h, %o : tensor<?x4096xf16>
  %t = qf.argmax %logits : tensor<?x152064xf16> -> tensor<?xi32>
  %e = qf.embedding %embed, %ids : tensor<128256x4096xf16>, tensor<?xi32> -> tensor<?x4096xf16>
  %n2 = qf.rms_norm %h2, %g2 {eps = 1.0e-06 : f32} : tensor<?x3584xf16>, tensor<3584xf16> -> tensor<?x3584xf16>
  %o2, %kco2, %vco2 = qf.attention %q2, %k2, %k2, %kc2, %kc2, %pos {num_heads = 28 : i64, num_kv_heads = 4 : i64, head_dim = 128 : i64} : (tensor<?x3584xf16>, tensor<?x512xf16>, tensor<?x512xf16>, tensor<4096x512xf16>, tensor<4096x512xf16>, tensor<?xi32>) -> (tensor<?x3584xf16>, tensor<4096x512xf16>, tensor<4096x512xf16>)
  %o3, %kco3, %vco3 = qf.attention %q3, %k3, %k3, %kc3, %kc3, %pos {num_heads = 14 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64} : (tensor<?x896xf16>, tensor<?x128xf16>, tensor<?x128xf16>, tensor<4096x128xf16>, tensor<4096x128xf16>, tensor<?xi32>) -> (tensor<?x896xf16>, tensor<4096x128xf16>, tensor<4096x128xf16>)
  %o4, %kco4, %vco4 = qf.attention %q4, %k4, %k4, %kc4, %kc4, %pos {num_heads = 8 : i64, num_kv_heads = 1 : i64, head_dim = 256 : i64} : (tensor<?x2048xf16>, tensor<?x256xf16>, tensor<?x256xf16>, tensor<1024x256xf16>, tensor<1024x256xf16>, tensor<?xi32>) -> (tensor<?x2048xf16>, tensor<1024x256xf16>, tensor<1024x256xf16>)
  %o5, %kco5, %vco5 = qf.attention %q5, %k5, %k5, %kc5, %kc5, %pos {num_heads = 16 : i64, num_kv_heads = 4 : i64, head_dim = 32 : i64} : (tensor<?x512xf16>, tensor<?x128xf16>, tensor<?x128xf16>, tensor<1024x128xf16>, tensor<1024x128xf16>, tensor<?xi32>) -> (tensor<?x512xf16>, tensor<1024x128xf16>, tensor<1024x128xf16>)
  %n6 = qf.rms_norm %h6, %g6 {eps = 1.0e-05 : f32} : tensor<?x8192xf16>, tensor<8192xf16> -> tensor<?x8192xf16>
  return %n, %r, %kco, %a, %t, %e, %n2, %o2, %o3, %o4, %o5, %n6 : tensor<?x4096xf16>, tensor<?x4096xf16>, tensor<8192x1024xf16>, tensor<?x14336xf16>, tensor<?xi32>, tensor<?x4096xf16>, tensor<?x3584xf16>, tensor<?x3584xf16>, tensor<?x896xf16>, tensor<?x2048xf16>, tensor<?x512xf16>, tensor<?x8192xf16>
}
