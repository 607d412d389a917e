// A type key the qf dialect does not define: a located error, no crash.

// RUN: not qfuse-opt %s 2>&1 | FileCheck %s

// CHECK-NOT: Stack dump
// CHECK: {{.*}}unknown-type.mlir:[[@LINE+4]]:22: error: unknown  type `packed` in dialect `qf`
// CHECK-NOT: Stack dump
// CHECK-NOT: PLEASE submit a bug report

func.func @f(%w: !qf.packed<32x64, #qf.enc<int4, group = 32, scale = f16>>) {
  return
}
