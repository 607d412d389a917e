// REQUIRES: ptxas
// RUN: qfuse-compile %S/Inputs/tiny-llama.mlir --emit=ptx --fuse=none --batch-sizes=1,8 --tensor-core-min-batch=9 -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: not grep -q "\.local" %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: qfuse-compile %S/Inputs/tiny-llama.mlir --emit=ptx --batch-sizes=1,8 --tensor-core-min-batch=9 -o %t-fused.ptx
// RUN: FileCheck %s --check-prefix=FUSED-PTX < %t-fused.ptx
// RUN: not grep -q "\.local" %t-fused.ptx
// RUN: not grep -E "\.entry (qf_rotary_w|qf_kv_cache_write|qf_attention_)" %t-fused.ptx
// RUN: %ptxas -arch=sm_90 -v %t-fused.ptx -o %t-fused.cubin 2>&1 | FileCheck %s --check-prefix=FUSED

// A whole decode step (2 layers) compiles: every op has GPU code, the
// layers share one kernel per decode op and shape, batches 1 and 8 share
// the decode-op kernels (M is their grid or an immediate), and ptxas
// assembles all of them without spills. Kernel names are valid PTX
// identifiers, so the runtime finds them under the recorded names.
// CHECK-DAG: .visible .entry qf_embedding_v1000_h256(
// CHECK-DAG: .visible .entry qf_rms_norm_h256_eps1em05(
// CHECK-DAG: .visible .entry qf_rotary_w256_d64_t10000(
// CHECK-DAG: .visible .entry qf_rotary_w128_d64_t10000(
// CHECK-DAG: .global .align 16 .b8 qf_rope_inv_freq_d64_t10000[256]
// CHECK-DAG: .visible .entry qf_kv_cache_write_w128_s512(
// CHECK-DAG: .visible .entry qf_attention_h4_kv2_d64_s512(
// CHECK-DAG: .visible .entry qf_add_v8(
// CHECK-DAG: .visible .entry qf_silu_mul_v8(
// CHECK-DAG: .visible .entry qf_argmax_n1000(
// CHECK-DAG: .visible .entry qf_matvec_0_m1(
// CHECK-DAG: .visible .entry qf_matvec_0_m8(

// 5 matvec shapes x 2 batches + 9 decode-op kernels.
// PTXAS-COUNT-19: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: error

// With the fusion passes, norms, residual adds and silu_mul fold into the
// matvecs (how many matvec variants remain is the fusion passes' business),
// and each layer's rotary(q), rotary(k), cache write and attention are one
// launch (qf-fuse-rotary-attention); embedding and argmax remain, and
// nothing spills.
// FUSED-PTX-DAG: .visible .entry qf_embedding_v1000_h256(
// FUSED-PTX-DAG: .visible .entry qf_rotary_attention_h4_kv2_d64_s512_t10000(
// FUSED-PTX-DAG: .global .align 16 .b8 qf_rope_inv_freq_d64_t10000[256]
// FUSED-PTX-DAG: .visible .entry qf_argmax_n1000(
// (the separate rotary, cache-write and attention kernels are gone: RUN
// line with grep -E above)

// 5 matvec shapes x 2 batches + embedding, rotary attention, argmax.
// FUSED-COUNT-13: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// FUSED-NOT: {{[1-9][0-9]*}} bytes {{stack frame|spill stores|spill loads}}
// FUSED-NOT: error
