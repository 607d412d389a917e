// RUN: qfuse-opt %s -split-input-file --qf-to-gpu | FileCheck %s

// fp4 e2m1 codes with f16 activations decode by their bits (Fp4Decode.cpp):
// sign and e1 e0 m masked into f16 bits 15 and 11..9 (0x80008000 and
// 0x0E000E00), then one multiply by 2^14; no shared code table is built.
// The matvec reads row-major codes, paired by one prmt per pair.
#e = #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>
// CHECK-LABEL: func.func @mxfp4_matvec
// CHECK: params = ["x", "codes", "scales", "y"], shared_bytes = 0
// CHECK-NOT: _lut
// CHECK: llvm.func @qf_matvec_0_m1(
// CHECK: "prmt.b32 $0, $1, $2, $3;"
// CHECK: llvm.mlir.constant(-2147450880 : i32)
// CHECK: llvm.mlir.constant(234884608 : i32)
// CHECK: llvm.mlir.constant(dense<1.638400e+04> : vector<2xf16>)
// CHECK-NOT: _lut
func.func @mxfp4_matvec(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e>) -> tensor<1x256xf16> {
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

// The tensor-core kernel: the same decode on the fragment layout's nibble
// slots, no table in its dynamic shared memory.
#e = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>
#l = #qf.layout<tiled, tile_n = 32, tile_k = 32>
// CHECK-LABEL: func.func @nvfp4_mma
// CHECK: dynamic_shared_bytes = 43008
// CHECK: llvm.func @qf_mma_0_m16(
// CHECK: llvm.mlir.constant(-2147450880 : i32)
// CHECK: llvm.mlir.constant(234884608 : i32)
// CHECK: llvm.mlir.constant(dense<1.638400e+04> : vector<2xf16>)
func.func @nvfp4_mma(%x: tensor<16x4096xf16>, %w: !qf.weight<256x4096, #e, #l>) -> tensor<16x256xf16> {
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 3>} : tensor<16x4096xf16>, !qf.weight<256x4096, #e, #l> -> tensor<16x256xf16>
  return %y : tensor<16x256xf16>
}

// -----

// bf16 activations look the codes up in registers instead
// (table4-registers.mlir): no table either, no multiply by 2^14.
#e = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>
#l = #qf.layout<tiled, tile_n = 32, tile_k = 32>
// CHECK-LABEL: func.func @nvfp4_mma_bf16
// CHECK: dynamic_shared_bytes = 43008
// CHECK: llvm.func @qf_mma_0_m16(
// CHECK-NOT: 1.638400e+04
// CHECK: "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r"
// CHECK-NOT: 1.638400e+04
// CHECK: llvm.return
func.func @nvfp4_mma_bf16(%x: tensor<16x4096xbf16>, %w: !qf.weight<256x4096, #e, #l>) -> tensor<16x256xbf16> {
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 3>} : tensor<16x4096xbf16>, !qf.weight<256x4096, #e, #l> -> tensor<16x256xbf16>
  return %y : tensor<16x256xbf16>
}
