// --list-tilings prints the candidate tilings the cost model considers for a
// weight type at each batch on a chip (what `python3 -m qfuse tune` and
// bench/tune.py measure): one #qf.tiling per line, the default (what a
// compile without a tuning database picks) first, then the kernel families'
// candidates by rank, at most --list-top per family.

// Batch 1: the matvec sweep, every entry the contract allows (13), the
// rule's pick first.
// RUN: qfuse-compile --list-tilings='!qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>' --batch-sizes=1 --list-top=0 | FileCheck %s --check-prefix=MATVEC
// MATVEC: // m = 1, n = 4096, k = 4096, !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>, sm_90: 13 candidate(s)
// MATVEC-NEXT: #qf.tiling<matvec, block_n = 8, k_unroll = 2>  // m = 1, matvec, default
// MATVEC-NEXT: #qf.tiling<matvec, block_n = 16>  // m = 1, matvec
// MATVEC-NOT: mma

// Batch 4 on a large weight: both kernels take it; the default (mma, the
// time model's fastest) leads, then the families alternate; --list-top cuts
// each family.
// RUN: qfuse-compile --list-tilings='!qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>' --batch-sizes=4 --list-top=2 | FileCheck %s --check-prefix=CROSS
// CROSS: m = 4, {{.*}}: 4 candidate(s)
// CROSS-NEXT: #qf.tiling<mma, block_m = 16, {{.*}}>  // m = 4, mma, {{[0-9.]+}} us predicted, default
// CROSS-NEXT: #qf.tiling<matvec, block_m = 4, {{.*}}>  // m = 4, matvec
// CROSS-NEXT: #qf.tiling<mma, block_m = 16, {{.*}}>  // m = 4, mma, {{[0-9.]+}} us predicted
// CROSS-NEXT: #qf.tiling<matvec, block_m = 4, {{.*}}>  // m = 4, matvec
// CROSS-NOT: #qf.tiling

// The listing's default is the tiling a compile picks: the time model's
// fastest mma candidate at batch 16 (several batches: a block each).
// RUN: qfuse-compile --list-tilings='!qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>' --batch-sizes=16,128 --list-top=3 > %t.list
// RUN: qfuse-compile %s --emit=mlir -o %t.ir
// RUN: cat %t.list %t.ir | FileCheck %s --check-prefix=DEFAULT
// DEFAULT: // m = 16, {{.*}}: 3 candidate(s)
// DEFAULT-NEXT: #qf.tiling<[[T:mma, block_m = 16, [^>]*]]>  // m = 16, mma, {{[0-9.]+}} us predicted, default
// DEFAULT-NEXT: // m = 16, mma, {{[0-9.]+}} us predicted
// DEFAULT-NEXT: // m = 16, mma, {{[0-9.]+}} us predicted
// DEFAULT-NEXT: // m = 128, {{.*}}: 4 candidate(s)
// DEFAULT-NEXT: #qf.tiling<mma, block_m = 128, {{.*}}, default
// DEFAULT: #qf.tiling<dequant_gemm>  // m = 128, dequant_gemm
// DEFAULT: qf.fused_matmul {{.*}}tiling = #qf.tiling<[[T]]>

// sm_90a from batch 128: wgmma (its rule's pick is the default there),
// mma and the dequantize + cuBLAS fallback.
// RUN: qfuse-compile --list-tilings='!qf.weight<14336x4096, #qf.enc<int4, group = 128, scale = f16>>' --batch-sizes=128 --chip=sm_90a | FileCheck %s --check-prefix=HOPPER
// HOPPER: m = 128, n = 14336, k = 4096, {{.*}}, sm_90a: 17 candidate(s)
// HOPPER-NEXT: #qf.tiling<wgmma, block_m = 128, block_n = 128, block_k = 64, split_k = 2, stages = 4>  // m = 128, wgmma, default
// HOPPER-NEXT: // m = 128, mma, {{[0-9.]+}} us predicted
// HOPPER-NEXT: #qf.tiling<dequant_gemm>  // m = 128, dequant_gemm
// HOPPER-NEXT: #qf.tiling<wgmma, block_m = 64, {{.*}}  // m = 128, wgmma

// Gate and up with silu_mul: keyed by 2N rows, no clusters; from batch 64
// on a weight this large the default is wgmma with a warpgroup each for
// gate and up, block_m 64 in two k groups.
// RUN: qfuse-compile --list-tilings='!qf.weight<14336x4096, #qf.enc<int4, group = 128, scale = f16>>' --list-gated --batch-sizes=1,16,64 --chip=sm_90a --list-top=0 | FileCheck %s --check-prefix=GATED
// GATED: // m = 1, n = 28672, k = 4096, {{.*}} x 2 (gate and up, silu_mul), sm_90a
// GATED: // m = 16, n = 28672
// GATED-NEXT: #qf.tiling<mma, {{.*}} default
// GATED: // m = 64, n = 28672
// GATED-NEXT: #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, split_k = 2, stages = 4>  // m = 64, wgmma, default
// GATED-NOT: cluster_k

// Errors name the problem.
// RUN: not qfuse-compile --list-tilings='!qf.weight<4096x4096, #qf.enc<int4, group = 100, scale = f16>>' 2>&1 | FileCheck %s --check-prefix=BADTYPE
// BADTYPE: qfuse-compile: --list-tilings: expected a weight type such as {{.*}}: group size 100 does not divide K = 4096
// RUN: not qfuse-compile --list-tilings='tensor<4x4xf16>' 2>&1 | FileCheck %s --check-prefix=NOTWEIGHT
// NOTWEIGHT: --list-tilings: expected a weight type such as {{.*}}, got 'tensor<4x4xf16>'
// RUN: not qfuse-compile --list-tilings='!qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>' --batch-sizes=0 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: --list-tilings: --batch-sizes must be positive, got 0
// RUN: not qfuse-compile --list-tilings='!qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>' --list-top=-1 2>&1 | FileCheck %s --check-prefix=TOP
// TOP: --list-tilings: --list-top must be 0 (all) or positive, got -1

func.func @q(%x: tensor<16x4096xf16>) -> tensor<16x4096xf16> {
  %w = qf.weight_ref "q" : !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : tensor<16x4096xf16>, !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>> -> tensor<16x4096xf16>
  return %y : tensor<16x4096xf16>
}
