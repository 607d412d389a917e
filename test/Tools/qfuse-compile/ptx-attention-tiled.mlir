// REQUIRES: ptxas
// RUN: qfuse-compile %s --emit=ptx --batch-sizes=1,32,64,512 -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: not grep -q "\.local" %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: qfuse-compile %s --emit=ptx --chip=sm_80 --features=+ptx80 --batch-sizes=1,32,64,512 -o %t80.ptx
// RUN: %ptxas -arch=sm_80 -v %t80.ptx -o %t80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// The tensor-core attention kernels (head_dim 128 and 64, plain and with
// the query rotated) assemble for sm_90 and sm_80 without spills, beside
// the CUDA-core and cache-write kernels of the smaller batches: ldmatrix
// (plain for Q and K, .trans for V), mma.sync.m16n8k16 with f32
// accumulation, cp.async into the two-slot ring.
// CHECK-LABEL: .entry qf_attention_tiled_h32_kv8_d128_s4096(
// CHECK-DAG: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// CHECK-DAG: cp.async.commit_group;
// CHECK-DAG: cp.async.wait_group 1;
// CHECK-DAG: cp.async.wait_group 0;
// CHECK-DAG: bar.sync 0;
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-DAG: ex2.approx.ftz.f32
// CHECK-DAG: div.rn.f32
// CHECK-LABEL: .entry qf_attention_tiled_rotated_query_h32_kv8_d128_s4096_t500000_llama3_f8_lo1_hi4_o8192(
// CHECK-DAG: cvt.rn.f64.s32
// CHECK-DAG: sin.approx.f32
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-LABEL: .entry qf_attention_tiled_h14_kv2_d64_s512(
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-LABEL: .entry qf_attention_tiled_rotated_query_h4_kv2_d64_s256_t500000_llama3_f8_lo1_hi4_o8192(
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTXAS-COUNT-12: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: error

// Llama-3-8B (32 heads, 8 kv heads of 128), plain and rotary.
func.func @llama3_8b(%q: tensor<?x4096xf16>, %k: tensor<?x1024xf16>, %v: tensor<?x1024xf16>, %kc: tensor<4096x1024xf16>, %vc: tensor<4096x1024xf16>, %pos: tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>) {
  %o, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = 32 : i64, num_kv_heads = 8 : i64, head_dim = 128 : i64} : (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>, tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>)
  return %o, %kc1, %vc1 : tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>
}
func.func @llama3_8b_rotary(%q: tensor<?x4096xf16>, %k: tensor<?x1024xf16>, %v: tensor<?x1024xf16>, %kc: tensor<4096x1024xf16>, %vc: tensor<4096x1024xf16>, %pos: tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>) {
  %o, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = 32 : i64, num_kv_heads = 8 : i64, head_dim = 128 : i64, rope_theta = 500000.0 : f64, scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64, original_max_position = 8192 : i64} : (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>, tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>)
  return %o, %kc1, %vc1 : tensor<?x4096xf16>, tensor<4096x1024xf16>, tensor<4096x1024xf16>
}
// Qwen2-0.5B (14 heads, 2 kv heads of 64: G = 7).
func.func @qwen2_small(%q: tensor<?x896xf16>, %k: tensor<?x128xf16>, %v: tensor<?x128xf16>, %kc: tensor<512x128xf16>, %vc: tensor<512x128xf16>, %pos: tensor<?xi32>) -> (tensor<?x896xf16>, tensor<512x128xf16>, tensor<512x128xf16>) {
  %o, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = 14 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64} : (tensor<?x896xf16>, tensor<?x128xf16>, tensor<?x128xf16>, tensor<512x128xf16>, tensor<512x128xf16>, tensor<?xi32>) -> (tensor<?x896xf16>, tensor<512x128xf16>, tensor<512x128xf16>)
  return %o, %kc1, %vc1 : tensor<?x896xf16>, tensor<512x128xf16>, tensor<512x128xf16>
}
// The tiny Llama's attention (4 heads, 2 kv heads of 64, Llama 3 rope).
func.func @tiny_llama(%q: tensor<?x256xf16>, %k: tensor<?x128xf16>, %v: tensor<?x128xf16>, %kc: tensor<256x128xf16>, %vc: tensor<256x128xf16>, %pos: tensor<?xi32>) -> (tensor<?x256xf16>, tensor<256x128xf16>, tensor<256x128xf16>) {
  %o, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64, rope_theta = 500000.0 : f64, scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64, original_max_position = 8192 : i64} : (tensor<?x256xf16>, tensor<?x128xf16>, tensor<?x128xf16>, tensor<256x128xf16>, tensor<256x128xf16>, tensor<?xi32>) -> (tensor<?x256xf16>, tensor<256x128xf16>, tensor<256x128xf16>)
  return %o, %kc1, %vc1 : tensor<?x256xf16>, tensor<256x128xf16>, tensor<256x128xf16>
}
