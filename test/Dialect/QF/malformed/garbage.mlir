// Text that is not MLIR at all: a located error and a non-zero exit, no crash.

// RUN: not qfuse-opt %s 2>&1 | FileCheck %s

// CHECK-NOT: Stack dump
// CHECK: {{.*}}garbage.mlir:[[@LINE+3]]:1: error: custom op 'quantize' is unknown
// CHECK-NOT: Stack dump
// CHECK-NOT: PLEASE submit a bug report
quantize the weights please }}} %% @@ <<< !qf.weight #qf.enc
