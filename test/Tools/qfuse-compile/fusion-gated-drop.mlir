// --fuse=default leaves out gated-mlp on sm_90a from batch 128 to 511: gate
// and up then run as one qf.group launch (shared-input restricted to
// gate/up, since q/k/v run apart from batch 32) and a qf.silu_mul launch.
// Below 128, from 512 (the gated kernel fed by a producer warpgroup), and
// on chips without wgmma, gate/up keep the gated kernel.
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --emit=mlir --chip=sm_90a --batch-sizes=128,256 -o %t.a.mlir 2>&1 | FileCheck %s --check-prefix=NOTE
// RUN: FileCheck %s --check-prefix=DROP < %t.a.mlir
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --emit=mlir --chip=sm_90a --batch-sizes=64,128 -o %t.b.mlir 2>&1 | FileCheck %s --check-prefix=KEEP-NOTE
// RUN: FileCheck %s --check-prefix=KEEP < %t.b.mlir
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --emit=mlir --chip=sm_90 --batch-sizes=128,256 -o %t.c.mlir 2>&1 | FileCheck %s --check-prefix=KEEP-NOTE
// RUN: FileCheck %s --check-prefix=KEEP < %t.c.mlir
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --emit=mlir --chip=sm_90a --batch-sizes=512,1024 -o %t.e.mlir 2>&1 | FileCheck %s --check-prefix=KEEP-NOTE
// RUN: FileCheck %s --check-prefix=KEEP < %t.e.mlir
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --chip=sm_80,sm_90,sm_90a --batch-sizes=128 --no-cubin -o %t.qfa 2>&1 | FileCheck %s --check-prefix=SET
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --emit=mlir --chip=sm_90a --batch-sizes=128 --fuse=default,gated-mlp -o %t.d.mlir 2>&1 | FileCheck %s --check-prefix=KEEP-NOTE
// RUN: FileCheck %s --check-prefix=KEEP < %t.d.mlir

// NOTE-DAG: note: --fuse=default leaves out gated-mlp on sm_90a: from batch 128 to 511 gate and up run faster as one wgmma launch and a silu_mul
// NOTE-DAG: note: --fuse=default groups only gate and up: from batch 32 q/k/v run faster as launches of their own

// DROP-LABEL: func.func @block
// DROP-NOT: activation = #qf<activation silu_mul>
// DROP: %[[GATE:.*]] = qf.fused_matmul {{.*}}qf.group = [[G:[0-9]+]] : i64{{.*}} -> tensor<?x512xf16>
// DROP: %[[UP:.*]] = qf.fused_matmul {{.*}}qf.group = [[G]] : i64{{.*}} -> tensor<?x512xf16>
// DROP: qf.silu_mul %[[GATE]], %[[UP]]
// DROP-NOT: activation = #qf<activation silu_mul>

// KEEP-NOTE-NOT: leaves out gated-mlp
// KEEP-NOTE: note: --fuse=default leaves out shared-input: from batch 32
// KEEP-NOTE-NOT: leaves out gated-mlp
// KEEP-LABEL: func.func @block
// KEEP-NOT: qf.group
// KEEP: activation = #qf<activation silu_mul>
// KEEP-NOT: qf.silu_mul

// One note each, not one per chip of the set.
// SET-COUNT-1: leaves out gated-mlp on sm_90a
// SET-NOT: leaves out gated-mlp
