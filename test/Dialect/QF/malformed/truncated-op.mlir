// IR cut in the middle of an op (after a complete weight type, inside the
// matmul's type list): a located error at the end of the input, no crash.

// RUN: not qfuse-opt %s 2>&1 | FileCheck %s

// CHECK-NOT: Stack dump
// CHECK: {{.*}}truncated-op.mlir:[[@LINE+6]]:{{[0-9]+}}: error: expected non-function type
// CHECK-NOT: Stack dump
// CHECK-NOT: PLEASE submit a bug report

func.func @cut(%x: tensor<1x64xf16>) -> tensor<1x32xf16> {
  %w = qf.weight_ref "w" : !qf.weight<32x64, #qf.enc<int4, group = 32, scale = f16>>
  %y = qf.matmul %x, %w : tensor<1x64xf16>,