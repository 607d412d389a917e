// The check fails when a buffer the JIT function reads is wrong: each
// --perturb corrupts one parameter on the JIT side only.
// RUN: not qfuse-cpu-check %S/Inputs/cpu-formats.mlir --perturb=scales | FileCheck %s --check-prefix=SCALES
// RUN: not qfuse-cpu-check %S/Inputs/cpu-formats.mlir --perturb=codes | FileCheck %s --check-prefix=CODES
// RUN: not qfuse-cpu-check %S/Inputs/cpu-formats.mlir --perturb=perm | FileCheck %s --check-prefix=PERM
// RUN: not qfuse-cpu-check %S/Inputs/cpu-formats.mlir --perturb=meta | FileCheck %s --check-prefix=META
// RUN: not qfuse-cpu-check %S/Inputs/batch512.mlir --perturb=x --batch-sizes=3 | FileCheck %s --check-prefix=X

// SCALES: FAIL @int4_act_order {{.*}} m=1 max_abs_err={{.*}} (perturbed scales)
// SCALES: PASS @sp24_bf16
// SCALES: FAIL @cb8_named
// SCALES: qfuse-cpu-check: 23 cases, 1 passed, 22 failed

// CODES: FAIL @sp24_bf16 {{.*}} (perturbed codes)
// CODES: qfuse-cpu-check: 23 cases, 0 passed, 23 failed

// PERM: FAIL @int4_act_order {{.*}} (perturbed perm)
// PERM: FAIL @uint4_act_order_zero {{.*}} (perturbed perm)
// PERM: PASS @sp24_int4
// PERM: qfuse-cpu-check: 23 cases, 21 passed, 2 failed

// META: FAIL @sp24_int4 {{.*}} (perturbed meta)
// META: qfuse-cpu-check: 23 cases, 19 passed, 4 failed

// X: FAIL @int4_prefill {{.*}} m=3 {{.*}} (perturbed x)
// X: FAIL @int8_prefill
