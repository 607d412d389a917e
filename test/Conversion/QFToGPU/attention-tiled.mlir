// RUN: qfuse-opt %s --qf-to-gpu="chip=sm_90 batch-sizes=16,32,512" | FileCheck %s
// RUN: qfuse-opt %s --qf-to-gpu="chip=sm_80 batch-sizes=512" | FileCheck %s --check-prefix=SM80
// RUN: qfuse-opt %s --qf-tiled-attention=false --qf-to-gpu="chip=sm_90 batch-sizes=512" | FileCheck %s --check-prefix=OFF

// With --qf-tiled-attention=false every batch keeps the CUDA-core kernel.
// OFF-NOT: qf_attention_tiled

// From batch 32 (kTiledFromBatch) the attention of the cache runs on the
// tensor cores for head_dim 64 and 128: qf_attention_tiled_*, a block of
// 128 threads per (kv head, run of 64 / G query rows), grid (KV, ceil(M /
// rows)), 80 KB (D = 128) or 40 KB (D = 64) of dynamic shared memory, and
// the batch as the i32 `rows`. Batch 16 keeps the CUDA-core kernel, grid
// (heads, M); so does head_dim 256 at any batch. The cache writes are
// unchanged.
// CHECK-LABEL: func.func @llama3_8b
// CHECK: qf.attention {{.*}}qf.launches = [
// CHECK-SAME: batch = 16, block = [512, 1, 1], dynamic_shared_bytes = 0, grid = [32, 16, 1], kernel = @qf_kernels::@qf_attention_h32_kv8_d128_s4096,
// CHECK-SAME: kernel = @qf_kernels::@qf_kv_cache_write_w1024_s4096,
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 3>, #qf.arg<operand 4>, #qf.arg<operand 5>, #qf.arg<result 0>, #qf.arg<i32 32>], batch = 32, block = [128, 1, 1], dynamic_shared_bytes = 81920, grid = [8, 2, 1], kernel = @qf_kernels::@qf_attention_tiled_h32_kv8_d128_s4096, params = ["query", "key_cache", "value_cache", "positions", "out", "rows"], shared_bytes = 0>,
// CHECK-SAME: kernel = @qf_kernels::@qf_kv_cache_write_w1024_s4096,
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 3>, #qf.arg<operand 4>, #qf.arg<operand 5>, #qf.arg<result 0>, #qf.arg<i32 512>], batch = 512, block = [128, 1, 1], dynamic_shared_bytes = 81920, grid = [8, 32, 1], kernel = @qf_kernels::@qf_attention_tiled_h32_kv8_d128_s4096,
// SM80-LABEL: func.func @llama3_8b
// SM80: batch = 512, block = [128, 1, 1], dynamic_shared_bytes = 81920, grid = [8, 32, 1], kernel = @qf_kernels::@qf_attention_tiled_h32_kv8_d128_s4096,
func.func @llama3_8b(%q: tensor<?x4096xf16>, %k: tensor<?x1024xf16>, %v: tensor<?x1024xf16>, %kc: tensor<4096x1024xf16>, %vc: tensor<4096x1024xf16>, %pos: tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>) {
  %o, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = 32 : i64, num_kv_heads = 8 : i64, head_dim = 128 : i64} : (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>, tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>)
  return %o, %kc1, %vc1 : tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>
}

// The split rotary form: the rotated rows into the cache, then the tiled
// kernel with its query rotated.
// CHECK-LABEL: func.func @llama3_8b_rotary
// CHECK: qf.attention {{.*}}qf.launches = [
// CHECK-SAME: batch = 16, {{.*}}kernel = @qf_kernels::@qf_rotary_attention_h32_kv8_d128_s4096_t500000_llama3_f8_lo1_hi4_o8192,
// CHECK-SAME: batch = 32, block = [32, 1, 1], dynamic_shared_bytes = 0, grid = [8, 32, 1], kernel = @qf_kernels::@qf_rotary_kv_cache_write_kv8_d128_s4096_t500000_llama3_f8_lo1_hi4_o8192,
// CHECK-SAME: batch = 32, block = [128, 1, 1], dynamic_shared_bytes = 81920, grid = [8, 2, 1], kernel = @qf_kernels::@qf_attention_tiled_rotated_query_h32_kv8_d128_s4096_t500000_llama3_f8_lo1_hi4_o8192,
func.func @llama3_8b_rotary(%q: tensor<?x4096xf16>, %k: tensor<?x1024xf16>, %v: tensor<?x1024xf16>, %kc: tensor<4096x1024xf16>, %vc: tensor<4096x1024xf16>, %pos: tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>) {
  %o, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = 32 : i64, num_kv_heads = 8 : i64, head_dim = 128 : i64, rope_theta = 500000.0 : f64, scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64, original_max_position = 8192 : i64} : (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>, tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>)
  return %o, %kc1, %vc1 : tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>
}

// head_dim 64 and G = 7 (Qwen2-0.5B: 14 heads, 2 kv heads): 9 rows x 7
// heads per block (pair 63 idle), grid (2, ceil(M / 9)).
// CHECK-LABEL: func.func @qwen2_small
// CHECK: qf.attention {{.*}}qf.launches = [
// CHECK-SAME: batch = 32, block = [128, 1, 1], dynamic_shared_bytes = 40960, grid = [2, 4, 1], kernel = @qf_kernels::@qf_attention_tiled_h14_kv2_d64_s512,
// CHECK-SAME: batch = 512, block = [128, 1, 1], dynamic_shared_bytes = 40960, grid = [2, 57, 1], kernel = @qf_kernels::@qf_attention_tiled_h14_kv2_d64_s512,
func.func @qwen2_small(%q: tensor<?x896xf16>, %k: tensor<?x128xf16>, %v: tensor<?x128xf16>, %kc: tensor<512x128xf16>, %vc: tensor<512x128xf16>, %pos: tensor<?xi32>) -> (tensor<?x896xf16>, tensor<512x128xf16>, tensor<512x128xf16>) {
  %o, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = 14 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64} : (tensor<?x896xf16>, tensor<?x128xf16>, tensor<?x128xf16>, tensor<512x128xf16>, tensor<512x128xf16>, tensor<?xi32>) -> (tensor<?x896xf16>, tensor<512x128xf16>, tensor<512x128xf16>)
  return %o, %kc1, %vc1 : tensor<?x896xf16>, tensor<512x128xf16>, tensor<512x128xf16>
}

// head_dim 256: the CUDA-core kernel at every batch.
// CHECK-LABEL: func.func @head_dim_256
// CHECK: qf.attention {{.*}}qf.launches = [
// CHECK-SAME: batch = 32, block = [512, 1, 1], dynamic_shared_bytes = 0, grid = [8, 32, 1], kernel = @qf_kernels::@qf_attention_h8_kv4_d256_s1024,
// CHECK-SAME: batch = 512, block = [512, 1, 1], dynamic_shared_bytes = 0, grid = [8, 512, 1], kernel = @qf_kernels::@qf_attention_h8_kv4_d256_s1024,
func.func @head_dim_256(%q: tensor<?x2048xf16>, %k: tensor<?x1024xf16>, %v: tensor<?x1024xf16>, %kc: tensor<1024x1024xf16>, %vc: tensor<1024x1024xf16>, %pos: tensor<?xi32>) -> (tensor<?x2048xf16>, tensor<1024x1024xf16>, tensor<1024x1024xf16>) {
  %o, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = 8 : i64, num_kv_heads = 4 : i64, head_dim = 256 : i64} : (tensor<?x2048xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<1024x1024xf16>, tensor<1024x1024xf16>, tensor<?xi32>) -> (tensor<?x2048xf16>, tensor<1024x1024xf16>, tensor<1024x1024xf16>)
  return %o, %kc1, %vc1 : tensor<?x2048xf16>, tensor<1024x1024xf16>, tensor<1024x1024xf16>
}

// The kernel (D = 128): the block's key count and the warp's smallest
// row limit reduced over a warp (i32 shuffles), the first K/V tile's 16 cp.async copies (8 chunks each of K
// and V per thread, .cg, zero-filled past n) issued, the Q tile staged in
// shared memory (16-byte stores), a barrier, the 8 Q fragments by
// ldmatrix. Then per key tile: the next tile's copies, wait for all but
// that group, a barrier; S = Q K^T in 64 mma.sync.m16n8k16 (f16, f32
// accumulation) on ldmatrix'd K fragments; the scores scaled, and masked
// in a branch taken only by a tile past the warp's smallest limit; the row
// max over the quad
// (f32 shuffles xor 1, 2), ex2; P V in 64 mma.sync on ldmatrix.trans'd V
// fragments; a barrier. At the end the row sums over the quad and out =
// acc / l stored two halves at a time.
// CHECK-LABEL: llvm.func @qf_attention_tiled_h32_kv8_d128_s4096(
// CHECK-SAME: %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias}, %{{.*}}: i32)
// CHECK-SAME: nvvm.maxntid = array<i32: 128, 1, 1>
// CHECK: llvm.mlir.addressof @qf_attention_tiled_h32_kv8_d128_s4096_smem : !llvm.ptr<3>
// CHECK: nvvm.read.ptx.sreg.ctaid.y
// CHECK-COUNT-10: nvvm.shfl.sync bfly {{.*}} : i32 -> i32
// CHECK-COUNT-16: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg, {{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-8: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK-COUNT-16: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.barrier0
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK-COUNT-64: nvvm.mma.sync A[{{.*}}]  B[{{.*}}]  C[{{.*}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: llvm.icmp "sgt"
// CHECK: llvm.cond_br
// CHECK-COUNT-32: llvm.select
// CHECK-COUNT-4: nvvm.shfl.sync bfly {{.*}} : f32 -> f32
// CHECK: ex2.approx.ftz.f32
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>, num = 4 : i32
// CHECK-COUNT-64: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: nvvm.barrier0
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-COUNT-4: nvvm.shfl.sync bfly {{.*}} : f32 -> f32
// CHECK: llvm.fdiv
// CHECK: llvm.store {{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
// CHECK: llvm.return

// The rotary form's kernel rotates the staged query by its row's position
// (f64 angle, 8 sin per chunk), then the same loop.
// CHECK-LABEL: llvm.func @qf_attention_tiled_rotated_query_h32_kv8_d128_s4096_t500000_llama3_f8_lo1_hi4_o8192(
// CHECK: nvvm.cp.async.commit.group
// CHECK: llvm.sitofp {{.*}} : i32 to f64
// CHECK-COUNT-8: sin.approx.f32
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-NOT: llvm.sitofp
// CHECK: nvvm.mma.sync
// CHECK: llvm.return
