// RUN: qfuse-opt %s -split-input-file --qf-to-gpu="batch-sizes=1,16" | FileCheck %s

// The dequantize + cuBLAS fallback (docs/fallback.md): a batch whose tiling
// is dequant_gemm runs a generated dequantize of the weight, read in the
// operand's layout, into the workspace, and a gemm record; the other batch
// keeps its fused kernel. The dequantize kernel is the CPU reference's
// decode (WeightDecoder) over memrefs of the kernel's pointers, lowered to
// plain LLVM: no memref op or cast is left.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#l1 = #qf.layout<tiled, tile_n = 1, tile_k = 32>
!w = !qf.weight<1024x4096, #ao, #l1>
// CHECK-LABEL: func.func @act_order
// CHECK: qf.launches = [#qf.launch<args = {{.*}}kernel = @qf_kernels::@qf_permute_k4096, {{[^>]*}}step = "permute">, #qf.launch<batch = 1, {{[^>]*}}input = "permuted", kernel = @qf_kernels::@qf_matvec_0_m1,
// CHECK-SAME: #qf.launch<batch = 16, block = [256, 1, 1], {{[^>]*}}grid = [1024, 1, 1], kernel = @qf_kernels::@qf_dequant_0, layout = #tiled_1x32, member = 0, params = ["codes", "scales", "perm", "w"], {{[^>]*}}step = "dequantize", weight = "weight">
// CHECK-SAME: #qf.fallback_gemm<batch = 16, into = "y", member = 0>]
// CHECK: llvm.func @qf_dequant_0(%{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias})
// CHECK-NOT: memref.
// CHECK-NOT: unrealized_conversion_cast
func.func @act_order(%x: tensor<?x4096xf16>) -> tensor<?x1024xf16> {
  %w = qf.weight_ref "w" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<dequant_gemm>, layout = #l1>]} : tensor<?x4096xf16>, !w -> tensor<?x1024xf16>
  return %y : tensor<?x1024xf16>
}

// -----

// silu_mul with a residual: gate and up each dequantize and multiply into
// scratch buffers, then silu_mul writes the scratch `act` and an add sums
// it with the residual into the output (the f16 elementwise kernels of
// qf.silu_mul and qf.add, over batch x N).
#cb = #qf.enc<codebook, bits = 8, table = "lut" : f16, group = 64, scale = f16>
!w = !qf.weight<512x1024, #cb>
// CHECK-LABEL: func.func @gated
// CHECK: qf.launches = [#qf.launch<{{[^#]*}}kernel = @qf_kernels::@qf_dequant_0, layout = #qf.layout<row_major>, member = 0, params = ["codes", "scales", "table", "w"], shared_bytes = 0, step = "dequantize", weight = "weight">
// CHECK-SAME: #qf.fallback_gemm<batch = 1, into = "gate", member = 0>
// CHECK-SAME: kernel = @qf_kernels::@qf_dequant_0, layout = #qf.layout<row_major>, member = 0, {{[^>]*}}step = "dequantize", weight = "up">
// CHECK-SAME: #qf.fallback_gemm<batch = 1, into = "up", member = 0>
// CHECK-SAME: #qf.launch<args = [#qf.arg<scratch "gate">, #qf.arg<scratch "up">, #qf.arg<scratch "act">, #qf.arg<i32 64>], {{[^>]*}}kernel = @qf_kernels::@qf_silu_mul_v8, {{[^>]*}}step = "silu_mul">
// CHECK-SAME: #qf.launch<args = [#qf.arg<scratch "act">, #qf.arg<residual>, #qf.arg<output>, #qf.arg<i32 64>], {{[^>]*}}kernel = @qf_kernels::@qf_add_v8, {{[^>]*}}step = "add">
func.func @gated(%x: tensor<?x1024xf16>, %r: tensor<?x512xf16>) -> tensor<?x512xf16> {
  %g = qf.weight_ref "gate" : !w
  %u = qf.weight_ref "up" : !w
  %y = qf.fused_matmul %x, %g up(%u : !w) residual(%r : tensor<?x512xf16>) {activation = #qf<activation silu_mul>, tiling = #qf.tiling<dequant_gemm>} : tensor<?x1024xf16>, !w -> tensor<?x512xf16>
  return %y : tensor<?x512xf16>
}

// -----

// A dense bf16 weight under f16 activations is no cuBLAS step as stored:
// the fallback converts it, at every batch, without a tiling.
!w = !qf.weight<256x512, #qf.enc<bf16>>
// CHECK-LABEL: func.func @dense_bf16
// CHECK: qf.launches = [#qf.launch<batch = 1, {{[^#]*}}layout = #qf.layout<row_major>, member = 0, params = ["codes", "w"], {{[^>]*}}step = "dequantize"
// CHECK-SAME: #qf.fallback_gemm<batch = 1, into = "y", member = 0>
// CHECK-SAME: #qf.launch<batch = 16, {{[^#]*}}layout = #qf.layout<row_major>, {{[^>]*}}step = "dequantize"
// CHECK-SAME: #qf.fallback_gemm<batch = 16, into = "y", member = 0>]
func.func @dense_bf16(%x: tensor<?x512xf16>) -> tensor<?x256xf16> {
  %w = qf.weight_ref "w" : !w
  %y = qf.fused_matmul %x, %w : tensor<?x512xf16>, !w -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}

// -----

// act_order with 2:4 keeps its columns in checkpoint order, each column's
// group in g_idx (format::sortsColumns); a fused tiling (a tuning entry,
// say) still runs the fallback: its dequantize binds g_idx, no perm.
!w = !qf.weight<256x512, #qf.enc<int4, group = 128, scale = f16, act_order, sparse = 2:4>>
// CHECK-LABEL: func.func @act_order_sparse
// CHECK: qf.launches = [#qf.launch<batch = 1, {{[^#]*}}layout = #qf.layout<row_major>, member = 0, params = ["codes", "scales", "meta", "g_idx", "w"], {{[^>]*}}step = "dequantize"
// CHECK-SAME: #qf.fallback_gemm<batch = 1, into = "y", member = 0>
// CHECK-SAME: #qf.launch<batch = 16, {{[^#]*}}layout = #qf.layout<row_major>, member = 0, params = ["codes", "scales", "meta", "g_idx", "w"], {{[^>]*}}step = "dequantize"
// CHECK-SAME: #qf.fallback_gemm<batch = 16, into = "y", member = 0>]
// CHECK-NOT: qf_permute
func.func @act_order_sparse(%x: tensor<?x512xf16>) -> tensor<?x256xf16> {
  %w = qf.weight_ref "w" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 1, stages = 2>} : tensor<?x512xf16>, !w -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
