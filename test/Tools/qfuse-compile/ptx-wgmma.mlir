// REQUIRES: ptxas
// RUN: qfuse-compile %S/Inputs/wgmma.mlir --chip=sm_90a --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: not grep -q "\.local" %t.ptx
// RUN: not grep -q "ldmatrix" %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | awk '/Function properties for/ { f = $NF } /spill stores/ && $5 != 0 { print f ": " $0 }' | count 0

// The wgmma kernels of every format: the target is sm_90a, each k slab is
// two m64nNk16 warpgroup MMAs (N = block_m) between one fence and one
// commit per step, f16 or bf16, with the activations read by descriptor
// (no ldmatrix) and the codes decoded as in the mma.sync kernel.
// CHECK: .target sm_90a
// CHECK-LABEL: .entry qf_wgmma_0_m128(
// CHECK: wgmma.fence.sync.aligned;
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK-LABEL: .entry qf_wgmma_1_m128(
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// NF4 from registers, 8-bit codes through prmt or cvt, as in
// ptx-mma.mlir.
// CHECK-LABEL: .entry qf_wgmma_3_m128(
// CHECK: prmt.b32 {{.*}}, 25152;
// CHECK-LABEL: .entry qf_wgmma_6_m128(
// CHECK: cvt.rn.f16x2.e4m3x2
// bf16 activations.
// CHECK-LABEL: .entry qf_wgmma_8_m128(
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// silu_mul: two warpgroups (gate's, up's) per k group; the up warpgroup
// reads the gate's parked sums one at a time while it stores. With one k
// group, a producer warpgroup feeds them (ptx-wgmma-producer.mlir) and
// the gate and up warpgroups meet at a named barrier of their own.
// CHECK-LABEL: .entry qf_wgmma_11_m128(
// CHECK: .maxntid 384, 1, 1
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK: bar.sync 15, 256;
// CHECK: ex2.approx.ftz.f32
// CHECK-LABEL: .entry qf_wgmma_13_m128(
// CHECK: .maxntid 512, 1, 1
// A wide weight at M = 512, no tail of rows: each lane's 128 sums go to
// one address a row of sums plus constant offsets (N = 14336 rows apart),
// and the activation copies of a step to one address plus constants, with
// no zero-fill size: the per-element addresses made ptxas spill 152 bytes
// here (the spill check above).
// CHECK-LABEL: .entry qf_wgmma_15_m512(
// CHECK-NOT: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 16, %r
// CHECK: cp.async.ca.shared.global [%rd[[A:[0-9]+]]+2048], [%rd[[X:[0-9]+]]+131072], 16;
// CHECK: st.global.b16 [%rd[[Y:[0-9]+]]+28672],
