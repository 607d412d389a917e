// RUN: qfuse-opt %s -split-input-file --qf-fuse-shared-input=gate-up-only | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --qf-fuse-shared-input | FileCheck %s --check-prefix=ALL
// RUN: qfuse-opt %s -split-input-file --qf-fuse-shared-input="gate-up-only report-unfused" -verify-diagnostics -o /dev/null

// gate-up-only (--fuse=default from the batches where q/k/v run apart and
// gated-mlp is left out): gate and up feeding one qf.silu_mul form a group;
// q/k/v, which read one input too, do not.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @layer
// ALL-LABEL: @layer
func.func @layer(%x: tensor<128x4096xf16>, %p: tensor<128x4096xf16>) -> (tensor<128x4096xf16>, tensor<128x1024xf16>, tensor<128x14336xf16>) {
  // CHECK: qf.fused_matmul %{{.*}} : {{.*}} -> tensor<128x4096xf16>
  // CHECK-NOT: qf.group
  // CHECK: qf.fused_matmul %{{.*}} : {{.*}} -> tensor<128x1024xf16>
  // CHECK-NOT: qf.group
  // CHECK: qf.fused_matmul %{{.*}} {qf.group = 0 : i64} : {{.*}} -> tensor<128x14336xf16>
  // CHECK: qf.fused_matmul %{{.*}} {qf.group = 0 : i64} : {{.*}} -> tensor<128x14336xf16>
  // CHECK: qf.silu_mul
  // ALL: qf.fused_matmul %{{.*}} {qf.group = 0 : i64} : {{.*}} -> tensor<128x4096xf16>
  // ALL: qf.fused_matmul %{{.*}} {qf.group = 0 : i64} : {{.*}} -> tensor<128x1024xf16>
  // ALL: qf.fused_matmul %{{.*}} {qf.group = 1 : i64} : {{.*}} -> tensor<128x14336xf16>
  // ALL: qf.fused_matmul %{{.*}} {qf.group = 1 : i64} : {{.*}} -> tensor<128x14336xf16>
  %wq = qf.weight_ref "q" : !qf.weight<4096x4096, #int4>
  %wk = qf.weight_ref "k" : !qf.weight<1024x4096, #int4>
  %wg = qf.weight_ref "gate" : !qf.weight<14336x4096, #int4>
  %wu = qf.weight_ref "up" : !qf.weight<14336x4096, #int4>
  // expected-remark @+1 {{not grouped with the others reading its input: gate-up-only groups gate and up that feed one qf.silu_mul}}
  %q = qf.fused_matmul %x, %wq : tensor<128x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<128x4096xf16>
  // expected-remark @+1 {{not grouped with the others reading its input: gate-up-only groups gate and up that feed one qf.silu_mul}}
  %k = qf.fused_matmul %x, %wk : tensor<128x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<128x1024xf16>
  %g = qf.fused_matmul %p, %wg : tensor<128x4096xf16>, !qf.weight<14336x4096, #int4> -> tensor<128x14336xf16>
  %u = qf.fused_matmul %p, %wu : tensor<128x4096xf16>, !qf.weight<14336x4096, #int4> -> tensor<128x14336xf16>
  %a = qf.silu_mul %g, %u : tensor<128x14336xf16>
  return %q, %k, %a : tensor<128x4096xf16>, tensor<128x1024xf16>, tensor<128x14336xf16>
}

// -----

// Two matmuls on one input that feed different silu_muls (or one of them
// something else as well) are not a gate/up pair.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @not_a_pair
// CHECK-NOT: qf.group
func.func @not_a_pair(%p: tensor<8x256xf16>, %o: tensor<8x512xf16>) -> (tensor<8x512xf16>, tensor<8x512xf16>, tensor<8x512xf16>) {
  %w1 = qf.weight_ref "a" : !qf.weight<512x256, #int4>
  %w2 = qf.weight_ref "b" : !qf.weight<512x256, #int4>
  %w3 = qf.weight_ref "c" : !qf.weight<512x256, #int4>
  // expected-remark @+1 {{not grouped: no other fused matmul reads its input with the same}}
  %a = qf.fused_matmul %p, %w1 : tensor<8x256xf16>, !qf.weight<512x256, #int4> -> tensor<8x512xf16>
  // expected-remark @+1 {{not grouped: no other fused matmul reads its input with the same}}
  %b = qf.fused_matmul %p, %w2 : tensor<8x256xf16>, !qf.weight<512x256, #int4> -> tensor<8x512xf16>
  // expected-remark @+1 {{not grouped with the others reading its input: gate-up-only groups gate and up that feed one qf.silu_mul}}
  %c = qf.fused_matmul %p, %w3 : tensor<8x256xf16>, !qf.weight<512x256, #int4> -> tensor<8x512xf16>
  %s1 = qf.silu_mul %a, %o : tensor<8x512xf16>
  %s2 = qf.silu_mul %b, %o : tensor<8x512xf16>
  %s3 = qf.silu_mul %c, %o : tensor<8x512xf16>
  return %s1, %s2, %c : tensor<8x512xf16>, tensor<8x512xf16>, tensor<8x512xf16>
}
