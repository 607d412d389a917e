// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="batch-sizes=1,4,8" | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="tensor-core-min-m=9" | FileCheck %s --check-prefix=NOMMA
// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="tensor-core-min-m=4" | FileCheck %s --check-prefix=OLD
// RUN: not qfuse-opt %s -split-input-file --qf-select-tiling="tensor-core-min-m=-1" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="tensor-core-small-min-weights=0" | FileCheck %s --check-prefix=ANYSIZE
// RUN: not qfuse-opt %s -split-input-file --qf-select-tiling="tensor-core-small-min-weights=-1" 2>&1 | FileCheck %s --check-prefix=BADSIZE
// RUN: not qfuse-opt %s -split-input-file --qf-select-tiling="chip=sm_90a wgmma-min-rows=-1" 2>&1 | FileCheck %s --check-prefix=BADROWS

// The matvec / tensor-core crossover, measured at every M from 2 to 8 on
// Llama-3-8B's and Qwen2.5-7B's projections (docs/defaults.md): integer
// codes take the mma kernel from M = 3 on weights of at least 8 x 2^20
// elements and from M = 5 below; table codes (NF4, FP4, codebooks) from M = 5 and M = 8,
// 4-bit tables from M = 3 where 4 rows a warp do not fill the GPU and N has
// 32-row tiles for 4 warps an SM in 8 K slices (N >= 2081 on 132 SMs). A
// positive tensor-core-min-m (4 in the run of prefix OLD, the rule before) holds on the large
// weights, the small ones keeping the matvec below M = 8. Below it, and
// for what the mma kernel refuses (act_order, 2:4, 2/3-bit codes, K not a
// multiple of 8, an RMSNorm prologue), the matvec runs up to M = 8; N need
// not be whole 32-row tiles (the kernel pads them).
#int4 = #qf.enc<int4, group = 128, scale = f16>
#act = #qf.enc<int4, group = 128, scale = f16, act_order>
// CHECK-LABEL: @crossover
// NOMMA-LABEL: @crossover
func.func @crossover(%x2: tensor<2x4096xf16>, %x4: tensor<4x4096xf16>, %x8: tensor<8x4096xf16>, %n: tensor<4096xf16>, %xk: tensor<8x4100xf16>) {
  %w = qf.weight_ref "w" : !qf.weight<4096x4096, #int4>
  %kv = qf.weight_ref "kv" : !qf.weight<1024x4096, #int4>
  %a = qf.weight_ref "a" : !qf.weight<4096x4096, #act>
  %odd = qf.weight_ref "odd" : !qf.weight<1000x4096, #int4>
  %oddk = qf.weight_ref "oddk" : !qf.weight<1024x4100, #qf.enc<int8, per_channel, scale = f16>>
  // CHECK: tiling = #qf.tiling<matvec, block_m = 2,
  // NOMMA: tiling = #qf.tiling<matvec, block_m = 2,
  // OLD-LABEL: @crossover
  // OLD: tiling = #qf.tiling<matvec, block_m = 2,
  %0 = qf.fused_matmul %x2, %w : tensor<2x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<2x4096xf16>
  // CHECK: tiling = #qf.tiling<mma, block_m = 16,
  // NOMMA: tiling = #qf.tiling<matvec, block_m = 4,
  %1 = qf.fused_matmul %x4, %w : tensor<4x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<4x4096xf16>
  // With tensor-core-small-min-weights=0 the size bound is gone.
  // CHECK: tiling = #qf.tiling<matvec, block_m = 4,
  // ANYSIZE-LABEL: @crossover
  // ANYSIZE: tiling = #qf.tiling<mma, block_m = 16, {{.*}}-> tensor<4x1024xf16>
  %2 = qf.fused_matmul %x4, %kv : tensor<4x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<4x1024xf16>
  // CHECK: tiling = #qf.tiling<mma, block_m = 16,
  // NOMMA: tiling = #qf.tiling<matvec, block_m = 8,
  %3 = qf.fused_matmul %x8, %kv : tensor<8x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<8x1024xf16>
  // act_order: the matvec's gather only at batch 1; here the tensor-core
  // kernel on permuted activations.
  // CHECK: tiling = #qf.tiling<mma, block_m = 16,
  %4 = qf.fused_matmul %x8, %a : tensor<8x4096xf16>, !qf.weight<4096x4096, #act> -> tensor<8x4096xf16>
  // CHECK: tiling = #qf.tiling<mma, block_m = 16,
  %5 = qf.fused_matmul %x8, %odd : tensor<8x4096xf16>, !qf.weight<1000x4096, #int4> -> tensor<8x1000xf16>
  // CHECK: tiling = #qf.tiling<matvec, block_m = 8,
  %7 = qf.fused_matmul %xk, %oddk : tensor<8x4100xf16>, !qf.weight<1024x4100, #qf.enc<int8, per_channel, scale = f16>> -> tensor<8x1024xf16>
  // The RMSNorm prologue is the matvec's alone.
  // CHECK: tiling = #qf.tiling<matvec, block_m = 8,
  %6 = qf.fused_matmul %x8, %w norm(%n : tensor<4096xf16>) {norm_eps = 1.0e-05 : f32} : tensor<8x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<8x4096xf16>
  return
}

// -----

// The size bound, 8 x 2^20 elements: 3584 x 3584 (12.8M) is a large weight
// (the mma kernel from M = 3), 2048 x 3584 (7.3M) a small one (the matvec
// to M = 4), in integer codes.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @size_bound
func.func @size_bound(%x3: tensor<3x3584xf16>, %x4: tensor<4x3584xf16>) {
  %big = qf.weight_ref "big" : !qf.weight<3584x3584, #int4>
  %mid = qf.weight_ref "mid" : !qf.weight<2048x3584, #int4>
  // CHECK: tiling = #qf.tiling<mma, block_m = 16, {{.*}}-> tensor<3x3584xf16>
  %0 = qf.fused_matmul %x3, %big : tensor<3x3584xf16>, !qf.weight<3584x3584, #int4> -> tensor<3x3584xf16>
  // CHECK: tiling = #qf.tiling<matvec, block_m = 4, {{.*}}-> tensor<4x2048xf16>
  %1 = qf.fused_matmul %x4, %mid : tensor<4x3584xf16>, !qf.weight<2048x3584, #int4> -> tensor<4x2048xf16>
  return
}

// -----

// A qf.group runs as one launch of its first member's kernel: at M = 4 the
// k/v members follow q onto the tensor-core kernel, though alone they would
// run the matvec.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @group_follows_leader
// ANYSIZE-LABEL: @group_follows_leader
// CHECK-COUNT-3: {qf.group = 0 : i64, {{.*}}tiling = #qf.tiling<mma,
func.func @group_follows_leader(%x: tensor<4x4096xf16>) {
  %q = qf.weight_ref "q" : !qf.weight<4096x4096, #int4>
  %k = qf.weight_ref "k" : !qf.weight<1024x4096, #int4>
  %v = qf.weight_ref "v" : !qf.weight<1024x4096, #int4>
  %0 = qf.fused_matmul %x, %q {qf.group = 0 : i64} : tensor<4x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<4x4096xf16>
  %1 = qf.fused_matmul %x, %k {qf.group = 0 : i64} : tensor<4x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<4x1024xf16>
  %2 = qf.fused_matmul %x, %v {qf.group = 0 : i64} : tensor<4x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<4x1024xf16>
  return
}

// -----

// A dynamic M over batches 1, 4, 8 with a norm prologue: no batch gets
// the tensor-core kernel (the matvec tiling serves all three).
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @norm_dynamic
// CHECK-NOT: qf.batch_tilings
// CHECK: tiling = #qf.tiling<matvec,
func.func @norm_dynamic(%x: tensor<?x4096xf16>, %n: tensor<4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "w" : !qf.weight<4096x4096, #int4>
  %y = qf.fused_matmul %x, %w norm(%n : tensor<4096xf16>) {norm_eps = 1.0e-05 : f32} : tensor<?x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}

// BAD: tensor-core-min-m must not be negative, got -1
// BADSIZE: tensor-core-small-min-weights must not be negative, got -1
// BADROWS: wgmma-min-rows must not be negative, got -1

// -----

// The measured crossover by decode family and size (the OLD run: the matvec below
// M = 8 on every weight under 4096 x 4096, whatever its codes).
#int4 = #qf.enc<int4, group = 128, scale = f16>
#nvfp4 = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>
// CHECK-LABEL: @by_family
// OLD-LABEL: @by_family
func.func @by_family(%x3: tensor<3x4096xf16>, %x4: tensor<4x4096xf16>, %x5: tensor<5x4096xf16>, %x8k4: tensor<4x8192xf16>) {
  %q = qf.weight_ref "q" : !qf.weight<4096x4096, #int4>
  %kv = qf.weight_ref "kv" : !qf.weight<1024x4096, #int4>
  %q4 = qf.weight_ref "q4" : !qf.weight<4096x4096, #nvfp4>
  %wide4 = qf.weight_ref "wide4" : !qf.weight<8192x4096, #nvfp4>
  %narrow4 = qf.weight_ref "narrow4" : !qf.weight<2048x8192, #nvfp4>
  %mid4 = qf.weight_ref "mid4" : !qf.weight<2304x8192, #nvfp4>
  %kv4 = qf.weight_ref "kv4" : !qf.weight<1024x4096, #nvfp4>
  // Integer codes on a large weight: the mma kernel from M = 3.
  // CHECK: tiling = #qf.tiling<mma, {{.*}}-> tensor<3x4096xf16>
  // OLD: tiling = #qf.tiling<matvec, {{.*}}-> tensor<3x4096xf16>
  %q3 = qf.fused_matmul %x3, %q : tensor<3x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<3x4096xf16>
  // Integer codes on a small weight: the mma kernel from M = 5.
  // CHECK: tiling = #qf.tiling<mma, {{.*}}-> tensor<5x1024xf16>
  // OLD: tiling = #qf.tiling<matvec, {{.*}}-> tensor<5x1024xf16>
  %0 = qf.fused_matmul %x5, %kv : tensor<5x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<5x1024xf16>
  // 4-bit table codes on a large weight of 4096 rows: a matvec of 4 rows a
  // warp would launch 1024 of the 2112 warps 132 SMs should hold, and the
  // mma kernel has 128 tiles, 1024 warps in 8 K slices (7.8 an SM), so the
  // mma kernel from M = 3.
  // CHECK: tiling = #qf.tiling<mma, {{.*}}-> tensor<3x4096xf16>
  // OLD: tiling = #qf.tiling<matvec, {{.*}}-> tensor<3x4096xf16>
  %1 = qf.fused_matmul %x3, %q4 : tensor<3x4096xf16>, !qf.weight<4096x4096, #nvfp4> -> tensor<3x4096xf16>
  // 8192 rows fill the GPU 4 rows a warp: the matvec at M = 4, mma from 5.
  // CHECK: tiling = #qf.tiling<matvec, {{.*}}-> tensor<4x8192xf16>
  // OLD: tiling = #qf.tiling<mma, {{.*}}-> tensor<4x8192xf16>
  %w4 = qf.fused_matmul %x4, %wide4 : tensor<4x4096xf16>, !qf.weight<8192x4096, #nvfp4> -> tensor<4x8192xf16>
  // CHECK: tiling = #qf.tiling<mma, {{.*}}-> tensor<5x8192xf16>
  %2 = qf.fused_matmul %x5, %wide4 : tensor<5x4096xf16>, !qf.weight<8192x4096, #nvfp4> -> tensor<5x8192xf16>
  // 2048 rows are 64 tiles, 512 warps in 8 K slices, under 4 an SM: the
  // matvec (K split in two) at M = 4; 2304 rows make 576: the mma kernel.
  // CHECK: tiling = #qf.tiling<matvec, {{.*}}split_k = 2>{{.*}}-> tensor<4x2048xf16>
  %n4 = qf.fused_matmul %x8k4, %narrow4 : tensor<4x8192xf16>, !qf.weight<2048x8192, #nvfp4> -> tensor<4x2048xf16>
  // CHECK: tiling = #qf.tiling<mma, {{.*}}-> tensor<4x2304xf16>
  %m4 = qf.fused_matmul %x8k4, %mid4 : tensor<4x8192xf16>, !qf.weight<2304x8192, #nvfp4> -> tensor<4x2304xf16>
  // Table codes on a small weight: the matvec up to M = 7.
  // CHECK: tiling = #qf.tiling<matvec, {{.*}}-> tensor<5x1024xf16>
  %3 = qf.fused_matmul %x5, %kv4 : tensor<5x4096xf16>, !qf.weight<1024x4096, #nvfp4> -> tensor<5x1024xf16>
  return
}
