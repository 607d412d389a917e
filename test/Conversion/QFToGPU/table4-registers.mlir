// RUN: qfuse-opt %s -split-input-file --qf-to-gpu | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --qf-to-gpu --qf-table4-in-shared | FileCheck %s --check-prefix=SHARED

// 4-bit codes of a constant table (NF4 here) decode from registers
// (Table4Registers.cpp): prmt lookups whose selectors are the codes
// (a register operand), no shared code table to fill. --qf-table4-in-shared
// (for A/B runs) brings the per-lane shared table back: 16 entries x 32
// banks, 2 KB.
#e = #qf.enc<nf4, group = 64, scale = f16>
// CHECK-LABEL: func.func @nf4_matvec
// CHECK: params = ["x", "codes", "scales", "y"], shared_bytes = 0
// CHECK-NOT: _lut
// CHECK: llvm.func @qf_matvec_0_m1(
// CHECK-NOT: nvvm.barrier0
// CHECK: "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r"
// SHARED-LABEL: func.func @nf4_matvec
// SHARED: shared_bytes = 2048
// SHARED: llvm.mlir.global internal @qf_matvec_0_m1_lut()
// SHARED-NOT: "=r,r,r,r"
// SHARED: llvm.return
func.func @nf4_matvec(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e>) -> tensor<1x256xf16> {
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

// The tensor-core kernel, on the fragment layout's nibble slots: the table
// leaves its dynamic shared memory (2 KB less than SHARED's).
#e = #qf.enc<nf4, group = 64, scale = f16>
#l = #qf.layout<tiled, tile_n = 32, tile_k = 32>
// CHECK-LABEL: func.func @nf4_mma
// CHECK: dynamic_shared_bytes = 38400
// CHECK: llvm.func @qf_mma_0_m16(
// CHECK: "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r"
// SHARED-LABEL: func.func @nf4_mma
// SHARED: dynamic_shared_bytes = 40448
func.func @nf4_mma(%x: tensor<16x4096xf16>, %w: !qf.weight<256x4096, #e, #l>) -> tensor<16x256xf16> {
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 3>} : tensor<16x4096xf16>, !qf.weight<256x4096, #e, #l> -> tensor<16x256xf16>
  return %y : tensor<16x256xf16>
}

// -----

// A codebook whose table comes with the weight (a named table) is not known
// at compile time: the shared table stays.
#e = #qf.enc<codebook, bits = 4, table = "lut4" : f16, group = 128, scale = f16>
// CHECK-LABEL: func.func @named_codebook4
// CHECK: params = ["x", "codes", "scales", "table", "y"], shared_bytes = 2048
// CHECK: llvm.mlir.global internal @qf_matvec_0_m1_lut()
func.func @named_codebook4(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e>) -> tensor<1x256xf16> {
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}
