// act_order with 2:4 sparsity: the columns stay in checkpoint order (a sort
// by group would break the quads) and each column's group comes from g_idx
// (format::sortsColumns). Neither fused kernel takes it; at every batch the
// fallback's dequantize (the same decode) and cuBLAS do. Shared by the
// qfuse-cpu-check test and the compile test of the fallback.
func.func @sp24_int4_act_order(%x: tensor<?x512xf16>) -> tensor<?x256xf16> {
  %w = qf.weight_ref "sp24_int4_act_order" : !qf.weight<256x512, #qf.enc<int4, group = 128, scale = f16, act_order, sparse = 2:4>>
  %y = qf.matmul %x, %w : tensor<?x512xf16>, !qf.weight<256x512, #qf.enc<int4, group = 128, scale = f16, act_order, sparse = 2:4>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @sp24_uint4_zero_act_order(%x: tensor<?x512xf16>) -> tensor<?x128xf16> {
  %w = qf.weight_ref "sp24_uint4_zero_act_order" : !qf.weight<128x512, #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order, sparse = 2:4>>
  %y = qf.matmul %x, %w : tensor<?x512xf16>, !qf.weight<128x512, #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order, sparse = 2:4>> -> tensor<?x128xf16>
  return %y : tensor<?x128xf16>
}
func.func @sp24_uint8_fzero_act_order(%x: tensor<?x256xbf16>) -> tensor<?x64xbf16> {
  %w = qf.weight_ref "sp24_uint8_fzero_act_order" : !qf.weight<64x256, #qf.enc<uint8, group = 32, scale = bf16, zero = float, act_order, sparse = 2:4>>
  %y = qf.matmul %x, %w : tensor<?x256xbf16>, !qf.weight<64x256, #qf.enc<uint8, group = 32, scale = bf16, zero = float, act_order, sparse = 2:4>> -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}
