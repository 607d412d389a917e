// RUN: qfuse-opt %s --qf-to-gpu="chip=sm_90 batch-sizes=1,8" | FileCheck %s

// A thread rotates 8 pairs (i, i + 64) of one head with two 16-byte loads:
// q (32 heads of 128) is 256 threads, k (8 heads) 64; grid.y is the row.
// Llama 3 scaling is part of the kernel and table names.
// CHECK-LABEL: func.func @llama3
// CHECK: qf.rotary {{.*}}qf.launches = [
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<result 0>], batch = 1, block = [256, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@qf_rotary_w4096_d128_t500000_llama3_f8_lo1_hi4_o8192, params = ["x", "positions", "y"], shared_bytes = 0>,
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<result 0>], batch = 8, block = [256, 1, 1], dynamic_shared_bytes = 0, grid = [1, 8, 1], kernel = @qf_kernels::@qf_rotary_w4096_d128_t500000_llama3_f8_lo1_hi4_o8192,
// CHECK: qf.rotary {{.*}}qf.launches = [
// CHECK-SAME: batch = 1, block = [64, 1, 1], {{.*}}kernel = @qf_kernels::@qf_rotary_w1024_d128_t500000_llama3_f8_lo1_hi4_o8192,
func.func @llama3(%q: tensor<?x4096xf16>, %k: tensor<?x1024xf16>, %pos: tensor<?xi32>) -> (tensor<?x4096xf16>, tensor<?x1024xf16>) {
  %qr = qf.rotary %q, %pos {head_dim = 128 : i64, theta = 500000.0 : f64, scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64, original_max_position = 8192 : i64} : tensor<?x4096xf16>, tensor<?xi32> -> tensor<?x4096xf16>
  %kr = qf.rotary %k, %pos {head_dim = 128 : i64, theta = 500000.0 : f64, scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64, original_max_position = 8192 : i64} : tensor<?x1024xf16>, tensor<?xi32> -> tensor<?x1024xf16>
  return %qr, %kr : tensor<?x4096xf16>, tensor<?x1024xf16>
}

// head_dim 8: 4 pairs per head, one 8-byte vector each; 2 chunks per row in
// a warp, the rest of the warp guarded off.
// CHECK-LABEL: func.func @small
// CHECK: qf.rotary {{.*}}batch = 3, block = [32, 1, 1], {{.*}}grid = [1, 3, 1], kernel = @qf_kernels::@qf_rotary_w16_d8_t10000,
// CHECK: qf.rotary {{.*}}kernel = @qf_kernels::@qf_rotary_w16_d8_t10000_llama3_f8_lo1_hi4_o1024,
func.func @small(%x: tensor<3x16xf16>, %pos: tensor<3xi32>) -> (tensor<3x16xf16>, tensor<3x16xf16>) {
  %a = qf.rotary %x, %pos {head_dim = 8 : i64, theta = 10000.0 : f64} : tensor<3x16xf16>, tensor<3xi32> -> tensor<3x16xf16>
  %b = qf.rotary %x, %pos {head_dim = 8 : i64, theta = 10000.0 : f64, scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64, original_max_position = 1024 : i64} : tensor<3x16xf16>, tensor<3xi32> -> tensor<3x16xf16>
  return %a, %b : tensor<3x16xf16>, tensor<3x16xf16>
}

// inv_freq tables, computed at compile time in double. theta 10000, d 8:
// 10000^(-2i/8). With Llama 3 scaling (factor 8, low 1, high 4, original
// 1024), wavelengths 2 pi / f = 6.3, 63, 628, 6283 against 1024 / 4 = 256
// and 1024 / 1 = 1024: the first two stay, the last is divided by 8, and
// 628 is smoothed with s = (1024 / 628.3 - 1) / 3 = 0.2099:
// (1 - s) 0.01 / 8 + s 0.01 = 0.0030868.
// CHECK: gpu.module @qf_kernels
// CHECK-DAG: llvm.mlir.global internal constant @qf_rope_inv_freq_d8_t10000(dense<[1.000000e+00, 1.000000e-01, 1.000000e-02, 1.000000e-03]> : tensor<4xf64>) {addr_space = 1 : i32, alignment = 16 : i64}
// CHECK-DAG: llvm.mlir.global internal constant @qf_rope_inv_freq_d8_t10000_llama3_f8_lo1_hi4_o1024(dense<[1.000000e+00, 1.000000e-01, 0.0030867609670{{[0-9]*}}, 1.250000e-04]> : tensor<4xf64>)
// q and k share one table.
// CHECK-DAG: llvm.mlir.global internal constant @qf_rope_inv_freq_d128_t500000_llama3_f8_lo1_hi4_o8192(dense<[1.000000e+00, 0.8146172338565{{[0-9]*}}, {{.*}}> : tensor<64xf64>)
// CHECK-NOT: llvm.mlir.global internal constant @qf_rope_inv_freq

// The angle is formed and reduced mod 2 pi in f64, then sin.approx and
// cos.approx run on r in [-pi, pi].
// CHECK-LABEL: llvm.func @qf_rotary_w4096_d128_t500000_llama3_f8_lo1_hi4_o8192(
// CHECK: %[[ROW:.*]] = nvvm.read.ptx.sreg.ctaid.y
// CHECK-COUNT-2: llvm.load {{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.mlir.addressof @qf_rope_inv_freq_d128_t500000_llama3_f8_lo1_hi4_o8192
// CHECK-COUNT-4: llvm.load {{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<2xf64>
// CHECK: llvm.sitofp %{{.*}} : i32 to f64
// CHECK: llvm.fmul {{.*}} : f64
// CHECK: llvm.intr.floor
// CHECK: llvm.intr.fma({{.*}}) : (f64, f64, f64) -> f64
// CHECK: llvm.fptrunc {{.*}} : f64 to f32
// CHECK: "sin.approx.f32 $0, $1;"
// CHECK: "cos.approx.f32 $0, $1;"
// CHECK-COUNT-2: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK-LABEL: llvm.func @qf_rotary_w16_d8_t10000(
// CHECK: llvm.icmp "ult" %{{.*}}, %{{.*}} : i32
// CHECK: llvm.load {{.*}} invariant {alignment = 8 : i64} : !llvm.ptr<1> -> vector<2xi32>
