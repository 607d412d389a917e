// RUN: qfuse-opt %s --qf-to-gpu="chip=sm_90 batch-sizes=1,8" | FileCheck %s

// Llama-3-8B shapes: 32 heads, 8 kv heads of 128, a 4096-row cache. Per
// batch, two launches in order: the cache write (grid M, 128 threads copy
// the 1024-wide key and value rows), then attention, one 512-thread block
// per (head, row), grid (32, M).
// CHECK-LABEL: func.func @llama3_8b
// CHECK: qf.attention {{.*}}qf.launches = [
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 1>, #qf.arg<operand 2>, #qf.arg<operand 3>, #qf.arg<operand 4>, #qf.arg<operand 5>], batch = 1, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@qf_kv_cache_write_w1024_s4096, params = ["key", "value", "key_cache", "value_cache", "positions"], shared_bytes = 0>,
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 3>, #qf.arg<operand 4>, #qf.arg<operand 5>, #qf.arg<result 0>], batch = 1, block = [512, 1, 1], dynamic_shared_bytes = 0, grid = [32, 1, 1], kernel = @qf_kernels::@qf_attention_h32_kv8_d128_s4096, params = ["query", "key_cache", "value_cache", "positions", "out"], shared_bytes = 8320>,
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 1>, #qf.arg<operand 2>, #qf.arg<operand 3>, #qf.arg<operand 4>, #qf.arg<operand 5>], batch = 8, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [8, 1, 1], kernel = @qf_kernels::@qf_kv_cache_write_w1024_s4096,
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 3>, #qf.arg<operand 4>, #qf.arg<operand 5>, #qf.arg<result 0>], batch = 8, block = [512, 1, 1], dynamic_shared_bytes = 0, grid = [32, 8, 1], kernel = @qf_kernels::@qf_attention_h32_kv8_d128_s4096,
// A second layer of the same shape shares both kernels.
// CHECK: qf.attention {{.*}}kernel = @qf_kernels::@qf_kv_cache_write_w1024_s4096, {{.*}}kernel = @qf_kernels::@qf_attention_h32_kv8_d128_s4096,
func.func @llama3_8b(%q: tensor<?x4096xf16>, %k: tensor<?x1024xf16>, %v: tensor<?x1024xf16>, %kc: tensor<4096x1024xf16>, %vc: tensor<4096x1024xf16>, %pos: tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>) {
  %o, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = 32 : i64, num_kv_heads = 8 : i64, head_dim = 128 : i64} : (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>, tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>)
  %o2, %kc2, %vc2 = qf.attention %o, %k, %v, %kc1, %vc1, %pos {num_heads = 32 : i64, num_kv_heads = 8 : i64, head_dim = 128 : i64} : (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>, tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>)
  return %o2, %kc2, %vc2 : tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>
}

// head_dim 64 (Qwen2-0.5B: 14 heads, 2 kv heads).
// CHECK-LABEL: func.func @qwen2_small
// CHECK: qf.attention {{.*}}grid = [1, 1, 1], kernel = @qf_kernels::@qf_kv_cache_write_w128_s512, {{.*}}grid = [14, 1, 1], kernel = @qf_kernels::@qf_attention_h14_kv2_d64_s512, params = ["query", "key_cache", "value_cache", "positions", "out"], shared_bytes = 4224>]
func.func @qwen2_small(%q: tensor<1x896xf16>, %k: tensor<1x128xf16>, %v: tensor<1x128xf16>, %kc: tensor<512x128xf16>, %vc: tensor<512x128xf16>, %pos: tensor<1xi32>) -> (tensor<1x896xf16>, tensor<512x128xf16>, tensor<512x128xf16>) {
  %o, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = 14 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64} : (tensor<1x896xf16>, tensor<1x128xf16>, tensor<1x128xf16>, tensor<512x128xf16>, tensor<512x128xf16>, tensor<1xi32>) -> (tensor<1x896xf16>, tensor<512x128xf16>, tensor<512x128xf16>)
  return %o, %kc1, %vc1 : tensor<1x896xf16>, tensor<512x128xf16>, tensor<512x128xf16>
}

// Cache write: a position outside [0, S) (unsigned compare) writes nothing.
// CHECK: gpu.module @qf_kernels
// CHECK-LABEL: llvm.func @qf_kv_cache_write_w1024_s4096(
// CHECK-SAME: %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias}, %{{.*}}: !llvm.ptr<1> {llvm.noalias}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly})
// CHECK: %[[POS:.*]] = llvm.load {{.*}} invariant {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: %[[S:.*]] = llvm.mlir.constant(4096 : i32)
// CHECK: llvm.icmp "ult" %[[POS]], %[[S]]
// CHECK-COUNT-2: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>

// Attention: all 8 key and 8 value chunks of a trip are loaded first
// (16-byte invariant loads), each score is reduced over the 16 lanes of a
// key (xor 8, 4, 2, 1), exponentials are ex2 on log2(e)/sqrt(D)-scaled
// scores, the 2 streams of a warp merge with xor 16, and the 16 warps
// through shared memory after one barrier.
// CHECK-LABEL: llvm.func @qf_attention_h32_kv8_d128_s4096(
// CHECK-SAME: nvvm.maxntid = array<i32: 512, 1, 1>
// CHECK: nvvm.read.ptx.sreg.ctaid.y
// CHECK: llvm.mlir.constant(0.12751743{{[0-9]*}} : f32)
// CHECK-COUNT-16: llvm.load {{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: nvvm.shfl.sync bfly {{.*}} : f32 -> f32
// CHECK-COUNT-31: nvvm.shfl.sync bfly {{.*}} : f32 -> f32
// CHECK: llvm.intr.maxnum
// CHECK: ex2.approx.ftz.f32
// CHECK: llvm.cond_br
// CHECK-COUNT-10: nvvm.shfl.sync bfly
// CHECK: nvvm.barrier0
// CHECK: llvm.fdiv
// CHECK: llvm.store {{.*}} {alignment = 2 : i64} : f16, !llvm.ptr<1>
