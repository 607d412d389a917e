// RUN: qfuse-opt %s --qf-to-gpu="chip=sm_90 batch-sizes=1,8" | FileCheck %s

// The rotary form of qf.attention (qf-fuse-rotary-attention): one launch
// per batch, grid (heads, M), 512 threads, the attention kernel's shared
// memory; it reads query, key and value, reads and writes both caches
// (not readonly), and reads the positions.
// CHECK-LABEL: func.func @llama3_8b
// CHECK: qf.attention {{.*}}qf.launches = [
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<operand 2>, #qf.arg<operand 3>, #qf.arg<operand 4>, #qf.arg<operand 5>, #qf.arg<result 0>], batch = 1, block = [512, 1, 1], dynamic_shared_bytes = 0, grid = [32, 1, 1], kernel = @qf_kernels::@qf_rotary_attention_h32_kv8_d128_s4096_t500000_llama3_f8_lo1_hi4_o8192, params = ["query", "key", "value", "key_cache", "value_cache", "positions", "out"], shared_bytes = 8320>,
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<operand 2>, #qf.arg<operand 3>, #qf.arg<operand 4>, #qf.arg<operand 5>, #qf.arg<result 0>], batch = 8, block = [512, 1, 1], dynamic_shared_bytes = 0, grid = [32, 8, 1], kernel = @qf_kernels::@qf_rotary_attention_h32_kv8_d128_s4096_t500000_llama3_f8_lo1_hi4_o8192, params = ["query", "key", "value", "key_cache", "value_cache", "positions", "out"], shared_bytes = 8320>]
// CHECK-NOT: qf_kv_cache_write
func.func @llama3_8b(%q: tensor<?x4096xf16>, %k: tensor<?x1024xf16>, %v: tensor<?x1024xf16>, %kc: tensor<4096x1024xf16>, %vc: tensor<4096x1024xf16>, %pos: tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>) {
  %o, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = 32 : i64, num_kv_heads = 8 : i64, head_dim = 128 : i64, rope_theta = 500000.0 : f64, scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64, original_max_position = 8192 : i64} : (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>, tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>)
  return %o, %kc1, %vc1 : tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>
}

// head_dim 8: a lane's chunk is the whole head, its halves are partners.
// CHECK-LABEL: func.func @head_dim_8
// CHECK: kernel = @qf_kernels::@qf_rotary_attention_h2_kv1_d8_s64_t10000, {{.*}}shared_bytes = 640>]
func.func @head_dim_8(%q: tensor<1x16xf16>, %k: tensor<1x8xf16>, %v: tensor<1x8xf16>, %kc: tensor<64x8xf16>, %vc: tensor<64x8xf16>, %pos: tensor<1xi32>) -> (tensor<1x16xf16>, tensor<64x8xf16>, tensor<64x8xf16>) {
  %o, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = 2 : i64, num_kv_heads = 1 : i64, head_dim = 8 : i64, rope_theta = 10000.0 : f64} : (tensor<1x16xf16>, tensor<1x8xf16>, tensor<1x8xf16>, tensor<64x8xf16>, tensor<64x8xf16>, tensor<1xi32>) -> (tensor<1x16xf16>, tensor<64x8xf16>, tensor<64x8xf16>)
  return %o, %kc1, %vc1 : tensor<1x16xf16>, tensor<64x8xf16>, tensor<64x8xf16>
}

// The kernel: the inv_freq table is the rotary kernel's (same name, shared
// with a qf.rotary of the same parameters). In order: the writer blocks
// rotate the key chunk (f64 angle from positions[m], 8 sin/cos) and store
// the key and value chunks to the cache; every warp checks the positions
// contract over gridDim.y rows (xor OR over the warp, no barrier); the
// query chunk is rotated; the cache rows stream in 16-byte invariant
// loads; the new rows' keys are rotated again from the operand; then the
// warps merge after the one barrier.
// CHECK: gpu.module @qf_kernels
// CHECK-DAG: llvm.mlir.global internal constant @qf_rope_inv_freq_d128_t500000_llama3_f8_lo1_hi4_o8192(
// CHECK-LABEL: llvm.func @qf_rotary_attention_h32_kv8_d128_s4096_t500000_llama3_f8_lo1_hi4_o8192(
// CHECK-SAME: %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias}, %{{.*}}: !llvm.ptr<1> {llvm.noalias}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias})
// CHECK-SAME: nvvm.maxntid = array<i32: 512, 1, 1>
// CHECK: nvvm.read.ptx.sreg.ctaid.y
// CHECK: llvm.sitofp {{.*}} : i32 to f64
// CHECK-COUNT-4: invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<2xf64>
// CHECK-COUNT-8: sin.approx.f32
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK: nvvm.read.ptx.sreg.nctaid.y
// CHECK-COUNT-5: nvvm.shfl.sync bfly {{.*}} : i32 -> i32
// CHECK: llvm.sitofp {{.*}} : i32 to f64
// CHECK-COUNT-8: sin.approx.f32
// CHECK-COUNT-16: llvm.load {{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: ex2.approx.ftz.f32
// CHECK: llvm.sitofp {{.*}} : i32 to f64
// CHECK-COUNT-8: sin.approx.f32
// CHECK: nvvm.barrier0
// CHECK: llvm.fdiv
// CHECK: llvm.store {{.*}} {alignment = 2 : i64} : f16, !llvm.ptr<1>
