// RUN: qfuse-opt %s -split-input-file --qf-to-gpu | FileCheck %s

// fp4 e2m1 codes decode as sign and magnitude (Fp4Decode.cpp): one prmt
// looks up four magnitudes' f16 high bytes (0x3E3C3800, 0x46444240; their
// low bytes are zero), one lop3 (0xf8) ORs in the signs; no multiply and no
// shared code table. The matvec reads row-major codes, paired by one prmt
// per pair.
#e = #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>
// CHECK-LABEL: func.func @mxfp4_matvec
// CHECK: params = ["x", "codes", "scales", "y"], shared_bytes = 0
// CHECK-NOT: _lut
// CHECK: llvm.func @qf_matvec_0_m1(
// CHECK-NOT: 1.638400e+04
// CHECK-DAG: llvm.mlir.constant(1044133888 : i32)
// CHECK-DAG: llvm.mlir.constant(1178878528 : i32)
// CHECK-DAG: "lop3.b32 $0, $1, $2, $3, 0xf8;"
// CHECK-DAG: "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r"
// CHECK-NOT: _lut
// CHECK-NOT: 1.638400e+04
// CHECK: llvm.return
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
// CHECK-NOT: 1.638400e+04
// CHECK-DAG: llvm.mlir.constant(1044133888 : i32)
// CHECK-DAG: llvm.mlir.constant(1178878528 : i32)
// CHECK-DAG: "lop3.b32 $0, $1, $2, $3, 0xf8;"
// CHECK-NOT: 1.638400e+04
// CHECK: llvm.return
func.func @nvfp4_mma(%x: tensor<16x4096xf16>, %w: !qf.weight<256x4096, #e, #l>) -> tensor<16x256xf16> {
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 3>} : tensor<16x4096xf16>, !qf.weight<256x4096, #e, #l> -> tensor<16x256xf16>
  return %y : tensor<16x256xf16>
}

// -----

// bf16 activations: the same, with the low bytes (0xC0800000, 0xC0804000)
// looked up too and the high bytes 0x3F3F3F00, 0x40404040; no table either.
#e = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>
#l = #qf.layout<tiled, tile_n = 32, tile_k = 32>
// CHECK-LABEL: func.func @nvfp4_mma_bf16
// CHECK: dynamic_shared_bytes = 43008
// CHECK: llvm.func @qf_mma_0_m16(
// CHECK-DAG: llvm.mlir.constant(1061109504 : i32)
// CHECK-DAG: llvm.mlir.constant(1077952576 : i32)
// CHECK-DAG: llvm.mlir.constant(-1065353216 : i32)
// CHECK-DAG: llvm.mlir.constant(-1065336832 : i32)
// CHECK-DAG: "lop3.b32 $0, $1, $2, $3, 0xf8;"
// CHECK: llvm.return
func.func @nvfp4_mma_bf16(%x: tensor<16x4096xbf16>, %w: !qf.weight<256x4096, #e, #l>) -> tensor<16x256xbf16> {
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 3>} : tensor<16x4096xbf16>, !qf.weight<256x4096, #e, #l> -> tensor<16x256xbf16>
  return %y : tensor<16x256xbf16>
}
