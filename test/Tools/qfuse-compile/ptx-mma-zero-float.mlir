// REQUIRES: ptxas
// RUN: qfuse-compile %s --emit=ptx --batch-sizes=1,3,8,17,100,512 -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: not grep -q "\.local" %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: qfuse-compile %s --emit=ptx --chip=sm_80 --features=+ptx80 --batch-sizes=17 -o %t80.ptx
// RUN: FileCheck %s --check-prefix=SM80 < %t80.ptx
// RUN: %ptxas -arch=sm_80 %t80.ptx -o %t80.cubin
// RUN: qfuse-compile %s --emit=ptx --chip=sm_90a --batch-sizes=512 -o %t90a.ptx
// RUN: FileCheck %s --check-prefix=WGMMA < %t90a.ptx
// RUN: %ptxas -arch=sm_90a %t90a.ptx -o %t90a.cubin

// Float zero points (uint4/uint8, zero = float: w = s (q - z), z a value of
// the scale type per group) on the tensor-core kernel: the matvec runs
// batches 1 and 3, the mma kernel 8 and up. The zero words ride the
// cp.async pipeline beside the scales (two 4-byte copies per group); the
// codes decode to q exactly, as with an integer zero of 0, and z (rounded
// to the activation type) is subtracted with one more half2 (bf16x2) sub:
// q - z rounds once. bf16 uint8 codes form q - z in f32 before packing.
// CHECK: .target sm_90
// CHECK-LABEL: .entry qf_matvec_0_m1(
// CHECK-LABEL: .entry qf_mma_1_m8(
// CHECK-LABEL: .entry qf_mma_2_m17(
// CHECK-COUNT-2: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 4;
// CHECK-DAG: lop3.b32 {{.*}}, 983055, 1677747200, 0xea;
// CHECK-DAG: sub.rn.f16x2
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-LABEL: .entry qf_matvec_4_m1(
// CHECK-LABEL: .entry qf_mma_6_m17(
// CHECK-COUNT-2: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 4;
// CHECK-NOT: xor.b32 {{.*}}, -2139062144;
// CHECK-DAG: prmt.b32 {{.*}}, 16704;
// CHECK-DAG: sub.rn.f16x2
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// bf16 activations, every batch:
// CHECK-LABEL: .entry qf_mma_8_m1(
// CHECK-LABEL: .entry qf_mma_9_m17(
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-LABEL: .entry qf_mma_11_m1(
// CHECK-LABEL: .entry qf_mma_12_m17(
// CHECK-DAG: sub.rn.f32
// CHECK-DAG: cvt.rn.bf16x2.f32
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTXAS-NOT: error

// SM80: .target sm_80
// SM80-COUNT-4: mma.sync.aligned.m16n8k16

// The wgmma variant (sm_90a) shares the decode.
// WGMMA: .target sm_90a
// WGMMA-LABEL: .entry qf_wgmma_0_m512(
// WGMMA: sub.rn.f16x2
// WGMMA: wgmma.mma_async.sync.aligned
// WGMMA-LABEL: .entry qf_wgmma_1_m512(
// WGMMA: sub.rn.f16x2
// WGMMA: wgmma.mma_async.sync.aligned

#u4 = #qf.enc<uint4, group = 128, scale = f16, zero = float>
#u8 = #qf.enc<uint8, group = 64, scale = f16, zero = float>
#u4b = #qf.enc<uint4, group = 128, scale = bf16, zero = float>
#u8f = #qf.enc<uint8, per_channel, scale = f32, zero = float>
!x = tensor<?x4096xf16>
!xb = tensor<?x4096xbf16>

func.func @uint4(%x: !x) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "u4" : !qf.weight<4096x4096, #u4>
  %y = qf.matmul %x, %w : !x, !qf.weight<4096x4096, #u4> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}
func.func @uint8(%x: !x) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "u8" : !qf.weight<4096x4096, #u8>
  %y = qf.matmul %x, %w : !x, !qf.weight<4096x4096, #u8> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}
func.func @uint4_bf16(%x: !xb) -> tensor<?x4096xbf16> {
  %w = qf.weight_ref "u4b" : !qf.weight<4096x4096, #u4b>
  %y = qf.matmul %x, %w : !xb, !qf.weight<4096x4096, #u4b> -> tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}
func.func @uint8_bf16(%x: !xb) -> tensor<?x4096xbf16> {
  %w = qf.weight_ref "u8f" : !qf.weight<4096x4096, #u8f>
  %y = qf.matmul %x, %w : !xb, !qf.weight<4096x4096, #u8f> -> tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}
