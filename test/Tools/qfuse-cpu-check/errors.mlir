// Inputs the checker cannot run stop it with a located diagnostic.
// RUN: not qfuse-cpu-check %s 2>&1 | FileCheck %s
// RUN: not qfuse-cpu-check %s --batch-sizes=0 2>&1 | FileCheck %s --check-prefix=BATCH
// RUN: not qfuse-cpu-check %S/Inputs/batch512.mlir --perturb=zeros 2>&1 | FileCheck %s --check-prefix=PERTURB

// CHECK: errors.mlir:[[@LINE+4]]:8: error: 'qf.fused_matmul' op qf-to-cpu: the tiled layout has a defined byte order only for 4-bit codes
// BATCH: qfuse-cpu-check: --batch-sizes: batch 0 is not positive
// PERTURB: qfuse-cpu-check: --perturb=zeros: no checked function takes a parameter of that name
func.func @interleaved(%x: tensor<?x512xf16>, %w: !qf.weight<64x512, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 16, tile_k = 64, interleave = 4>>) -> tensor<?x64xf16> {
  %y = qf.fused_matmul %x, %w : tensor<?x512xf16>, !qf.weight<64x512, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 16, tile_k = 64, interleave = 4>> -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}
