// A prefill batch: M = 256, with the tensor-core fragment layout that
// qf-select-tiling picks for the 4-bit and 8-bit weights at that M (from
// 512 on sm_90 the dequantize + cuBLAS fallback reads them in row_major).
// RUN: qfuse-cpu-check %S/Inputs/batch512.mlir --batch-sizes=256 \
// RUN:   | FileCheck %s --implicit-check-not=FAIL

// CHECK: PASS @int4_prefill 512x1024 #qf.enc<int4, group = 128, scale = f16> #qf.layout<tiled, tile_n = 32, tile_k = 32> m=256
// CHECK: PASS @int8_prefill 256x1024 #qf.enc<int8, per_channel, scale = f16> #qf.layout<tiled, tile_n = 32, tile_k = 32> m=256
// CHECK: qfuse-cpu-check: 2 cases, 2 passed, 0 failed
