// act_order q/k/v (one qf.group) and gate/up (one silu_mul matmul) after
// the shared-input fusions, on the CPU reference against the C++ one: with
// the perms equal (--shared-perms, as GPTQ desc_act gives weights that read
// one input) and with a perm of each weight's own. The fused ops keep each
// weight's own perm, so both are exact; the GPU kernel's single permute of
// the input holds only in the first case, which the runtime checks at load
// (PermGuards.h; the fallback takes the second).
// RUN: qfuse-cpu-check %S/Inputs/act-order-groups.mlir --fuse-shared --shared-perms --batch-sizes=1,3,16 --tiling-batch=16 --seed=7 \
// RUN:   | FileCheck %s --implicit-check-not=FAIL
// RUN: qfuse-cpu-check %S/Inputs/act-order-groups.mlir --fuse-shared --batch-sizes=1,3,16 --tiling-batch=16 --seed=8 \
// RUN:   | FileCheck %s --implicit-check-not=FAIL
// The reference reads up's own perm: corrupting it fails gate/up alone.
// RUN: not qfuse-cpu-check %S/Inputs/act-order-groups.mlir --fuse-shared --shared-perms --batch-sizes=3 --tiling-batch=16 --perturb=up_perm \
// RUN:   | FileCheck %s --check-prefix=UP-PERM

// UP-PERM: PASS @qkv
// UP-PERM: FAIL @gate_up {{.*}} m=3 {{.*}}(perturbed up_perm)
// UP-PERM: qfuse-cpu-check: 4 cases, 3 passed, 1 failed

// CHECK: PASS @qkv 512x512 #qf.enc<int4, group = 128, scale = f16, act_order> {{.*}} m=1
// CHECK: PASS @qkv 512x512 {{.*}} m=16
// CHECK: PASS @qkv#1 128x512 {{.*}} m=16
// CHECK: PASS @qkv#2 128x512 {{.*}} m=16
// gate and up are one (gated) case per batch, not two.
// CHECK: PASS @gate_up 1024x512 #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order> {{.*}} m=1
// CHECK-NOT: @gate_up#1
// CHECK: PASS @gate_up {{.*}} m=16
// CHECK-NOT: @gate_up#1
// CHECK: qfuse-cpu-check: 12 cases, 12 passed, 0 failed
