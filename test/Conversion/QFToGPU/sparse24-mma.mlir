// RUN: qfuse-opt %s -split-input-file --qf-choose-layout --qf-to-gpu="batch-sizes=16" -verify-diagnostics --qf-mma-sp-meta-per-tile=false | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --qf-choose-layout --qf-to-gpu="batch-sizes=16" -verify-diagnostics --qf-mma-sp-meta-per-tile | FileCheck %s --check-prefix=PERTILE

// 2:4 weights past the matvec run mma.sp.m16n8k32: qf-choose-layout gives
// them the 2:4 fragment layout (qfuse/format/SparseMmaLayout.h), whose
// tiles hold each lane's kept codes and metadata in mma.sp's register
// order; the weight rows are the sparse A operand; B is the activation tile
// read by ldmatrix; the accumulators are transposed by shuffles into the
// dense kernel's order before its epilogue. (Selection:
// test/Dialect/QF/select-tiling-sparse24.mlir; PTX through ptxas:
// test/Tools/qfuse-compile/ptx-mma-sparse24.mlir; the layout's bytes:
// unittests/Format/SparseMmaLayoutTest.cpp.)
// Shared memory per stage: activations 2 x 16 x 128 x 2, then per warp 32
// lanes of 64 bytes of kept codes and 16 of metadata, then 128 bytes of
// scales: (8192 + 4 x (2560 + 128)) x 3 = 44544 (64 bytes of int4 codes a
// lane: block_k = 128).
#e = #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>
!w = !qf.weight<4096x4096, #e>
// CHECK: #[[SP:.*]] = #qf.layout<tiled, tile_n = 32, tile_k = 64>
// CHECK-LABEL: func.func @int4
// CHECK: qf.weight_ref "w" : !qf.weight<4096x4096, #{{.*}}, #[[SP]]>
// CHECK: qf.launches = [#qf.launch<batch = 16, block = [128, 1, 1], dynamic_shared_bytes = 44544, grid = [1, 64, 1], kernel = @qf_kernels::@qf_mma_0_m16, params = ["x", "codes", "scales", "meta", "y"], shared_bytes = 0>]
// CHECK-LABEL: llvm.func @qf_mma_0_m16(
// The activations (.ca; M = 16 is a whole block of rows: no size), the
// lane's two 16-byte pieces of kept codes and its 16 metadata bytes (.cg),
// the scale word.
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = ca :
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK: nvvm.cp.async.shared.global {{.*}}, 4, cache = ca
// A step: the lane's four metadata words, then each code piece, by one
// ld.shared.v4 each.
// CHECK: nvvm.cp.async.wait.group
// CHECK: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK-NEXT: llvm.mlir.constant(0 : i32)
// CHECK-NEXT: %[[META:.*]] = llvm.extractelement
// CHECK: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// int4: the kept pair's byte of the word replicated, its nibbles under
// 0x6400.
// CHECK: prmt.b32 $0, $1, $2, $3;
// CHECK: llvm.mlir.constant(15728655 : i32)
// CHECK: lop3.b32 $0, $1, $2, $3, 0xea;
// CHECK: nvvm.ldmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// Both m16 tiles read the one metadata word: selectors 0 and 1 (the PTX
// test checks the immediates).
// CHECK: nvvm.mma.sp.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] sparseMetadata[%[[META]]] selector[{{.*}}] {shape = #nvvm.shape<m = 16, n = 8, k = 32>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: nvvm.mma.sp.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] sparseMetadata[%[[META]]] selector[{{.*}}]
// CHECK-COUNT-32: nvvm.shfl.sync idx
// CHECK: nvvm.barrier
// With --qf-mma-sp-meta-per-tile, tile 1's word comes from lane ^ 2.
// PERTILE-LABEL: llvm.func @qf_mma_0_m16(
// PERTILE: nvvm.cp.async.wait.group
// PERTILE: llvm.load {{.*}} -> vector<4xi32>
// PERTILE-NEXT: llvm.mlir.constant(0 : i32)
// PERTILE-NEXT: %[[WORD:.*]] = llvm.extractelement
// PERTILE: %[[SHUF:.*]] = nvvm.shfl.sync bfly {{.*}}, %[[WORD]],
// PERTILE: nvvm.mma.sp.sync {{.*}} sparseMetadata[%[[WORD]]]
// PERTILE: nvvm.mma.sp.sync {{.*}} sparseMetadata[%[[SHUF]]]

func.func @int4(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "w" : !w
  %z = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 2, stages = 3>}
         : tensor<?x4096xf16>, !w -> tensor<?x4096xf16>
  return %z : tensor<?x4096xf16>
}

// -----

// f16 values: no scales; the A registers are the loaded words themselves.
// int8: the sign flipped, the bytes under 0x64. block_k = 64: half of each
// lane's run of a tile, 8 metadata bytes (.ca: .cg copies 16 only).
#f16 = #qf.enc<f16, sparse = 2:4>
#i8 = #qf.enc<int8, per_channel, scale = f16, sparse = 2:4>
// CHECK-LABEL: func.func @formats
// CHECK: params = ["x", "codes", "meta", "y"]
// CHECK: params = ["x", "codes", "scales", "meta", "y"]
// CHECK-LABEL: llvm.func @qf_mma_0_m16(
// CHECK: nvvm.cp.async.shared.global {{.*}}, 8, cache = ca
// CHECK-NOT: prmt.b32
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> vector<2xi32>
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

// What mma.sp does not take, named: a block_k that does not divide K (lanes
// copy whole steps), bf16 activations, a weight kept in another layout.
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

// -----

#e = #qf.enc<int4, group = 64, scale = f16, sparse = 2:4>
!t = !qf.weight<256x1024, #e, #qf.layout<tiled, tile_n = 1, tile_k = 64>>
func.func @layout(%x: tensor<16x1024xf16>, %w: !t) -> tensor<16x256xf16> {
  // expected-error@+1 {{the mma.sp kernel reads 2:4 codes in #qf.layout<tiled, tile_n = 32, tile_k = 64>; got #qf.layout<tiled, tile_n = 1, tile_k = 64>; run qf-choose-layout}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 2, stages = 3>}
         : tensor<16x1024xf16>, !t -> tensor<16x256xf16>
  return %y : tensor<16x256xf16>
}
