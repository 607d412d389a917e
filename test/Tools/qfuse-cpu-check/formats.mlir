// Every format of the GPU formats test (../qfuse-compile/Inputs/formats.mlir),
// in the layouts of the decode (matvec) kernels, run by the CPU reference
// at batches 1, 3, 9 and 17 against the C++ reference.
// RUN: qfuse-cpu-check %S/../qfuse-compile/Inputs/formats.mlir --batch-sizes=1,3,9,17 --tiling-batch=4 \
// RUN:   | FileCheck %s --implicit-check-not=FAIL

// CHECK: PASS @int4_q 1536x1536 #qf.enc<int4, group = 128, scale = f16> #qf.layout<tiled, tile_n = 1, tile_k = 32> m=1 max_abs_err=
// CHECK: PASS @int4_q {{.*}} m=3
// CHECK: PASS @int4_q {{.*}} m=9
// CHECK: PASS @int4_q {{.*}} m=17
// CHECK: PASS @uint4_kv {{.*}}zero = int{{.*}} m=17
// CHECK: PASS @uint4_float_zero_bf16 {{.*}}zero = float{{.*}} m=17
// CHECK: PASS @int8_mlp {{.*}} m=17
// CHECK: PASS @uint8 {{.*}} m=17
// CHECK: PASS @fp8 {{.*}} m=17
// CHECK: PASS @nf4 {{.*}} m=17
// CHECK: PASS @nvfp4 {{.*}}global_scale{{.*}} m=17
// CHECK: PASS @mxfp4 {{.*}}f8E8M0FNU{{.*}} m=17
// CHECK: PASS @codebook_inline {{.*}} m=17
// CHECK: PASS @codebook_named {{.*}} m=17
// CHECK: PASS @sparse24_f16 {{.*}} m=17
// CHECK: qfuse-cpu-check: {{[0-9]+}} cases, {{[0-9]+}} passed, 0 failed
