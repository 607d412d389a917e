// RUN: qfuse-opt %s --qf-to-cpu | FileCheck %s

// act_order: the runtime stores the columns sorted by group (Layout.h), so
// groups are contiguous in stored order: stored column j belongs to group
// j / group and stands for checkpoint column perm[j], where its decoded
// value is placed in the scratch row.
#e = #qf.enc<int4, group = 128, scale = f16, act_order>
#l = #qf.layout<tiled, tile_n = 1, tile_k = 32>
!w = !qf.weight<64x512, #e, #l>

func.func @desc_act(%x: tensor<?x512xf16>, %w: !w) -> tensor<?x64xf16> {
  %y = qf.fused_matmul %x, %w : tensor<?x512xf16>, !w -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}

// CHECK: qf.cpu_reference = {function = @qf_cpu::@qf_cpu_matmul_0, params = ["x", "codes", "scales", "perm", "y"]}
// CHECK: func.func @qf_cpu_matmul_0(%{{.*}}: memref<?x512xf16>, %{{.*}}: memref<64x256xi8>, %[[SCALES:.*]]: memref<64x4xf16>, %[[PERM:.*]]: memref<512xi32>, %{{.*}}: memref<?x64xf16>)
// CHECK: %[[ROW:.*]] = memref.alloc() : memref<512xf32>
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[S:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[P:.*]] = memref.load %[[PERM]][%[[S]]] : memref<512xi32>
// CHECK: %[[COL:.*]] = arith.index_castui %[[P]] : i32 to index
// CHECK: %[[G:.*]] = arith.divui %[[S]], %c128 : index
// CHECK: memref.load %[[SCALES]][%[[N]], %[[G]]] : memref<64x4xf16>
// CHECK: memref.store %{{.*}}, %[[ROW]][%[[COL]]] : memref<512xf32>
