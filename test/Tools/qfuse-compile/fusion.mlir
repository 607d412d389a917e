// RUN: qfuse-compile %S/Inputs/llama-block.mlir --emit=mlir --batch-sizes=1,8 --fuse=all -o - | FileCheck %s
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --emit=mlir --batch-sizes=1,8 -o - | FileCheck %s --check-prefix=DEFAULT
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --emit=mlir --batch-sizes=1,8 --fuse=none -o - | FileCheck %s --check-prefix=NONE
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --emit=mlir --batch-sizes=1,8 --fuse=epilogue -o - | FileCheck %s --check-prefix=EPI
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --batch-sizes=1,8 --fuse=all --no-cubin -o - | FileCheck %s --check-prefix=ART
// RUN: not qfuse-compile %S/Inputs/llama-block.mlir --fuse=rmsnorm,bogus -o - 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --emit=mlir --batch-sizes=16 --fuse=all -o %t.mma.mlir 2>&1 | FileCheck %s --check-prefix=MMA
// RUN: FileCheck %s --check-prefix=MMA-IR < %t.mma.mlir
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --emit=mlir --batch-sizes=32,128 -o %t.b32.mlir 2>&1 | FileCheck %s --check-prefix=B32
// RUN: FileCheck %s --check-prefix=B32-IR < %t.b32.mlir
// RUN: qfuse-compile %S/Inputs/static-b32-qkv.mlir --emit=mlir -o %t.s32.mlir 2>&1 | FileCheck %s --check-prefix=B32
// RUN: FileCheck %s --check-prefix=B32-STATIC < %t.s32.mlir

// The default (--fuse=default) is every fusion but the RMSNorm prologue,
// which measured slower on the H200: the norms stay separate launches,
// q/k/v still share one, gate/up still carry the silu_mul.
// DEFAULT-LABEL: func.func @block
// DEFAULT: qf.rms_norm
// DEFAULT: qf.fused_matmul {{.*}}qf.group = 0 : i64
// DEFAULT: qf.rms_norm
// DEFAULT: qf.fused_matmul {{.*}} up(%{{.*}}) {activation = #qf<activation silu_mul>
// DEFAULT-NOT: qf.silu_mul
// DEFAULT-NOT: qf.add

// --fuse=all: 7 projections and 7 other ops become 4 launches
// per batch: q, k, v with the RMSNorm prologue in one group (one launch);
// o_proj with its residual; gate and up with the norm and silu_mul;
// down_proj with its residual.
// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[H:.*]]: tensor<?x256xf16>
// CHECK-NOT: qf.rms_norm
// CHECK: %[[G0:.*]] = qf.tensor_ref "model.layers.0.input_layernorm.weight"
// CHECK: %[[Q:.*]] = qf.fused_matmul %[[H]], %{{.*}} norm(%[[G0]] : tensor<256xf16>)
// CHECK-SAME: qf.group = 0 : i64
// CHECK-SAME: params = ["x", "norm", "codes", "scales", "y", "codes.1", "scales.1", "y.1", "codes.2", "scales.2", "y.2"]
// CHECK: qf.fused_matmul %[[H]], %{{.*}} norm(%[[G0]] : tensor<256xf16>)
// CHECK-SAME: qf.group = 0 : i64, qf.launches = []
// CHECK: qf.fused_matmul %[[H]], %{{.*}} norm(%[[G0]] : tensor<256xf16>)
// CHECK-SAME: qf.group = 0 : i64, qf.launches = []
// CHECK: %[[H1:.*]] = qf.fused_matmul %[[Q]], %{{.*}} residual(%[[H]] : tensor<?x256xf16>)
// CHECK: %[[A:.*]] = qf.fused_matmul %[[H1]], %{{.*}} up(%{{.*}} : !qf.weight<512x256, {{.*}}>) norm(%{{.*}} : tensor<256xf16>) {activation = #qf<activation silu_mul>
// CHECK-SAME: params = ["x", "norm", "codes", "scales", "up_codes", "up_scales", "y"]
// CHECK: qf.fused_matmul %[[A]], %{{.*}} residual(%[[H1]] : tensor<?x256xf16>)
// CHECK-NOT: qf.silu_mul
// CHECK-NOT: qf.add

// NONE: qf.rms_norm
// NONE: qf.silu_mul
// NONE: qf.add
// NONE-NOT: norm(
// NONE-NOT: residual(

// EPI: qf.rms_norm
// EPI: qf.fused_matmul {{.*}} residual(
// EPI: qf.silu_mul
// EPI: qf.fused_matmul {{.*}} residual(
// EPI-NOT: qf.add

// The artifact binds `norm` to the gamma tensor and `up_*` to the up
// projection's components.
// ART-DAG: "name": "model.layers.0.mlp.up_proj"
// ART-DAG: "name": "model.layers.0.post_attention_layernorm.weight"
// ART-DAG: "tensor": "model.layers.0.input_layernorm.weight"
// ART-DAG: "weight": "model.layers.0.mlp.up_proj"
// ART-DAG: "name": "codes.2"
// ART-DAG: "weight": "model.layers.0.self_attn.v_proj"
// ART-DAG: "buffer": "model.layers.0.self_attn.v_proj.out"

// BAD: qfuse-compile: --fuse: unknown fusion 'bogus'; expected rmsnorm, gated-mlp, epilogue, shared-input, act-order-norm, act-order-silu-mul, rotary-attention, default, all or none

// MMA: note: --fuse=rmsnorm skipped: batch 16 uses the tensor-core kernel, which does not fuse it
// MMA-NOT: skipped

// From batch 32 the default leaves the shared-input groups out: a group runs
// every member with its first member's tiling, measured slower there than
// launches of their own (bench/results/2026-11-30-h200-fusion-per-batch).
// B32: note: --fuse=default leaves out shared-input: from batch 32 q/k/v run faster as launches of their own
// B32-IR-NOT: qf.group
// B32-IR: activation = #qf<activation silu_mul>
// A module without --batch-sizes is compiled for its static batch.
// B32-STATIC-NOT: qf.group
// B32-STATIC: qf_mma_0_m32
// At batch 16 the tensor-core kernel takes q/k/v as one qf.group launch.
// MMA-IR-DAG: kernel = @qf_kernels::@qf_mma_0_m16, params = ["x", "codes", "scales", "y", "codes.1", "scales.1", "y.1", "codes.2", "scales.2", "y.2"]
// and gate/up as one silu_mul launch (GPU-checked: bench/results/
// 2026-11-30-h200-issue4-formats/mma-fused-m16-64).
// MMA-IR-DAG: activation = #qf<activation silu_mul>
// MMA-IR-DAG: kernel = @qf_kernels::@qf_mma_2_m16, params = ["x", "codes", "scales", "up_codes", "up_scales", "y"]
