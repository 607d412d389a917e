// act_order down_projs behind the gated gate/up kernel (Inputs of the CPU
// check's act_order MLP test), compiled the default way at batch 16: the
// gated kernel binds down_proj's inv_perm as `y_order` and writes gate/up's
// output in down_proj's sorted column order, which down_proj's kernel reads
// as it is: no permute launch for down_proj. Gate/up's fallback (perms
// that differ) gathers the product through down_proj's perm into the same
// buffer. With --act-order-sorted-output=false down_proj has its permute.
// RUN: qfuse-compile %S/../qfuse-cpu-check/Inputs/act-order-mlp.mlir --batch-sizes=16 --no-cubin -o %t.qfa
// RUN: %python -c "import json, sys; [print(json.dumps(s, sort_keys=True)) for p in json.load(open(sys.argv[1]))['plans'] for s in p['steps']]" %t.qfa | FileCheck %s
// Attention read by an act_order o_proj: the attention kernel binds
// o_proj's inv_perm as `out_order`, o_proj reads its output as stored.
// RUN: qfuse-compile %S/../qfuse-cpu-check/Inputs/act-order-attention.mlir --batch-sizes=16 --no-cubin -o %t.att.qfa
// RUN: %python -c "import json, sys; [print(json.dumps(s, sort_keys=True)) for p in json.load(open(sys.argv[1]))['plans'] for s in p['steps']]" %t.att.qfa | FileCheck %s --check-prefix=ATT
// From batch 32 the tiled attention kernel runs: by default o_proj keeps
// its permute launch there; --sorted-attention-max-batch=4096 makes the
// tiled kernel store in sorted order too.
// RUN: qfuse-compile %S/../qfuse-cpu-check/Inputs/act-order-attention.mlir --batch-sizes=32 --no-cubin -o %t.att32.qfa
// RUN: %python -c "import json, sys; [print(json.dumps(s, sort_keys=True)) for p in json.load(open(sys.argv[1]))['plans'] for s in p['steps']]" %t.att32.qfa | FileCheck %s --check-prefix=ATT32
// RUN: qfuse-compile %S/../qfuse-cpu-check/Inputs/act-order-attention.mlir --batch-sizes=32 --sorted-attention-max-batch=4096 --no-cubin -o %t.att32s.qfa
// RUN: %python -c "import json, sys; [print(json.dumps(s, sort_keys=True)) for p in json.load(open(sys.argv[1]))['plans'] for s in p['steps']]" %t.att32s.qfa | FileCheck %s --check-prefix=ATT32S
// RUN: qfuse-compile %S/../qfuse-cpu-check/Inputs/act-order-mlp.mlir --batch-sizes=16 --act-order-sorted-output=false --no-cubin -o %t.off.qfa
// RUN: %python -c "import json, sys; [print(json.dumps(s, sort_keys=True)) for p in json.load(open(sys.argv[1]))['plans'] for s in p['steps']]" %t.off.qfa | FileCheck %s --check-prefix=OFF

// One step per line (the artifact's plans, keys sorted).
// CHECK-NOT: qf_permute_k1024
// CHECK: {"buffer": "gate_proj.out"}, {"component": "inv_perm", "weight": "down_proj"}], {{.*}}"launch": "qf_mma_0_m16", {{.*}}"when": {"perms_equal": ["gate_proj", "up_proj"]}}
// CHECK: {"args": [{"buffer": "gate_proj.out.fallback_gate"}, {"buffer": "gate_proj.out.fallback_up"}, {"component": "perm", "weight": "down_proj"}, {"buffer": "gate_proj.out"}], {{.*}}"launch": "qf_permute_silu_mul_k1024", {{.*}}"when": {"perms_differ": ["gate_proj", "up_proj"]}}
// CHECK-NEXT: {"args": [{"buffer": "gate_proj.out"}, {"component": "codes", "weight": "down_proj"}, {{.*}}"launch": "qf_mma_1_m16"
// CHECK-NEXT: {"buffer": "gate_plain.out"}, {"component": "inv_perm", "weight": "down_asym"}]
// CHECK-NEXT: {"args": [{"buffer": "gate_plain.out"}, {"component": "codes", "weight": "down_asym"}, {"component": "scales", "weight": "down_asym"}, {"component": "zeros", "weight": "down_asym"}
// CHECK-NOT: qf_permute_k1536
// CHECK-NOT: inv_perm

// OFF-NOT: inv_perm
// OFF: "launch": "qf_permute_k1024", "op": "qf.permute_columns"
// OFF: "launch": "qf_permute_k1536", "op": "qf.permute_columns"
// OFF-NOT: inv_perm

// ATT-NOT: qf_permute_k
// ATT: {"buffer": "[[A:value[0-9]+]]"}, {"component": "inv_perm", "weight": "o_proj{{[^"]*}}"}], {{.*}}"launch": "qf_attention_h8_kv2_d64_s64_sorted"
// ATT-NEXT: {"args": [{"buffer": "[[A]]"}, {"component": "codes", "weight": "o_proj
// ATT-NOT: qf_permute_k

// ATT32-NOT: inv_perm
// ATT32: "launch": "qf_attention_tiled_h8_kv2_d64_s64"
// ATT32-NEXT: "launch": "qf_permute_k512", "op": "qf.permute_columns"
// ATT32-NOT: inv_perm

// ATT32S-NOT: qf_permute_k
// ATT32S: {"buffer": "[[A:value[0-9]+]]"}, {"i32": 32}, {"component": "inv_perm", "weight": "o_proj{{[^"]*}}"}], {{.*}}"launch": "qf_attention_tiled_h8_kv2_d64_s64_sorted"
// ATT32S-NEXT: {"args": [{"buffer": "[[A]]"}, {"component": "codes", "weight": "o_proj
// ATT32S-NOT: qf_permute_k
