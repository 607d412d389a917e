// Every 2:4 format the mma.sp kernel decodes, in the 2:4 fragment layout
// (qfuse/format/SparseMmaLayout.h) that qf-choose-layout gives them past
// the matvec, decoded by the CPU reference from the bytes
// qfuse::format::repack wrote and compared with the C++ reference on the
// row-major codes and positions, at batches 1 to 100: the compiler's and
// the runtime's definitions of the layout must agree.
// RUN: qfuse-cpu-check %S/Inputs/sparse24-mma.mlir --batch-sizes=1,2,3,5,8,9,16,17,33,64,100 \
// RUN:   | FileCheck %s --implicit-check-not=FAIL
// The check fails when the codes, the positions or the scales are wrong:
// RUN: not qfuse-cpu-check %S/Inputs/sparse24-mma.mlir --batch-sizes=9 --tiling-batch=16 --perturb=codes | FileCheck %s --check-prefix=CODES
// RUN: not qfuse-cpu-check %S/Inputs/sparse24-mma.mlir --batch-sizes=9 --tiling-batch=16 --perturb=meta | FileCheck %s --check-prefix=META
// RUN: not qfuse-cpu-check %S/Inputs/sparse24-mma.mlir --batch-sizes=9 --tiling-batch=16 --perturb=scales | FileCheck %s --check-prefix=SCALES

// CHECK: PASS @f16 96x384 #qf.enc<f16, sparse = 2:4> #qf.layout<tiled, tile_n = 32, tile_k = 64> m=1 max_abs_err=
// CHECK: PASS @f16 {{.*}} m=100
// CHECK: PASS @int4 72x512 {{.*}} #qf.layout<tiled, tile_n = 32, tile_k = 64> m=1
// CHECK: PASS @int4 {{.*}} m=100
// CHECK: PASS @uint4_zero 40x320 {{.*}} #qf.layout<tiled, tile_n = 32, tile_k = 64> m=1
// CHECK: PASS @uint4_zero {{.*}} m=100
// CHECK: PASS @int8 64x448 {{.*}} #qf.layout<tiled, tile_n = 32, tile_k = 64> m=1
// CHECK: PASS @int8 {{.*}} m=100
// CHECK: PASS @uint8_zero_float 33x256 {{.*}} #qf.layout<tiled, tile_n = 32, tile_k = 64> m=1
// CHECK: PASS @uint8_zero_float {{.*}} m=100
// CHECK: PASS @fp8 100x192 {{.*}} #qf.layout<tiled, tile_n = 32, tile_k = 64> m=1
// CHECK: PASS @fp8 {{.*}} m=100
// CHECK: PASS @gate_up 160x256 {{.*}} #qf.layout<tiled, tile_n = 32, tile_k = 64> m=1
// CHECK: PASS @gate_up#1 {{.*}} m=100
// CHECK: qfuse-cpu-check: 88 cases, 88 passed, 0 failed

// CODES: FAIL @f16 {{.*}} (perturbed codes)
// CODES: qfuse-cpu-check: 8 cases, 0 passed, 8 failed
// META: FAIL @int4 {{.*}} (perturbed meta)
// META: qfuse-cpu-check: 8 cases, 0 passed, 8 failed
// SCALES: PASS @f16
// SCALES: FAIL @int4 {{.*}} (perturbed scales)
// SCALES: qfuse-cpu-check: 8 cases, 1 passed, 7 failed
