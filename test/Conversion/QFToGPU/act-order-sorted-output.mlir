// RUN: qfuse-opt %s -split-input-file --qf-to-gpu="batch-sizes=1,16,512" | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --qf-to-gpu="batch-sizes=1,16,512 act-order-sorted-output=false" | FileCheck %s --check-prefix=OFF

// An act_order down_proj reading the gated gate/up matmul, its only use:
// up to batch 16 gate/up stores its output in down_proj's sorted column
// order and down_proj's kernels read it as stored (no permute launch, no
// `input = "permuted"`). The gated matvec (1) takes a `y_order` parameter
// (down's inv_perm, bound by the artifact) and stores output column n at
// y_order[n]; gate/up's fallback (16, dequant_gemm) gathers the product
// through down's perm (reader_component) into the output. At 512 the
// scattered stores would cost more than the permute launch: gate/up's
// mma kernel stores in checkpoint order and down_proj has its permute.
#plain = #qf.enc<int4, group = 128, scale = f16>
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#l1 = #qf.layout<tiled, tile_n = 1, tile_k = 32>
#l32 = #qf.layout<tiled, tile_n = 32, tile_k = 32>
!wg = !qf.weight<14336x4096, #plain, #l1>
!wd = !qf.weight<4096x14336, #ao, #l1>
// CHECK-LABEL: func.func @mlp
// CHECK: kernel = @qf_kernels::@qf_matvec_0_m1, params = ["x", "codes", "scales", "up_codes", "up_scales", "y", "y_order"]
// CHECK-SAME: #qf.launch<args = [#qf.arg<scratch "gate">, #qf.arg<scratch "up">, #qf.arg<reader_component "perm">, #qf.arg<output>], batch = 16, {{[^>]*}}kernel = @qf_kernels::@qf_permute_silu_mul_k14336, member = 0, params = ["gate", "up", "perm", "xp"], {{[^>]*}}step = "silu_mul">
// CHECK-SAME: kernel = @qf_kernels::@qf_mma_1_m512, layout = #tiled_32x32, params = ["x", "codes", "scales", "up_codes", "up_scales", "y"]
// CHECK: qf.launches = [#qf.launch<batch = 1, {{[^>]*}}kernel = @qf_kernels::@qf_matvec_2_m1, params = ["x", "codes", "scales", "y"]
// CHECK-SAME: #qf.launch<batch = 16, {{[^>]*}}kernel = @qf_kernels::@qf_mma_3_m16, layout = #tiled_32x32, params = ["x", "codes", "scales", "y"]
// CHECK-SAME: step = "permute"
// CHECK-SAME: batch = 512, {{[^>]*}}input = "permuted", kernel = @qf_kernels::@qf_mma_4_m512
// y_order is read only; the store's column is loaded from it.
// CHECK: llvm.func @qf_matvec_0_m1({{.*}}%arg5: !llvm.ptr<1> {llvm.noalias}, %arg6: !llvm.ptr<1> {llvm.noalias, llvm.readonly})
// OFF-LABEL: func.func @mlp
// OFF-NOT: y_order
// OFF: kernel = @qf_kernels::@qf_silu_mul_v8
// OFF: kernel = @qf_kernels::@qf_permute_k14336, {{[^>]*}}step = "permute">
// OFF-SAME: input = "permuted"
func.func @mlp(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %g = qf.weight_ref "gate" : !wg
  %u = qf.weight_ref "up" : !wg
  %d = qf.weight_ref "down" : !wd
  %a = qf.fused_matmul %x, %g up(%u : !wg) {activation = #qf<activation silu_mul>, tiling = #qf.tiling<matvec, block_n = 8, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<dequant_gemm>>, #qf.batch_tiling<batch = 512, tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 2, stages = 3>, layout = #l32>]} : tensor<?x4096xf16>, !wg -> tensor<?x14336xf16>
  %y = qf.fused_matmul %a, %d {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>, layout = #l32>, #qf.batch_tiling<batch = 512, tiling = #qf.tiling<mma, block_m = 64, block_n = 64, block_k = 64, split_k = 1, stages = 4>, layout = #l32>]} : tensor<?x14336xf16>, !wd -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}

// -----

// down_proj on the fallback (at any one batch): its dequantize puts the
// columns back in checkpoint order, so gate/up stores in checkpoint order
// at every batch.
#plain = #qf.enc<int4, group = 128, scale = f16>
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#l1 = #qf.layout<tiled, tile_n = 1, tile_k = 32>
!wg = !qf.weight<1024x512, #plain, #l1>
!wd = !qf.weight<512x1024, #ao, #l1>
// CHECK-LABEL: func.func @down_falls_back
// CHECK-NOT: y_order
// CHECK: step = "dequantize"
func.func @down_falls_back(%x: tensor<1x512xf16>) -> tensor<1x512xf16> {
  %g = qf.weight_ref "gate" : !wg
  %u = qf.weight_ref "up" : !wg
  %d = qf.weight_ref "down" : !wd
  %a = qf.fused_matmul %x, %g up(%u : !wg) {activation = #qf<activation silu_mul>, tiling = #qf.tiling<matvec, block_n = 8, k_unroll = 4>} : tensor<1x512xf16>, !wg -> tensor<1x1024xf16>
  %y = qf.fused_matmul %a, %d {tiling = #qf.tiling<dequant_gemm>} : tensor<1x1024xf16>, !wd -> tensor<1x512xf16>
  return %y : tensor<1x512xf16>
}

// -----

// Gate/up's output read by something else too (here returned): it stays
// in checkpoint order.
#plain = #qf.enc<int4, group = 128, scale = f16>
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#l1 = #qf.layout<tiled, tile_n = 1, tile_k = 32>
!wg = !qf.weight<1024x512, #plain, #l1>
!wd = !qf.weight<512x1024, #ao, #l1>
// CHECK-LABEL: func.func @two_readers
// CHECK-NOT: y_order
// CHECK: step = "permute"
func.func @two_readers(%x: tensor<1x512xf16>) -> (tensor<1x512xf16>, tensor<1x1024xf16>) {
  %g = qf.weight_ref "gate" : !wg
  %u = qf.weight_ref "up" : !wg
  %d = qf.weight_ref "down" : !wd
  %a = qf.fused_matmul %x, %g up(%u : !wg) {activation = #qf<activation silu_mul>, tiling = #qf.tiling<matvec, block_n = 8, k_unroll = 4>} : tensor<1x512xf16>, !wg -> tensor<1x1024xf16>
  %y = qf.fused_matmul %a, %d {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>} : tensor<1x1024xf16>, !wd -> tensor<1x512xf16>
  return %y, %a : tensor<1x512xf16>, tensor<1x1024xf16>
}

// -----

// Attention read by an act_order o_proj: up to batch 16 the attention
// kernel takes `out_order` (o_proj's inv_perm) and stores output column c
// at out_order[c]; o_proj has no permute there. At 512 the tiled kernel
// stores in checkpoint order and o_proj has its permute.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#l1 = #qf.layout<tiled, tile_n = 1, tile_k = 32>
#l32 = #qf.layout<tiled, tile_n = 32, tile_k = 32>
!wo = !qf.weight<4096x4096, #ao, #l1>
// CHECK-LABEL: func.func @attention_o
// CHECK: #qf.launch<args = [{{.*}}#qf.arg<result 0>, #qf.arg<reader_component "inv_perm">], batch = 1, {{[^>]*}}kernel = @qf_kernels::@qf_attention_h32_kv8_d128_s4096_sorted, {{[^>]*}}params = ["query", "key_cache", "value_cache", "positions", "out", "out_order"]
// CHECK-SAME: batch = 16, {{[^>]*}}kernel = @qf_kernels::@qf_attention_h32_kv8_d128_s4096_sorted
// CHECK-SAME: batch = 512, {{[^>]*}}kernel = @qf_kernels::@qf_attention_tiled_h32_kv8_d128_s4096,
// CHECK: qf.launches = [#qf.launch<batch = 1, {{[^>]*}}kernel = @qf_kernels::@qf_matvec_{{[0-9]+}}_m1, params = ["x", "codes", "scales", "y"]
// CHECK-SAME: #qf.launch<batch = 16, {{[^>]*}}kernel = @qf_kernels::@qf_mma_{{[0-9]+}}_m16,
// CHECK-SAME: step = "permute"
// CHECK-SAME: batch = 512, {{[^>]*}}input = "permuted"
// OFF-LABEL: func.func @attention_o
// OFF-NOT: _sorted
// OFF: step = "permute"
func.func @attention_o(%q: tensor<?x4096xf16>, %k: tensor<?x1024xf16>, %v: tensor<?x1024xf16>, %kc: tensor<4096x1024xf16>, %vc: tensor<4096x1024xf16>, %pos: tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>) {
  %a, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = 32 : i64, num_kv_heads = 8 : i64, head_dim = 128 : i64} : (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>, tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>)
  %wo = qf.weight_ref "o" : !wo
  %y = qf.fused_matmul %a, %wo {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>, layout = #l32>, #qf.batch_tiling<batch = 512, tiling = #qf.tiling<mma, block_m = 64, block_n = 64, block_k = 64, split_k = 1, stages = 4>, layout = #l32>]} : tensor<?x4096xf16>, !wo -> tensor<?x4096xf16>
  return %y, %kc1, %vc1 : tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>
}

// -----

// The rotary form (one launch) stores the same way up to batch 16; at 512
// its split form's tiled kernel stores in checkpoint order.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#l1 = #qf.layout<tiled, tile_n = 1, tile_k = 32>
#l32 = #qf.layout<tiled, tile_n = 32, tile_k = 32>
!wo = !qf.weight<4096x4096, #ao, #l1>
// CHECK-LABEL: func.func @rotary_attention_o
// CHECK: #qf.launch<args = [{{.*}}#qf.arg<result 0>, #qf.arg<reader_component "inv_perm">], batch = 1, {{[^>]*}}kernel = @qf_kernels::@qf_rotary_attention_h32_kv8_d128_s4096_t500000_sorted, {{[^>]*}}params = ["query", "key", "value", "key_cache", "value_cache", "positions", "out", "out_order"]
// CHECK-SAME: batch = 16, {{[^>]*}}kernel = @qf_kernels::@qf_rotary_attention_h32_kv8_d128_s4096_t500000_sorted,
// CHECK-SAME: batch = 512, {{[^>]*}}kernel = @qf_kernels::@qf_rotary_kv_cache_write_kv8_d128_s4096_t500000,
// CHECK-SAME: batch = 512, {{[^>]*}}kernel = @qf_kernels::@qf_attention_tiled_rotated_query_h32_kv8_d128_s4096_t500000,
// CHECK: qf.launches = [#qf.launch<batch = 1, {{[^>]*}}kernel = @qf_kernels::@qf_matvec_{{[0-9]+}}_m1, params = ["x", "codes", "scales", "y"]
// OFF-LABEL: func.func @rotary_attention_o
// OFF-NOT: _sorted
// OFF: step = "permute"
func.func @rotary_attention_o(%q: tensor<?x4096xf16>, %k: tensor<?x1024xf16>, %v: tensor<?x1024xf16>, %kc: tensor<4096x1024xf16>, %vc: tensor<4096x1024xf16>, %pos: tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>) {
  %a, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = 32 : i64, num_kv_heads = 8 : i64, head_dim = 128 : i64, rope_theta = 500000.0 : f64} : (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>, tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>)
  %wo = qf.weight_ref "o" : !wo
  %y = qf.fused_matmul %a, %wo {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>, layout = #l32>, #qf.batch_tiling<batch = 512, tiling = #qf.tiling<mma, block_m = 64, block_n = 64, block_k = 64, split_k = 1, stages = 4>, layout = #l32>]} : tensor<?x4096xf16>, !wo -> tensor<?x4096xf16>
  return %y, %kc1, %vc1 : tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>
}
