// act_order down_proj reading a silu_mul's product
// (Inputs/act-order-silu-mul.mlir): qf-fuse-act-order-silu-mul makes the
// silu_mul its prologue, which qf-to-gpu runs as one launch writing the
// products in the weight's sorted column order (docs/act-order.md), or,
// for act_order with 2:4 (no sort), as the plain silu_mul launch before the
// fallback's gemm. On the CPU reference against the C++ one, on the matvec
// layout (tiling batch 1) and the tensor-core one (16).
// RUN: qfuse-cpu-check %S/Inputs/act-order-silu-mul.mlir --fuse-shared --batch-sizes=1,3 --tiling-batch=1 --seed=5 \
// RUN:   | FileCheck %s --implicit-check-not=FAIL
// RUN: qfuse-cpu-check %S/Inputs/act-order-silu-mul.mlir --fuse-shared --batch-sizes=1,3,16 --tiling-batch=16 --seed=6 \
// RUN:   | FileCheck %s --check-prefix=MMA --implicit-check-not=FAIL
// up is read (x_up, a parameter only the folded form has): corrupting it
// fails every case.
// RUN: not qfuse-cpu-check %S/Inputs/act-order-silu-mul.mlir --fuse-shared --batch-sizes=3 --tiling-batch=16 --perturb=x_up \
// RUN:   | FileCheck %s --check-prefix=UP
// So is the perm, through which the products meet the weight (2:4 has
// none: g_idx gives its columns' groups).
// RUN: not qfuse-cpu-check %S/Inputs/act-order-silu-mul.mlir --fuse-shared --batch-sizes=3 --tiling-batch=16 --perturb=perm \
// RUN:   | FileCheck %s --check-prefix=PERM
// And the gate, the matmul's input now.
// RUN: not qfuse-cpu-check %S/Inputs/act-order-silu-mul.mlir --fuse-shared --batch-sizes=3 --tiling-batch=16 --perturb=x \
// RUN:   | FileCheck %s --check-prefix=GATE

// CHECK: PASS @down 512x1024 #qf.enc<int4, group = 128, scale = f16, act_order> {{.*}} m=1
// CHECK: PASS @down {{.*}} m=3
// CHECK: PASS @down_zero 256x768 #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order> {{.*}} m=1
// CHECK: PASS @down_sparse 256x512 #qf.enc<int4, group = 128, scale = f16, act_order, sparse = 2:4> {{.*}} m=3
// CHECK: qfuse-cpu-check: 6 cases, 6 passed, 0 failed

// MMA: PASS @down {{.*}} m=16
// MMA: PASS @down_zero {{.*}} m=16
// MMA: PASS @down_sparse {{.*}} m=16
// MMA: qfuse-cpu-check: 9 cases, 9 passed, 0 failed

// UP: FAIL @down {{.*}} m=3 {{.*}}(perturbed x_up)
// UP: FAIL @down_zero {{.*}} m=3 {{.*}}(perturbed x_up)
// UP: FAIL @down_sparse {{.*}} m=3 {{.*}}(perturbed x_up)
// UP: qfuse-cpu-check: 3 cases, 0 passed, 3 failed
// PERM: FAIL @down {{.*}}(perturbed perm)
// PERM: FAIL @down_zero {{.*}}(perturbed perm)
// PERM: qfuse-cpu-check: 3 cases, 1 passed, 2 failed
// GATE: FAIL @down {{.*}}(perturbed x)
// GATE: FAIL @down_zero {{.*}}(perturbed x)
// GATE: FAIL @down_sparse {{.*}}(perturbed x)
// GATE: qfuse-cpu-check: 3 cases, 0 passed, 3 failed
