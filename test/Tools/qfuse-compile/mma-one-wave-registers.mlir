// RUN: qfuse-compile %s --emit=ptx --batch-sizes=16,384 -o %t.ptx 2>/dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// REQUIRES: ptxas

// A tensor-core kernel asks ptxas for the resident blocks one wave of its
// grid needs (.minnctapersm, ceil(blocks / 132 SMs) on sm_90), where that
// many leave a thread the registers the time model assumes for its
// block_m; room for more is never used, and without the bound ptxas spilled
// to keep it (TensorCoreOccupancy.h; docs/tensor-core.md, "Registers of
// one-wave grids").

// 4096 rows at M = 16: 128 blocks of 256 threads, one an SM.
// CHECK-LABEL: .entry qf_mma_0_m16(
// CHECK: .minnctapersm 1
// At M = 384: 3 x 64 blocks x 2 (clusters) of 64 threads, 3 an SM, which
// leave 341 registers a thread (the estimate at block_m 128: 243).
// CHECK-LABEL: .entry qf_mma_1_m384(
// CHECK: .minnctapersm 3
// 14336 rows at M = 384: 3 x 224 blocks of 64 threads, 6 an SM, which
// would leave 170: ptxas keeps its own choice.
// CHECK-LABEL: .entry qf_mma_3_m384(
// CHECK-NOT: .minnctapersm
// CHECK: {

// PTXAS-COUNT-4: 0 bytes spill stores

func.func @proj(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "w" : !qf.weight<4096x4096, #qf.enc<nf4, group = 64, scale = f32>>
  %y = qf.matmul %x, %w : tensor<?x4096xf16>, !qf.weight<4096x4096, #qf.enc<nf4, group = 64, scale = f32>> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}

func.func @wide(%x: tensor<?x4096xf16>) -> tensor<?x14336xf16> {
  %w = qf.weight_ref "u" : !qf.weight<14336x4096, #qf.enc<nf4, group = 64, scale = f32>>
  %y = qf.matmul %x, %w : tensor<?x4096xf16>, !qf.weight<14336x4096, #qf.enc<nf4, group = 64, scale = f32>> -> tensor<?x14336xf16>
  return %y : tensor<?x14336xf16>
}
