// RUN: qfuse-opt %s --qf-select-tiling="batch=1 batch-sizes=1,16,128" --qf-choose-layout --qf-to-cpu | FileCheck %s

// A matmul with per-batch tilings (qf.batch_tilings) still has one CPU
// reference: it decodes the weight operand, in the layout of its `tiling`
// (the matvec's tiled 1x32 here); the per-batch copies in other layouts
// hold the same codes (docs/artifact.md).
#e = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<64x256, #e>

// CHECK: #tiled_32x32 = #qf.layout<tiled, tile_n = 32, tile_k = 32>
// CHECK-LABEL: func.func @mixed
// CHECK: qf.fused_matmul
// CHECK-SAME: qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, {{.*}}>, layout = #tiled_32x32>]
// CHECK-SAME: qf.cpu_reference =
// CHECK-SAME: !qf.weight<64x256, #int4_g128, #tiled_1x32>
// CHECK: func.func @qf_cpu_matmul_0(%{{.*}}: memref<?x256xf16>, %{{.*}}: memref<64x128xi8>, %{{.*}}: memref<64x2xf16>, %{{.*}}: memref<?x64xf16>)
func.func @mixed(%x: tensor<?x256xf16>) -> tensor<?x64xf16> {
  %w = qf.weight_ref "w" : !w
  %y = qf.fused_matmul %x, %w : tensor<?x256xf16>, !w -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}
