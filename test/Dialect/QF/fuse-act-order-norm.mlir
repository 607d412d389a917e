// RUN: qfuse-opt %s -split-input-file --qf-fuse-act-order-norm | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --qf-fuse-act-order-norm=report-unfused -verify-diagnostics -o /dev/null

// An act_order q/k/v group reading a norm (qf-fuse-shared-input ran
// first): every member takes the same prologue, and the norm disappears.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
// CHECK-LABEL: @qkv
//  CHECK-SAME: (%[[H:.*]]: tensor<?x4096xf16>, %[[G:.*]]: tensor<4096xf16>)
// CHECK-NOT: qf.rms_norm
// CHECK: qf.fused_matmul %[[H]], %{{.*}} norm(%[[G]] : tensor<4096xf16>) {norm_eps = 9.99999974E-6 : f32, qf.group = 0 : i64}
// CHECK: qf.fused_matmul %[[H]], %{{.*}} norm(%[[G]] : tensor<4096xf16>) {norm_eps = 9.99999974E-6 : f32, qf.group = 0 : i64}
// CHECK: qf.fused_matmul %[[H]], %{{.*}} norm(%[[G]] : tensor<4096xf16>) {norm_eps = 9.99999974E-6 : f32, qf.group = 0 : i64}
func.func @qkv(%h: tensor<?x4096xf16>, %g: tensor<4096xf16>) -> (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>) {
  %n = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<?x4096xf16>, tensor<4096xf16> -> tensor<?x4096xf16>
  %wq = qf.weight_ref "q" : !qf.weight<4096x4096, #ao>
  %wk = qf.weight_ref "k" : !qf.weight<1024x4096, #ao>
  %wv = qf.weight_ref "v" : !qf.weight<1024x4096, #ao>
  %q = qf.fused_matmul %n, %wq {qf.group = 0 : i64} : tensor<?x4096xf16>, !qf.weight<4096x4096, #ao> -> tensor<?x4096xf16>
  %k = qf.fused_matmul %n, %wk {qf.group = 0 : i64} : tensor<?x4096xf16>, !qf.weight<1024x4096, #ao> -> tensor<?x1024xf16>
  %v = qf.fused_matmul %n, %wv {qf.group = 0 : i64} : tensor<?x4096xf16>, !qf.weight<1024x4096, #ao> -> tensor<?x1024xf16>
  return %q, %k, %v : tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>
}

// -----

// gate/up under silu_mul (qf-fuse-gated-mlp ran first).
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
!w = !qf.weight<14336x4096, #ao>
// CHECK-LABEL: @gate_up
// CHECK-NOT: qf.rms_norm
// CHECK: qf.fused_matmul %arg0, %{{.*}} up(%{{.*}} : !qf.weight<14336x4096, {{.*}}>) norm(%arg1 : tensor<4096xf16>) {activation = #qf<activation silu_mul>, norm_eps = 9.99999974E-6 : f32}
func.func @gate_up(%h: tensor<?x4096xf16>, %g: tensor<4096xf16>) -> tensor<?x14336xf16> {
  %n = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<?x4096xf16>, tensor<4096xf16> -> tensor<?x4096xf16>
  %wg = qf.weight_ref "gate" : !w
  %wu = qf.weight_ref "up" : !w
  %a = qf.fused_matmul %n, %wg up(%wu : !w) {activation = #qf<activation silu_mul>} : tensor<?x4096xf16>, !w -> tensor<?x14336xf16>
  return %a : tensor<?x14336xf16>
}

// -----

// A weight without act_order reads the norm unpermuted: the norm stays
// (qf-fuse-rmsnorm-prologue is the one that folds it there).
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @mixed
// CHECK: qf.rms_norm
func.func @mixed(%h: tensor<?x4096xf16>, %g: tensor<4096xf16>) -> (tensor<?x1024xf16>, tensor<?x1024xf16>) {
  // expected-remark @+1 {{rms_norm not folded into its act_order matmuls: a qf.fused_matmul reading it has a weight without act_order, which reads it unpermuted}}
  %n = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<?x4096xf16>, tensor<4096xf16> -> tensor<?x4096xf16>
  %wa = qf.weight_ref "a" : !qf.weight<1024x4096, #ao>
  %wb = qf.weight_ref "b" : !qf.weight<1024x4096, #int4>
  %a = qf.fused_matmul %n, %wa : tensor<?x4096xf16>, !qf.weight<1024x4096, #ao> -> tensor<?x1024xf16>
  %b = qf.fused_matmul %n, %wb : tensor<?x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<?x1024xf16>
  return %a, %b : tensor<?x1024xf16>, tensor<?x1024xf16>
}

// -----

// The normalized value is also returned: the norm runs anyway.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
// CHECK-LABEL: @returned
// CHECK: qf.rms_norm
func.func @returned(%h: tensor<?x4096xf16>, %g: tensor<4096xf16>) -> (tensor<?x1024xf16>, tensor<?x4096xf16>) {
  // expected-remark @+1 {{rms_norm not folded into its act_order matmuls: its result is also read by 'func.return' other than as a fused matmul's input, so the norm would run anyway}}
  %n = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<?x4096xf16>, tensor<4096xf16> -> tensor<?x4096xf16>
  %wa = qf.weight_ref "a" : !qf.weight<1024x4096, #ao>
  %a = qf.fused_matmul %n, %wa : tensor<?x4096xf16>, !qf.weight<1024x4096, #ao> -> tensor<?x1024xf16>
  return %a, %n : tensor<?x1024xf16>, tensor<?x4096xf16>
}

// -----

// bf16: the norm kernel reads f16 only.
#ao = #qf.enc<int4, group = 128, scale = bf16, act_order>
// CHECK-LABEL: @bf16
// CHECK: qf.rms_norm
func.func @bf16(%h: tensor<?x4096xbf16>, %g: tensor<4096xbf16>) -> tensor<?x1024xbf16> {
  // expected-remark @+1 {{rms_norm not folded into its act_order matmuls: the permuted norm kernel reads f16 activations only}}
  %n = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<?x4096xbf16>, tensor<4096xbf16> -> tensor<?x4096xbf16>
  %wa = qf.weight_ref "a" : !qf.weight<1024x4096, #ao>
  %a = qf.fused_matmul %n, %wa : tensor<?x4096xbf16>, !qf.weight<1024x4096, #ao> -> tensor<?x1024xbf16>
  return %a : tensor<?x1024xbf16>
}

// -----

// A plain norm (no act_order reader) gets no remark from this pass.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @plain
// CHECK: qf.rms_norm
func.func @plain(%h: tensor<?x4096xf16>, %g: tensor<4096xf16>) -> tensor<?x1024xf16> {
  %n = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<?x4096xf16>, tensor<4096xf16> -> tensor<?x4096xf16>
  %wb = qf.weight_ref "b" : !qf.weight<1024x4096, #int4>
  %b = qf.fused_matmul %n, %wb : tensor<?x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<?x1024xf16>
  return %b : tensor<?x1024xf16>
}
