// What the GPU matvec generator does not lower (act_order, 2:4 with integer
// codes and bf16, 2-, 3-, 5-, 6-, 7- and 8-bit codebooks), other scale and
// activation types, every epilogue and a static batch, at batches 1, 3, 9
// and 17, in the layouts qf-select-tiling and qf-choose-layout pick at
// M = 17.
// RUN: qfuse-cpu-check %S/Inputs/cpu-formats.mlir --batch-sizes=1,3,9,17 \
// RUN:   | FileCheck %s --implicit-check-not=FAIL
// The decode (matvec) layouts: act_order and 2:4 codes in the tiled order.
// RUN: qfuse-cpu-check %S/Inputs/cpu-formats.mlir --batch-sizes=2 --tiling-batch=1 \
// RUN:   | FileCheck %s --check-prefix=DECODE --implicit-check-not=FAIL

// DECODE: PASS @int4_act_order {{.*}}act_order> #qf.layout<tiled, tile_n = 1, tile_k = 32> m=2
// DECODE: PASS @uint4_act_order_zero {{.*}}act_order> #qf.layout<tiled, tile_n = 1, tile_k = 32> m=2
// DECODE: PASS @sp24_int4 {{.*}}sparse = 2:4> #qf.layout<tiled, tile_n = 1, tile_k = 32> m=2
// DECODE: PASS @sp24_uint4_zero {{.*}}sparse = 2:4> #qf.layout<tiled, tile_n = 1, tile_k = 32> m=2
// DECODE: qfuse-cpu-check: 23 cases, 23 passed, 0 failed

// CHECK: PASS @int4_act_order 256x1024 #qf.enc<int4, group = 128, scale = f16, act_order> #qf.layout<{{.*}}> m=1 max_abs_err=
// CHECK: PASS @int4_act_order {{.*}} m=17
// CHECK: PASS @uint4_act_order_zero {{.*}} m=17
// CHECK: PASS @sp24_int4 {{.*}}sparse = 2:4{{.*}} m=17
// CHECK: PASS @sp24_uint4_zero {{.*}} m=17
// CHECK: PASS @sp24_int8 {{.*}} m=17
// CHECK: PASS @sp24_bf16 {{.*}} m=17
// CHECK: PASS @cb2_inline {{.*}}bits = 2{{.*}} m=17
// CHECK: PASS @cb3_inline {{.*}}bits = 3{{.*}} m=17
// CHECK: PASS @cb5_named {{.*}}bits = 5{{.*}} m=17
// CHECK: PASS @cb6_named {{.*}}bits = 6{{.*}} m=17
// CHECK: PASS @cb7_named {{.*}}bits = 7{{.*}} m=17
// CHECK: PASS @cb8_named {{.*}}bits = 8{{.*}} m=17
// CHECK: PASS @int8_group_bf16 {{.*}} m=17
// CHECK: PASS @uint8_float_zero {{.*}} m=17
// CHECK: PASS @fp8_group_bf16 {{.*}} m=17
// CHECK: PASS @fp4_f16_scales {{.*}} m=17
// CHECK: PASS @nf4_bf16_act {{.*}} m=17
// CHECK: PASS @mxfp4_bf16_act {{.*}} m=17
// CHECK: PASS @bias_residual {{.*}} m=17
// CHECK: PASS @silu_mul {{.*}} m=17
// CHECK: PASS @norm_silu_residual_bf16 {{.*}} m=17
// CHECK: PASS @norm_nvfp4 {{.*}} m=17
// CHECK: PASS @static_batch {{.*}} m=5
// CHECK-NOT: @static_batch
// CHECK: qfuse-cpu-check: 89 cases, 89 passed, 0 failed
