// IR cut in the middle of a !qf.weight type: the unbalanced '<' is reported
// where the type starts, and the tool exits non-zero without crashing.

// RUN: not qfuse-opt %s 2>&1 | FileCheck %s

// CHECK-NOT: Stack dump
// CHECK: {{.*}}truncated-type.mlir:[[@LINE+5]]:38: error: unbalanced '<' character in pretty dialect name
// CHECK-NOT: Stack dump
// CHECK-NOT: PLEASE submit a bug report

func.func @cut(%x: tensor<1x64xf16>) -> tensor<1x32xf16> {
  %w = qf.weight_ref "w" : !qf.weight<32x64, #qf.enc<int4, group = 32,