// REQUIRES: ptxas
// RUN: qfuse-compile %S/Inputs/decode-ops.mlir --emit=ptx --fuse=none --batch-sizes=1,8 -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: not grep -q "\.local" %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: qfuse-compile %S/Inputs/decode-ops.mlir --emit=ptx --fuse=none --chip=sm_80 --features=+ptx80 --batch-sizes=1,8 -o %t80.ptx
// RUN: %ptxas -arch=sm_80 -v %t80.ptx -o %t80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: qfuse-compile %S/Inputs/decode-ops.mlir --emit=ptx --batch-sizes=1,8 -o %t-fused.ptx
// RUN: FileCheck %s --check-prefix=FUSED < %t-fused.ptx
// RUN: not grep -q "\.local" %t-fused.ptx
// RUN: %ptxas -arch=sm_90 -v %t-fused.ptx -o %t-fused.cubin 2>&1 | FileCheck %s --check-prefix=FUSED-PTXAS
// RUN: qfuse-compile %S/Inputs/decode-ops.mlir --emit=ptx --chip=sm_80 --features=+ptx80 --batch-sizes=1,8 -o %t80-fused.ptx
// RUN: %ptxas -arch=sm_80 -v %t80-fused.ptx -o %t80-fused.cubin 2>&1 | FileCheck %s --check-prefix=FUSED-PTXAS

// The decode-op kernels at real model shapes (head_dim 32, 64, 128, 256;
// hidden 3584, 4096, 8192; a 152k vocabulary) assemble for sm_90 and sm_80
// without spills, and what reaches the PTX is what the generators chose:
// 16-byte non-coherent loads, ex2/sin/cos approximations after exact range
// handling, f64 angles for rotary.
// CHECK-LABEL: .entry qf_rms_norm_h4096_eps1em05(
// CHECK: ld.global.nc.v4.b32
// CHECK: shfl.sync.bfly.b32
// CHECK: bar.sync 0;
// CHECK: sqrt.rn.f32
// CHECK: st.global.v4.b32
// CHECK-LABEL: .entry qf_rotary_w4096_d128_t500000_llama3_f8_lo1_hi4_o8192(
// CHECK: ld.global.nc.v2.b64
// CHECK: cvt.rn.f64.s32
// CHECK: cvt.rmi.f64.f64
// CHECK: fma.rn.f64
// CHECK: cvt.rn.f32.f64
// CHECK: sin.approx.f32
// CHECK: cos.approx.f32
// CHECK-LABEL: .entry qf_kv_cache_write_w1024_s8192(
// CHECK: st.global.v4.b32
// CHECK-LABEL: .entry qf_attention_h32_kv8_d128_s8192(
// CHECK-COUNT-16: ld.global.nc.v4.b32
// CHECK: ex2.approx.ftz.f32
// CHECK: bar.sync 0;
// CHECK-LABEL: .entry qf_silu_mul_v8(
// CHECK: ex2.approx.ftz.f32
// CHECK-LABEL: .entry qf_argmax_n152064(
// CHECK-COUNT-4: ld.global.nc.v4.b32
// CHECK-LABEL: .entry qf_embedding_v128256_h4096(
// CHECK-LABEL: .entry qf_attention_h8_kv1_d256_s1024(
// CHECK-LABEL: .entry qf_attention_h16_kv4_d32_s1024(
// CHECK-LABEL: .entry qf_rms_norm_h8192_eps1em05(

// 19 kernels: 3 norms, 2 rotaries, 5 x (cache write, attention), silu_mul,
// add, argmax, embedding.
// PTXAS-COUNT-19: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: error

// With the fusion passes (default), the Llama-3-8B rotaries fold into its
// attention: one kernel that writes the rotated key row (f64 angles,
// sin/cos approximations as the rotary kernel), checks the positions
// contract with a warp OR over gridDim.y rows, rotates the query, streams
// the cache with 16-byte non-coherent loads, and merges warps after one
// barrier. 19 - 2 rotaries - 1 cache write - 1 attention + 1 = 16 kernels.
// FUSED-LABEL: .entry qf_rotary_attention_h32_kv8_d128_s8192_t500000_llama3_f8_lo1_hi4_o8192(
// FUSED: ld.global.nc.v2.b64
// FUSED: sin.approx.f32
// FUSED: cos.approx.f32
// FUSED: st.global.v4.b32
// FUSED: %nctaid.y
// FUSED-COUNT-5: shfl.sync.bfly.b32
// FUSED: cvt.rn.f64.s32
// FUSED: sin.approx.f32
// FUSED-COUNT-16: ld.global.nc.v4.b32
// FUSED: ex2.approx.ftz.f32
// FUSED: bar.sync 0;
// FUSED: div.rn.f32
// FUSED-NOT: .entry qf_rotary_w4096_d128
// FUSED-PTXAS-COUNT-16: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// FUSED-PTXAS-NOT: error
