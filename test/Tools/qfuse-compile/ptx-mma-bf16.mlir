// REQUIRES: ptxas
// RUN: qfuse-compile %S/Inputs/mma-bf16.mlir --emit=ptx --batch-sizes=1,16,64 -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: not grep -q "\.local" %t.ptx
// RUN: not grep -q "mma.sync.aligned.m16n8k16.row.col.f32.f16" %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | awk '/Function properties for/ { f = $NF } /spill stores/ && $5 != 0 { print f ": " $0 }' | FileCheck %s --check-prefix=SPILLS --allow-empty

// bf16 activations: the same kernel with bf16 A and B fragments
// (mma.sync ...bf16.bf16.f32), every decode producing bf16 pairs, the
// epilogue rounding to bf16. It runs at every batch, M = 1 included (no
// matvec reads bf16).
// CHECK: .target sm_90
// int4: bf16's 7 mantissa bits take a nibble at bits 0..3 only, so the high
// nibbles are shifted down first; both decode as bf16x2(128 + e) under
// 0x4300 (lop3 mask 0x000F000F), minus bf16x2(128 + 8) exactly.
// CHECK-LABEL: .entry qf_mma_0_m1(
// CHECK-DAG: lop3.b32 {{.*}}, 983055, 1124090624, 0xea;
// CHECK-DAG: shr.u32 {{.*}}, 4;
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-DAG: cvt.rn.bf16x2.f32
// CHECK-LABEL: .entry qf_mma_0_m16(
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// At M = 64 the group scale multiplies each fragment, in bf16.
// CHECK-LABEL: .entry qf_mma_1_m64(
// CHECK-DAG: mul.rn.bf16x2
// uint4 with integer zeros: bf16x2(128 + z) subtracted.
// CHECK-LABEL: .entry qf_mma_4_m16(
// CHECK-DAG: sub.rn.bf16x2
// NF4 (and fp4, codebooks): the shared table holds bf16 values.
// CHECK-LABEL: .entry qf_mma_8_m16(
// CHECK-DAG: prmt.b32 {{.*}}, 21520;
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// int8: 128 + u does not fit bf16's 8 bits, so each byte goes under the
// f32 2^23 (prmt selectors 0x7540..0x7543), 2^23 + z is subtracted in f32
// (symmetric int8: z = 128, the constant -(2^23 + 128) = 0fCB000080) and
// pairs round exactly into bf16x2.
// CHECK-LABEL: .entry qf_mma_20_m16(
// CHECK-DAG: prmt.b32 {{.*}}, 30016;
// CHECK-DAG: prmt.b32 {{.*}}, 30019;
// CHECK-DAG: add.rn.f32 {{.*}}, 0fCB000080;
// CHECK-DAG: cvt.rn.bf16x2.f32
// fp8: through the f16 pair conversion, widened and packed as bf16.
// CHECK-LABEL: .entry qf_mma_24_m16(
// CHECK-DAG: cvt.rn.f16x2.e4m3x2
// CHECK-DAG: cvt.f32.f16
// CHECK-DAG: cvt.rn.bf16x2.f32
// q/k/v as one qf.group launch, gate/up with silu_mul (int4 and fp8), and
// the bias epilogue read as bf16.
// CHECK-LABEL: .entry qf_mma_26_m16(
// CHECK-LABEL: .entry qf_mma_28_m16(
// CHECK-DAG: ex2.approx.ftz.f32
// CHECK-LABEL: .entry qf_mma_30_m16(
// CHECK-DAG: ex2.approx.ftz.f32
// CHECK-LABEL: .entry qf_mma_32_m16(
// CHECK-DAG: cvt.f32.bf16

// No spills.
// SPILLS-NOT: spill stores
