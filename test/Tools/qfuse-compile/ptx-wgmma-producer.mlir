// REQUIRES: ptxas
// RUN: qfuse-compile %s --chip=sm_90a --emit=ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: qfuse-compile %s --chip=sm_90a --emit=ptx --qf-wgmma-producer=off -o %t.off.ptx
// RUN: FileCheck %s --check-prefix=OFF < %t.off.ptx
// RUN: qfuse-compile %s --chip=sm_90a --emit=ptx --qf-wgmma-producer=all -o %t.all.ptx
// RUN: FileCheck %s --check-prefix=ALL < %t.all.ptx

// The warp-specialized wgmma kernel (TensorCoreProducer.cpp): by default
// the gated (silu_mul) kernel of one k group, whose gate and up
// warpgroups are fed by a producer warpgroup: 384 threads, the block's
// registers pinned at launch and moved to the k groups (setmaxnreg), one
// full and one empty mbarrier per slot (3 stages here), the producer's
// copies arriving on the full one, the consumers waiting for it, keeping
// one wgmma group in flight while the next step decodes and releasing the
// previous step's slot. The plain kernel keeps the per-step barrier
// unless --qf-wgmma-producer=all; ptxas serializes none of the wgmmas.

// CHECK-LABEL: .entry qf_wgmma_0_m128(
// CHECK: .maxntid 384, 1, 1
// CHECK: .maxnreg 168
// CHECK-COUNT-6: mbarrier.init.shared.b64
// CHECK: bar.sync 0;
// CHECK-DAG: setmaxnreg.dec.sync.aligned.u32 40;
// CHECK-DAG: cp.async.mbarrier.arrive.noinc.shared.b64
// CHECK-DAG: setmaxnreg.inc.sync.aligned.u32 232;
// CHECK-DAG: mbarrier.try_wait.parity.shared::cta.b64
// CHECK-DAG: fence.proxy.async.shared::cta;
// CHECK-DAG: wgmma.wait_group.sync.aligned 1;
// CHECK-DAG: mbarrier.arrive.shared.b64
// CHECK-DAG: wgmma.wait_group.sync.aligned 0;
// CHECK-LABEL: .entry qf_wgmma_1_m128(
// CHECK-NOT: mbarrier
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK-NOT: mbarrier

// PTXAS-NOT: Potential Performance Loss
// PTXAS: Function properties for qf_wgmma_0_m128
// PTXAS-NEXT: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NEXT: Used 168 registers
// PTXAS-NOT: Potential Performance Loss

// OFF-NOT: mbarrier
// OFF-NOT: setmaxnreg

// ALL-LABEL: .entry qf_wgmma_1_m128(
// ALL: .maxntid 384, 1, 1
// ALL: cp.async.mbarrier.arrive.noinc.shared.b64

!w = !qf.weight<2048x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
func.func @gate_up(%x: tensor<128x4096xf16>) -> tensor<128x2048xf16> {
  %g = qf.weight_ref "gate" : !w
  %u = qf.weight_ref "up" : !w
  %y = qf.fused_matmul %x, %g up(%u : !w) {tiling = #qf.tiling<wgmma, block_m = 128, block_n = 128, block_k = 64, stages = 3>, activation = #qf<activation silu_mul>} : tensor<128x4096xf16>, !w -> tensor<128x2048xf16>
  return %y : tensor<128x2048xf16>
}
func.func @plain(%x: tensor<128x4096xf16>) -> tensor<128x2048xf16> {
  %w = qf.weight_ref "w" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 128, block_n = 128, block_k = 64, split_k = 2, stages = 3>} : tensor<128x4096xf16>, !w -> tensor<128x2048xf16>
  return %y : tensor<128x2048xf16>
}
