// An element format the dialect does not know: the error points at the name.

// RUN: not qfuse-opt %s 2>&1 | FileCheck %s

// CHECK-NOT: Stack dump
// CHECK: {{.*}}unknown-encoding.mlir:[[@LINE+5]]:53: error: unknown element format 'int3'; expected one of int4, uint4, int8, uint8, fp8e4m3, fp4e2m1, nf4, codebook, f16, bf16
// CHECK-NOT: Stack dump
// CHECK-NOT: PLEASE submit a bug report

func.func @f() {
  %w = qf.weight_ref "w" : !qf.weight<32x64, #qf.enc<int3, group = 32, scale = f16>>
  return
}
