// RUN: qfuse-opt %s -split-input-file --qf-fuse-shared-input | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --qf-fuse-shared-input=report-unfused -verify-diagnostics -o /dev/null

// Llama q, k and v after qf-fuse-rmsnorm-prologue: one input, one encoding,
// one prologue: one group (one launch). o_proj reads another input.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @qkv
func.func @qkv(%h: tensor<1x4096xf16>, %g: tensor<4096xf16>, %a: tensor<1x4096xf16>) -> (tensor<1x4096xf16>, tensor<1x1024xf16>, tensor<1x1024xf16>, tensor<1x4096xf16>) {
  // CHECK: qf.fused_matmul %{{.*}} norm({{.*}}) {norm_eps = {{.*}}, qf.group = 0 : i64} : {{.*}} -> tensor<1x4096xf16>
  // CHECK: qf.fused_matmul %{{.*}} norm({{.*}}) {norm_eps = {{.*}}, qf.group = 0 : i64} : {{.*}} -> tensor<1x1024xf16>
  // CHECK: qf.fused_matmul %{{.*}} norm({{.*}}) {norm_eps = {{.*}}, qf.group = 0 : i64} : {{.*}} -> tensor<1x1024xf16>
  // CHECK: qf.fused_matmul
  // CHECK-NOT: qf.group
  %wq = qf.weight_ref "q" : !qf.weight<4096x4096, #int4>
  %wk = qf.weight_ref "k" : !qf.weight<1024x4096, #int4>
  %wv = qf.weight_ref "v" : !qf.weight<1024x4096, #int4>
  %wo = qf.weight_ref "o" : !qf.weight<4096x4096, #int4>
  %q = qf.fused_matmul %h, %wq norm(%g : tensor<4096xf16>) {norm_eps = 1.0e-05 : f32} : tensor<1x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<1x4096xf16>
  %k = qf.fused_matmul %h, %wk norm(%g : tensor<4096xf16>) {norm_eps = 1.0e-05 : f32} : tensor<1x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<1x1024xf16>
  %v = qf.fused_matmul %h, %wv norm(%g : tensor<4096xf16>) {norm_eps = 1.0e-05 : f32} : tensor<1x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<1x1024xf16>
  %o = qf.fused_matmul %a, %wo : tensor<1x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<1x4096xf16>
  return %q, %k, %v, %o : tensor<1x4096xf16>, tensor<1x1024xf16>, tensor<1x1024xf16>, tensor<1x4096xf16>
}

// -----

// Two groups: Qwen2 q/k/v with biases, and (separately) two matmuls on the
// same input without a bias. Different encodings never share a group.
#int4 = #qf.enc<int4, group = 128, scale = f16>
#int8 = #qf.enc<int8, per_channel, scale = f16>
// CHECK-LABEL: @by_key
func.func @by_key(%x: tensor<?x1536xf16>, %bq: tensor<1536xf16>, %bk: tensor<256xf16>) -> (tensor<?x1536xf16>, tensor<?x256xf16>, tensor<?x256xf16>, tensor<?x256xf16>, tensor<?x256xf16>) {
  // CHECK: bias({{.*}}) {qf.group = 0 : i64}
  // CHECK: bias({{.*}}) {qf.group = 0 : i64}
  // CHECK: qf.fused_matmul %{{.*}}, %{{.*}} {qf.group = 1 : i64} : {{.*}}#int4_g128>
  // CHECK: qf.fused_matmul %{{.*}}, %{{.*}} {qf.group = 1 : i64} : {{.*}}#int4_g128>
  // CHECK: qf.fused_matmul %{{.*}}, %{{.*}} : {{.*}}#int8_pc>
  %wq = qf.weight_ref "q" : !qf.weight<1536x1536, #int4>
  %wk = qf.weight_ref "k" : !qf.weight<256x1536, #int4>
  %wa = qf.weight_ref "a" : !qf.weight<256x1536, #int4>
  %wb = qf.weight_ref "b" : !qf.weight<256x1536, #int4>
  %wc = qf.weight_ref "c" : !qf.weight<256x1536, #int8>
  %q = qf.fused_matmul %x, %wq bias(%bq : tensor<1536xf16>) : tensor<?x1536xf16>, !qf.weight<1536x1536, #int4> -> tensor<?x1536xf16>
  %k = qf.fused_matmul %x, %wk bias(%bk : tensor<256xf16>) : tensor<?x1536xf16>, !qf.weight<256x1536, #int4> -> tensor<?x256xf16>
  %a = qf.fused_matmul %x, %wa : tensor<?x1536xf16>, !qf.weight<256x1536, #int4> -> tensor<?x256xf16>
  %b = qf.fused_matmul %x, %wb : tensor<?x1536xf16>, !qf.weight<256x1536, #int4> -> tensor<?x256xf16>
  // expected-remark@+1 {{fused matmul not grouped: no other fused matmul reads its input with the same weight encoding, layout, K, prologue and epilogue operands}}
  %c = qf.fused_matmul %x, %wc : tensor<?x1536xf16>, !qf.weight<256x1536, #int8> -> tensor<?x256xf16>
  return %q, %k, %a, %b, %c : tensor<?x1536xf16>, tensor<?x256xf16>, tensor<?x256xf16>, tensor<?x256xf16>, tensor<?x256xf16>
}

// -----

// act_order q/k/v group like plain ones: GPTQ's desc_act gives modules
// reading one input one perm (qf-to-gpu guards the group with that
// contract and adds a fallback for perms that differ).
#gptq = #qf.enc<int4, group = 128, scale = f16, act_order>
// CHECK-LABEL: @act_order
func.func @act_order(%x: tensor<?x256xf16>) -> (tensor<?x256xf16>, tensor<?x128xf16>, tensor<?x128xf16>) {
  // CHECK: qf.fused_matmul {{.*}} {qf.group = 0 : i64} : {{.*}} -> tensor<?x256xf16>
  // CHECK: qf.fused_matmul {{.*}} {qf.group = 0 : i64} : {{.*}} -> tensor<?x128xf16>
  // CHECK: qf.fused_matmul {{.*}} {qf.group = 0 : i64} : {{.*}} -> tensor<?x128xf16>
  %wq = qf.weight_ref "q" : !qf.weight<256x256, #gptq>
  %wk = qf.weight_ref "k" : !qf.weight<128x256, #gptq>
  %wv = qf.weight_ref "v" : !qf.weight<128x256, #gptq>
  %q = qf.fused_matmul %x, %wq : tensor<?x256xf16>, !qf.weight<256x256, #gptq> -> tensor<?x256xf16>
  %k = qf.fused_matmul %x, %wk : tensor<?x256xf16>, !qf.weight<128x256, #gptq> -> tensor<?x128xf16>
  %v = qf.fused_matmul %x, %wv : tensor<?x256xf16>, !qf.weight<128x256, #gptq> -> tensor<?x128xf16>
  return %q, %k, %v : tensor<?x256xf16>, tensor<?x128xf16>, tensor<?x128xf16>
}

// -----

// act_order with an RMSNorm prologue groups too: qf-to-gpu's norm launch
// writes the input permuted by the first perm, gathering gamma through it
// (docs/act-order.md).
#gptq = #qf.enc<int4, group = 128, scale = f16, act_order>
!w = !qf.weight<256x256, #gptq>
// CHECK-LABEL: @act_order_norm
// CHECK: norm(%{{.*}}) {norm_eps = {{.*}}, qf.group = 0 : i64}
// CHECK: norm(%{{.*}}) {norm_eps = {{.*}}, qf.group = 0 : i64}
func.func @act_order_norm(%x: tensor<1x256xf16>, %g: tensor<256xf16>) -> (tensor<1x256xf16>, tensor<1x256xf16>) {
  %w0 = qf.weight_ref "a" : !w
  %w1 = qf.weight_ref "b" : !w
  %a = qf.fused_matmul %x, %w0 norm(%g : tensor<256xf16>) {norm_eps = 1.0e-05 : f32} : tensor<1x256xf16>, !w -> tensor<1x256xf16>
  %b = qf.fused_matmul %x, %w1 norm(%g : tensor<256xf16>) {norm_eps = 1.0e-05 : f32} : tensor<1x256xf16>, !w -> tensor<1x256xf16>
  return %a, %b : tensor<1x256xf16>, tensor<1x256xf16>
}

// -----

// Not grouped: the second matmul's residual is computed after the first
// matmul, where the group's kernel would run.
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<256x256, #int4>
// CHECK-LABEL: @late_residual
func.func @late_residual(%x: tensor<1x256xf16>, %r: tensor<1x256xf16>) -> tensor<1x256xf16> {
  // CHECK-NOT: qf.group
  %w0 = qf.weight_ref "a" : !w
  %w1 = qf.weight_ref "b" : !w
  %a = qf.fused_matmul %x, %w0 residual(%r : tensor<1x256xf16>) : tensor<1x256xf16>, !w -> tensor<1x256xf16>
  %s = qf.add %a, %r : tensor<1x256xf16>
  // expected-remark@+1 {{fused matmul not grouped with the others reading its input: its residual is computed after the group's first matmul}}
  %b = qf.fused_matmul %x, %w1 residual(%s : tensor<1x256xf16>) : tensor<1x256xf16>, !w -> tensor<1x256xf16>
  return %b : tensor<1x256xf16>
}

// -----

// Not grouped: a dense f16 weight is a cuBLAS step; a gated matmul already
// reads two weights per output.
#f16 = #qf.enc<f16>
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @not_groupable
func.func @not_groupable(%x: tensor<1x256xf16>) -> (tensor<1x256xf16>, tensor<1x256xf16>, tensor<1x512xf16>) {
  // CHECK-NOT: qf.group
  %w0 = qf.weight_ref "dense" : !qf.weight<256x256, #f16>
  %w1 = qf.weight_ref "int4" : !qf.weight<256x256, #int4>
  %wg = qf.weight_ref "gate" : !qf.weight<512x256, #int4>
  %wu = qf.weight_ref "up" : !qf.weight<512x256, #int4>
  // expected-remark@+1 {{its dense weight runs as a cuBLAS step}}
  %a = qf.fused_matmul %x, %w0 : tensor<1x256xf16>, !qf.weight<256x256, #f16> -> tensor<1x256xf16>
  // expected-remark@+1 {{fused matmul not grouped: no other fused matmul reads its input}}
  %b = qf.fused_matmul %x, %w1 : tensor<1x256xf16>, !qf.weight<256x256, #int4> -> tensor<1x256xf16>
  // expected-remark@+1 {{it has a silu_mul epilogue (two weights per output already)}}
  %c = qf.fused_matmul %x, %wg up(%wu : !qf.weight<512x256, #int4>) {activation = #qf<activation silu_mul>} : tensor<1x256xf16>, !qf.weight<512x256, #int4> -> tensor<1x512xf16>
  return %a, %b, %c : tensor<1x256xf16>, tensor<1x256xf16>, tensor<1x512xf16>
}
