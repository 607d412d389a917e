// RUN: qfuse-opt %s --qf-tiled-attention=false --qf-to-gpu="chip=sm_90 batch-sizes=16,32" | FileCheck %s

// The rotary form of qf.attention from batch 32 (kRotarySplitFromBatch),
// with the CUDA-core kernel (attention-tiled.mlir has the tiled one):
// two launches instead of one. Batch 16 keeps the one-launch form; at
// batch 32 the first launch, grid (kv heads, M) of 32 threads, writes the
// rotated key rows and the value rows into the caches (it reads key, value
// and positions and writes both caches), and the second is the plain
// attention kernel with its query rotated: grid (heads, M), 512 threads,
// reading the query, both caches (read only) and the positions.
// CHECK-LABEL: func.func @llama3_8b
// CHECK: qf.attention {{.*}}qf.launches = [
// CHECK-SAME: #qf.launch<{{.*}}batch = 16, block = [512, 1, 1], {{.*}}grid = [32, 16, 1], kernel = @qf_kernels::@qf_rotary_attention_h32_kv8_d128_s4096_t500000_llama3_f8_lo1_hi4_o8192,
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 1>, #qf.arg<operand 2>, #qf.arg<operand 3>, #qf.arg<operand 4>, #qf.arg<operand 5>], batch = 32, block = [32, 1, 1], dynamic_shared_bytes = 0, grid = [8, 32, 1], kernel = @qf_kernels::@qf_rotary_kv_cache_write_kv8_d128_s4096_t500000_llama3_f8_lo1_hi4_o8192, params = ["key", "value", "key_cache", "value_cache", "positions"], shared_bytes = 0>,
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 3>, #qf.arg<operand 4>, #qf.arg<operand 5>, #qf.arg<result 0>], batch = 32, block = [512, 1, 1], dynamic_shared_bytes = 0, grid = [32, 32, 1], kernel = @qf_kernels::@qf_attention_rotated_query_h32_kv8_d128_s4096_t500000_llama3_f8_lo1_hi4_o8192, params = ["query", "key_cache", "value_cache", "positions", "out"], shared_bytes = 8320>]
func.func @llama3_8b(%q: tensor<?x4096xf16>, %k: tensor<?x1024xf16>, %v: tensor<?x1024xf16>, %kc: tensor<4096x1024xf16>, %vc: tensor<4096x1024xf16>, %pos: tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>) {
  %o, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = 32 : i64, num_kv_heads = 8 : i64, head_dim = 128 : i64, rope_theta = 500000.0 : f64, scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64, original_max_position = 8192 : i64} : (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>, tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>)
  return %o, %kc1, %vc1 : tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>
}

// The cache write: block (kv head, m) reads positions[m], rotates the key
// chunk by it (f64 angle, 8 sin/cos) and stores it, then copies the value
// chunk; no positions contract, no barrier.
// CHECK-LABEL: llvm.func @qf_rotary_kv_cache_write_kv8_d128_s4096_t500000_llama3_f8_lo1_hi4_o8192(
// CHECK-SAME: %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias}, %{{.*}}: !llvm.ptr<1> {llvm.noalias}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly})
// CHECK-SAME: nvvm.maxntid = array<i32: 32, 1, 1>
// CHECK: nvvm.read.ptx.sreg.ctaid.y
// CHECK: llvm.sitofp {{.*}} : i32 to f64
// CHECK-COUNT-8: sin.approx.f32
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.return

// The attention: the query chunk rotated by positions[m], then the cache
// rows stream in 16-byte invariant loads (no positions contract: no
// nctaid.y loop, no new rows from the operands).
// CHECK-LABEL: llvm.func @qf_attention_rotated_query_h32_kv8_d128_s4096_t500000_llama3_f8_lo1_hi4_o8192(
// CHECK-SAME: %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias})
// CHECK-SAME: nvvm.maxntid = array<i32: 512, 1, 1>
// CHECK-NOT: nctaid.y
// CHECK: llvm.sitofp {{.*}} : i32 to f64
// CHECK-COUNT-8: sin.approx.f32
// CHECK-NOT: llvm.sitofp
// CHECK-COUNT-16: llvm.load {{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: ex2.approx.ftz.f32
// CHECK-NOT: llvm.sitofp
// CHECK: nvvm.barrier0
// CHECK: llvm.return
