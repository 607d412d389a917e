// RUN: qfuse-opt %s --qf-to-gpu="chip=sm_90" | FileCheck %s
// RUN: qfuse-compile %s --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: not grep -E "fma\.|mad\.|\.local" %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// qf.gptq_block_update: one warp per row, 4 rows per 128-thread block, one
// launch per op; the grid, the mode (dynamic groups or static scales) and
// the shape name the kernel. Params bind the op's operands and results.
// CHECK-LABEL: func.func @dynamic
// CHECK: qf.gptq_block_update {{.*}}qf.launches = [#qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<result 0>, #qf.arg<result 1>, #qf.arg<result 2>], batch = 256, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [64, 1, 1], kernel = @qf_kernels::@qf_gptq_block_int4_sf16_g32_r256_b128, params = ["w", "u", "codes", "err", "scales_out"], shared_bytes = 0>]
func.func @dynamic(%w: tensor<256x128xf32>, %u: tensor<128x128xf32>) -> (tensor<256x128xi8>, tensor<256x128xf32>, tensor<256x4xf32>) {
  %c, %e, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<int4, group = 32, scale = f16>, column_offset = 128}
    : (tensor<256x128xf32>, tensor<128x128xf32>) -> (tensor<256x128xi8>, tensor<256x128xf32>, tensor<256x4xf32>)
  return %c, %e, %s : tensor<256x128xi8>, tensor<256x128xf32>, tensor<256x4xf32>
}

// Static scales and zeros (one per column): operands 2 and 3. 30 rows: the
// last block's last two warps leave at the row guard.
// CHECK-LABEL: func.func @static_asym
// CHECK: qf.gptq_block_update {{.*}}qf.launches = [#qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<operand 2>, #qf.arg<operand 3>, #qf.arg<result 0>, #qf.arg<result 1>], batch = 30, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [8, 1, 1], kernel = @qf_kernels::@qf_gptq_block_uint4_sf16_zi_static_r30_b64, params = ["w", "u", "scales", "zeros", "codes", "err"]
func.func @static_asym(%w: tensor<30x64xf32>, %u: tensor<64x64xf32>, %s: tensor<30x64xf32>, %z: tensor<30x64xf32>) -> (tensor<30x64xi8>, tensor<30x64xf32>) {
  %c, %e = qf.gptq_block_update %w, %u scales(%s : tensor<30x64xf32>) zeros(%z : tensor<30x64xf32>) {grid = #qf.enc<uint4, group = 32, scale = f16, zero = int>}
    : (tensor<30x64xf32>, tensor<64x64xf32>) -> (tensor<30x64xi8>, tensor<30x64xf32>)
  return %c, %e : tensor<30x64xi8>, tensor<30x64xf32>
}

// NVFP4: the per-row global scale is the last operand (2 in the dynamic
// mode, 3 after the static scales), bound to the param "global_scale" right
// after the inputs; "_gs" in the kernel name.
// CHECK-LABEL: func.func @nvfp4_dynamic
// CHECK: qf.gptq_block_update {{.*}}qf.launches = [#qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<operand 2>, #qf.arg<result 0>, #qf.arg<result 1>, #qf.arg<result 2>], batch = 256, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [64, 1, 1], kernel = @qf_kernels::@qf_gptq_block_fp4e2m1_se4m3_gs_g16_r256_b128, params = ["w", "u", "global_scale", "codes", "err", "scales_out"], shared_bytes = 0>]
func.func @nvfp4_dynamic(%w: tensor<256x128xf32>, %u: tensor<128x128xf32>, %g: tensor<256xf32>) -> (tensor<256x128xi8>, tensor<256x128xf32>, tensor<256x8xf32>) {
  %c, %e, %s = qf.gptq_block_update %w, %u global_scale(%g : tensor<256xf32>) {grid = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>}
    : (tensor<256x128xf32>, tensor<128x128xf32>) -> (tensor<256x128xi8>, tensor<256x128xf32>, tensor<256x8xf32>)
  return %c, %e, %s : tensor<256x128xi8>, tensor<256x128xf32>, tensor<256x8xf32>
}

// CHECK-LABEL: func.func @nvfp4_static
// CHECK: qf.gptq_block_update {{.*}}qf.launches = [#qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<operand 2>, #qf.arg<operand 3>, #qf.arg<result 0>, #qf.arg<result 1>], batch = 30, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [8, 1, 1], kernel = @qf_kernels::@qf_gptq_block_fp4e2m1_se4m3_gs_static_r30_b64, params = ["w", "u", "scales", "global_scale", "codes", "err"]
func.func @nvfp4_static(%w: tensor<30x64xf32>, %u: tensor<64x64xf32>, %s: tensor<30x64xf32>, %g: tensor<30xf32>) -> (tensor<30x64xi8>, tensor<30x64xf32>) {
  %c, %e = qf.gptq_block_update %w, %u scales(%s : tensor<30x64xf32>) global_scale(%g : tensor<30xf32>) {grid = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>}
    : (tensor<30x64xf32>, tensor<64x64xf32>) -> (tensor<30x64xi8>, tensor<30x64xf32>)
  return %c, %e : tensor<30x64xi8>, tensor<30x64xf32>
}

// The kernel code: group fit (warp max, f64 divide, cvt.rp then up into
// f16), the column's code in f64 (div.rn.f64, cvt.rni = rint), then only
// explicitly rounded f32 operations (mul.rn/sub.rn/div.rn: neither LLVM nor
// ptxas contracts them), and no fma anywhere (checked above).
// CHECK: llvm.func @qf_gptq_block_int4_sf16_g32_r256_b128
// PTX-LABEL: .entry qf_gptq_block_int4_sf16_g32_r256_b128(
// PTX: shfl.sync.bfly.b32
// PTX: div.rn.f64
// PTX: cvt.rp.f32.f64
// PTX: cvt.rn.f16.f32
// PTX: shfl.sync.idx.b32
// PTX: div.rn.f64
// PTX: cvt.rni.f64.f64
// PTX: mul.rn.f32
// PTX: sub.rn.f32
// PTX: div.rn.f32
// PTX: mul.rn.f32
// PTX: sub.rn.f32
// PTX: st.global.b8
// PTX-LABEL: .entry qf_gptq_block_uint4_sf16_zi_static_r30_b64(
// PTX: ld.global.nc.b32
// PTX: cvt.rni.f64.f64
// PTX: add.rn.f64
// PTX: sub.rn.f32
// PTX: mul.rn.f32
// NVFP4, dynamic: the row's global scale loaded once (before the column
// loop), fit's (amax / 6) * g in f64 then to nearest f32 and into E4M3; the
// code's (w * g) / s in f64; the value (e2m1 * s) / g as mul.rn, div.rn.
// PTX-LABEL: .entry qf_gptq_block_fp4e2m1_se4m3_gs_g16_r256_b128(
// PTX: ld.global.nc.b32
// PTX: shfl.sync.bfly.b32
// PTX: div.rn.f64
// PTX: mul.rn.f64
// PTX: cvt.rn.f32.f64
// PTX: shfl.sync.idx.b32
// PTX: mul.rn.f64
// PTX: div.rn.f64
// PTX: cvt.rn.f32.f64
// PTX: mul.rn.f32
// PTX: div.rn.f32
// PTX: sub.rn.f32
// PTX: div.rn.f32
// PTX-LABEL: .entry qf_gptq_block_fp4e2m1_se4m3_gs_static_r30_b64(
// PTX: mul.rn.f64
// PTX: div.rn.f64
// PTX: mul.rn.f32
// PTX: div.rn.f32
// PTXAS-COUNT-4: 0 bytes spill stores, 0 bytes spill loads
