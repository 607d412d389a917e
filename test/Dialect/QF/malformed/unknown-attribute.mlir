// An attribute key the qf dialect does not define: a located error, no crash.

// RUN: not qfuse-opt %s 2>&1 | FileCheck %s

// CHECK-NOT: Stack dump
// CHECK: {{.*}}unknown-attribute.mlir:[[@LINE+4]]:40: error: unknown attribute `packing` in dialect `qf`
// CHECK-NOT: Stack dump
// CHECK-NOT: PLEASE submit a bug report

func.func @f(%w: !qf.weight<32x64, #qf.packing<int4>>) {
  return
}
