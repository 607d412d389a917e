// RUN: qfuse-opt %s -split-input-file --qf-fuse-rotary-attention | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --qf-fuse-rotary-attention=report-unfused -verify-diagnostics -o /dev/null

// Llama 3: both rotaries (with llama3 scaling) fold into the attention,
// which reads the unrotated query and key and carries the parameters.
// CHECK-LABEL: @llama3
//  CHECK-SAME: (%[[Q:[^:]*]]: tensor<?x4096xf16>, %[[K:[^:]*]]: tensor<?x1024xf16>, %[[V:[^:]*]]: tensor<?x1024xf16>, %[[KC:[^:]*]]: tensor<4096x1024xf16>, %[[VC:[^:]*]]: tensor<4096x1024xf16>, %[[P:[^:]*]]: tensor<?xi32>)
func.func @llama3(%q: tensor<?x4096xf16>, %k: tensor<?x1024xf16>, %v: tensor<?x1024xf16>, %kc: tensor<4096x1024xf16>, %vc: tensor<4096x1024xf16>, %pos: tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>) {
  // CHECK-NOT: qf.rotary
  // CHECK: qf.attention %[[Q]], %[[K]], %[[V]], %[[KC]], %[[VC]], %[[P]] {head_dim = 128 : i64, high_freq_factor = 4.000000e+00 : f64, low_freq_factor = 1.000000e+00 : f64, num_heads = 32 : i64, num_kv_heads = 8 : i64, original_max_position = 8192 : i64, rope_theta = 5.000000e+05 : f64, scaling_factor = 8.000000e+00 : f64}
  // CHECK-NOT: qf.rotary
  %qr = qf.rotary %q, %pos {head_dim = 128 : i64, theta = 500000.0 : f64, scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64, original_max_position = 8192 : i64} : tensor<?x4096xf16>, tensor<?xi32> -> tensor<?x4096xf16>
  %kr = qf.rotary %k, %pos {head_dim = 128 : i64, theta = 500000.0 : f64, scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64, original_max_position = 8192 : i64} : tensor<?x1024xf16>, tensor<?xi32> -> tensor<?x1024xf16>
  %o, %kc1, %vc1 = qf.attention %qr, %kr, %v, %kc, %vc, %pos {num_heads = 32 : i64, num_kv_heads = 8 : i64, head_dim = 128 : i64} : (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>, tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>)
  return %o, %kc1, %vc1 : tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>
}

// -----

// Qwen2 (no scaling), static M: only rope_theta is added.
// CHECK-LABEL: @qwen2
func.func @qwen2(%q: tensor<1x896xf16>, %k: tensor<1x128xf16>, %v: tensor<1x128xf16>, %kc: tensor<512x128xf16>, %vc: tensor<512x128xf16>, %pos: tensor<1xi32>) -> (tensor<1x896xf16>, tensor<512x128xf16>, tensor<512x128xf16>) {
  // CHECK-NOT: qf.rotary
  // CHECK: qf.attention {{.*}} {head_dim = 64 : i64, num_heads = 14 : i64, num_kv_heads = 2 : i64, rope_theta = 1.000000e+06 : f64} :
  %qr = qf.rotary %q, %pos {head_dim = 64 : i64, theta = 1000000.0 : f64} : tensor<1x896xf16>, tensor<1xi32> -> tensor<1x896xf16>
  %kr = qf.rotary %k, %pos {head_dim = 64 : i64, theta = 1000000.0 : f64} : tensor<1x128xf16>, tensor<1xi32> -> tensor<1x128xf16>
  %o, %kc1, %vc1 = qf.attention %qr, %kr, %v, %kc, %vc, %pos {num_heads = 14 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64} : (tensor<1x896xf16>, tensor<1x128xf16>, tensor<1x128xf16>, tensor<512x128xf16>, tensor<512x128xf16>, tensor<1xi32>) -> (tensor<1x896xf16>, tensor<512x128xf16>, tensor<512x128xf16>)
  return %o, %kc1, %vc1 : tensor<1x896xf16>, tensor<512x128xf16>, tensor<512x128xf16>
}

// -----

// Not fused: the rotated key is also returned, so its rotary would run
// anyway (and the query rotary stays too: all or nothing).
// CHECK-LABEL: @key_returned
func.func @key_returned(%q: tensor<1x256xf16>, %k: tensor<1x128xf16>, %v: tensor<1x128xf16>, %kc: tensor<64x128xf16>, %vc: tensor<64x128xf16>, %pos: tensor<1xi32>) -> (tensor<1x256xf16>, tensor<1x128xf16>) {
  // CHECK: qf.rotary
  // CHECK: qf.rotary
  // CHECK: qf.attention
  // CHECK-NOT: rope_theta
  %qr = qf.rotary %q, %pos {head_dim = 64 : i64, theta = 10000.0 : f64} : tensor<1x256xf16>, tensor<1xi32> -> tensor<1x256xf16>
  %kr = qf.rotary %k, %pos {head_dim = 64 : i64, theta = 10000.0 : f64} : tensor<1x128xf16>, tensor<1xi32> -> tensor<1x128xf16>
  // expected-remark@+1 {{attention not fused with its rotaries: the key rotary's result has other users, so the rotary would run anyway}}
  %o, %kc1, %vc1 = qf.attention %qr, %kr, %v, %kc, %vc, %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64} : (tensor<1x256xf16>, tensor<1x128xf16>, tensor<1x128xf16>, tensor<64x128xf16>, tensor<64x128xf16>, tensor<1xi32>) -> (tensor<1x256xf16>, tensor<64x128xf16>, tensor<64x128xf16>)
  return %o, %kr : tensor<1x256xf16>, tensor<1x128xf16>
}

// -----

// Not fused: the rotaries read other positions than the attention (the
// kernel rotates by the attention's positions).
// CHECK-LABEL: @other_positions
func.func @other_positions(%q: tensor<1x256xf16>, %k: tensor<1x128xf16>, %v: tensor<1x128xf16>, %kc: tensor<64x128xf16>, %vc: tensor<64x128xf16>, %pos: tensor<1xi32>, %pos2: tensor<1xi32>) -> tensor<1x256xf16> {
  // CHECK-COUNT-2: qf.rotary
  // CHECK-NOT: rope_theta
  %qr = qf.rotary %q, %pos2 {head_dim = 64 : i64, theta = 10000.0 : f64} : tensor<1x256xf16>, tensor<1xi32> -> tensor<1x256xf16>
  %kr = qf.rotary %k, %pos2 {head_dim = 64 : i64, theta = 10000.0 : f64} : tensor<1x128xf16>, tensor<1xi32> -> tensor<1x128xf16>
  // expected-remark@+1 {{attention not fused with its rotaries: the query rotary reads other positions than the attention}}
  %o, %kc1, %vc1 = qf.attention %qr, %kr, %v, %kc, %vc, %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64} : (tensor<1x256xf16>, tensor<1x128xf16>, tensor<1x128xf16>, tensor<64x128xf16>, tensor<64x128xf16>, tensor<1xi32>) -> (tensor<1x256xf16>, tensor<64x128xf16>, tensor<64x128xf16>)
  return %o : tensor<1x256xf16>
}

// -----

// Not fused: a rotary over heads of 32 under an attention with heads of 64
// rotates different pairs than the fused kernel would.
// CHECK-LABEL: @other_head_dim
func.func @other_head_dim(%q: tensor<1x256xf16>, %k: tensor<1x128xf16>, %v: tensor<1x128xf16>, %kc: tensor<64x128xf16>, %vc: tensor<64x128xf16>, %pos: tensor<1xi32>) -> tensor<1x256xf16> {
  // CHECK-COUNT-2: qf.rotary
  // CHECK-NOT: rope_theta
  %qr = qf.rotary %q, %pos {head_dim = 32 : i64, theta = 10000.0 : f64} : tensor<1x256xf16>, tensor<1xi32> -> tensor<1x256xf16>
  %kr = qf.rotary %k, %pos {head_dim = 64 : i64, theta = 10000.0 : f64} : tensor<1x128xf16>, tensor<1xi32> -> tensor<1x128xf16>
  // expected-remark@+1 {{attention not fused with its rotaries: the query rotary has head_dim = 32, the attention head_dim = 64}}
  %o, %kc1, %vc1 = qf.attention %qr, %kr, %v, %kc, %vc, %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64} : (tensor<1x256xf16>, tensor<1x128xf16>, tensor<1x128xf16>, tensor<64x128xf16>, tensor<64x128xf16>, tensor<1xi32>) -> (tensor<1x256xf16>, tensor<64x128xf16>, tensor<64x128xf16>)
  return %o : tensor<1x256xf16>
}

// -----

// Not fused: query and key rotated with different theta (the fused op has
// one set of parameters).
// CHECK-LABEL: @different_theta
func.func @different_theta(%q: tensor<1x256xf16>, %k: tensor<1x128xf16>, %v: tensor<1x128xf16>, %kc: tensor<64x128xf16>, %vc: tensor<64x128xf16>, %pos: tensor<1xi32>) -> tensor<1x256xf16> {
  // CHECK-COUNT-2: qf.rotary
  // CHECK-NOT: rope_theta
  %qr = qf.rotary %q, %pos {head_dim = 64 : i64, theta = 10000.0 : f64} : tensor<1x256xf16>, tensor<1xi32> -> tensor<1x256xf16>
  %kr = qf.rotary %k, %pos {head_dim = 64 : i64, theta = 500000.0 : f64} : tensor<1x128xf16>, tensor<1xi32> -> tensor<1x128xf16>
  // expected-remark@+1 {{attention not fused with its rotaries: the query and key rotaries have different theta or scaling}}
  %o, %kc1, %vc1 = qf.attention %qr, %kr, %v, %kc, %vc, %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64} : (tensor<1x256xf16>, tensor<1x128xf16>, tensor<1x128xf16>, tensor<64x128xf16>, tensor<64x128xf16>, tensor<1xi32>) -> (tensor<1x256xf16>, tensor<64x128xf16>, tensor<64x128xf16>)
  return %o : tensor<1x256xf16>
}

// -----

// Not fused: the key is not rotated (a model without rotary on k, or a
// rotary already folded elsewhere).
// CHECK-LABEL: @key_not_rotated
func.func @key_not_rotated(%q: tensor<1x256xf16>, %k: tensor<1x128xf16>, %v: tensor<1x128xf16>, %kc: tensor<64x128xf16>, %vc: tensor<64x128xf16>, %pos: tensor<1xi32>) -> tensor<1x256xf16> {
  // CHECK: qf.rotary
  // CHECK-NOT: rope_theta
  %qr = qf.rotary %q, %pos {head_dim = 64 : i64, theta = 10000.0 : f64} : tensor<1x256xf16>, tensor<1xi32> -> tensor<1x256xf16>
  // expected-remark@+1 {{attention not fused with its rotaries: the key is not a qf.rotary result}}
  %o, %kc1, %vc1 = qf.attention %qr, %k, %v, %kc, %vc, %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64} : (tensor<1x256xf16>, tensor<1x128xf16>, tensor<1x128xf16>, tensor<64x128xf16>, tensor<64x128xf16>, tensor<1xi32>) -> (tensor<1x256xf16>, tensor<64x128xf16>, tensor<64x128xf16>)
  return %o : tensor<1x256xf16>
}

// -----

// Not fused again: an attention that already rotates keeps its operands
// (another rotary on top would rotate twice); no remark for it.
// CHECK-LABEL: @already_rotating
func.func @already_rotating(%q: tensor<1x256xf16>, %k: tensor<1x128xf16>, %v: tensor<1x128xf16>, %kc: tensor<64x128xf16>, %vc: tensor<64x128xf16>, %pos: tensor<1xi32>) -> tensor<1x256xf16> {
  // CHECK-COUNT-2: qf.rotary
  // CHECK: qf.attention {{.*}}rope_theta = 1.000000e+04
  %qr = qf.rotary %q, %pos {head_dim = 64 : i64, theta = 10000.0 : f64} : tensor<1x256xf16>, tensor<1xi32> -> tensor<1x256xf16>
  %kr = qf.rotary %k, %pos {head_dim = 64 : i64, theta = 10000.0 : f64} : tensor<1x128xf16>, tensor<1xi32> -> tensor<1x128xf16>
  %o, %kc1, %vc1 = qf.attention %qr, %kr, %v, %kc, %vc, %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64, rope_theta = 10000.0 : f64} : (tensor<1x256xf16>, tensor<1x128xf16>, tensor<1x128xf16>, tensor<64x128xf16>, tensor<64x128xf16>, tensor<1xi32>) -> (tensor<1x256xf16>, tensor<64x128xf16>, tensor<64x128xf16>)
  return %o : tensor<1x256xf16>
}
