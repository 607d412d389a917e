// RUN: qfuse-opt %s -split-input-file --qf-to-gpu | FileCheck %s

// act_order: the matvec reads the weight as a plain one (no `perm`, no
// activations in shared memory) on the input a permute launch wrote.
#e = #qf.enc<int4, group = 128, scale = f16, act_order>
#l = #qf.layout<tiled, tile_n = 1, tile_k = 32>
// CHECK-LABEL: func.func @act_order
// CHECK: step = "permute"
// CHECK-SAME: dynamic_shared_bytes = 0, {{[^>]*}}input = "permuted", kernel = @qf_kernels::@qf_matvec_0_m2, params = ["x", "codes", "scales", "y"], shared_bytes = 0
// CHECK-NOT: @qf_matvec_0_m2_x
// CHECK: llvm.func @qf_matvec_0_m2(
func.func @act_order(%x: tensor<2x4096xf16>, %w: !qf.weight<256x4096, #e, #l>) -> tensor<2x256xf16> {
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4>} : tensor<2x4096xf16>, !qf.weight<256x4096, #e, #l> -> tensor<2x256xf16>
  return %y : tensor<2x256xf16>
}

// -----

// 2:4 with int4 codes: scales, then the 2-bit positions.
#e = #qf.enc<uint4, group = 64, scale = f16, zero = int, sparse = 2:4>
#l = #qf.layout<tiled, tile_n = 1, tile_k = 32>
// CHECK-LABEL: func.func @sparse_uint4
// CHECK: params = ["x", "codes", "scales", "meta", "zeros", "y"]
func.func @sparse_uint4(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e, #l>) -> tensor<1x256xf16> {
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e, #l> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

// 3-bit codebook: 8 entries x 32 banks of shared table (1 KB).
#e = #qf.enc<codebook, bits = 3, table = dense<[-1.0, -0.5, -0.25, -0.125, 0.125, 0.25, 0.5, 1.0]> : tensor<8xf16>, group = 128, scale = f16>
// CHECK-LABEL: func.func @codebook3
// CHECK: params = ["x", "codes", "scales", "y"], shared_bytes = 1024
// CHECK: llvm.mlir.global internal @qf_matvec_0_m1_lut() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<256 x i32>
func.func @codebook3(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e>) -> tensor<1x256xf16> {
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

// 8-bit codebook: two f16 entries per word, 128 x 32 words (16 KB).
#e = #qf.enc<codebook, bits = 8, table = "lut8" : f16, per_channel, scale = f16>
// CHECK-LABEL: func.func @codebook8
// CHECK: params = ["x", "codes", "scales", "table", "y"], shared_bytes = 16384
// CHECK: !llvm.array<4096 x i32>
func.func @codebook8(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e>) -> tensor<1x256xf16> {
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}
