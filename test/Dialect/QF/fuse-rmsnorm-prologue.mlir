// RUN: qfuse-opt %s -split-input-file --qf-fuse-rmsnorm-prologue | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --qf-fuse-rmsnorm-prologue=report-unfused -verify-diagnostics -o /dev/null

// Llama attention input: one norm read by q, k and v. All three take the
// prologue and read the residual stream; the norm disappears.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @qkv
//  CHECK-SAME: (%[[H:.*]]: tensor<1x4096xf16>)
func.func @qkv(%h: tensor<1x4096xf16>) -> (tensor<1x4096xf16>, tensor<1x1024xf16>, tensor<1x1024xf16>) {
  // CHECK: %[[G:.*]] = qf.tensor_ref "model.layers.0.input_layernorm.weight"
  // CHECK-NOT: qf.rms_norm
  // CHECK: qf.fused_matmul %[[H]], %{{.*}} norm(%[[G]] : tensor<4096xf16>) {norm_eps = 9.99999974E-6 : f32} : tensor<1x4096xf16>, !qf.weight<4096x4096, #int4_g128> -> tensor<1x4096xf16>
  // CHECK: qf.fused_matmul %[[H]], %{{.*}} norm(%[[G]] : tensor<4096xf16>) {norm_eps = 9.99999974E-6 : f32} : tensor<1x4096xf16>, !qf.weight<1024x4096, #int4_g128> -> tensor<1x1024xf16>
  // CHECK: qf.fused_matmul %[[H]], %{{.*}} norm(%[[G]] : tensor<4096xf16>) {norm_eps = 9.99999974E-6 : f32} : tensor<1x4096xf16>, !qf.weight<1024x4096, #int4_g128> -> tensor<1x1024xf16>
  %g = qf.tensor_ref "model.layers.0.input_layernorm.weight" : tensor<4096xf16>
  %n = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<1x4096xf16>, tensor<4096xf16> -> tensor<1x4096xf16>
  %wq = qf.weight_ref "q" : !qf.weight<4096x4096, #int4>
  %wk = qf.weight_ref "k" : !qf.weight<1024x4096, #int4>
  %wv = qf.weight_ref "v" : !qf.weight<1024x4096, #int4>
  %q = qf.fused_matmul %n, %wq : tensor<1x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<1x4096xf16>
  %k = qf.fused_matmul %n, %wk : tensor<1x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<1x1024xf16>
  %v = qf.fused_matmul %n, %wv : tensor<1x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<1x1024xf16>
  return %q, %k, %v : tensor<1x4096xf16>, tensor<1x1024xf16>, tensor<1x1024xf16>
}

// -----

// Dynamic M, bf16, a matmul that already has an epilogue: the prologue
// composes with the residual.
#uint4 = #qf.enc<uint4, group = 128, scale = bf16, zero = int>
// CHECK-LABEL: @with_residual
func.func @with_residual(%h: tensor<?x1536xbf16>, %g: tensor<1536xbf16>, %r: tensor<?x256xbf16>) -> tensor<?x256xbf16> {
  // CHECK: qf.fused_matmul %{{.*}}, %{{.*}} norm(%{{.*}} : tensor<1536xbf16>) residual(%{{.*}} : tensor<?x256xbf16>) {norm_eps = 9.99999997E-7 : f32}
  %n = qf.rms_norm %h, %g {eps = 1.0e-06 : f32} : tensor<?x1536xbf16>, tensor<1536xbf16> -> tensor<?x1536xbf16>
  %w = qf.weight_ref "w" : !qf.weight<256x1536, #uint4>
  %y = qf.fused_matmul %n, %w residual(%r : tensor<?x256xbf16>) : tensor<?x1536xbf16>, !qf.weight<256x1536, #uint4> -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}

// -----

// Not fused: the normalized value is also returned (a non-matmul user), so
// the norm would run anyway and folding it saves nothing.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @returned
func.func @returned(%h: tensor<1x256xf16>, %g: tensor<256xf16>) -> (tensor<1x256xf16>, tensor<1x256xf16>) {
  // CHECK: %[[N:.*]] = qf.rms_norm
  // CHECK: qf.fused_matmul %[[N]], %{{.*}} :
  // CHECK-NOT: norm(
  // expected-remark@+1 {{rms_norm not fused into a matmul prologue: its result is also used by 'func.return', so the norm would run anyway}}
  %n = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<1x256xf16>, tensor<256xf16> -> tensor<1x256xf16>
  %w = qf.weight_ref "w" : !qf.weight<256x256, #int4>
  %y = qf.fused_matmul %n, %w : tensor<1x256xf16>, !qf.weight<256x256, #int4> -> tensor<1x256xf16>
  return %y, %n : tensor<1x256xf16>, tensor<1x256xf16>
}

// -----

// Not fused: one user is an unfused qf.matmul on a dense tensor (a cuBLAS
// gemm), the other a fused matmul; all or nothing.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @dense_user
func.func @dense_user(%h: tensor<1x256xf16>, %g: tensor<256xf16>, %d: tensor<256x256xf16>) -> (tensor<1x256xf16>, tensor<1x256xf16>) {
  // CHECK: qf.rms_norm
  // expected-remark@+1 {{rms_norm not fused into a matmul prologue: its result is also used by 'qf.matmul'}}
  %n = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<1x256xf16>, tensor<256xf16> -> tensor<1x256xf16>
  %w = qf.weight_ref "w" : !qf.weight<256x256, #int4>
  %y = qf.fused_matmul %n, %w : tensor<1x256xf16>, !qf.weight<256x256, #int4> -> tensor<1x256xf16>
  %z = qf.matmul %n, %d : tensor<1x256xf16>, tensor<256x256xf16> -> tensor<1x256xf16>
  return %y, %z : tensor<1x256xf16>, tensor<1x256xf16>
}

// -----

// Not fused: a fused matmul on a dense f16 !qf.weight runs as a cuBLAS step,
// which has no prologue.
#f16 = #qf.enc<f16>
// CHECK-LABEL: @cublas_step
func.func @cublas_step(%h: tensor<1x256xf16>, %g: tensor<256xf16>) -> tensor<1x256xf16> {
  // CHECK: qf.rms_norm
  // expected-remark@+1 {{rms_norm not fused into a matmul prologue: a qf.fused_matmul reading it has a dense #qf.enc<f16> weight: it runs as a cuBLAS step, which has no prologue}}
  %n = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<1x256xf16>, tensor<256xf16> -> tensor<1x256xf16>
  %w = qf.weight_ref "w" : !qf.weight<256x256, #f16>
  %y = qf.fused_matmul %n, %w : tensor<1x256xf16>, !qf.weight<256x256, #f16> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

// Not fused: the normalized value is a residual, not the matmul's input.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @as_residual
func.func @as_residual(%h: tensor<1x256xf16>, %g: tensor<256xf16>, %a: tensor<1x256xf16>) -> tensor<1x256xf16> {
  // CHECK: qf.rms_norm
  // expected-remark@+1 {{rms_norm not fused into a matmul prologue: a qf.fused_matmul uses the normalized value as an operand other than its input}}
  %n = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<1x256xf16>, tensor<256xf16> -> tensor<1x256xf16>
  %w = qf.weight_ref "w" : !qf.weight<256x256, #int4>
  %y = qf.fused_matmul %a, %w residual(%n : tensor<1x256xf16>) : tensor<1x256xf16>, !qf.weight<256x256, #int4> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

// Not fused: the matmul already normalizes its input (two norms in a row).
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @already_normalized
func.func @already_normalized(%h: tensor<1x256xf16>, %g: tensor<256xf16>) -> tensor<1x256xf16> {
  // CHECK: qf.rms_norm
  // expected-remark@+1 {{rms_norm not fused into a matmul prologue: a qf.fused_matmul reading it already has an RMSNorm prologue}}
  %n = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<1x256xf16>, tensor<256xf16> -> tensor<1x256xf16>
  %w = qf.weight_ref "w" : !qf.weight<256x256, #int4>
  %y = qf.fused_matmul %n, %w norm(%g : tensor<256xf16>) {norm_eps = 1.0e-05 : f32} : tensor<1x256xf16>, !qf.weight<256x256, #int4> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}
