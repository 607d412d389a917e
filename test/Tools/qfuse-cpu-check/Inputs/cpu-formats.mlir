// Formats the GPU matvec generator does not lower (act_order, 2:4 with
// integer codes and bf16, 2/3/5/7/8-bit codebooks) and scale, zero-point and
// activation types formats.mlir does not use, plus every epilogue, on modest
// shapes (K <= 1024, N <= 512). Shared by the qfuse-cpu-check tests.
func.func @int4_act_order(%x: tensor<?x1024xf16>) -> tensor<?x256xf16> {
  %w = qf.weight_ref "int4_act_order" : !qf.weight<256x1024, #qf.enc<int4, group = 128, scale = f16, act_order>>
  %y = qf.matmul %x, %w : tensor<?x1024xf16>, !qf.weight<256x1024, #qf.enc<int4, group = 128, scale = f16, act_order>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @uint4_act_order_zero(%x: tensor<?x512xf16>) -> tensor<?x128xf16> {
  %w = qf.weight_ref "uint4_act_order_zero" : !qf.weight<128x512, #qf.enc<uint4, group = 64, scale = bf16, zero = int, act_order>>
  %y = qf.matmul %x, %w : tensor<?x512xf16>, !qf.weight<128x512, #qf.enc<uint4, group = 64, scale = bf16, zero = int, act_order>> -> tensor<?x128xf16>
  return %y : tensor<?x128xf16>
}
func.func @sp24_int4(%x: tensor<?x1024xf16>) -> tensor<?x256xf16> {
  %w = qf.weight_ref "sp24_int4" : !qf.weight<256x1024, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>>
  %y = qf.matmul %x, %w : tensor<?x1024xf16>, !qf.weight<256x1024, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @sp24_uint4_zero(%x: tensor<?x512xf16>) -> tensor<?x128xf16> {
  %w = qf.weight_ref "sp24_uint4_zero" : !qf.weight<128x512, #qf.enc<uint4, group = 64, scale = f16, zero = int, sparse = 2:4>>
  %y = qf.matmul %x, %w : tensor<?x512xf16>, !qf.weight<128x512, #qf.enc<uint4, group = 64, scale = f16, zero = int, sparse = 2:4>> -> tensor<?x128xf16>
  return %y : tensor<?x128xf16>
}
func.func @sp24_int8(%x: tensor<?x256xf16>) -> tensor<?x64xf16> {
  %w = qf.weight_ref "sp24_int8" : !qf.weight<64x256, #qf.enc<int8, per_channel, scale = f32, sparse = 2:4>>
  %y = qf.matmul %x, %w : tensor<?x256xf16>, !qf.weight<64x256, #qf.enc<int8, per_channel, scale = f32, sparse = 2:4>> -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}
func.func @sp24_bf16(%x: tensor<?x512xf16>) -> tensor<?x128xf16> {
  %w = qf.weight_ref "sp24_bf16" : !qf.weight<128x512, #qf.enc<bf16, sparse = 2:4>>
  %y = qf.matmul %x, %w : tensor<?x512xf16>, !qf.weight<128x512, #qf.enc<bf16, sparse = 2:4>> -> tensor<?x128xf16>
  return %y : tensor<?x128xf16>
}
func.func @cb2_inline(%x: tensor<?x512xf16>) -> tensor<?x128xf16> {
  %w = qf.weight_ref "cb2_inline" : !qf.weight<128x512, #qf.enc<codebook, bits = 2, table = dense<[-1.0, -0.25, 0.25, 1.0]> : tensor<4xf16>, group = 64, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x512xf16>, !qf.weight<128x512, #qf.enc<codebook, bits = 2, table = dense<[-1.0, -0.25, 0.25, 1.0]> : tensor<4xf16>, group = 64, scale = f16>> -> tensor<?x128xf16>
  return %y : tensor<?x128xf16>
}
func.func @cb3_inline(%x: tensor<?x1024xf16>) -> tensor<?x256xf16> {
  %w = qf.weight_ref "cb3_inline" : !qf.weight<256x1024, #qf.enc<codebook, bits = 3, table = dense<[-1.0, -0.5, -0.25, 0.0, 0.125, 0.25, 0.5, 1.0]> : tensor<8xf32>, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x1024xf16>, !qf.weight<256x1024, #qf.enc<codebook, bits = 3, table = dense<[-1.0, -0.5, -0.25, 0.0, 0.125, 0.25, 0.5, 1.0]> : tensor<8xf32>, group = 128, scale = f16>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @cb5_named(%x: tensor<?x512xf16>) -> tensor<?x96xf16> {
  %w = qf.weight_ref "cb5_named" : !qf.weight<96x512, #qf.enc<codebook, bits = 5, table = "lut5" : f32, per_channel, scale = f32>>
  %y = qf.matmul %x, %w : tensor<?x512xf16>, !qf.weight<96x512, #qf.enc<codebook, bits = 5, table = "lut5" : f32, per_channel, scale = f32>> -> tensor<?x96xf16>
  return %y : tensor<?x96xf16>
}
func.func @cb6_named(%x: tensor<?x512xf16>) -> tensor<?x64xf16> {
  %w = qf.weight_ref "cb6_named" : !qf.weight<64x512, #qf.enc<codebook, bits = 6, table = "lut6" : f32, group = 64, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x512xf16>, !qf.weight<64x512, #qf.enc<codebook, bits = 6, table = "lut6" : f32, group = 64, scale = f16>> -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}
func.func @cb7_named(%x: tensor<?x256xf16>) -> tensor<?x64xf16> {
  %w = qf.weight_ref "cb7_named" : !qf.weight<64x256, #qf.enc<codebook, bits = 7, table = "lut7" : f16, group = 32, scale = bf16>>
  %y = qf.matmul %x, %w : tensor<?x256xf16>, !qf.weight<64x256, #qf.enc<codebook, bits = 7, table = "lut7" : f16, group = 32, scale = bf16>> -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}
func.func @cb8_named(%x: tensor<?x1024xf16>) -> tensor<?x256xf16> {
  %w = qf.weight_ref "cb8_named" : !qf.weight<256x1024, #qf.enc<codebook, bits = 8, table = "lut8" : f16, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x1024xf16>, !qf.weight<256x1024, #qf.enc<codebook, bits = 8, table = "lut8" : f16, group = 128, scale = f16>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @int8_group_bf16(%x: tensor<?x512xf16>) -> tensor<?x200xf16> {
  %w = qf.weight_ref "int8_group_bf16" : !qf.weight<200x512, #qf.enc<int8, group = 64, scale = bf16>>
  %y = qf.matmul %x, %w : tensor<?x512xf16>, !qf.weight<200x512, #qf.enc<int8, group = 64, scale = bf16>> -> tensor<?x200xf16>
  return %y : tensor<?x200xf16>
}
func.func @uint8_float_zero(%x: tensor<?x768xf16>) -> tensor<?x128xf16> {
  %w = qf.weight_ref "uint8_float_zero" : !qf.weight<128x768, #qf.enc<uint8, group = 128, scale = f32, zero = float>>
  %y = qf.matmul %x, %w : tensor<?x768xf16>, !qf.weight<128x768, #qf.enc<uint8, group = 128, scale = f32, zero = float>> -> tensor<?x128xf16>
  return %y : tensor<?x128xf16>
}
func.func @fp8_group_bf16(%x: tensor<?x512xf16>) -> tensor<?x128xf16> {
  %w = qf.weight_ref "fp8_group_bf16" : !qf.weight<128x512, #qf.enc<fp8e4m3, group = 32, scale = bf16>>
  %y = qf.matmul %x, %w : tensor<?x512xf16>, !qf.weight<128x512, #qf.enc<fp8e4m3, group = 32, scale = bf16>> -> tensor<?x128xf16>
  return %y : tensor<?x128xf16>
}
func.func @fp4_f16_scales(%x: tensor<?x512xf16>) -> tensor<?x128xf16> {
  %w = qf.weight_ref "fp4_f16_scales" : !qf.weight<128x512, #qf.enc<fp4e2m1, group = 32, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x512xf16>, !qf.weight<128x512, #qf.enc<fp4e2m1, group = 32, scale = f16>> -> tensor<?x128xf16>
  return %y : tensor<?x128xf16>
}
func.func @nf4_bf16_act(%x: tensor<?x512xbf16>) -> tensor<?x160xbf16> {
  %w = qf.weight_ref "nf4_bf16_act" : !qf.weight<160x512, #qf.enc<nf4, group = 64, scale = f32>>
  %y = qf.matmul %x, %w : tensor<?x512xbf16>, !qf.weight<160x512, #qf.enc<nf4, group = 64, scale = f32>> -> tensor<?x160xbf16>
  return %y : tensor<?x160xbf16>
}
func.func @mxfp4_bf16_act(%x: tensor<?x1024xbf16>) -> tensor<?x128xbf16> {
  %w = qf.weight_ref "mxfp4_bf16_act" : !qf.weight<128x1024, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>>
  %y = qf.matmul %x, %w : tensor<?x1024xbf16>, !qf.weight<128x1024, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>> -> tensor<?x128xbf16>
  return %y : tensor<?x128xbf16>
}

// Epilogues, written as fused ops: bias + residual, silu_mul over separate
// gate and up weights, an RMSNorm prologue, and a static batch.
func.func @bias_residual(%x: tensor<?x512xf16>, %b: tensor<384xf16>, %r: tensor<?x384xf16>) -> tensor<?x384xf16> {
  %w = qf.weight_ref "o_proj" : !qf.weight<384x512, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.fused_matmul %x, %w bias(%b : tensor<384xf16>) residual(%r : tensor<?x384xf16>)
       : tensor<?x512xf16>, !qf.weight<384x512, #qf.enc<int4, group = 128, scale = f16>> -> tensor<?x384xf16>
  return %y : tensor<?x384xf16>
}
func.func @silu_mul(%x: tensor<?x512xf16>) -> tensor<?x256xf16> {
  %w = qf.weight_ref "gate" : !qf.weight<256x512, #qf.enc<uint4, group = 64, scale = f16, zero = int>>
  %u = qf.weight_ref "up" : !qf.weight<256x512, #qf.enc<uint4, group = 64, scale = f16, zero = int>>
  %y = qf.fused_matmul %x, %w up(%u : !qf.weight<256x512, #qf.enc<uint4, group = 64, scale = f16, zero = int>>) {activation = #qf<activation silu_mul>}
       : tensor<?x512xf16>, !qf.weight<256x512, #qf.enc<uint4, group = 64, scale = f16, zero = int>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @norm_silu_residual_bf16(%x: tensor<?x256xbf16>, %g: tensor<256xbf16>, %r: tensor<?x128xbf16>) -> tensor<?x128xbf16> {
  %w = qf.weight_ref "gate" : !qf.weight<128x256, #qf.enc<nf4, group = 64, scale = f32>>
  %u = qf.weight_ref "up" : !qf.weight<128x256, #qf.enc<nf4, group = 64, scale = f32>>
  %y = qf.fused_matmul %x, %w up(%u : !qf.weight<128x256, #qf.enc<nf4, group = 64, scale = f32>>) norm(%g : tensor<256xbf16>) residual(%r : tensor<?x128xbf16>)
       {norm_eps = 1.0e-05 : f32, activation = #qf<activation silu_mul>}
       : tensor<?x256xbf16>, !qf.weight<128x256, #qf.enc<nf4, group = 64, scale = f32>> -> tensor<?x128xbf16>
  return %y : tensor<?x128xbf16>
}
func.func @norm_nvfp4(%x: tensor<?x512xf16>, %g: tensor<512xf16>) -> tensor<?x256xf16> {
  %w = qf.weight_ref "qkv" : !qf.weight<256x512, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>>
  %y = qf.fused_matmul %x, %w norm(%g : tensor<512xf16>) {norm_eps = 1.0e-06 : f32}
       : tensor<?x512xf16>, !qf.weight<256x512, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @static_batch(%x: tensor<5x512xf16>) -> tensor<5x128xf16> {
  %w = qf.weight_ref "static" : !qf.weight<128x512, #qf.enc<int4, group = 64, scale = bf16>>
  %y = qf.matmul %x, %w : tensor<5x512xf16>, !qf.weight<128x512, #qf.enc<int4, group = 64, scale = bf16>> -> tensor<5x128xf16>
  return %y : tensor<5x128xf16>
}
