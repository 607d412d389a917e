// REQUIRES: ptxas
// An artifact set carries a cubin per variant, each assembled for its own
// chip (the sm_90a variant's wgmma kernel assembles only with
// -arch=sm_90a), so every GPU the set runs on loads code without a JIT.

// RUN: qfuse-compile %S/Inputs/one-matmul-4096.mlir --batch-sizes=1,128 --chip=sm_80,sm_90a -o %t.qfa
// RUN: FileCheck %s < %t.qfa
// CHECK: "format": "qfuse-artifact-set"
// CHECK: "name": "qf_mma_1_m128"
// CHECK: "cubin_base64": "{{[A-Za-z0-9+/=]+}}"
// CHECK: "chip": "sm_80"
// CHECK: "name": "qf_wgmma_1_m128"
// CHECK: "cubin_base64": "{{[A-Za-z0-9+/=]+}}"
// CHECK: "chip": "sm_90a"
