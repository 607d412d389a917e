// RUN: qfuse-opt %s --qf-fuse-dequant-matmul --qf-select-tiling="batch-sizes=1,7,17" --qf-choose-layout | FileCheck %s

// act_order weights (issue 20, parts 1 and 5): the matvec gathers the
// activations into shared memory inside the kernel, which pays at batch 1
// only; from batch 2 the tensor-core kernel runs on activations a launch of
// their own permutes, reading the weight in its fragment layout (columns
// sorted by group). At batch 1 the matvec takes it only while K x 2 bytes
// of activations fit a block's shared memory (227 KB on sm_90).
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

// K = 131072: 262144 bytes of activations at batch 1 do not fit.
// CHECK-LABEL: func.func @long_k
// CHECK: tiling = #qf.tiling<mma,
func.func @long_k(%x: tensor<1x131072xf16>) -> tensor<1x256xf16> {
  %w = qf.weight_ref "long" : !qf.weight<256x131072, #ao>
  %y = qf.matmul %x, %w : tensor<1x131072xf16>, !qf.weight<256x131072, #ao> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}
