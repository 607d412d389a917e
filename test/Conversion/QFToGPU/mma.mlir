// RUN: qfuse-opt %s -split-input-file --qf-to-gpu="batch-sizes=16,128" -verify-diagnostics | FileCheck %s

// A fused matmul with an mma tiling lowers to the tensor-core kernel: one
// per batch size, grid (M blocks, N blocks) with M fastest, dynamic shared
// memory for the cp.async pipeline, the same parameter names as the matvec.
#e = #qf.enc<int4, group = 128, scale = f16>
#l = #qf.layout<tiled, tile_n = 32, tile_k = 32>
!w = !qf.weight<4096x4096, #e, #l>
// CHECK-LABEL: func.func @q_proj
// CHECK: qf.launches = [#qf.launch<batch = 16, block = [128, 1, 1], dynamic_shared_bytes = 34816, grid = [1, 64, 1], kernel = @qf_kernels::@qf_mma_0_m16, params = ["x", "codes", "scales", "y"], shared_bytes = 0>,
// CHECK-SAME: #qf.launch<batch = 128, block = [128, 1, 1], dynamic_shared_bytes = 34816, grid = [8, 64, 1], kernel = @qf_kernels::@qf_mma_0_m128
// CHECK: llvm.mlir.global external @qf_mma_0_m16_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: llvm.func @qf_mma_0_m16(
// CHECK-SAME: nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = ca
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 2
// CHECK: nvvm.barrier id = {{.*}} number_of_threads = {{.*}}
// CHECK: nvvm.ldmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @q_proj(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "model.layers.0.self_attn.q_proj" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 64, split_k = 2, stages = 4>}
         : tensor<?x4096xf16>, !w -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}

// -----

// The tensor-core kernel reads the 32x32 B-fragment layout only.
#e = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #e, #qf.layout<tiled, tile_n = 1, tile_k = 32>>
func.func @wrong_layout(%x: tensor<16x4096xf16>) -> tensor<16x4096xf16> {
  %w = qf.weight_ref "w" : !w
  // expected-error@+1 {{the tensor-core kernel reads the fragment layout #qf.layout<tiled, tile_n = 32, tile_k = 32>; got #qf.layout<tiled, tile_n = 1, tile_k = 32>; run qf-choose-layout}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 3>}
         : tensor<16x4096xf16>, !w -> tensor<16x4096xf16>
  return %y : tensor<16x4096xf16>
}

// -----

// Codebooks of widths the fragment layout does not define (5, 6, 7 bits)
// are not lowered by the tensor-core generator (2-, 3-, 4- and 8-bit ones
// are: mma-codebooks.mlir).
#e = #qf.enc<codebook, bits = 5, table = "t" : f16, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #e, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
func.func @codebook5(%x: tensor<16x4096xf16>) -> tensor<16x4096xf16> {
  %w = qf.weight_ref "w" : !w
  // expected-error@+1 {{the tensor-core generator lowers 2-, 3-, 4- and 8-bit codebooks (the widths the mma fragment layout defines); got 5-bit indices}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 3>}
         : tensor<16x4096xf16>, !w -> tensor<16x4096xf16>
  return %y : tensor<16x4096xf16>
}

// -----

// Shared memory past what a block can have is a diagnostic, not a launch
// failure.
#e = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #e, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
func.func @too_much_shared(%x: tensor<64x4096xf16>) -> tensor<64x4096xf16> {
  %w = qf.weight_ref "w" : !w
  // expected-error@+1 {{the tiling needs 445440 bytes of shared memory, more than the 232448 a block can have}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 64, block_n = 32, block_k = 128, split_k = 8, stages = 3>}
         : tensor<64x4096xf16>, !w -> tensor<64x4096xf16>
  return %y : tensor<64x4096xf16>
}

// -----

// Activation rows move in 16-byte copies: K must be a multiple of 8.
#e8 = #qf.enc<int8, per_channel, scale = f16>
!w8 = !qf.weight<256x4100, #e8, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
func.func @k_not_multiple_of_8(%x: tensor<16x4100xf16>) -> tensor<16x256xf16> {
  %w = qf.weight_ref "w" : !w8
  // expected-error@+1 {{K = 4100 is not a multiple of 8 (activation rows move in 16-byte copies)}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 3>}
         : tensor<16x4100xf16>, !w8 -> tensor<16x256xf16>
  return %y : tensor<16x256xf16>
}

// -----

// N = 1000 is 32 tiles of 32 rows (padded); block_n = 96 covers them in
// 11 blocks, the last reaching past them: its extra warps stream the last
// tile row again (the tile row is clamped) and store nothing (each store
// is guarded by col < N).
#e = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<1000x4096, #e, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
// CHECK-LABEL: func.func @ragged_blocks
// CHECK: grid = [1, 11, 1]
// CHECK-LABEL: llvm.func @qf_mma_0_m16(
// CHECK: llvm.intr.umin
// CHECK: llvm.store {{.*}} : vector<2xf16>, !llvm.ptr<1>
func.func @ragged_blocks(%x: tensor<16x4096xf16>) -> tensor<16x1000xf16> {
  %w = qf.weight_ref "w" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 96, block_k = 64, split_k = 4, stages = 3>}
         : tensor<16x4096xf16>, !w -> tensor<16x1000xf16>
  return %y : tensor<16x1000xf16>
}

// -----

// cluster_k splits K across the blocks of a thread-block cluster (grid z):
// each block sums its slice; after a relaxed cluster barrier the other
// ranks store theirs into rank 0's shared memory through distributed
// shared memory, and after a release barrier rank 0 reads them locally.
#e = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<1024x4096, #e, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
// CHECK-LABEL: func.func @k_proj_cluster
// CHECK: grid = [1, 8, 4]
// CHECK-LABEL: llvm.func @qf_mma_0_m16(
// CHECK-SAME: nvvm.cluster_dim = array<i32: 1, 1, 4>
// CHECK: nvvm.read.ptx.sreg.ctaid.z
// CHECK: nvvm.cluster.arrive.relaxed {aligned}
// CHECK: nvvm.cluster.wait {aligned}
// CHECK: nvvm.mapa {{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<7>
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NOT: !llvm.ptr<7> -> f32
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> f32
func.func @k_proj_cluster(%x: tensor<16x4096xf16>) -> tensor<16x1024xf16> {
  %w = qf.weight_ref "w" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 128, block_k = 128, split_k = 2, stages = 3, cluster_k = 4>}
         : tensor<16x4096xf16>, !w -> tensor<16x1024xf16>
  return %y : tensor<16x1024xf16>
}
