// qf.quantize's CPU reference (qf-to-cpu, built from WeightQuantizer) writes
// exactly the bytes of qfuse::format::quantizeRTN for every encoding the
// generated quantizer takes, on stress, random and non-finite inputs, at
// several seeds; a corrupted input makes the check fail. act_order (no g_idx
// at load) and 2:4 included, with every component quantizeRTN packs.
// RUN: qfuse-cpu-check %S/Inputs/quantize-formats.mlir --seed=1 \
// RUN:   | FileCheck %s --implicit-check-not=FAIL
// RUN: qfuse-cpu-check %S/Inputs/quantize-formats.mlir --seed=2 \
// RUN:   | FileCheck %s --check-prefix=SUMMARY --implicit-check-not=FAIL
// RUN: qfuse-cpu-check %S/Inputs/quantize-formats.mlir --seed=77 \
// RUN:   | FileCheck %s --check-prefix=SUMMARY --implicit-check-not=FAIL
// RUN: not qfuse-cpu-check %S/Inputs/quantize-formats.mlir --perturb=w \
// RUN:   | FileCheck %s --check-prefix=PERTURB

// CHECK: PASS qf.quantize#0 24x256 f16 -> #qf.enc<int4, group = 128, scale = f16> stress
// CHECK: PASS qf.quantize#0 {{.*}} random
// CHECK: PASS qf.quantize#0 {{.*}} nonfinite (host refuses; status 1)
// CHECK: PASS qf.quantize#5 24x192 bf16 -> #qf.enc<uint4, group = 64, scale = bf16, zero = int> stress
// CHECK: PASS qf.quantize#8 {{.*}}zero = float> stress
// CHECK: PASS qf.quantize#11 24x256 bf16 -> #qf.enc<fp8e4m3, group = 128, scale = f16> stress (host refuses; status 1)
// CHECK: PASS qf.quantize#12 {{.*}}scale = f8E8M0FNU> stress
// CHECK: PASS qf.quantize#15 {{.*}}#qf.enc<nf4, group = 64, scale = f32> stress
// CHECK: PASS qf.quantize#17 {{.*}}codebook, bits = 3{{.*}} stress
// CHECK: PASS qf.quantize#18 {{.*}}codebook, bits = 2{{.*}} nonfinite
// NVFP4: the global scale (448 * 6 / the tensor's amax) and its component.
// CHECK: PASS qf.quantize#19 24x256 f16 -> #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale> stress
// CHECK: PASS qf.quantize#19 {{.*}} random
// CHECK: PASS qf.quantize#19 {{.*}} nonfinite (host refuses; status 1)
// CHECK: PASS qf.quantize#20 24x256 bf16 {{.*}}global_scale> random
// CHECK: PASS qf.quantize#21 24x208 f32 {{.*}}global_scale> stress
// act_order at load: consecutive groups and the g_idx component.
// CHECK: PASS qf.quantize#22 24x256 f16 -> #qf.enc<int4, group = 128, scale = f16, act_order> stress
// CHECK: PASS qf.quantize#23 {{.*}}zero = int, act_order> random
// 2:4: select24's ties (the stress rows), the meta component, NaNs in the
// dropped columns (the host quantizes those), a last half meta byte (#27).
// CHECK: PASS qf.quantize#24 24x256 f16 -> #qf.enc<int4, group = 128, scale = f16, sparse = 2:4> stress
// CHECK: PASS qf.quantize#24 {{.*}} nonfinite (host refuses; status 1)
// CHECK: PASS qf.quantize#24 {{.*}} droppednan
// CHECK: PASS qf.quantize#27 24x196 f32 -> #qf.enc<int8, per_channel, scale = f32, sparse = 2:4> stress
// CHECK: PASS qf.quantize#29 {{.*}}act_order, sparse = 2:4> droppednan
// Units of two groups (codes, 2:4 positions or zero points that do not
// fill whole bytes): the last unit of a K = 196 row holds one group.
// CHECK: PASS qf.quantize#30 24x196 f16 -> #qf.enc<int8, group = 4, scale = f16, sparse = 2:4> random
// CHECK: PASS qf.quantize#30 {{.*}} droppednan
// CHECK: PASS qf.quantize#31 {{.*}}group = 4, scale = bf16, zero = int, sparse = 2:4> random
// CHECK: PASS qf.quantize#32 24x196 f32 {{.*}}uint8, group = 4{{.*}} random
// CHECK: PASS qf.quantize#33 {{.*}}codebook, bits = 3{{.*}}group = 4, scale = f16> stress
// CHECK: PASS qf.quantize#34 24x200 bf16 {{.*}}group = 4, scale = bf16> random
// Unquantized 2:4: the kept values' f16 or bf16 bits from each input type;
// NaNs and overflow to inf are kept, as the host keeps them (status 0);
// "bits": random input bit patterns, a third of them NaNs with random
// payloads (given as raw bytes: floatToHalf would quiet them first).
// CHECK: PASS qf.quantize#35 24x256 f16 -> #qf.enc<f16, sparse = 2:4> stress
// CHECK: PASS qf.quantize#35 {{.*}} nonfinite{{$}}
// CHECK: PASS qf.quantize#35 {{.*}}sparse = 2:4> bits
// CHECK: PASS qf.quantize#36 24x196 bf16 -> #qf.enc<f16, sparse = 2:4> stress
// CHECK: PASS qf.quantize#37 24x256 f32 -> #qf.enc<f16, sparse = 2:4> stress
// CHECK: PASS qf.quantize#37 {{.*}} nonfinite{{$}}
// CHECK: PASS qf.quantize#37 {{.*}}sparse = 2:4> bits
// CHECK: PASS qf.quantize#38 24x256 bf16 -> #qf.enc<bf16, sparse = 2:4> nonfinite{{$}}
// CHECK: PASS qf.quantize#39 24x196 f16 -> #qf.enc<bf16, sparse = 2:4> stress
// CHECK: PASS qf.quantize#40 24x196 f32 -> #qf.enc<bf16, sparse = 2:4> stress
// CHECK: PASS qf.quantize#40 {{.*}} droppednan
// CHECK: PASS qf.quantize#40 {{.*}}sparse = 2:4> bits
// 2:4 in groups that split quads (2 or 6 columns): each kept value in the
// group of its own column, groups of 2 that keep none (#46: the float zero
// point of an empty group is the host's -0), units of 4 groups.
// CHECK: PASS qf.quantize#41 24x256 f16 -> #qf.enc<int8, group = 2, scale = f16, sparse = 2:4> stress
// CHECK: PASS qf.quantize#41 {{.*}} droppednan
// CHECK: PASS qf.quantize#42 24x192 bf16 -> #qf.enc<uint4, group = 6, scale = bf16, zero = int, sparse = 2:4> random
// CHECK: PASS qf.quantize#43 24x196 f32 {{.*}}group = 2{{.*}} random
// CHECK: PASS qf.quantize#44 24x204 f16 {{.*}}group = 6, scale = f16, zero = float, sparse = 2:4> stress
// CHECK: PASS qf.quantize#45 {{.*}}fp8e4m3, group = 2{{.*}} droppednan
// CHECK: PASS qf.quantize#46 24x256 f16 -> #qf.enc<uint4, group = 2, scale = f16, zero = float, sparse = 2:4> stress
// CHECK: PASS qf.quantize#46 {{.*}} random
// 5-, 6- and 7-bit inline codebooks.
// CHECK: PASS qf.quantize#47 24x256 f16 -> #qf.enc<codebook, bits = 5, {{.*}} random
// CHECK: PASS qf.quantize#48 24x192 bf16 -> #qf.enc<codebook, bits = 6, {{.*}} random
// CHECK: PASS qf.quantize#49 24x256 f16 -> #qf.enc<codebook, bits = 7, {{.*}} random
// CHECK: qfuse-cpu-check: 177 cases, 177 passed, 0 failed

// SUMMARY: qfuse-cpu-check: 177 cases, 177 passed, 0 failed

// PERTURB: FAIL qf.quantize#0 {{.*}} stress codes: byte {{[0-9]+}} (row {{[0-9]+}}) is 0x{{[0-9a-f]+}}, quantizeRTN wrote
// PERTURB: FAIL qf.quantize#4 {{.*}}zero = int> stress
// PERTURB: FAIL qf.quantize#12 {{.*}}f8E8M0FNU> random
// PERTURB: FAIL qf.quantize#17 {{.*}} random
// PERTURB: FAIL qf.quantize#19 {{.*}}global_scale> stress codes:
// PERTURB: FAIL qf.quantize#22 {{.*}}act_order> stress codes:
// PERTURB: FAIL qf.quantize#24 {{.*}}sparse = 2:4> random codes:
// PERTURB: FAIL qf.quantize#30 {{.*}}group = 4, scale = f16, sparse = 2:4> random codes:
// PERTURB: FAIL qf.quantize#33 {{.*}} random
// PERTURB: FAIL qf.quantize#35 {{.*}}f16, sparse = 2:4> stress codes:
// PERTURB: FAIL qf.quantize#40 {{.*}}bf16, sparse = 2:4> random codes:
// PERTURB: FAIL qf.quantize#40 {{.*}}bf16, sparse = 2:4> bits codes:
// PERTURB: FAIL qf.quantize#41 {{.*}}group = 2{{.*}} random codes:
// PERTURB: FAIL qf.quantize#44 {{.*}}group = 6{{.*}} stress codes:
// PERTURB: qfuse-cpu-check: 177 cases, 50 passed, 127 failed
