// REQUIRES: ptxas
// RUN: qfuse-compile %s --emit=ptx --batch-sizes=1,3,8,17,100,512 --dequant-gemm-min-batch=0 -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: not grep -q "\.local" %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: qfuse-compile %s --emit=ptx --chip=sm_80 --features=+ptx80 --batch-sizes=17 -o %t80.ptx
// RUN: FileCheck %s --check-prefix=SM80 < %t80.ptx
// RUN: %ptxas -arch=sm_80 %t80.ptx -o %t80.cubin
// RUN: qfuse-compile %s --emit=ptx --chip=sm_90a --batch-sizes=512 -o %t90a.ptx
// RUN: FileCheck %s --check-prefix=WGMMA < %t90a.ptx
// RUN: %ptxas -arch=sm_90a %t90a.ptx -o %t90a.cubin

// Codebooks of 2, 3 and 8 bits on the tensor-core kernel: the matvec runs
// batches 1 and 3, the mma kernel 8 and up (selection, no refusal). Their
// codes are MmaLayout.h's fragment tiles (256, 384 and 1024 bytes):
// - 2-bit: a warp's tiles of a step move as 16-byte cp.async.cg chunks, a
//   lane reads its 8 bytes (two words, one per k slab) with one
//   ld.shared.v2, and each code is one shift and mask into the table
//   replicated per bank (4 entries x 32 words), pairs joined by prmt;
// - 3-bit: the same low plane, plus the lane's word of the high plane (bit
//   2 of each code), or-ed into the table offset;
// - 8-bit: each byte shifted to a word offset (c * 4, mask 0x3FC) into one
//   256-word table, pairs joined by prmt.
// CHECK: .target sm_90
// CHECK-LABEL: .entry qf_matvec_0_m1(
// CHECK-LABEL: .entry qf_matvec_0_m3(
// CHECK-LABEL: .entry qf_mma_1_m8(
// CHECK-LABEL: .entry qf_mma_2_m17(
// CHECK-DAG: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16;
// CHECK-DAG: ld.shared.v2.b32
// CHECK-DAG: and.b32 {{.*}}, 384;
// CHECK-DAG: prmt.b32 {{.*}}, 21520;
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-LABEL: .entry qf_mma_3_m100(
// CHECK-LABEL: .entry qf_mma_4_m512(
// CHECK-LABEL: .entry qf_matvec_5_m1(
// CHECK-LABEL: .entry qf_mma_7_m17(
// CHECK-DAG: ld.shared.v2.b32
// CHECK-DAG: and.b32 {{.*}}, 512;
// CHECK-DAG: prmt.b32 {{.*}}, 21520;
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-LABEL: .entry qf_matvec_10_m1(
// CHECK-LABEL: .entry qf_mma_12_m17(
// CHECK-DAG: and.b32 {{.*}}, 1020;
// CHECK-DAG: prmt.b32 {{.*}}, 21520;
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// bf16 activations: the same decode from a bf16 table, at every batch.
// CHECK-LABEL: .entry qf_mma_15_m1(
// CHECK-LABEL: .entry qf_mma_16_m17(
// CHECK-DAG: and.b32 {{.*}}, 512;
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTXAS-NOT: error

// sm_80 has every instruction these decodes use.
// SM80: .target sm_80
// SM80-COUNT-4: mma.sync.aligned.m16n8k16

// The wgmma variant (sm_90a) shares the decode.
// WGMMA: .target sm_90a
// WGMMA-LABEL: .entry qf_wgmma_0_m512(
// WGMMA: and.b32 {{.*}}, 384;
// WGMMA: wgmma.mma_async.sync.aligned
// WGMMA-LABEL: .entry qf_wgmma_1_m512(
// WGMMA: and.b32 {{.*}}, 512;
// WGMMA: wgmma.mma_async.sync.aligned
// WGMMA-LABEL: .entry qf_wgmma_2_m512(
// WGMMA: and.b32 {{.*}}, 1020;
// WGMMA: wgmma.mma_async.sync.aligned

#cb2 = #qf.enc<codebook, bits = 2, table = dense<[-1.0, -0.25, 0.25, 1.0]> : tensor<4xf16>, group = 64, scale = f16>
#cb3 = #qf.enc<codebook, bits = 3, table = "lut3" : f16, group = 128, scale = f16>
#cb8 = #qf.enc<codebook, bits = 8, table = "lut8" : f32, per_channel, scale = f16>
!x = tensor<?x4096xf16>
!xb = tensor<?x4096xbf16>

func.func @codebook2(%x: !x) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "cb2" : !qf.weight<4096x4096, #cb2>
  %y = qf.matmul %x, %w : !x, !qf.weight<4096x4096, #cb2> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}
func.func @codebook3(%x: !x) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "cb3" : !qf.weight<4096x4096, #cb3>
  %y = qf.matmul %x, %w : !x, !qf.weight<4096x4096, #cb3> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}
func.func @codebook8(%x: !x) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "cb8" : !qf.weight<4096x4096, #cb8>
  %y = qf.matmul %x, %w : !x, !qf.weight<4096x4096, #cb8> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}
func.func @codebook3_bf16(%x: !xb) -> tensor<?x4096xbf16> {
  %w = qf.weight_ref "cb3b" : !qf.weight<4096x4096, #cb3>
  %y = qf.matmul %x, %w : !xb, !qf.weight<4096x4096, #cb3> -> tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}
