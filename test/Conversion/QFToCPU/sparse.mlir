// RUN: qfuse-opt %s --qf-to-cpu | FileCheck %s

// 2:4 sparsity: the row is zeroed, then each kept value s lands in column
// 4 * (s / 2) + meta field s (2-bit fields, LSB first). Scales are indexed
// by the logical column.

// CHECK-LABEL: func.func @qf_cpu_matmul_0(
// CHECK-SAME: %{{.*}}: memref<?x256xf16>, %[[CODES:.*]]: memref<32x256xi8>, %[[META:.*]]: memref<32x32xi8>, %{{.*}}: memref<?x32xf16>)
// CHECK: %[[ROW:.*]] = memref.alloc() : memref<256xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c256 step %c1 {
// CHECK-NEXT: memref.store %cst{{.*}}, %[[ROW]]
// CHECK: scf.for %[[S:.*]] = %c0 to %c128 step %c1 {
// CHECK: memref.load %[[META]]
// CHECK: %[[Q:.*]] = arith.divui %[[S]], %c2 : index
// CHECK: %[[B:.*]] = arith.muli %[[Q]], %c4 : index
// CHECK: %[[COL:.*]] = arith.addi %[[B]], %{{.*}} : index
// Two bytes per kept f16 value.
// CHECK: memref.load %[[CODES]]
// CHECK: memref.load %[[CODES]]
// CHECK: arith.bitcast %{{.*}} : i16 to f16
// CHECK: memref.store %{{.*}}, %[[ROW]][%[[COL]]] : memref<256xf32>
func.func @sp24_f16(%x: tensor<?x256xf16>, %w: !qf.weight<32x256, #qf.enc<f16, sparse = 2:4>>) -> tensor<?x32xf16> {
  %y = qf.fused_matmul %x, %w : tensor<?x256xf16>, !qf.weight<32x256, #qf.enc<f16, sparse = 2:4>> -> tensor<?x32xf16>
  return %y : tensor<?x32xf16>
}

// 2:4 + int4 in the tiled layout (the kept codes are interleaved) with
// integer zero points.
// CHECK-LABEL: func.func @qf_cpu_matmul_1(
// CHECK-SAME: %{{.*}}: memref<?x256xf16>, %{{.*}}: memref<32x64xi8>, %[[SC:.*]]: memref<32x4xf16>, %[[M2:.*]]: memref<32x32xi8>, %[[Z:.*]]: memref<32x2xi8>, %{{.*}}: memref<?x32xf16>)
// CHECK: memref.load %[[M2]]
// CHECK: %[[G:.*]] = arith.divui %{{.*}}, %c64 : index
// CHECK: memref.load %[[SC]][%{{.*}}, %[[G]]]
// CHECK: memref.load %[[Z]]
// CHECK: arith.uitofp
// CHECK: arith.subf
// CHECK: arith.mulf
#sp = #qf.enc<uint4, group = 64, scale = f16, zero = int, sparse = 2:4>
!sp = !qf.weight<32x256, #sp, #qf.layout<tiled, tile_n = 1, tile_k = 32>>
func.func @sp24_uint4(%x: tensor<?x256xf16>, %w: !sp) -> tensor<?x32xf16> {
  %y = qf.fused_matmul %x, %w : tensor<?x256xf16>, !sp -> tensor<?x32xf16>
  return %y : tensor<?x32xf16>
}
