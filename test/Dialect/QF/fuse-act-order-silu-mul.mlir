// RUN: qfuse-opt %s -split-input-file --qf-fuse-act-order-silu-mul | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --qf-fuse-act-order-silu-mul=report-unfused -verify-diagnostics -o /dev/null

// down_proj on an act_order weight reading silu_mul's product: the
// silu_mul becomes its prologue (gate the input, up the prologue's operand)
// and disappears.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
!act = tensor<?x14336xf16>
// CHECK-LABEL: @down
//  CHECK-SAME: (%[[G:.*]]: tensor<?x14336xf16>, %[[U:.*]]: tensor<?x14336xf16>)
// CHECK-NOT: qf.silu_mul
// CHECK: qf.fused_matmul %[[G]], %{{.*}} silu_mul(%[[U]] : tensor<?x14336xf16>) : tensor<?x14336xf16>, !qf.weight<4096x14336, {{.*}}> -> tensor<?x4096xf16>
func.func @down(%g: !act, %u: !act) -> tensor<?x4096xf16> {
  %a = qf.silu_mul %g, %u : !act
  %wd = qf.weight_ref "down" : !qf.weight<4096x14336, #ao>
  %y = qf.fused_matmul %a, %wd : !act, !qf.weight<4096x14336, #ao> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}

// -----

// The epilogue (the residual add, qf-fuse-epilogue) stays where it was.
#ao = #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order>
!act = tensor<4x512xf16>
// CHECK-LABEL: @residual
// CHECK-NOT: qf.silu_mul
// CHECK: qf.fused_matmul %arg0, %{{.*}} residual(%arg2 : tensor<4x256xf16>) silu_mul(%arg1 : tensor<4x512xf16>)
func.func @residual(%g: !act, %u: !act, %r: tensor<4x256xf16>) -> tensor<4x256xf16> {
  %a = qf.silu_mul %g, %u : !act
  %wd = qf.weight_ref "down" : !qf.weight<256x512, #ao>
  %y = qf.fused_matmul %a, %wd residual(%r : tensor<4x256xf16>) : !act, !qf.weight<256x512, #ao> -> tensor<4x256xf16>
  return %y : tensor<4x256xf16>
}

// -----

// A weight without act_order reads the product unpermuted: nothing to
// fold, and no remark (the pass is about act_order readers).
#int4 = #qf.enc<int4, group = 128, scale = f16>
!act = tensor<?x14336xf16>
// CHECK-LABEL: @plain
// CHECK: qf.silu_mul
// CHECK: qf.fused_matmul %{{.*}}, %{{.*}} : tensor<?x14336xf16>
func.func @plain(%g: !act, %u: !act) -> tensor<?x4096xf16> {
  %a = qf.silu_mul %g, %u : !act
  %wd = qf.weight_ref "down" : !qf.weight<4096x14336, #int4>
  %y = qf.fused_matmul %a, %wd : !act, !qf.weight<4096x14336, #int4> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}

// -----

// The product is also returned: the silu_mul runs anyway.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
!act = tensor<?x14336xf16>
// CHECK-LABEL: @returned
// CHECK: qf.silu_mul
func.func @returned(%g: !act, %u: !act) -> (tensor<?x4096xf16>, !act) {
  // expected-remark @+1 {{silu_mul not folded into its act_order matmul: it has more than one user, and the fold needs exactly one (the product would be written anyway)}}
  %a = qf.silu_mul %g, %u : !act
  %wd = qf.weight_ref "down" : !qf.weight<4096x14336, #ao>
  %y = qf.fused_matmul %a, %wd : !act, !qf.weight<4096x14336, #ao> -> tensor<?x4096xf16>
  return %y, %a : tensor<?x4096xf16>, !act
}

// -----

// bf16: the permuted silu_mul kernel reads f16 only.
#ao = #qf.enc<int4, group = 128, scale = bf16, act_order>
!act = tensor<?x14336xbf16>
// CHECK-LABEL: @bf16
// CHECK: qf.silu_mul
func.func @bf16(%g: !act, %u: !act) -> tensor<?x4096xbf16> {
  // expected-remark @+1 {{silu_mul not folded into its act_order matmul: the permuted silu_mul kernel reads f16 activations only}}
  %a = qf.silu_mul %g, %u : !act
  %wd = qf.weight_ref "down" : !qf.weight<4096x14336, #ao>
  %y = qf.fused_matmul %a, %wd : !act, !qf.weight<4096x14336, #ao> -> tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}

// -----

// The reader already has an RMSNorm prologue (of the product): it takes
// one prologue only.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
!act = tensor<?x4096xf16>
// CHECK-LABEL: @normed
// CHECK: qf.silu_mul
func.func @normed(%g: !act, %u: !act, %n: tensor<4096xf16>) -> tensor<?x1024xf16> {
  // expected-remark @+1 {{silu_mul not folded into its act_order matmul: the qf.fused_matmul reading it already has a prologue}}
  %a = qf.silu_mul %g, %u : !act
  %w = qf.weight_ref "o" : !qf.weight<1024x4096, #ao>
  %y = qf.fused_matmul %a, %w norm(%n : tensor<4096xf16>) {norm_eps = 1.0e-05 : f32} : !act, !qf.weight<1024x4096, #ao> -> tensor<?x1024xf16>
  return %y : tensor<?x1024xf16>
}

// -----

// The product is the reader's residual, not its input.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
!act = tensor<?x4096xf16>
// CHECK-LABEL: @not_input
// CHECK: qf.silu_mul
func.func @not_input(%g: !act, %u: !act, %h: !act) -> !act {
  // expected-remark @+1 {{silu_mul not folded into its act_order matmul: its result is read by 'qf.fused_matmul' other than as a fused matmul's input}}
  %a = qf.silu_mul %g, %u : !act
  %w = qf.weight_ref "o" : !qf.weight<4096x4096, #ao>
  %y = qf.fused_matmul %h, %w residual(%a : !act) : !act, !qf.weight<4096x4096, #ao> -> !act
  return %y : !act
}
