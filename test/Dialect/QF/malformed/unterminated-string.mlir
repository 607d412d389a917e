// A weight name whose closing quote is missing.

// RUN: not qfuse-opt %s 2>&1 | FileCheck %s

// CHECK-NOT: Stack dump
// CHECK: {{.*}}unterminated-string.mlir:[[@LINE+5]]:{{[0-9]+}}: error: expected '"' in string literal
// CHECK-NOT: Stack dump
// CHECK-NOT: PLEASE submit a bug report

func.func @f() {
  %w = qf.weight_ref "model.layers.0.q_proj : !qf.weight<32x64, #qf.enc<int4, group = 32, scale = f16>>
  return
}
