// RUN: qfuse-opt %s -split-input-file --qf-fuse-gated-mlp | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --qf-fuse-gated-mlp=report-unfused -verify-diagnostics -o /dev/null

// Llama-3-8B MLP: gate and up (separate checkpoint tensors) and silu_mul
// become one fused matmul; the down projection is untouched.
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<14336x4096, #int4>
// CHECK-LABEL: @llama_mlp
//  CHECK-SAME: (%[[X:.*]]: tensor<1x4096xf16>)
func.func @llama_mlp(%x: tensor<1x4096xf16>) -> tensor<1x4096xf16> {
  // CHECK: %[[G:.*]] = qf.weight_ref "model.layers.0.mlp.gate_proj"
  // CHECK: %[[U:.*]] = qf.weight_ref "model.layers.0.mlp.up_proj"
  // CHECK: %[[A:.*]] = qf.fused_matmul %[[X]], %[[G]] up(%[[U]] : !qf.weight<14336x4096, #int4_g128>) {activation = #qf<activation silu_mul>} : tensor<1x4096xf16>, !qf.weight<14336x4096, #int4_g128> -> tensor<1x14336xf16>
  // CHECK-NOT: qf.silu_mul
  // CHECK: qf.fused_matmul %[[A]], %{{.*}} : tensor<1x14336xf16>
  %wg = qf.weight_ref "model.layers.0.mlp.gate_proj" : !w
  %wu = qf.weight_ref "model.layers.0.mlp.up_proj" : !w
  %wd = qf.weight_ref "model.layers.0.mlp.down_proj" : !qf.weight<4096x14336, #int4>
  %g = qf.fused_matmul %x, %wg : tensor<1x4096xf16>, !w -> tensor<1x14336xf16>
  %u = qf.fused_matmul %x, %wu : tensor<1x4096xf16>, !w -> tensor<1x14336xf16>
  %a = qf.silu_mul %g, %u : tensor<1x14336xf16>
  %d = qf.fused_matmul %a, %wd : tensor<1x14336xf16>, !qf.weight<4096x14336, #int4> -> tensor<1x4096xf16>
  return %d : tensor<1x4096xf16>
}

// -----

// With the RMSNorm prologue on both projections (after
// qf-fuse-rmsnorm-prologue): the prologue is kept once.
#uint4 = #qf.enc<uint4, group = 128, scale = f16, zero = int>
!w = !qf.weight<512x256, #uint4>
// CHECK-LABEL: @with_norm
func.func @with_norm(%h: tensor<?x256xf16>, %n: tensor<256xf16>) -> tensor<?x512xf16> {
  // CHECK: qf.fused_matmul %{{.*}}, %{{.*}} up(%{{.*}} : !qf.weight<512x256, #uint4_g128>) norm(%{{.*}} : tensor<256xf16>) {activation = #qf<activation silu_mul>, norm_eps = 9.99999974E-6 : f32}
  %wg = qf.weight_ref "gate" : !w
  %wu = qf.weight_ref "up" : !w
  %g = qf.fused_matmul %h, %wg norm(%n : tensor<256xf16>) {norm_eps = 1.0e-05 : f32} : tensor<?x256xf16>, !w -> tensor<?x512xf16>
  %u = qf.fused_matmul %h, %wu norm(%n : tensor<256xf16>) {norm_eps = 1.0e-05 : f32} : tensor<?x256xf16>, !w -> tensor<?x512xf16>
  %a = qf.silu_mul %g, %u : tensor<?x512xf16>
  return %a : tensor<?x512xf16>
}

// -----

// Not fused: different encodings (a mixed-precision checkpoint).
#int4 = #qf.enc<int4, group = 128, scale = f16>
#int8 = #qf.enc<int8, group = 128, scale = f16>
// CHECK-LABEL: @different_encodings
func.func @different_encodings(%x: tensor<1x256xf16>) -> tensor<1x512xf16> {
  // CHECK: qf.silu_mul
  %wg = qf.weight_ref "gate" : !qf.weight<512x256, #int4>
  %wu = qf.weight_ref "up" : !qf.weight<512x256, #int8>
  %g = qf.fused_matmul %x, %wg : tensor<1x256xf16>, !qf.weight<512x256, #int4> -> tensor<1x512xf16>
  %u = qf.fused_matmul %x, %wu : tensor<1x256xf16>, !qf.weight<512x256, #int8> -> tensor<1x512xf16>
  // expected-remark@+1 {{silu_mul not fused with its projections: gate weight !qf.weight<512x256, #qf.enc<int4, group = 128, scale = f16>> and up weight !qf.weight<512x256, #qf.enc<int8, group = 128, scale = f16>> differ in shape, encoding or layout}}
  %a = qf.silu_mul %g, %u : tensor<1x512xf16>
  return %a : tensor<1x512xf16>
}

// -----

// act_order gate and up fuse under the contract that their perms are
// equal (qf-to-gpu guards the kernel with it and adds a fallback).
#gptq = #qf.enc<int4, group = 128, scale = f16, act_order>
!w = !qf.weight<512x256, #gptq>
// CHECK-LABEL: @act_order
func.func @act_order(%x: tensor<1x256xf16>) -> tensor<1x512xf16> {
  // CHECK: qf.fused_matmul %{{.*}}, %{{.*}} up(%{{.*}} : !qf.weight<512x256, #{{.*}}>) {activation = #qf<activation silu_mul>}
  // CHECK-NOT: qf.silu_mul
  %wg = qf.weight_ref "gate" : !w
  %wu = qf.weight_ref "up" : !w
  %g = qf.fused_matmul %x, %wg : tensor<1x256xf16>, !w -> tensor<1x512xf16>
  %u = qf.fused_matmul %x, %wu : tensor<1x256xf16>, !w -> tensor<1x512xf16>
  %a = qf.silu_mul %g, %u : tensor<1x512xf16>
  return %a : tensor<1x512xf16>
}

// -----

// Not fused: act_order on bf16 activations (the fallback for perms that
// differ multiplies by silu in f16 only).
#gptq = #qf.enc<int4, group = 128, scale = f16, act_order>
!w = !qf.weight<512x256, #gptq>
// CHECK-LABEL: @act_order_bf16
func.func @act_order_bf16(%x: tensor<1x256xbf16>) -> tensor<1x512xbf16> {
  // CHECK: qf.silu_mul
  %wg = qf.weight_ref "gate" : !w
  %wu = qf.weight_ref "up" : !w
  %g = qf.fused_matmul %x, %wg : tensor<1x256xbf16>, !w -> tensor<1x512xbf16>
  %u = qf.fused_matmul %x, %wu : tensor<1x256xbf16>, !w -> tensor<1x512xbf16>
  // expected-remark@+1 {{silu_mul not fused with its projections: the gate projection is act_order on bf16 activations: where gate's and up's perms differ at load time the fallback runs, whose silu_mul kernel reads f16 only}}
  %a = qf.silu_mul %g, %u : tensor<1x512xbf16>
  return %a : tensor<1x512xbf16>
}

// -----

// Not fused: gate and up read different inputs.
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<512x256, #int4>
// CHECK-LABEL: @different_inputs
func.func @different_inputs(%x: tensor<1x256xf16>, %y: tensor<1x256xf16>) -> tensor<1x512xf16> {
  // CHECK: qf.silu_mul
  %wg = qf.weight_ref "gate" : !w
  %wu = qf.weight_ref "up" : !w
  %g = qf.fused_matmul %x, %wg : tensor<1x256xf16>, !w -> tensor<1x512xf16>
  %u = qf.fused_matmul %y, %wu : tensor<1x256xf16>, !w -> tensor<1x512xf16>
  // expected-remark@+1 {{silu_mul not fused with its projections: gate and up read different inputs}}
  %a = qf.silu_mul %g, %u : tensor<1x512xf16>
  return %a : tensor<1x512xf16>
}

// -----

// Not fused: MLP biases (Llama mlp_bias) would have to precede the
// activation, which the gated form does not do.
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<512x256, #int4>
// CHECK-LABEL: @mlp_bias
func.func @mlp_bias(%x: tensor<1x256xf16>, %bg: tensor<512xf16>, %bu: tensor<512xf16>) -> tensor<1x512xf16> {
  // CHECK: qf.silu_mul
  %wg = qf.weight_ref "gate" : !w
  %wu = qf.weight_ref "up" : !w
  %g = qf.fused_matmul %x, %wg bias(%bg : tensor<512xf16>) : tensor<1x256xf16>, !w -> tensor<1x512xf16>
  %u = qf.fused_matmul %x, %wu bias(%bu : tensor<512xf16>) : tensor<1x256xf16>, !w -> tensor<1x512xf16>
  // expected-remark@+1 {{silu_mul not fused with its projections: the gate projection has a bias, which the gated form cannot apply before the activation}}
  %a = qf.silu_mul %g, %u : tensor<1x512xf16>
  return %a : tensor<1x512xf16>
}

// -----

// Not fused: the gate result is also returned.
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<512x256, #int4>
// CHECK-LABEL: @gate_used_twice
func.func @gate_used_twice(%x: tensor<1x256xf16>) -> (tensor<1x512xf16>, tensor<1x512xf16>) {
  // CHECK: qf.silu_mul
  %wg = qf.weight_ref "gate" : !w
  %wu = qf.weight_ref "up" : !w
  %g = qf.fused_matmul %x, %wg : tensor<1x256xf16>, !w -> tensor<1x512xf16>
  %u = qf.fused_matmul %x, %wu : tensor<1x256xf16>, !w -> tensor<1x512xf16>
  // expected-remark@+1 {{silu_mul not fused with its projections: the gate projection has other users}}
  %a = qf.silu_mul %g, %u : tensor<1x512xf16>
  return %a, %g : tensor<1x512xf16>, tensor<1x512xf16>
}

// -----

// Not fused: dense f16 weights run as cuBLAS steps (no epilogue activation).
#f16 = #qf.enc<f16>
!w = !qf.weight<512x256, #f16>
// CHECK-LABEL: @cublas
func.func @cublas(%x: tensor<1x256xf16>) -> tensor<1x512xf16> {
  // CHECK: qf.silu_mul
  %wg = qf.weight_ref "gate" : !w
  %wu = qf.weight_ref "up" : !w
  %g = qf.fused_matmul %x, %wg : tensor<1x256xf16>, !w -> tensor<1x512xf16>
  %u = qf.fused_matmul %x, %wu : tensor<1x256xf16>, !w -> tensor<1x512xf16>
  // expected-remark@+1 {{silu_mul not fused with its projections: the gate projection has a dense #qf.enc<f16> weight: it runs as a cuBLAS step, which has no epilogue activation}}
  %a = qf.silu_mul %g, %u : tensor<1x512xf16>
  return %a : tensor<1x512xf16>
}
