// Every format of the tensor-core GPU test (../qfuse-compile/Inputs/
// mma-formats.mlir) in the 32x32 B-fragment layout the mma kernels read
// (2-, 3-, 4- and 8-bit codes, integer and float zero points), decoded by the CPU reference from the bytes
// qfuse::format::repack wrote and compared with the C++ reference on the
// row-major codes: the compiler's and the runtime's definitions of the
// layout must agree.
// RUN: qfuse-cpu-check %S/../qfuse-compile/Inputs/mma-formats.mlir --batch-sizes=9,17 --tiling-batch=16 \
// RUN:   | FileCheck %s --implicit-check-not=FAIL
// The tensor-core fusions' ops (silu_mul with gate and up in the fragment
// layout, int4 and int8), the same way:
// RUN: qfuse-cpu-check %S/../qfuse-compile/Inputs/mma-fused.mlir --batch-sizes=9,17 --tiling-batch=16 \
// RUN:   | FileCheck %s --check-prefix=FUSED --implicit-check-not=FAIL
// The same formats and fusions with bf16 activations (bf16 decodes, table
// values and epilogue):
// RUN: qfuse-cpu-check %S/../qfuse-compile/Inputs/mma-bf16.mlir --batch-sizes=9,17 --tiling-batch=16 \
// RUN:   | FileCheck %s --check-prefix=BF16 --implicit-check-not=FAIL

// Shapes that are not whole 32 x 32 tiles, in the padded fragment layout:
// RUN: qfuse-cpu-check %S/../qfuse-compile/Inputs/mma-odd.mlir --batch-sizes=9,17 --tiling-batch=16 \
// RUN:   | FileCheck %s --check-prefix=ODD --implicit-check-not=FAIL

// ODD: PASS @int4_n1000 1000x1536 {{.*}} m=9
// ODD: PASS @uint4_g32_k1056 520x1056 {{.*}} m=17
// ODD: PASS @nvfp4_n1001 1001x1008 {{.*}} m=17
// ODD: PASS @int8_n257_k1000 257x1000 {{.*}} m=17
// ODD: PASS @fp8_n100_k520 100x520 {{.*}} m=17
// ODD: PASS @odd_fused#3 700x544 {{.*}} m=17
// ODD: qfuse-cpu-check: 24 cases, 24 passed, 0 failed

// BF16: PASS @int4_q_bf16 1536x1536 #qf.enc<int4, group = 128, scale = f16> #qf.layout<tiled, tile_n = 32, tile_k = 32> m=9
// BF16: PASS @int8_q_bf16 {{.*}} m=17
// BF16: PASS @fp8_mlp_bf16 {{.*}} m=17
// BF16: PASS @mma_fused_bf16#4 1024x512 #qf.enc<fp8e4m3, per_channel, scale = f32> #qf.layout<tiled, tile_n = 32, tile_k = 32> m=17
// BF16: PASS @codebook3_named_bf16 {{.*}} m=17
// BF16: PASS @uint8_zero_float_bf16 {{.*}}zero = float> #qf.layout<tiled, tile_n = 32, tile_k = 32> m=17
// BF16: qfuse-cpu-check: 48 cases, 48 passed, 0 failed

// FUSED: PASS @mma_fused#3 1024x512 #qf.enc<int4, group = 128, scale = f16> #qf.layout<tiled, tile_n = 32, tile_k = 32> m=17
// FUSED: PASS @mma_fused#4 1024x512 #qf.enc<int8, per_channel, scale = f16> #qf.layout<tiled, tile_n = 32, tile_k = 32> m=17
// FUSED: qfuse-cpu-check: 12 cases, 12 passed, 0 failed

// CHECK: PASS @int4_q 1536x1536 #qf.enc<int4, group = 128, scale = f16> #qf.layout<tiled, tile_n = 32, tile_k = 32> m=9
// CHECK: PASS @uint4_kv {{.*}}zero = int> #qf.layout<tiled, tile_n = 32, tile_k = 32> m=17
// CHECK: PASS @nf4 {{.*}} #qf.layout<tiled, tile_n = 32, tile_k = 32> m=17
// CHECK: PASS @int8_q 1536x1536 #qf.enc<int8, per_channel, scale = f16> #qf.layout<tiled, tile_n = 32, tile_k = 32> m=9
// CHECK: PASS @int8_q {{.*}} m=17
// CHECK: PASS @uint8_kv {{.*}}zero = int> #qf.layout<tiled, tile_n = 32, tile_k = 32> m=17
// CHECK: PASS @fp8_mlp {{.*}}fp8e4m3{{.*}} #qf.layout<tiled, tile_n = 32, tile_k = 32> m=17
// CHECK: PASS @codebook2 {{.*}}bits = 2{{.*}} #qf.layout<tiled, tile_n = 32, tile_k = 32> m=17
// CHECK: PASS @codebook3 {{.*}}bits = 3{{.*}} #qf.layout<tiled, tile_n = 32, tile_k = 32> m=17
// CHECK: PASS @codebook3_named {{.*}} #qf.layout<tiled, tile_n = 32, tile_k = 32> m=17
// CHECK: PASS @codebook8_named {{.*}}bits = 8{{.*}} #qf.layout<tiled, tile_n = 32, tile_k = 32> m=17
// CHECK: PASS @uint4_zero_float {{.*}}zero = float> #qf.layout<tiled, tile_n = 32, tile_k = 32> m=17
// CHECK: PASS @uint4_zero_float_g32 {{.*}} m=17
// CHECK: PASS @uint8_zero_float {{.*}}zero = float> #qf.layout<tiled, tile_n = 32, tile_k = 32> m=17
// CHECK: qfuse-cpu-check: 40 cases, 40 passed, 0 failed
