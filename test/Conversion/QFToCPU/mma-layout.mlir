// RUN: qfuse-opt %s --qf-to-cpu | FileCheck %s

// The tensor-core kernel's fragment layout (qfuse/format/MmaLayout.h):
// code (n, k) lives in 32 x 32 tile (n / 32, k / 32) of 512 bytes, word
// 2 s + j / 2 of lane 4 g + t, so the decoder computes a flat nibble index
// over the whole codes buffer instead of a position inside row n.
#e = #qf.enc<nf4, group = 64, scale = f32>
#l = #qf.layout<tiled, tile_n = 32, tile_k = 32>
!w = !qf.weight<64x256, #e, #l>

func.func @prefill(%x: tensor<?x256xf16>, %w: !w) -> tensor<?x64xf16> {
  %y = qf.fused_matmul %x, %w : tensor<?x256xf16>, !w -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}

// CHECK: func.func @qf_cpu_matmul_0(%{{.*}}: memref<?x256xf16>, %[[CODES:.*]]: memref<64x128xi8>, %{{.*}}: memref<64x4xf32>, %{{.*}}: memref<?x64xf16>)
// CHECK: scf.for %[[N:.*]] = %c0 to %c64 step %c1 {
// CHECK: scf.for %[[K:.*]] = %c0 to %c256 step %c1 {
// Tile index: (n / 32) * (K / 32) + k / 32, 128 words per tile.
// CHECK-DAG: arith.divui %[[N]], %c32 : index
// CHECK-DAG: arith.divui %[[K]], %c32 : index
// CHECK: arith.muli %{{.*}}, %c128 : index
// The byte of nibble `word * 8 + slot`, as (byte / 128, byte % 128) of the
// [64, 128] buffer.
// CHECK: arith.muli %{{.*}}, %c8 : index
// CHECK-NEXT: %[[NIB:.*]] = arith.addi
// CHECK-NEXT: %[[BYTE:.*]] = arith.divui %[[NIB]], %c2 : index
// CHECK-DAG: %[[ROW:.*]] = arith.divui %[[BYTE]], %c128 : index
// CHECK-DAG: %[[COL:.*]] = arith.remui %[[BYTE]], %c128 : index
// CHECK: memref.load %[[CODES]][%[[ROW]], %[[COL]]] : memref<64x128xi8>
