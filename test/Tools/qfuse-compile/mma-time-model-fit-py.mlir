// The mma.sync time model is one formula in two places: MmaTimeModel.cpp
// ranks the compiler's candidates, bench/cost-model/fit.py fits its
// parameters (bench/cost-model/params.json, which kParams copies). fit.py
// recomputes every mma candidate the compiler lists, for a format of each
// decode family (int4 magic, 8-bit magic, e4m3 cvt, table lookups), group
// sizes 16 to 128 and per channel, zero points, silu_mul and 2:4, at decode
// and prefill batches; any difference beyond the listing's two decimals
// fails.
// RUN: qfuse-compile --list-tilings='!qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>' --batch-sizes=8,64,256 --list-top=0 > %t
// RUN: qfuse-compile --list-tilings='!qf.weight<1024x8192, #qf.enc<uint4, group = 32, scale = f16, zero = int>>' --batch-sizes=16,128 --list-top=0 >> %t
// RUN: qfuse-compile --list-tilings='!qf.weight<960x2560, #qf.enc<int4, per_channel, scale = f16>>' --batch-sizes=24 --list-top=0 >> %t
// RUN: qfuse-compile --list-tilings='!qf.weight<8192x2048, #qf.enc<nf4, group = 64, scale = f32>>' --batch-sizes=16,96 --list-top=0 >> %t
// RUN: qfuse-compile --list-tilings='!qf.weight<8192x2048, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>>' --batch-sizes=32 --list-top=0 >> %t
// RUN: qfuse-compile --list-tilings='!qf.weight<2048x3584, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>>' --batch-sizes=48 --list-top=0 >> %t
// RUN: qfuse-compile --list-tilings='!qf.weight<4096x4096, #qf.enc<int8, per_channel, scale = f16>>' --batch-sizes=8,64 --list-top=0 >> %t
// RUN: qfuse-compile --list-tilings='!qf.weight<4096x4096, #qf.enc<fp8e4m3, per_channel, scale = f32>>' --batch-sizes=12 --list-top=0 >> %t
// RUN: qfuse-compile --list-tilings='!qf.weight<14336x4096, #qf.enc<nf4, group = 64, scale = f32>>' --list-gated --batch-sizes=16 --list-top=0 >> %t
// 2:4 on mma.sp (half the codes and mmas, a position per kept code):
// RUN: qfuse-compile --list-tilings='!qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>>' --batch-sizes=16,64 --list-top=0 >> %t
// RUN: qfuse-compile --list-tilings='!qf.weight<4096x4096, #qf.enc<f16, sparse = 2:4>>' --batch-sizes=32 --list-top=0 >> %t
// RUN: python3 %S/../../../bench/cost-model/fit.py --params %S/../../../bench/cost-model/params.json --check-listing %t | FileCheck %s
// CHECK: {{[1-9][0-9]+}} mma predictions checked, 0 differ
