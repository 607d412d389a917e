// RUN: qfuse-opt %s --qf-fuse-dequant-matmul --qf-select-tiling="batch-sizes=1,7,17" --qf-choose-layout | FileCheck %s

// act_order weights (issue 20, parts 1 and 5): either kernel runs them as
// plain ones on activations a launch of their own permutes (or the RMSNorm
// writes permuted), the tensor-core kernel reading the weight in its
// fragment layout (columns sorted by group). So they take plain int4's
// tilings: the matvec up to the crossover, mma past it.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
// CHECK-LABEL: func.func @down_proj
// A Qwen2.5-7B down_proj (K = 18944).
// CHECK: qf.batch_tilings = [#qf.batch_tiling<batch = 7, tiling = #qf.tiling<mma, {{[^>]*}}>, layout = #tiled_32x32>, #qf.batch_tiling<batch = 17, tiling = #qf.tiling<mma, {{[^>]*}}>, layout = #tiled_32x32>]
// CHECK-SAME: tiling = #qf.tiling<matvec
func.func @down_proj(%x: tensor<?x18944xf16>) -> tensor<?x3584xf16> {
  %w = qf.weight_ref "down" : !qf.weight<3584x18944, #ao>
  %y = qf.matmul %x, %w : tensor<?x18944xf16>, !qf.weight<3584x18944, #ao> -> tensor<?x3584xf16>
  return %y : tensor<?x3584xf16>
}

// K = 131072 at batch 1: the matvec holds no activations in shared memory,
// so K has no limit there.
// CHECK-LABEL: func.func @long_k
// CHECK: tiling = #qf.tiling<matvec,
func.func @long_k(%x: tensor<1x131072xf16>) -> tensor<1x256xf16> {
  %w = qf.weight_ref "long" : !qf.weight<256x131072, #ao>
  %y = qf.matmul %x, %w : tensor<1x131072xf16>, !qf.weight<256x131072, #ao> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}
