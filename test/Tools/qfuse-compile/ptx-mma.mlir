// REQUIRES: ptxas
// RUN: qfuse-compile %S/Inputs/mma-formats.mlir --emit=ptx --batch-sizes=16,64 -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: not grep -q "\.local" %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin > %t.ptxas 2>&1
// RUN: FileCheck %s --check-prefix=PTXAS < %t.ptxas
// RUN: awk '/Function properties for/ { f = $NF } /spill stores/ && $5 != 0 { print f ": " $0 }' %t.ptxas | FileCheck %s --check-prefix=SPILLS --allow-empty
// RUN: qfuse-compile %S/Inputs/mma-formats.mlir --emit=ptx --batch-sizes=24 -o %t24.ptx
// RUN: FileCheck %s --check-prefix=ROWS < %t24.ptx
// RUN: qfuse-compile %S/Inputs/mma-formats.mlir --emit=ptx --chip=sm_80 --features=+ptx80 --batch-sizes=16 -o %t80.ptx 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: %ptxas -arch=sm_80 %t80.ptx -o %t80.cubin

// Batches past the matvec lower to the tensor-core kernel: activations
// through a cp.async pipeline into swizzled shared memory read by
// ldmatrix, codes and scales through cp.async too, decoded in registers
// into B fragments, mma.sync m16n8k16 with f32 accumulation. M = 16 and 64
// are whole blocks of rows: no activation copy needs a size.
// CHECK: .target sm_90
// CHECK: .extern .shared .align 16 .b8 qf_mma_0_m16_smem[];
// int4 (mask-and-or decode, exact q - 8, then the group scale; each batch
// its own tiling: block_m = 16 at M = 16, where group 128 is folded per
// group (deferred scaling, mma-deferred-scale.mlir), and block_m = 64 at
// M = 64, four m tiles, where the per-fragment multiply is cheaper):
// CHECK-LABEL: .entry qf_mma_0_m16(
// CHECK-DAG: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 16;
// CHECK-DAG: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16;
// CHECK-DAG: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 4;
// CHECK-DAG: cp.async.commit_group;
// CHECK-DAG: cp.async.wait_group
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-DAG: lop3.b32 {{.*}}, 983055, 1677747200, 0xea;
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-LABEL: .entry qf_mma_1_m64(
// CHECK-DAG: mul.rn.f16x2
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// uint4 with integer zero points: zero words ride the pipeline as well.
// CHECK-LABEL: .entry qf_mma_4_m16(
// CHECK-COUNT-2: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 4;
// nf4: the code table in registers (Table4Registers.cpp): the tiled word's
// bytes 1 and 2 swapped (prmt 0x3120), bit 3 of the codes as a sign-mode
// prmt mask (0x9D8C), lookups kept by one lop3 (0xd8) and the bytes
// interleaved by prmt 0x6240 and 0x7351.
// CHECK-LABEL: .entry qf_mma_8_m16(
// CHECK-DAG: prmt.b32 {{.*}}, 12576;
// CHECK-DAG: prmt.b32 {{.*}}, 40332;
// CHECK-DAG: lop3.b32 {{.*}}, 0xd8;
// CHECK-DAG: prmt.b32 {{.*}}, 25152;
// CHECK-DAG: prmt.b32 {{.*}}, 29521;
// CHECK-DAG: mma.sync.aligned.m16n8k16
// NVFP4: E4M3 block scales through the fp8 conversion.
// CHECK-LABEL: .entry qf_mma_10_m16(
// CHECK-DAG: cvt.rn.f16x2.e4m3x2
// CHECK-DAG: mma.sync.aligned.m16n8k16

// int8: two 16-byte copies per lane and tile (1024-byte tiles of 8-bit
// codes), the sign bit flipped, each byte placed under 0x64 by prmt
// (half2(1024 + q + 128)), the bias removed exactly by one half2 add.
// CHECK-LABEL: .entry qf_mma_20_m16(
// CHECK-DAG: cp.async.cg.shared.global [{{.*}}+{{[0-9]+}}], [{{.*}}+16], 16;
// CHECK-DAG: xor.b32 {{.*}}, -2139062144;
// CHECK-DAG: prmt.b32 {{.*}}, 16704;
// CHECK-DAG: prmt.b32 {{.*}}, 17218;
// CHECK-DAG: add.rn.f16x2
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// uint8 with integer zero points: no sign flip, half2(1024 + z) subtracted.
// CHECK-LABEL: .entry qf_mma_22_m16(
// CHECK-NOT: xor.b32 {{.*}}, -2139062144;
// CHECK-DAG: prmt.b32 {{.*}}, 16704;
// CHECK-DAG: sub.rn.f16x2
// CHECK-DAG: mma.sync.aligned.m16n8k16
// fp8 e4m3: one cvt per B register.
// CHECK-LABEL: .entry qf_mma_24_m16(
// CHECK-COUNT-8: cvt.rn.f16x2.e4m3x2
// CHECK: mma.sync.aligned.m16n8k16

// Every variant (13 ops x 2 batches) assembles without spills.
// PTXAS-NOT: error
// SPILLS-NOT: spill stores

// Split-K across a thread-block cluster (cluster_k): the cluster shape is
// compiled into the kernel; once a relaxed barrier says rank 0 is drained,
// the other ranks store their sums into its shared memory (DSMEM), a
// release barrier publishes them and rank 0 reads them locally.
// RUN: qfuse-compile %S/Inputs/mma-cluster.mlir --emit=ptx --batch-sizes=16 -o %tc.ptx
// RUN: FileCheck %s --check-prefix=CLUSTER < %tc.ptx
// RUN: %ptxas -arch=sm_90 -v %tc.ptx -o %tc.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS-CLUSTER
// RUN: qfuse-compile %S/Inputs/mma-cluster.mlir --emit=ptx --chip=sm_80 --features=+ptx80 --batch-sizes=16 -o %tc80.ptx 2>&1 | FileCheck %s --check-prefix=SM80-CLUSTER
// CLUSTER-LABEL: .entry qf_mma_0_m16(
// CLUSTER: .reqnctapercluster 1, 1, 4
// CLUSTER: barrier.cluster.arrive.relaxed.aligned;
// CLUSTER: barrier.cluster.wait.aligned;
// CLUSTER: mapa.shared::cluster.u64
// CLUSTER: st.shared::cluster.v4.b32
// CLUSTER: barrier.cluster.arrive.aligned;
// CLUSTER-NEXT: barrier.cluster.wait.aligned;
// CLUSTER-NOT: ld.shared::cluster
// CLUSTER: ld.shared.v4.b32
// CLUSTER-LABEL: .entry qf_mma_2_m16(
// CLUSTER: .reqnctapercluster 1, 1, 8
// PTXAS-CLUSTER-COUNT-3: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// A cluster tiling written for sm_90 runs the fallback on sm_80, saying why.
// SM80-CLUSTER: remark: M = 16 runs the dequantize + cuBLAS fallback (the tensor-core generator cannot take {{.*}}cluster_k = 4 needs thread-block clusters (sm_90); target is sm_80)

// sm_80 has no fp8 conversion: NVFP4's E4M3 scales run the dequantize +
// cuBLAS fallback there (docs/fallback.md).
// SM80: remark: M = 16 runs the dequantize + cuBLAS fallback ({{.*}}E4M3 scales need cvt.f16x2.e4m3x2 (sm_89 or newer); target is sm_80)

// The fusions of the tensor-core kernel (mma-fused.mlir): q/k/v as one
// qf.group launch, gate/up with the silu_mul epilogue (int4 and int8), a
// residual epilogue; every variant assembles without spills.
// RUN: qfuse-compile %S/Inputs/mma-fused.mlir --emit=ptx --batch-sizes=16,64 -o %tf.ptx
// RUN: FileCheck %s --check-prefix=FUSED < %tf.ptx
// RUN: %ptxas -arch=sm_90 -v %tf.ptx -o %tf.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS-FUSED
// FUSED-LABEL: .entry qf_mma_2_m16(
// FUSED: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// FUSED: bar.sync 0;
// FUSED: ex2.approx.ftz.f32
// FUSED-LABEL: .entry qf_mma_4_m16(
// FUSED: prmt.b32
// FUSED: ex2.approx.ftz.f32
// PTXAS-FUSED-COUNT-8: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// M = 24 on block_m 32: the rows past M are zero-filled (cp.async with a
// source size of 0), their source clamped to row M - 1.
// ROWS-LABEL: .entry qf_mma_0_m24(
// ROWS: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 16, %r{{[0-9]+}};
