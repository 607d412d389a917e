// RUN: qfuse-opt %s -split-input-file --qf-to-gpu="batch-sizes=16" -verify-diagnostics | FileCheck %s

// 2:4 weights past the matvec run mma.sp.m16n8k32 (issue 20, part 2): the
// weight rows are its sparse A operand, decoded from the row-major kept
// codes; the metadata comes from the stored positions ("meta", two bytes
// of each of rows g and g + 8 per lane); B is the activation tile read by
// ldmatrix; the accumulators are transposed by shuffles into the dense
// kernel's order before its epilogue. (Selection:
// test/Dialect/QF/select-tiling-sparse24.mlir; PTX through ptxas:
// test/Tools/qfuse-compile/ptx-mma-sparse24.mlir.)
// Shared memory per stage: activations 2 x 16 x 128 x 2, then per warp 32
// rows of 64 bytes of kept codes and 16 of metadata, then 128 bytes of
// scales: (8192 + 4 x (2560 + 128)) x 3 = 44544 (64 bytes of int4 codes a
// row: block_k = 128).
#e = #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>
!w = !qf.weight<4096x4096, #e>
// CHECK-LABEL: func.func @int4
// CHECK: qf.launches = [#qf.launch<batch = 16, block = [128, 1, 1], dynamic_shared_bytes = 44544, grid = [1, 64, 1], kernel = @qf_kernels::@qf_mma_0_m16, params = ["x", "codes", "scales", "meta", "y"], shared_bytes = 0>]
// CHECK-LABEL: llvm.func @qf_mma_0_m16(
// The activations (.ca, zero-filled past M), two 16-byte chunks of kept
// codes and the 16 metadata bytes of the lane's row (.cg), the scale word.
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = ca, %{{.*}}
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK: nvvm.cp.async.shared.global {{.*}}, 4, cache = ca
// int4: the kept pair's byte replicated, its nibbles under 0x6400.
// CHECK: prmt.b32 $0, $1, $2, $3;
// CHECK: llvm.mlir.constant(15728655 : i32)
// CHECK: lop3.b32 $0, $1, $2, $3, 0xea;
// CHECK: nvvm.ldmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK: nvvm.mma.sp.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] sparseMetadata[{{.*}}] selector[{{.*}}] {shape = #nvvm.shape<m = 16, n = 8, k = 32>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-32: nvvm.shfl.sync idx
// CHECK: nvvm.barrier

func.func @int4(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "w" : !w
  %z = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 2, stages = 3>}
         : tensor<?x4096xf16>, !w -> tensor<?x4096xf16>
  return %z : tensor<?x4096xf16>
}

// -----

// f16 values: no scales; the kept pair is the A register itself. int8: the
// sign flipped, the bytes under 0x64; uint4 with integer zero points.
#f16 = #qf.enc<f16, sparse = 2:4>
#i8 = #qf.enc<int8, per_channel, scale = f16, sparse = 2:4>
// CHECK-LABEL: func.func @formats
// CHECK: params = ["x", "codes", "meta", "y"]
// CHECK: params = ["x", "codes", "scales", "meta", "y"]
// CHECK-LABEL: llvm.func @qf_mma_0_m16(
// CHECK-NOT: prmt.b32
// CHECK: nvvm.mma.sp.sync
// CHECK-LABEL: llvm.func @qf_mma_1_m16(
// CHECK: llvm.xor {{.*}} : i32
// CHECK: llvm.mlir.constant(1684300900 : i32)
// CHECK: prmt.b32 $0, $1, $2, $3;
// CHECK: nvvm.mma.sp.sync
func.func @formats(%x: tensor<?x1024xf16>) -> (tensor<?x256xf16>, tensor<?x256xf16>) {
  %a = qf.weight_ref "f16" : !qf.weight<256x1024, #f16>
  %ya = qf.fused_matmul %x, %a {tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 2, stages = 3>}
         : tensor<?x1024xf16>, !qf.weight<256x1024, #f16> -> tensor<?x256xf16>
  %b = qf.weight_ref "int8" : !qf.weight<256x1024, #i8>
  %yb = qf.fused_matmul %x, %b {tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 2, stages = 3>}
         : tensor<?x1024xf16>, !qf.weight<256x1024, #i8> -> tensor<?x256xf16>
  return %ya, %yb : tensor<?x256xf16>, tensor<?x256xf16>
}

// -----

// What mma.sp does not take, named: a block_k that does not divide K (rows
// are copied in whole steps), bf16 activations.
#e = #qf.enc<int4, group = 64, scale = f16, sparse = 2:4>
func.func @k_steps(%x: tensor<16x1088xf16>) -> tensor<16x256xf16> {
  %w = qf.weight_ref "w" : !qf.weight<256x1088, #e>
  // expected-error@+1 {{2:4 rows are copied in whole block_k steps; block_k = 128 does not divide K = 1088}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 128, split_k = 2, stages = 3>}
         : tensor<16x1088xf16>, !qf.weight<256x1088, #e> -> tensor<16x256xf16>
  return %y : tensor<16x256xf16>
}

// -----

#e = #qf.enc<int4, group = 64, scale = f16, sparse = 2:4>
func.func @bf16(%xb: tensor<16x1024xbf16>) -> tensor<16x256xbf16> {
  %wb = qf.weight_ref "wb" : !qf.weight<256x1024, #e>
  // expected-error@+1 {{the mma.sp kernel reads f16 activations; 2:4 weights with bf16 activations run the fallback}}
  %yb = qf.fused_matmul %xb, %wb {tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 2, stages = 3>}
         : tensor<16x1024xbf16>, !qf.weight<256x1024, #e> -> tensor<16x256xbf16>
  return %yb : tensor<16x256xbf16>
}
