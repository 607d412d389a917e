// RUN: qfuse-opt %s --qf-to-gpu="chip=sm_90" | FileCheck %s
// RUN: qfuse-compile %s --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: not grep -E "fma\.|mad\.|\.local" %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// qf.gptq_block_update with `values`: the kernel also stores each code's
// value rounded to f16 (cvt.rn.f16.f32, format::floatToHalf), bound to the
// last parameter "values" so that the kernel without it keeps its
// parameters; "_v" in the kernel name.
// CHECK-LABEL: func.func @dynamic_values
// CHECK: qf.gptq_block_update {{.*}}qf.launches = [#qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<result 0>, #qf.arg<result 1>, #qf.arg<result 3>, #qf.arg<result 2>], batch = 256, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [64, 1, 1], kernel = @qf_kernels::@qf_gptq_block_int4_sf16_g32_r256_b128_v, params = ["w", "u", "codes", "err", "scales_out", "values"], shared_bytes = 0>]
func.func @dynamic_values(%w: tensor<256x128xf32>, %u: tensor<128x128xf32>) -> (tensor<256x128xi8>, tensor<256x128xf32>, tensor<256x128xf16>, tensor<256x4xf32>) {
  %c, %e, %v, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<int4, group = 32, scale = f16>}
    : (tensor<256x128xf32>, tensor<128x128xf32>) -> (tensor<256x128xi8>, tensor<256x128xf32>, tensor<256x4xf32>) values tensor<256x128xf16>
  return %c, %e, %v, %s : tensor<256x128xi8>, tensor<256x128xf32>, tensor<256x128xf16>, tensor<256x4xf32>
}

// Zero points: scales_out and zeros_out are results 3 and 4, values 2.
// CHECK-LABEL: func.func @asym_values
// CHECK: args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<result 0>, #qf.arg<result 1>, #qf.arg<result 3>, #qf.arg<result 4>, #qf.arg<result 2>]
// CHECK-SAME: kernel = @qf_kernels::@qf_gptq_block_uint4_sf16_zi_g128_r64_b128_v, params = ["w", "u", "codes", "err", "scales_out", "zeros_out", "values"]
func.func @asym_values(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>) -> (tensor<64x128xi8>, tensor<64x128xf32>, tensor<64x128xf16>, tensor<64x1xf32>, tensor<64x1xf32>) {
  %c, %e, %v, %s, %z = qf.gptq_block_update %w, %u {grid = #qf.enc<uint4, group = 128, scale = f16, zero = int>}
    : (tensor<64x128xf32>, tensor<128x128xf32>) -> (tensor<64x128xi8>, tensor<64x128xf32>, tensor<64x1xf32>, tensor<64x1xf32>) values tensor<64x128xf16>
  return %c, %e, %v, %s, %z : tensor<64x128xi8>, tensor<64x128xf32>, tensor<64x128xf16>, tensor<64x1xf32>, tensor<64x1xf32>
}

// The value stored as f16 after the codes and errors: one cvt.rn.f16.f32
// per lane slot, then a 2-byte store.
// PTX-LABEL: .entry qf_gptq_block_int4_sf16_g32_r256_b128_v(
// PTX: mul.rn.f32
// PTX: st.global.b8
// PTX: st.global.b32
// PTX: cvt.rn.f16.f32
// PTX: st.global.b16
// PTX-LABEL: .entry qf_gptq_block_uint4_sf16_zi_g128_r64_b128_v(
// PTX: cvt.rn.f16.f32
// PTX: st.global.b16
// PTXAS-COUNT-2: 0 bytes spill stores, 0 bytes spill loads
