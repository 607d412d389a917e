// RUN: qfuse-compile %S/Inputs/formats.mlir --emit=ptx --batch-sizes=1,8 --tensor-core-min-batch=9 -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// No kernel spills or uses local memory:
// RUN: not grep -q "\.local" %t.ptx

// Every format compiles to sm_90 PTX with 128-bit non-coherent code loads,
// warp shuffles, and its own decode instructions.
// CHECK: .target sm_90
// int4 (tiled, mask-and-or decode):
// CHECK-LABEL: .entry qf_matvec_0_m1(
// CHECK: ld.global.nc.v4.b32
// CHECK: lop3.b32 {{.*}}, 983055, 1677747200, 0xea;
// CHECK: shfl.sync.bfly.b32
// CHECK-LABEL: .entry qf_matvec_0_m8(
// uint4 with integer zero points (k/v shape, split-K):
// CHECK-LABEL: .entry qf_matvec_1_m1(
// CHECK: ld.global.nc.v4.b32
// CHECK: lop3.b32
// CHECK: bar.sync 0
// int8 per channel (prmt decode):
// CHECK-LABEL: .entry qf_matvec_3_m1(
// CHECK: ld.global.nc.v4.b32
// CHECK: prmt.b32
// fp8 (hardware e4m3x2 conversion):
// CHECK-LABEL: .entry qf_matvec_5_m1(
// CHECK: cvt.rn.f16x2.e4m3x2
// nf4 (the table in registers: prmt lookups, no shared memory):
// CHECK-LABEL: .entry qf_matvec_6_m1(
// CHECK-NOT: ld.shared
// CHECK: prmt.b32
// NVFP4: e2m1 as sign and magnitude (the f16 high bytes of the magnitudes
// 0x3E3C3800 = 1044133888, 0x46444240 = 1178878528; signs by lop3 0xf8; the
// pairs' high bytes over zero low bytes by prmt 0x5140 = 20800 and 0x7362 =
// 29538), E4M3 block scales and the global scale:
// CHECK-LABEL: .entry qf_matvec_7_m1(
// CHECK-NOT: ld.shared
// CHECK-DAG: cvt.rn.f16x2.e4m3x2
// CHECK-DAG: div.rn.f32
// CHECK-DAG: mov.b32 {{.*}}, 1044133888;
// CHECK-DAG: mov.b32 {{.*}}, 1178878528;
// CHECK-DAG: lop3.b32 {{.*}}, -2139062144, 0xf8;
// CHECK-DAG: prmt.b32 {{.*}}, 20800;
// CHECK-DAG: prmt.b32 {{.*}}, 29538;
// MXFP4: E8M0 scales become f32 exponents:
// CHECK-LABEL: .entry qf_matvec_8_m1(
// CHECK: shl.b32 {{.*}}, 23;
// named codebook: the table is a kernel argument.
// CHECK-LABEL: .entry qf_matvec_10_m1(
// CHECK: qf_matvec_10_m1_param_3
// 2:4 sparse f16: kept values and their 2-bit positions; one prmt picks the
// kept columns' activations.
// CHECK-LABEL: .entry qf_matvec_12_m1(
// CHECK: ld.global.nc.v4.b32
// CHECK: ld.global.nc.b16
// CHECK: prmt.b32
// act_order: a launch of its own permutes the activations through `perm`
// (a row staged in shared memory in 16-byte vectors; 8 sorted columns a
// thread, one 16-byte store), and the matvec streams the sorted codes
// as a plain weight's, with no perm and no shared activations.
// CHECK-LABEL: .entry qf_permute_k1536(
// CHECK: ld.global.nc.v4.b32
// CHECK: st.shared.v4.b32
// CHECK: bar.sync 0
// CHECK: ld.global.nc.v4.b32
// CHECK: ld.shared.b16
// CHECK: st.global.v4.b32
// uint4 act_order with integer zero points: codes, scales, zeros, y.
// CHECK-LABEL: .entry qf_matvec_15_m1(
// CHECK-NOT: ld.shared
// CHECK: qf_matvec_15_m1_param_3
// CHECK-NOT: qf_matvec_15_m1_param_5
// int8 act_order, K = 1000 (odd): its permute, then 8-byte activation loads.
// CHECK-LABEL: .entry qf_permute_k1000(
// CHECK-LABEL: .entry qf_matvec_16_m1(
// CHECK-NOT: ld.shared
// CHECK: ld.global.nc.v2.b32
// CHECK: prmt.b32
// 2:4 int4: tiled kept codes, two 32-bit metadata words per 16-byte chunk,
// one prmt per quad picks the kept activations; its selectors come four at
// a time from three prmts over the byte table 0x76543210 (1985229328): the
// nibbles' a fields (& 0x3333 = 13107) and b fields index it, 0x5140
// (20800) and 0x7362 (29538) interleave them; no multiply by 0x22 or
// 0x2200.
// CHECK-LABEL: .entry qf_matvec_17_m1(
// CHECK-NOT: {{mul.lo.s32 .*, (34|8704);}}
// CHECK: ld.global.nc.v4.b32
// CHECK: ld.global.nc.b32
// CHECK: lop3.b32 {{.*}}, 983055, 1677747200, 0xea;
// CHECK: and.b32 {{.*}}, 13107;
// CHECK: mov.b32 [[TABLE:%r[0-9]+]], 1985229328;
// CHECK: prmt.b32 {{.*}}, [[TABLE]], [[TABLE]],
// CHECK: prmt.b32 {{.*}}, 20800;
// CHECK: prmt.b32 {{.*}}, 29538;
// CHECK: prmt.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}};
// CHECK-NOT: {{mul.lo.s32 .*, (34|8704);}}
// CHECK-LABEL: .entry qf_matvec_18_m1(
// CHECK: lop3.b32
// CHECK: prmt.b32
// 2:4 int8: a 32-bit metadata word per 16-byte chunk.
// CHECK-LABEL: .entry qf_matvec_19_m1(
// CHECK: ld.global.nc.v4.b32
// CHECK: ld.global.nc.b32
// CHECK: prmt.b32
// 2-bit codebook: 4 x 32 replicated table words, conflict-free lookups.
// CHECK-LABEL: .entry qf_matvec_20_m1(
// CHECK: st.shared.b32
// CHECK: bar.sync 0
// CHECK: ld.shared.b32
// CHECK: prmt.b32 {{.*}}, 21520;
// 3-bit codebook: codes straddling words joined by a funnel shift.
// CHECK-LABEL: .entry qf_matvec_21_m1(
// CHECK: ld.shared.b32
// CHECK: shf.l.wrap.b32
// CHECK-LABEL: .entry qf_matvec_22_m1(
// CHECK: qf_matvec_22_m1_param_3
// CHECK: ld.shared.b32
// 8-bit codebook (named f32 table): two f16 entries per table word, the
// half picked by a computed prmt selector.
// CHECK-LABEL: .entry qf_matvec_23_m1(
// CHECK: qf_matvec_23_m1_param_3
// CHECK: ld.shared.b32
// CHECK: prmt.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}};
