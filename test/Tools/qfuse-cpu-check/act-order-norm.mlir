// act_order q/k/v, gate/up and a lone weight reading an RMSNorm's output
// (Inputs/act-order-norm.mlir): qf-fuse-act-order-norm makes the norm their
// prologue, which qf-to-gpu runs as one norm launch writing the rows in the
// first weight's sorted column order (docs/act-order.md). On the CPU
// reference against the C++ one, with the perms equal (--shared-perms: the
// permuted-norm path's contract) and with a perm of each weight's own (the
// fallback's case, which normalizes in checkpoint order): both exact.
// RUN: qfuse-cpu-check %S/Inputs/act-order-norm.mlir --fuse-shared --shared-perms --batch-sizes=1,3,16 --tiling-batch=16 --seed=7 \
// RUN:   | FileCheck %s --implicit-check-not=FAIL
// RUN: qfuse-cpu-check %S/Inputs/act-order-norm.mlir --fuse-shared --batch-sizes=1,3,16 --tiling-batch=16 --seed=8 \
// RUN:   | FileCheck %s --implicit-check-not=FAIL
// gamma is read: corrupting it fails every case.
// RUN: not qfuse-cpu-check %S/Inputs/act-order-norm.mlir --fuse-shared --shared-perms --batch-sizes=3 --tiling-batch=16 --perturb=norm \
// RUN:   | FileCheck %s --check-prefix=NORM
// So is the perm, through which the norm's output meets the weight.
// RUN: not qfuse-cpu-check %S/Inputs/act-order-norm.mlir --fuse-shared --shared-perms --batch-sizes=3 --tiling-batch=16 --perturb=perm \
// RUN:   | FileCheck %s --check-prefix=PERM

// NORM: FAIL @qkv {{.*}} m=3 {{.*}}(perturbed norm)
// NORM: FAIL @gate_up {{.*}} m=3 {{.*}}(perturbed norm)
// NORM: FAIL @lone {{.*}} m=3 {{.*}}(perturbed norm)
// NORM: qfuse-cpu-check: 5 cases, 0 passed, 5 failed
// PERM: FAIL @qkv {{.*}}(perturbed perm)
// PERM: FAIL @lone {{.*}}(perturbed perm)
// PERM: qfuse-cpu-check: 5 cases, 0 passed, 5 failed

// CHECK: PASS @qkv 512x512 #qf.enc<int4, group = 128, scale = f16, act_order> {{.*}} m=1
// CHECK: PASS @qkv#2 128x512 {{.*}} m=16
// CHECK: PASS @gate_up 1024x512 #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order> {{.*}} m=1
// CHECK-NOT: @gate_up#1
// CHECK: PASS @lone 512x1024 {{.*}} m=1
// CHECK: PASS @lone 512x1024 {{.*}} m=16
// CHECK: qfuse-cpu-check: 15 cases, 15 passed, 0 failed
