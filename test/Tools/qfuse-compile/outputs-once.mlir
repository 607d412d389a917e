// Functions of one module (a plan per batch) that return the same buffer
// list it once in the artifact's outputs, which the runtime requires to be
// unique.
// RUN: qfuse-compile %S/Inputs/wgmma.mlir --chip=sm_90a --no-cubin -o %t.qfa
// RUN: FileCheck %s < %t.qfa
// CHECK-LABEL: "outputs": [
// CHECK:       "int4_g128.out",
// CHECK-NOT:   "int4_g128.out"
// CHECK:       "plans": [
