// RUN: qfuse-compile %S/Inputs/formats.mlir --emit=ptx --batch-sizes=1,8 -o %t.ptx
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
// nf4 (byte -> half2 table in shared memory):
// CHECK-LABEL: .entry qf_matvec_6_m1(
// CHECK: ld.shared.b32
// NVFP4: E4M3 block scales and the global scale:
// CHECK-LABEL: .entry qf_matvec_7_m1(
// CHECK: cvt.rn.f16x2.e4m3x2
// CHECK: div.rn.f32
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
