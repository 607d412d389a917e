// An act_order MLP (Inputs/act-order-mlp.mlir) compiled with the default
// fusions and act-order-silu-mul (opt-in: measured slower, docs/defaults.md):
// on sm_90a from batch 128 gate/up is no gated kernel, so the silu_mul stays
// an op of its own and qf-fuse-act-order-silu-mul folds it into down_proj,
// whose step then reads gate's and up's outputs through down's perm (op
// qf.silu_mul, docs/act-order.md) in place of a silu_mul launch and a
// permute launch. Below 128 the gated kernel's silu is in its epilogue
// and it stores down_proj's input in sorted order (act-order-sorted-output.mlir):
// no permute launch either.
// RUN: qfuse-compile %S/Inputs/act-order-mlp.mlir --chip=sm_90a --batch-sizes=128 --fuse=default,act-order-silu-mul --no-cubin -o %t.b128.qfa
// RUN: %python -c "import json, sys; [print(json.dumps(s, sort_keys=True)) for p in json.load(open(sys.argv[1]))['plans'] for s in p['steps']]" %t.b128.qfa | FileCheck %s
// RUN: qfuse-compile %S/Inputs/act-order-mlp.mlir --chip=sm_90a --batch-sizes=128 --no-cubin -o %t.off.qfa
// RUN: %python -c "import json, sys; [print(json.dumps(s, sort_keys=True)) for p in json.load(open(sys.argv[1]))['plans'] for s in p['steps']]" %t.off.qfa | FileCheck %s --check-prefix=OFF
// RUN: qfuse-compile %S/Inputs/act-order-mlp.mlir --chip=sm_90a --batch-sizes=16 --fuse=default,act-order-silu-mul --emit=mlir -o - | FileCheck %s --check-prefix=GATED
// The fallback (act_order with 2:4, Inputs of the CPU check): the plain
// silu_mul launch writes the scratch its gemm reads.
// RUN: qfuse-compile %S/../qfuse-cpu-check/Inputs/act-order-silu-mul.mlir --batch-sizes=1 --fuse=default,act-order-silu-mul --no-cubin -o %t.sp.qfa 2>/dev/null
// RUN: %python -c "import json, sys; [print(json.dumps(s, sort_keys=True)) for p in json.load(open(sys.argv[1]))['plans'] for s in p['steps']]" %t.sp.qfa | FileCheck %s --check-prefix=FALLBACK

// One step per line (the artifact's plans, keys sorted). The silu_mul
// step reads gate's and up's outputs and down's perm, unguarded; the
// matmul reads what it wrote.
// CHECK-NOT: qf_silu_mul_v
// CHECK-NOT: qf_permute_k1024
// CHECK: {"args": [{"buffer": "gate_proj.out"}, {"buffer": "up_proj.out"}, {"component": "perm", "weight": "down_proj"}, {"buffer": "down_proj.out.permuted_input"}], "block": [128, 1, 1], "grid": [1, 128, 1], "launch": "qf_permute_silu_mul_k1024", "op": "qf.silu_mul", "shared_bytes": 0}
// CHECK-NEXT: {"args": [{"buffer": "down_proj.out.permuted_input"}, {"component": "codes", "weight": "down_proj"}, {"component": "scales", "weight": "down_proj"}, {"buffer": "down_proj.out"}], {{.*}}"launch": "qf_mma_1_m128"
// CHECK-NOT: qf_silu_mul_v
// CHECK-NOT: qf_permute_k1024

// Without the fusion: the silu_mul launch writes the product, a permute
// launch reorders it.
// OFF-NOT: qf_permute_silu_mul
// OFF: {"args": [{"buffer": "gate_proj.out"}, {"buffer": "up_proj.out"}, {"buffer": "[[A:[^"]*]]"}, {{.*}}"launch": "qf_silu_mul_v8"
// OFF-NEXT: {"args": [{"buffer": "[[A]]"}, {"component": "perm", "weight": "down_proj"}, {{.*}}"launch": "qf_permute_k1024", "op": "qf.permute_columns"
// OFF-NOT: qf_permute_silu_mul

// GATED: qf.fused_matmul {{.*}}activation = #qf<activation silu_mul>
// GATED-NOT: silu_mul(
// GATED-NOT: qf_permute_k1024
// GATED: params = ["x", "codes", "scales", "up_codes", "up_scales", "y", "y_order"]
// GATED-NOT: qf_permute_k1024

// FALLBACK: {"args": [{"buffer": "down_sparse.input0"}, {"buffer": "down_sparse.input1"}, {"buffer": "down_proj_sp24.out.fallback_activated"}, {"i32": 64}], {{.*}}"launch": "qf_silu_mul_v8", "op": "qf.silu_mul"
// FALLBACK-NEXT: "launch": "qf_dequant_{{[0-9]+}}", "op": "qf.dequantize"
// FALLBACK-NEXT: {"gemm": {"weight_buffer": "qf.workspace.f16", "x": "down_proj_sp24.out.fallback_activated", "y": "down_proj_sp24.out"}}
