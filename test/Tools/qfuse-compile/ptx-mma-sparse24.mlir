// REQUIRES: ptxas
// RUN: qfuse-compile %S/Inputs/sparse24-formats.mlir --emit=ptx --batch-sizes=9,16,64,128 -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: not grep -q "\.local" %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | awk '/Function properties for/ { f = $NF } /spill stores/ && $5 != 0 { print f ": " $0 }' | FileCheck %s --check-prefix=SPILLS --allow-empty
// RUN: qfuse-compile %S/Inputs/sparse24-formats.mlir --emit=ptx --chip=sm_80 --features=+ptx80 --batch-sizes=9,64,128 -o %t80.ptx 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: %ptxas -arch=sm_80 -v %t80.ptx -o %t80.cubin 2>&1 | awk '/Function properties for/ { f = $NF } /spill stores/ && $5 != 0 { print f ": " $0 }' | FileCheck %s --check-prefix=SPILLS --allow-empty
// RUN: qfuse-compile %S/Inputs/sparse24-formats.mlir --emit=ptx --chip=sm_90a --batch-sizes=128,512 -o %t90a.ptx
// RUN: %ptxas -arch=sm_90a %t90a.ptx -o %t90a.cubin
// RUN: FileCheck %s --check-prefix=SM90A < %t90a.ptx

// Every 2:4 format past the matvec on mma.sp.m16n8k32 (issue 20, part 2),
// accepted by ptxas for sm_80, sm_90 and sm_90a without spills (plain
// .sp: PTX 8.0 has no ::ordered_metadata, so ptxas prints an advisory).
// CHECK: .target sm_90
// CHECK-LABEL: .entry qf_mma_0_m9(
// CHECK-DAG: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16;
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-DAG: mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32
// CHECK-DAG: shfl.sync.idx.b32
// int4: the byte's nibbles under 0x6400, one fma by (1, 1/16).
// CHECK-LABEL: .entry qf_mma_3_m9(
// CHECK-DAG: lop3.b32 {{.*}}, 15728655, 1677747200, 0xea;
// CHECK-DAG: fma.rn.f16x2
// CHECK-DAG: mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32
// fp8: one cvt per kept pair.
// CHECK: cvt.rn.f16x2.e4m3x2
// CHECK: mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32
// SPILLS-NOT: {{.}}

// sm_80 has no fp8 conversion: fp8 runs the fallback, the rest mma.sp.
// SM80: remark: M = 9 runs the dequantize + cuBLAS fallback ({{.*}}fp8 codes decode with cvt.f16x2.e4m3x2 (sm_89 or newer); target is sm_80)
// SM90A-NOT: wgmma
// SM90A: mma.sp.sync.aligned.m16n8k32
