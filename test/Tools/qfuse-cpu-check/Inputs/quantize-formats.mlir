// qf.quantize into every encoding the generated quantizer takes, from f16,
// bf16 and f32 weights, per channel and grouped (a partial last group too),
// act_order and 2:4.
!f16 = tensor<24x256xf16>
func.func @int4_g128(%d: !f16) -> !qf.weight<24x256, #qf.enc<int4, group = 128, scale = f16>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<int4, group = 128, scale = f16>>
  return %w : !qf.weight<24x256, #qf.enc<int4, group = 128, scale = f16>>
}
func.func @int4_g32_bf16(%d: tensor<24x256xbf16>) -> !qf.weight<24x256, #qf.enc<int4, group = 32, scale = bf16>> {
  %w = qf.quantize %d : tensor<24x256xbf16> -> !qf.weight<24x256, #qf.enc<int4, group = 32, scale = bf16>>
  return %w : !qf.weight<24x256, #qf.enc<int4, group = 32, scale = bf16>>
}
func.func @int8_channel(%d: !f16) -> !qf.weight<24x256, #qf.enc<int8, per_channel, scale = f16>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<int8, per_channel, scale = f16>>
  return %w : !qf.weight<24x256, #qf.enc<int8, per_channel, scale = f16>>
}
func.func @int8_g64_f32(%d: tensor<24x256xf32>) -> !qf.weight<24x256, #qf.enc<int8, group = 64, scale = f32>> {
  %w = qf.quantize %d : tensor<24x256xf32> -> !qf.weight<24x256, #qf.enc<int8, group = 64, scale = f32>>
  return %w : !qf.weight<24x256, #qf.enc<int8, group = 64, scale = f32>>
}
func.func @uint4_int_zero(%d: !f16) -> !qf.weight<24x256, #qf.enc<uint4, group = 64, scale = f16, zero = int>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<uint4, group = 64, scale = f16, zero = int>>
  return %w : !qf.weight<24x256, #qf.enc<uint4, group = 64, scale = f16, zero = int>>
}
func.func @uint4_int_zero_3groups(%d: tensor<24x192xbf16>) -> !qf.weight<24x192, #qf.enc<uint4, group = 64, scale = bf16, zero = int>> {
  %w = qf.quantize %d : tensor<24x192xbf16> -> !qf.weight<24x192, #qf.enc<uint4, group = 64, scale = bf16, zero = int>>
  return %w : !qf.weight<24x192, #qf.enc<uint4, group = 64, scale = bf16, zero = int>>
}
func.func @uint4_channel_zero(%d: !f16) -> !qf.weight<24x256, #qf.enc<uint4, per_channel, scale = f16, zero = int>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<uint4, per_channel, scale = f16, zero = int>>
  return %w : !qf.weight<24x256, #qf.enc<uint4, per_channel, scale = f16, zero = int>>
}
func.func @uint8_int_zero(%d: !f16) -> !qf.weight<24x256, #qf.enc<uint8, group = 128, scale = f16, zero = int>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<uint8, group = 128, scale = f16, zero = int>>
  return %w : !qf.weight<24x256, #qf.enc<uint8, group = 128, scale = f16, zero = int>>
}
func.func @uint4_float_zero(%d: !f16) -> !qf.weight<24x256, #qf.enc<uint4, group = 128, scale = f16, zero = float>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<uint4, group = 128, scale = f16, zero = float>>
  return %w : !qf.weight<24x256, #qf.enc<uint4, group = 128, scale = f16, zero = float>>
}
func.func @uint8_float_zero_bf16(%d: tensor<24x256xbf16>) -> !qf.weight<24x256, #qf.enc<uint8, group = 64, scale = bf16, zero = float>> {
  %w = qf.quantize %d : tensor<24x256xbf16> -> !qf.weight<24x256, #qf.enc<uint8, group = 64, scale = bf16, zero = float>>
  return %w : !qf.weight<24x256, #qf.enc<uint8, group = 64, scale = bf16, zero = float>>
}
func.func @fp8_channel(%d: !f16) -> !qf.weight<24x256, #qf.enc<fp8e4m3, per_channel, scale = f32>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<fp8e4m3, per_channel, scale = f32>>
  return %w : !qf.weight<24x256, #qf.enc<fp8e4m3, per_channel, scale = f32>>
}
func.func @fp8_g128_f16(%d: tensor<24x256xbf16>) -> !qf.weight<24x256, #qf.enc<fp8e4m3, group = 128, scale = f16>> {
  %w = qf.quantize %d : tensor<24x256xbf16> -> !qf.weight<24x256, #qf.enc<fp8e4m3, group = 128, scale = f16>>
  return %w : !qf.weight<24x256, #qf.enc<fp8e4m3, group = 128, scale = f16>>
}
func.func @mxfp4(%d: !f16) -> !qf.weight<24x256, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>>
  return %w : !qf.weight<24x256, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>>
}
func.func @mxfp4_bf16(%d: tensor<24x256xbf16>) -> !qf.weight<24x256, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>> {
  %w = qf.quantize %d : tensor<24x256xbf16> -> !qf.weight<24x256, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>>
  return %w : !qf.weight<24x256, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>>
}
func.func @fp4_f16_scale(%d: !f16) -> !qf.weight<24x256, #qf.enc<fp4e2m1, group = 16, scale = f16>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<fp4e2m1, group = 16, scale = f16>>
  return %w : !qf.weight<24x256, #qf.enc<fp4e2m1, group = 16, scale = f16>>
}
func.func @nf4(%d: !f16) -> !qf.weight<24x256, #qf.enc<nf4, group = 64, scale = f32>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<nf4, group = 64, scale = f32>>
  return %w : !qf.weight<24x256, #qf.enc<nf4, group = 64, scale = f32>>
}
func.func @nf4_bf16(%d: tensor<24x256xbf16>) -> !qf.weight<24x256, #qf.enc<nf4, group = 64, scale = bf16>> {
  %w = qf.quantize %d : tensor<24x256xbf16> -> !qf.weight<24x256, #qf.enc<nf4, group = 64, scale = bf16>>
  return %w : !qf.weight<24x256, #qf.enc<nf4, group = 64, scale = bf16>>
}
func.func @cb3_inline(%d: !f16) -> !qf.weight<24x256, #qf.enc<codebook, bits = 3, table = dense<[-1.0, -0.5, -0.25, 0.0, 0.125, 0.25, 0.5, 1.0]> : tensor<8xf32>, group = 128, scale = f16>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<codebook, bits = 3, table = dense<[-1.0, -0.5, -0.25, 0.0, 0.125, 0.25, 0.5, 1.0]> : tensor<8xf32>, group = 128, scale = f16>>
  return %w : !qf.weight<24x256, #qf.enc<codebook, bits = 3, table = dense<[-1.0, -0.5, -0.25, 0.0, 0.125, 0.25, 0.5, 1.0]> : tensor<8xf32>, group = 128, scale = f16>>
}
func.func @cb2_inline_dup(%d: !f16) -> !qf.weight<24x256, #qf.enc<codebook, bits = 2, table = dense<[0.5, -1.0, 0.5, 1.0]> : tensor<4xf16>, per_channel, scale = f32>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<codebook, bits = 2, table = dense<[0.5, -1.0, 0.5, 1.0]> : tensor<4xf16>, per_channel, scale = f32>>
  return %w : !qf.weight<24x256, #qf.enc<codebook, bits = 2, table = dense<[0.5, -1.0, 0.5, 1.0]> : tensor<4xf16>, per_channel, scale = f32>>
}
// NVFP4: the global scale from the whole tensor's largest magnitude.
func.func @nvfp4(%d: !f16) -> !qf.weight<24x256, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>>
  return %w : !qf.weight<24x256, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>>
}
func.func @nvfp4_bf16(%d: tensor<24x256xbf16>) -> !qf.weight<24x256, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>> {
  %w = qf.quantize %d : tensor<24x256xbf16> -> !qf.weight<24x256, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>>
  return %w : !qf.weight<24x256, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>>
}
func.func @nvfp4_f32(%d: tensor<24x208xf32>) -> !qf.weight<24x208, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>> {
  %w = qf.quantize %d : tensor<24x208xf32> -> !qf.weight<24x208, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>>
  return %w : !qf.weight<24x208, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>>
}
// act_order without a g_idx: consecutive groups, and the g_idx component.
func.func @int4_act_order(%d: !f16) -> !qf.weight<24x256, #qf.enc<int4, group = 128, scale = f16, act_order>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<int4, group = 128, scale = f16, act_order>>
  return %w : !qf.weight<24x256, #qf.enc<int4, group = 128, scale = f16, act_order>>
}
func.func @uint4_act_order_bf16(%d: tensor<24x192xbf16>) -> !qf.weight<24x192, #qf.enc<uint4, group = 64, scale = bf16, zero = int, act_order>> {
  %w = qf.quantize %d : tensor<24x192xbf16> -> !qf.weight<24x192, #qf.enc<uint4, group = 64, scale = bf16, zero = int, act_order>>
  return %w : !qf.weight<24x192, #qf.enc<uint4, group = 64, scale = bf16, zero = int, act_order>>
}
// 2:4: the kept two of each quad (select24's ties) and the meta component.
func.func @int4_sparse(%d: !f16) -> !qf.weight<24x256, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>>
  return %w : !qf.weight<24x256, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>>
}
func.func @uint4_sparse_bf16(%d: tensor<24x256xbf16>) -> !qf.weight<24x256, #qf.enc<uint4, group = 64, scale = bf16, zero = int, sparse = 2:4>> {
  %w = qf.quantize %d : tensor<24x256xbf16> -> !qf.weight<24x256, #qf.enc<uint4, group = 64, scale = bf16, zero = int, sparse = 2:4>>
  return %w : !qf.weight<24x256, #qf.enc<uint4, group = 64, scale = bf16, zero = int, sparse = 2:4>>
}
func.func @uint8_float_zero_sparse(%d: !f16) -> !qf.weight<24x256, #qf.enc<uint8, group = 64, scale = f16, zero = float, sparse = 2:4>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<uint8, group = 64, scale = f16, zero = float, sparse = 2:4>>
  return %w : !qf.weight<24x256, #qf.enc<uint8, group = 64, scale = f16, zero = float, sparse = 2:4>>
}
// Per channel with K = 4 (mod 8): the last meta byte holds one quad.
func.func @int8_channel_sparse_f32(%d: tensor<24x196xf32>) -> !qf.weight<24x196, #qf.enc<int8, per_channel, scale = f32, sparse = 2:4>> {
  %w = qf.quantize %d : tensor<24x196xf32> -> !qf.weight<24x196, #qf.enc<int8, per_channel, scale = f32, sparse = 2:4>>
  return %w : !qf.weight<24x196, #qf.enc<int8, per_channel, scale = f32, sparse = 2:4>>
}
func.func @fp8_sparse(%d: !f16) -> !qf.weight<24x256, #qf.enc<fp8e4m3, group = 32, scale = f32, sparse = 2:4>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<fp8e4m3, group = 32, scale = f32, sparse = 2:4>>
  return %w : !qf.weight<24x256, #qf.enc<fp8e4m3, group = 32, scale = f32, sparse = 2:4>>
}
// Both: GPTQ's act_order with 2:4 has consecutive groups at load too.
func.func @uint4_act_order_sparse(%d: !f16) -> !qf.weight<24x256, #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order, sparse = 2:4>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order, sparse = 2:4>>
  return %w : !qf.weight<24x256, #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order, sparse = 2:4>>
}
// Groups whose codes, 2:4 positions or zero points do not fill whole bytes:
// a unit spans two groups (K = 4 (mod 8) ends rows on half a meta byte and
// the last unit on one group; uint8 zero points: two bytes per unit).
func.func @int8_g4_sparse(%d: tensor<24x196xf16>) -> !qf.weight<24x196, #qf.enc<int8, group = 4, scale = f16, sparse = 2:4>> {
  %w = qf.quantize %d : tensor<24x196xf16> -> !qf.weight<24x196, #qf.enc<int8, group = 4, scale = f16, sparse = 2:4>>
  return %w : !qf.weight<24x196, #qf.enc<int8, group = 4, scale = f16, sparse = 2:4>>
}
func.func @uint4_g4_sparse_zero(%d: tensor<24x256xbf16>) -> !qf.weight<24x256, #qf.enc<uint4, group = 4, scale = bf16, zero = int, sparse = 2:4>> {
  %w = qf.quantize %d : tensor<24x256xbf16> -> !qf.weight<24x256, #qf.enc<uint4, group = 4, scale = bf16, zero = int, sparse = 2:4>>
  return %w : !qf.weight<24x256, #qf.enc<uint4, group = 4, scale = bf16, zero = int, sparse = 2:4>>
}
func.func @uint8_g4_sparse_zero(%d: tensor<24x196xf32>) -> !qf.weight<24x196, #qf.enc<uint8, group = 4, scale = f16, zero = int, sparse = 2:4>> {
  %w = qf.quantize %d : tensor<24x196xf32> -> !qf.weight<24x196, #qf.enc<uint8, group = 4, scale = f16, zero = int, sparse = 2:4>>
  return %w : !qf.weight<24x196, #qf.enc<uint8, group = 4, scale = f16, zero = int, sparse = 2:4>>
}
func.func @codebook3_g4(%d: tensor<24x256xf16>) -> !qf.weight<24x256, #qf.enc<codebook, bits = 3, table = dense<[-4.0, -3.0, -2.0, -1.0, 0.0, 1.5, 2.0, 3.0]> : tensor<8xf16>, group = 4, scale = f16>> {
  %w = qf.quantize %d : tensor<24x256xf16> -> !qf.weight<24x256, #qf.enc<codebook, bits = 3, table = dense<[-4.0, -3.0, -2.0, -1.0, 0.0, 1.5, 2.0, 3.0]> : tensor<8xf16>, group = 4, scale = f16>>
  return %w : !qf.weight<24x256, #qf.enc<codebook, bits = 3, table = dense<[-4.0, -3.0, -2.0, -1.0, 0.0, 1.5, 2.0, 3.0]> : tensor<8xf16>, group = 4, scale = f16>>
}
func.func @codebook3_g4_bf16(%d: tensor<24x200xbf16>) -> !qf.weight<24x200, #qf.enc<codebook, bits = 3, table = dense<[-4.0, -3.0, -2.0, -1.0, 0.0, 1.5, 2.0, 3.0]> : tensor<8xf16>, group = 4, scale = bf16>> {
  %w = qf.quantize %d : tensor<24x200xbf16> -> !qf.weight<24x200, #qf.enc<codebook, bits = 3, table = dense<[-4.0, -3.0, -2.0, -1.0, 0.0, 1.5, 2.0, 3.0]> : tensor<8xf16>, group = 4, scale = bf16>>
  return %w : !qf.weight<24x200, #qf.enc<codebook, bits = 3, table = dense<[-4.0, -3.0, -2.0, -1.0, 0.0, 1.5, 2.0, 3.0]> : tensor<8xf16>, group = 4, scale = bf16>>
}
// Unquantized 2:4: the kept values themselves, f16 or bf16, rounded from
// each input type as floatToHalf / floatToBFloat16 round them (overflow to
// inf from f32 and bf16, NaNs kept: the host never refuses these); K = 196
// ends rows on half a meta byte and on a unit of one quad.
func.func @f16_sparse(%d: !f16) -> !qf.weight<24x256, #qf.enc<f16, sparse = 2:4>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<f16, sparse = 2:4>>
  return %w : !qf.weight<24x256, #qf.enc<f16, sparse = 2:4>>
}
func.func @f16_sparse_bf16(%d: tensor<24x196xbf16>) -> !qf.weight<24x196, #qf.enc<f16, sparse = 2:4>> {
  %w = qf.quantize %d : tensor<24x196xbf16> -> !qf.weight<24x196, #qf.enc<f16, sparse = 2:4>>
  return %w : !qf.weight<24x196, #qf.enc<f16, sparse = 2:4>>
}
func.func @f16_sparse_f32(%d: tensor<24x256xf32>) -> !qf.weight<24x256, #qf.enc<f16, sparse = 2:4>> {
  %w = qf.quantize %d : tensor<24x256xf32> -> !qf.weight<24x256, #qf.enc<f16, sparse = 2:4>>
  return %w : !qf.weight<24x256, #qf.enc<f16, sparse = 2:4>>
}
func.func @bf16_sparse(%d: tensor<24x256xbf16>) -> !qf.weight<24x256, #qf.enc<bf16, sparse = 2:4>> {
  %w = qf.quantize %d : tensor<24x256xbf16> -> !qf.weight<24x256, #qf.enc<bf16, sparse = 2:4>>
  return %w : !qf.weight<24x256, #qf.enc<bf16, sparse = 2:4>>
}
func.func @bf16_sparse_f16(%d: tensor<24x196xf16>) -> !qf.weight<24x196, #qf.enc<bf16, sparse = 2:4>> {
  %w = qf.quantize %d : tensor<24x196xf16> -> !qf.weight<24x196, #qf.enc<bf16, sparse = 2:4>>
  return %w : !qf.weight<24x196, #qf.enc<bf16, sparse = 2:4>>
}
func.func @bf16_sparse_f32(%d: tensor<24x196xf32>) -> !qf.weight<24x196, #qf.enc<bf16, sparse = 2:4>> {
  %w = qf.quantize %d : tensor<24x196xf32> -> !qf.weight<24x196, #qf.enc<bf16, sparse = 2:4>>
  return %w : !qf.weight<24x196, #qf.enc<bf16, sparse = 2:4>>
}
// 2:4 in groups that split quads (2 or 6 columns): each kept value goes to
// the group of its own column, so a group keeps 0 to 2 values of a quad
// (0: the host's lo = hi = 0); a unit is 4 groups (whole quads, whole
// bytes); K = 196 and 204 end rows on half a meta byte and a short unit.
func.func @int8_g2_sparse(%d: !f16) -> !qf.weight<24x256, #qf.enc<int8, group = 2, scale = f16, sparse = 2:4>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<int8, group = 2, scale = f16, sparse = 2:4>>
  return %w : !qf.weight<24x256, #qf.enc<int8, group = 2, scale = f16, sparse = 2:4>>
}
func.func @uint4_g6_sparse_zero(%d: tensor<24x192xbf16>) -> !qf.weight<24x192, #qf.enc<uint4, group = 6, scale = bf16, zero = int, sparse = 2:4>> {
  %w = qf.quantize %d : tensor<24x192xbf16> -> !qf.weight<24x192, #qf.enc<uint4, group = 6, scale = bf16, zero = int, sparse = 2:4>>
  return %w : !qf.weight<24x192, #qf.enc<uint4, group = 6, scale = bf16, zero = int, sparse = 2:4>>
}
func.func @int4_g2_sparse(%d: tensor<24x196xf32>) -> !qf.weight<24x196, #qf.enc<int4, group = 2, scale = f16, sparse = 2:4>> {
  %w = qf.quantize %d : tensor<24x196xf32> -> !qf.weight<24x196, #qf.enc<int4, group = 2, scale = f16, sparse = 2:4>>
  return %w : !qf.weight<24x196, #qf.enc<int4, group = 2, scale = f16, sparse = 2:4>>
}
func.func @uint8_g6_sparse_float_zero(%d: tensor<24x204xf16>) -> !qf.weight<24x204, #qf.enc<uint8, group = 6, scale = f16, zero = float, sparse = 2:4>> {
  %w = qf.quantize %d : tensor<24x204xf16> -> !qf.weight<24x204, #qf.enc<uint8, group = 6, scale = f16, zero = float, sparse = 2:4>>
  return %w : !qf.weight<24x204, #qf.enc<uint8, group = 6, scale = f16, zero = float, sparse = 2:4>>
}
func.func @fp8_g2_sparse(%d: tensor<24x200xbf16>) -> !qf.weight<24x200, #qf.enc<fp8e4m3, group = 2, scale = f32, sparse = 2:4>> {
  %w = qf.quantize %d : tensor<24x200xbf16> -> !qf.weight<24x200, #qf.enc<fp8e4m3, group = 2, scale = f32, sparse = 2:4>>
  return %w : !qf.weight<24x200, #qf.enc<fp8e4m3, group = 2, scale = f32, sparse = 2:4>>
}
func.func @uint4_g2_sparse_float_zero(%d: !f16) -> !qf.weight<24x256, #qf.enc<uint4, group = 2, scale = f16, zero = float, sparse = 2:4>> {
  %w = qf.quantize %d : !f16 -> !qf.weight<24x256, #qf.enc<uint4, group = 2, scale = f16, zero = float, sparse = 2:4>>
  return %w : !qf.weight<24x256, #qf.enc<uint4, group = 2, scale = f16, zero = float, sparse = 2:4>>
}
func.func @codebook5_inline(%d: tensor<24x256xf16>) -> !qf.weight<24x256, #qf.enc<codebook, bits = 5, table = dense<[-0.9688, -0.9062, -0.8438, -0.7812, -0.7188, -0.6562, -0.5938, -0.5312, -0.4688, -0.4062, -0.3438, -0.2812, -0.2188, -0.1562, -0.0938, -0.0312, 0.0312, 0.0938, 0.1562, 0.2188, 0.2812, 0.3438, 0.4062, 0.4688, 0.5312, 0.5938, 0.6562, 0.7188, 0.7812, 0.8438, 0.9062, 0.9688]> : tensor<32xf32>, group = 32, scale = f16>> {
  %w = qf.quantize %d : tensor<24x256xf16> -> !qf.weight<24x256, #qf.enc<codebook, bits = 5, table = dense<[-0.9688, -0.9062, -0.8438, -0.7812, -0.7188, -0.6562, -0.5938, -0.5312, -0.4688, -0.4062, -0.3438, -0.2812, -0.2188, -0.1562, -0.0938, -0.0312, 0.0312, 0.0938, 0.1562, 0.2188, 0.2812, 0.3438, 0.4062, 0.4688, 0.5312, 0.5938, 0.6562, 0.7188, 0.7812, 0.8438, 0.9062, 0.9688]> : tensor<32xf32>, group = 32, scale = f16>>
  return %w : !qf.weight<24x256, #qf.enc<codebook, bits = 5, table = dense<[-0.9688, -0.9062, -0.8438, -0.7812, -0.7188, -0.6562, -0.5938, -0.5312, -0.4688, -0.4062, -0.3438, -0.2812, -0.2188, -0.1562, -0.0938, -0.0312, 0.0312, 0.0938, 0.1562, 0.2188, 0.2812, 0.3438, 0.4062, 0.4688, 0.5312, 0.5938, 0.6562, 0.7188, 0.7812, 0.8438, 0.9062, 0.9688]> : tensor<32xf32>, group = 32, scale = f16>>
}
func.func @codebook6_inline(%d: tensor<24x192xbf16>) -> !qf.weight<24x192, #qf.enc<codebook, bits = 6, table = dense<[-0.9844, -0.9531, -0.9219, -0.8906, -0.8594, -0.8281, -0.7969, -0.7656, -0.7344, -0.7031, -0.6719, -0.6406, -0.6094, -0.5781, -0.5469, -0.5156, -0.4844, -0.4531, -0.4219, -0.3906, -0.3594, -0.3281, -0.2969, -0.2656, -0.2344, -0.2031, -0.1719, -0.1406, -0.1094, -0.0781, -0.0469, -0.0156, 0.0156, 0.0469, 0.0781, 0.1094, 0.1406, 0.1719, 0.2031, 0.2344, 0.2656, 0.2969, 0.3281, 0.3594, 0.3906, 0.4219, 0.4531, 0.4844, 0.5156, 0.5469, 0.5781, 0.6094, 0.6406, 0.6719, 0.7031, 0.7344, 0.7656, 0.7969, 0.8281, 0.8594, 0.8906, 0.9219, 0.9531, 0.9844]> : tensor<64xf32>, per_channel, scale = f16>> {
  %w = qf.quantize %d : tensor<24x192xbf16> -> !qf.weight<24x192, #qf.enc<codebook, bits = 6, table = dense<[-0.9844, -0.9531, -0.9219, -0.8906, -0.8594, -0.8281, -0.7969, -0.7656, -0.7344, -0.7031, -0.6719, -0.6406, -0.6094, -0.5781, -0.5469, -0.5156, -0.4844, -0.4531, -0.4219, -0.3906, -0.3594, -0.3281, -0.2969, -0.2656, -0.2344, -0.2031, -0.1719, -0.1406, -0.1094, -0.0781, -0.0469, -0.0156, 0.0156, 0.0469, 0.0781, 0.1094, 0.1406, 0.1719, 0.2031, 0.2344, 0.2656, 0.2969, 0.3281, 0.3594, 0.3906, 0.4219, 0.4531, 0.4844, 0.5156, 0.5469, 0.5781, 0.6094, 0.6406, 0.6719, 0.7031, 0.7344, 0.7656, 0.7969, 0.8281, 0.8594, 0.8906, 0.9219, 0.9531, 0.9844]> : tensor<64xf32>, per_channel, scale = f16>>
  return %w : !qf.weight<24x192, #qf.enc<codebook, bits = 6, table = dense<[-0.9844, -0.9531, -0.9219, -0.8906, -0.8594, -0.8281, -0.7969, -0.7656, -0.7344, -0.7031, -0.6719, -0.6406, -0.6094, -0.5781, -0.5469, -0.5156, -0.4844, -0.4531, -0.4219, -0.3906, -0.3594, -0.3281, -0.2969, -0.2656, -0.2344, -0.2031, -0.1719, -0.1406, -0.1094, -0.0781, -0.0469, -0.0156, 0.0156, 0.0469, 0.0781, 0.1094, 0.1406, 0.1719, 0.2031, 0.2344, 0.2656, 0.2969, 0.3281, 0.3594, 0.3906, 0.4219, 0.4531, 0.4844, 0.5156, 0.5469, 0.5781, 0.6094, 0.6406, 0.6719, 0.7031, 0.7344, 0.7656, 0.7969, 0.8281, 0.8594, 0.8906, 0.9219, 0.9531, 0.9844]> : tensor<64xf32>, per_channel, scale = f16>>
}
func.func @codebook7_inline(%d: tensor<24x256xf16>) -> !qf.weight<24x256, #qf.enc<codebook, bits = 7, table = dense<[-0.9922, -0.9766, -0.9609, -0.9453, -0.9297, -0.9141, -0.8984, -0.8828, -0.8672, -0.8516, -0.8359, -0.8203, -0.8047, -0.7891, -0.7734, -0.7578, -0.7422, -0.7266, -0.7109, -0.6953, -0.6797, -0.6641, -0.6484, -0.6328, -0.6172, -0.6016, -0.5859, -0.5703, -0.5547, -0.5391, -0.5234, -0.5078, -0.4922, -0.4766, -0.4609, -0.4453, -0.4297, -0.4141, -0.3984, -0.3828, -0.3672, -0.3516, -0.3359, -0.3203, -0.3047, -0.2891, -0.2734, -0.2578, -0.2422, -0.2266, -0.2109, -0.1953, -0.1797, -0.1641, -0.1484, -0.1328, -0.1172, -0.1016, -0.0859, -0.0703, -0.0547, -0.0391, -0.0234, -0.0078, 0.0078, 0.0234, 0.0391, 0.0547, 0.0703, 0.0859, 0.1016, 0.1172, 0.1328, 0.1484, 0.1641, 0.1797, 0.1953, 0.2109, 0.2266, 0.2422, 0.2578, 0.2734, 0.2891, 0.3047, 0.3203, 0.3359, 0.3516, 0.3672, 0.3828, 0.3984, 0.4141, 0.4297, 0.4453, 0.4609, 0.4766, 0.4922, 0.5078, 0.5234, 0.5391, 0.5547, 0.5703, 0.5859, 0.6016, 0.6172, 0.6328, 0.6484, 0.6641, 0.6797, 0.6953, 0.7109, 0.7266, 0.7422, 0.7578, 0.7734, 0.7891, 0.8047, 0.8203, 0.8359, 0.8516, 0.8672, 0.8828, 0.8984, 0.9141, 0.9297, 0.9453, 0.9609, 0.9766, 0.9922]> : tensor<128xf32>, group = 64, scale = f16>> {
  %w = qf.quantize %d : tensor<24x256xf16> -> !qf.weight<24x256, #qf.enc<codebook, bits = 7, table = dense<[-0.9922, -0.9766, -0.9609, -0.9453, -0.9297, -0.9141, -0.8984, -0.8828, -0.8672, -0.8516, -0.8359, -0.8203, -0.8047, -0.7891, -0.7734, -0.7578, -0.7422, -0.7266, -0.7109, -0.6953, -0.6797, -0.6641, -0.6484, -0.6328, -0.6172, -0.6016, -0.5859, -0.5703, -0.5547, -0.5391, -0.5234, -0.5078, -0.4922, -0.4766, -0.4609, -0.4453, -0.4297, -0.4141, -0.3984, -0.3828, -0.3672, -0.3516, -0.3359, -0.3203, -0.3047, -0.2891, -0.2734, -0.2578, -0.2422, -0.2266, -0.2109, -0.1953, -0.1797, -0.1641, -0.1484, -0.1328, -0.1172, -0.1016, -0.0859, -0.0703, -0.0547, -0.0391, -0.0234, -0.0078, 0.0078, 0.0234, 0.0391, 0.0547, 0.0703, 0.0859, 0.1016, 0.1172, 0.1328, 0.1484, 0.1641, 0.1797, 0.1953, 0.2109, 0.2266, 0.2422, 0.2578, 0.2734, 0.2891, 0.3047, 0.3203, 0.3359, 0.3516, 0.3672, 0.3828, 0.3984, 0.4141, 0.4297, 0.4453, 0.4609, 0.4766, 0.4922, 0.5078, 0.5234, 0.5391, 0.5547, 0.5703, 0.5859, 0.6016, 0.6172, 0.6328, 0.6484, 0.6641, 0.6797, 0.6953, 0.7109, 0.7266, 0.7422, 0.7578, 0.7734, 0.7891, 0.8047, 0.8203, 0.8359, 0.8516, 0.8672, 0.8828, 0.8984, 0.9141, 0.9297, 0.9453, 0.9609, 0.9766, 0.9922]> : tensor<128xf32>, group = 64, scale = f16>>
  return %w : !qf.weight<24x256, #qf.enc<codebook, bits = 7, table = dense<[-0.9922, -0.9766, -0.9609, -0.9453, -0.9297, -0.9141, -0.8984, -0.8828, -0.8672, -0.8516, -0.8359, -0.8203, -0.8047, -0.7891, -0.7734, -0.7578, -0.7422, -0.7266, -0.7109, -0.6953, -0.6797, -0.6641, -0.6484, -0.6328, -0.6172, -0.6016, -0.5859, -0.5703, -0.5547, -0.5391, -0.5234, -0.5078, -0.4922, -0.4766, -0.4609, -0.4453, -0.4297, -0.4141, -0.3984, -0.3828, -0.3672, -0.3516, -0.3359, -0.3203, -0.3047, -0.2891, -0.2734, -0.2578, -0.2422, -0.2266, -0.2109, -0.1953, -0.1797, -0.1641, -0.1484, -0.1328, -0.1172, -0.1016, -0.0859, -0.0703, -0.0547, -0.0391, -0.0234, -0.0078, 0.0078, 0.0234, 0.0391, 0.0547, 0.0703, 0.0859, 0.1016, 0.1172, 0.1328, 0.1484, 0.1641, 0.1797, 0.1953, 0.2109, 0.2266, 0.2422, 0.2578, 0.2734, 0.2891, 0.3047, 0.3203, 0.3359, 0.3516, 0.3672, 0.3828, 0.3984, 0.4141, 0.4297, 0.4453, 0.4609, 0.4766, 0.4922, 0.5078, 0.5234, 0.5391, 0.5547, 0.5703, 0.5859, 0.6016, 0.6172, 0.6328, 0.6484, 0.6641, 0.6797, 0.6953, 0.7109, 0.7266, 0.7422, 0.7578, 0.7734, 0.7891, 0.8047, 0.8203, 0.8359, 0.8516, 0.8672, 0.8828, 0.8984, 0.9141, 0.9297, 0.9453, 0.9609, 0.9766, 0.9922]> : tensor<128xf32>, group = 64, scale = f16>>
}
