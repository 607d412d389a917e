// REQUIRES: ptxas
// RUN: qfuse-compile %S/Inputs/sparse24-formats.mlir --qf-mma-sp-meta-per-tile=false --emit=ptx --batch-sizes=9,16,64,128 -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: not grep -q "\.local" %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | awk '/Function properties for/ { f = $NF } /spill stores/ && $5 != 0 { print f ": " $0 }' | FileCheck %s --check-prefix=SPILLS --allow-empty
// RUN: qfuse-compile %S/Inputs/sparse24-formats.mlir --qf-mma-sp-meta-per-tile=false --emit=ptx --chip=sm_80 --features=+ptx80 --batch-sizes=9,64,128 -o %t80.ptx 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: %ptxas -arch=sm_80 -v %t80.ptx -o %t80.cubin 2>&1 | awk '/Function properties for/ { f = $NF } /spill stores/ && $5 != 0 { print f ": " $0 }' | FileCheck %s --check-prefix=SPILLS --allow-empty
// RUN: qfuse-compile %S/Inputs/sparse24-formats.mlir --qf-mma-sp-meta-per-tile=false --emit=ptx --chip=sm_90a --batch-sizes=128,512 -o %t90a.ptx
// RUN: %ptxas -arch=sm_90a %t90a.ptx -o %t90a.cubin
// RUN: FileCheck %s --check-prefix=SM90A < %t90a.ptx
// Batches 1 to 512 (matvec, mma.sp, fallback; the sweep of every-encoding.mlir)
// assemble for sm_90 (sm_80 and sm_90a are above):
// RUN: qfuse-compile %S/Inputs/sparse24-formats.mlir --emit=ptx --batch-sizes=1,3,8,17,100,512 -o %tall.ptx
// RUN: %ptxas -arch=sm_90 %tall.ptx -o %tall.cubin
// The switch to one metadata word per m16 tile (selector 0 and a shuffle):
// RUN: qfuse-compile %S/Inputs/sparse24-formats.mlir --emit=ptx --batch-sizes=16 --qf-mma-sp-meta-per-tile -o %tpt.ptx
// RUN: %ptxas -arch=sm_90 %tpt.ptx -o %tpt.cubin
// RUN: FileCheck %s --check-prefix=PERTILE < %tpt.ptx

// Every 2:4 format past the matvec on mma.sp.m16n8k32, in the 2:4
// fragment layout (qfuse/format/SparseMmaLayout.h), accepted by ptxas for
// sm_80, sm_90 and sm_90a without spills (plain .sp: PTX 8.0 has no
// ::ordered_metadata, so ptxas prints an advisory). A lane copies its
// pieces by cp.async and reads each by one ld.shared.v4; f16 pieces are
// the A registers themselves; both m16 tiles of a slab read one metadata
// register, with selectors 0 and 1.
// (The register checks come first: the epilogue's split-K sums are
// ld.shared.v4 too.)
// RUN: FileCheck %s --check-prefix=OPS < %t.ptx
// OPS: .target sm_90
// OPS-LABEL: .entry qf_mma_0_m9(
// OPS-DAG: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16;
// OPS-DAG: ld.shared.v4.b32
// OPS-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// OPS-DAG: shfl.sync.idx.b32
// CHECK: .target sm_90
// CHECK-LABEL: .entry qf_mma_0_m9(
// CHECK: ld.shared.v4.b32 {%r[[META:[0-9]+]], {{.*}}}, [{{.*}}];
// CHECK: ld.shared.v4.b32 {%r[[A0:[0-9]+]], %r[[A1:[0-9]+]], %r[[A2:[0-9]+]], %r[[A3:[0-9]+]]}
// CHECK: mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32
// CHECK-NEXT: {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}},
// CHECK-NEXT: {%r[[A0]], %r[[A1]], %r[[A2]], %r[[A3]]},
// CHECK-NEXT: {{.+}}
// CHECK-NEXT: {{.+}}
// CHECK-NEXT: %r[[META]],
// CHECK-NEXT: 0;
// CHECK: mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32
// CHECK-NEXT: {{.+}}
// CHECK-NEXT: {{.+}}
// CHECK-NEXT: {{.+}}
// CHECK-NEXT: {{.+}}
// CHECK-NEXT: %r[[META]],
// CHECK-NEXT: 1;
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

// PERTILE-LABEL: .entry qf_mma_0_m16(
// PERTILE: shfl.sync.bfly.b32 %r[[SHUF:[0-9]+]], %r{{[0-9]+}}, 2, 31, -1;
// PERTILE: mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32
// PERTILE-NOT: 1;
// PERTILE: %r[[SHUF]],
// PERTILE-NEXT: 0;
