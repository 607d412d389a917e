// RUN: qfuse-opt %s --qf-to-cpu | FileCheck %s

// int4 in the tiled layout the matvec kernel reads: one public function in
// module @qf_cpu over the raw buffers (x, codes, scales, y), recorded on the
// op; codes are read from the nibble slot (e % 2) * 4 + e / 2 of their
// 32-bit word and decoded as scale * (c - 8) in f32.
#e = #qf.enc<int4, group = 128, scale = f16>
#l = #qf.layout<tiled, tile_n = 1, tile_k = 32>
!w = !qf.weight<256x1024, #e, #l>
!r = !qf.weight<64x256, #e>

func.func @q_proj(%x: tensor<?x1024xf16>, %w: !w) -> tensor<?x256xf16> {
  %y = qf.fused_matmul %x, %w : tensor<?x1024xf16>, !w -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}

// Row-major codes read the stream position directly (no nibble slot), and
// a static M gives static memrefs. Two ops with the same signature share a
// function.
func.func @row_major(%x: tensor<3x256xf16>, %w: !r) -> (tensor<3x64xf16>, tensor<3x64xf16>) {
  %y = qf.fused_matmul %x, %w : tensor<3x256xf16>, !r -> tensor<3x64xf16>
  %z = qf.fused_matmul %x, %w : tensor<3x256xf16>, !r -> tensor<3x64xf16>
  return %y, %z : tensor<3x64xf16>, tensor<3x64xf16>
}

// CHECK-LABEL: func.func @q_proj
// CHECK: qf.fused_matmul
// CHECK-SAME: qf.cpu_reference = {function = @qf_cpu::@qf_cpu_matmul_0, params = ["x", "codes", "scales", "y"]}
// CHECK-LABEL: func.func @row_major
// CHECK: qf.cpu_reference = {function = @qf_cpu::@qf_cpu_matmul_1
// CHECK: qf.cpu_reference = {function = @qf_cpu::@qf_cpu_matmul_1

// CHECK: module @qf_cpu {
// CHECK: func.func @qf_cpu_matmul_0(%[[X:.*]]: memref<?x1024xf16>, %[[CODES:.*]]: memref<256x512xi8>, %[[SCALES:.*]]: memref<256x8xf16>, %[[Y:.*]]: memref<?x256xf16>)
// CHECK-SAME: attributes {llvm.emit_c_interface}
// Activations widened to f32 once.
// CHECK: %[[M:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x1024xf16>
// CHECK: %[[XS:.*]] = memref.alloc(%[[M]]) : memref<?x1024xf32>
// CHECK: arith.extf %{{.*}} : f16 to f32
// One f32 scratch row, decoded per output row.
// CHECK: %[[ROW:.*]] = memref.alloc() : memref<1024xf32>
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[S:.*]] = %{{.*}} to %{{.*}} step
// Nibble slot inside the word: (e % 2) * 4 + e / 2.
// CHECK: %[[E:.*]] = arith.remui %[[S]], %c8 : index
// CHECK-DAG: arith.divui %[[E]], %c2 : index
// CHECK-DAG: arith.remui %[[E]], %c2 : index
// CHECK: memref.load %[[CODES]][%[[N]], %{{.*}}] : memref<256x512xi8>
// CHECK: arith.shrui
// c - 8, then times the group's f16 scale.
// CHECK: arith.subi
// CHECK: arith.sitofp %{{.*}} : i32 to f32
// CHECK: arith.divui %{{.*}}, %{{.*}} : index
// CHECK: memref.load %[[SCALES]][%[[N]], %{{.*}}] : memref<256x8xf16>
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %[[ROW]][%{{.*}}] : memref<1024xf32>
// The dot product: an f32 sum in K order, rounded once to f16.
// CHECK: scf.for %[[MI:.*]] = %{{.*}} to %[[M]] step
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32)
// CHECK: arith.mulf
// CHECK: arith.addf %[[ACC]]
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: memref.store %{{.*}}, %[[Y]][%[[MI]], %[[N]]] : memref<?x256xf16>
// CHECK: memref.dealloc %[[XS]]

// CHECK: func.func @qf_cpu_matmul_1(%{{.*}}: memref<3x256xf16>, %{{.*}}: memref<64x128xi8>, %{{.*}}: memref<64x2xf16>, %{{.*}}: memref<3x64xf16>)
// CHECK-NOT: func.func @qf_cpu_matmul_2
