// act_order with 2:4 sparsity (Inputs/act-order-sparse24.mlir): columns in
// checkpoint order, each column's group from g_idx. The CPU reference reads
// the row_major weight with the decode the fallback's dequantize kernel
// runs, against the C++ reference, at decode and prefill batches.
// RUN: qfuse-cpu-check %S/Inputs/act-order-sparse24.mlir --batch-sizes=1,3,17 2>/dev/null \
// RUN:   | FileCheck %s --implicit-check-not=FAIL
// g_idx is read: rotating it by one column fails every case.
// RUN: not qfuse-cpu-check %S/Inputs/act-order-sparse24.mlir --batch-sizes=3 --perturb=g_idx 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=GIDX

// CHECK: PASS @sp24_int4_act_order 256x512 #qf.enc<int4, group = 128, scale = f16, act_order, sparse = 2:4> #qf.layout<row_major> m=1
// CHECK: PASS @sp24_int4_act_order {{.*}} m=17
// CHECK: PASS @sp24_uint4_zero_act_order {{.*}}#qf.layout<row_major> m=1
// CHECK: PASS @sp24_uint8_fzero_act_order {{.*}}#qf.layout<row_major> m=17
// CHECK: qfuse-cpu-check: 9 cases, 9 passed, 0 failed

// GIDX: FAIL @sp24_int4_act_order {{.*}} (perturbed g_idx)
// GIDX: FAIL @sp24_uint4_zero_act_order {{.*}} (perturbed g_idx)
// GIDX: FAIL @sp24_uint8_fzero_act_order {{.*}} (perturbed g_idx)
// GIDX: qfuse-cpu-check: 3 cases, 0 passed, 3 failed
