// RUN: qfuse-opt %s -split-input-file --qf-fuse-epilogue | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --qf-fuse-epilogue=report-unfused -verify-diagnostics -o /dev/null

// Llama o_proj and down_proj: the residual adds (either operand order, as
// the frontend writes `qf.add %h, %o`) become residual epilogues.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @residuals
//  CHECK-SAME: (%[[H:.*]]: tensor<1x4096xf16>, %[[A:.*]]: tensor<1x4096xf16>, %[[M:.*]]: tensor<1x14336xf16>)
func.func @residuals(%h: tensor<1x4096xf16>, %a: tensor<1x4096xf16>, %m: tensor<1x14336xf16>) -> tensor<1x4096xf16> {
  // CHECK: %[[H1:.*]] = qf.fused_matmul %[[A]], %{{.*}} residual(%[[H]] : tensor<1x4096xf16>) : tensor<1x4096xf16>, !qf.weight<4096x4096, #int4_g128> -> tensor<1x4096xf16>
  // CHECK: %[[H2:.*]] = qf.fused_matmul %[[M]], %{{.*}} residual(%[[H1]] : tensor<1x4096xf16>) : tensor<1x14336xf16>, !qf.weight<4096x14336, #int4_g128> -> tensor<1x4096xf16>
  // CHECK-NOT: qf.add
  // CHECK: return %[[H2]]
  %wo = qf.weight_ref "o" : !qf.weight<4096x4096, #int4>
  %o = qf.fused_matmul %a, %wo : tensor<1x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<1x4096xf16>
  %h1 = qf.add %h, %o : tensor<1x4096xf16>
  %wd = qf.weight_ref "down" : !qf.weight<4096x14336, #int4>
  %d = qf.fused_matmul %m, %wd : tensor<1x14336xf16>, !qf.weight<4096x14336, #int4> -> tensor<1x4096xf16>
  %h2 = qf.add %d, %h1 : tensor<1x4096xf16>
  return %h2 : tensor<1x4096xf16>
}

// -----

// The residual is computed after the matmul: the fused op goes where the
// add was, after both operands.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @residual_defined_later
func.func @residual_defined_later(%a: tensor<1x256xf16>, %b: tensor<1x256xf16>) -> tensor<1x256xf16> {
  // CHECK: %[[R:.*]] = qf.add
  // CHECK: %[[Y:.*]] = qf.fused_matmul %{{.*}}, %{{.*}} residual(%[[R]] : tensor<1x256xf16>)
  // CHECK: return %[[Y]]
  %w = qf.weight_ref "w" : !qf.weight<256x256, #int4>
  %o = qf.fused_matmul %a, %w : tensor<1x256xf16>, !qf.weight<256x256, #int4> -> tensor<1x256xf16>
  %r = qf.add %a, %b : tensor<1x256xf16>
  %y = qf.add %o, %r : tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

// Bias through linalg.broadcast (how a dense matmul's bias is written):
// becomes bias(...), then the residual add stacks on top.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @bias_then_residual
//  CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<?x1536xf16>, %[[B:[a-z0-9]+]]: tensor<256xf16>, %[[R:[a-z0-9]+]]: tensor<?x256xf16>,
func.func @bias_then_residual(%x: tensor<?x1536xf16>, %b: tensor<256xf16>, %r: tensor<?x256xf16>, %e: tensor<?x256xf16>) -> tensor<?x256xf16> {
  // CHECK: qf.fused_matmul %[[X]], %{{.*}} bias(%[[B]] : tensor<256xf16>) residual(%[[R]] : tensor<?x256xf16>) : tensor<?x1536xf16>
  // CHECK-NOT: qf.add
  %w = qf.weight_ref "k" : !qf.weight<256x1536, #int4>
  %y = qf.fused_matmul %x, %w : tensor<?x1536xf16>, !qf.weight<256x1536, #int4> -> tensor<?x256xf16>
  %bb = linalg.broadcast ins(%b : tensor<256xf16>) outs(%e : tensor<?x256xf16>) dimensions = [0]
  %yb = qf.add %y, %bb : tensor<?x256xf16>
  %z = qf.add %yb, %r : tensor<?x256xf16>
  return %z : tensor<?x256xf16>
}

// -----

// Not fused: the matmul result is also returned, so it must exist without
// the residual.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @result_used_twice
func.func @result_used_twice(%a: tensor<1x256xf16>, %h: tensor<1x256xf16>) -> (tensor<1x256xf16>, tensor<1x256xf16>) {
  // CHECK: %[[O:.*]] = qf.fused_matmul %{{.*}}, %{{.*}} : tensor
  // CHECK: qf.add %{{.*}}, %[[O]]
  %w = qf.weight_ref "w" : !qf.weight<256x256, #int4>
  %o = qf.fused_matmul %a, %w : tensor<1x256xf16>, !qf.weight<256x256, #int4> -> tensor<1x256xf16>
  // expected-remark@+1 {{add not fused into a matmul epilogue: rhs: the qf.fused_matmul result has other users, which need it without the add; lhs: operand 0 is not a qf.fused_matmul result}}
  %y = qf.add %h, %o : tensor<1x256xf16>
  return %y, %o : tensor<1x256xf16>, tensor<1x256xf16>
}

// -----

// Not fused: a second residual (the op has one residual slot).
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @second_residual
func.func @second_residual(%a: tensor<1x256xf16>, %h: tensor<1x256xf16>, %g: tensor<1x256xf16>) -> tensor<1x256xf16> {
  // CHECK: qf.fused_matmul %{{.*}}, %{{.*}} residual(
  // CHECK: qf.add
  %w = qf.weight_ref "w" : !qf.weight<256x256, #int4>
  %o = qf.fused_matmul %a, %w residual(%h : tensor<1x256xf16>) : tensor<1x256xf16>, !qf.weight<256x256, #int4> -> tensor<1x256xf16>
  // expected-remark@+1 {{add not fused into a matmul epilogue: rhs: operand 1 is not a qf.fused_matmul result; lhs: the qf.fused_matmul already has a residual}}
  %y = qf.add %o, %g : tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

// Not fused as a bias: after silu_mul the add would come after the
// activation, but a bias comes before it. (A broadcast is still an ordinary
// tensor, yet taking it as a residual would materialize [M, N] anyway.)
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @bias_after_activation
func.func @bias_after_activation(%x: tensor<1x256xf16>, %b: tensor<512xf16>, %e: tensor<1x512xf16>) -> tensor<1x512xf16> {
  // CHECK: qf.fused_matmul
  // CHECK-NOT: bias(
  // CHECK: qf.add
  %wg = qf.weight_ref "gate" : !qf.weight<512x256, #int4>
  %wu = qf.weight_ref "up" : !qf.weight<512x256, #int4>
  %y = qf.fused_matmul %x, %wg up(%wu : !qf.weight<512x256, #int4>) {activation = #qf<activation silu_mul>} : tensor<1x256xf16>, !qf.weight<512x256, #int4> -> tensor<1x512xf16>
  %bb = linalg.broadcast ins(%b : tensor<512xf16>) outs(%e : tensor<1x512xf16>) dimensions = [0]
  // expected-remark@+1 {{add not fused into a matmul epilogue: rhs: operand 1 is not a qf.fused_matmul result; lhs: the qf.fused_matmul already has an activation, which a bias would have to precede}}
  %z = qf.add %y, %bb : tensor<1x512xf16>
  return %z : tensor<1x512xf16>
}

// -----

// Not fused: an add of a plain qf.matmul (a dense weight, not a fused
// matmul) stays; no remark, as no fused matmul is involved.
// CHECK-LABEL: @dense_matmul
func.func @dense_matmul(%a: tensor<1x256xf16>, %d: tensor<256x256xf16>, %h: tensor<1x256xf16>) -> tensor<1x256xf16> {
  // CHECK: qf.matmul
  // CHECK: qf.add
  %o = qf.matmul %a, %d : tensor<1x256xf16>, tensor<256x256xf16> -> tensor<1x256xf16>
  %y = qf.add %h, %o : tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}
