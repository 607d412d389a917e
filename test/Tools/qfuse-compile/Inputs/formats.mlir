// Every format the matvec generator lowers, on Qwen2.5-1.5B-sized shapes
// (hidden 1536, kv 256, mlp 8960) plus Ns that are not a multiple of the
// block. Shared by the PTX and ptxas tests in this folder.
!x = tensor<?x1536xf16>

func.func @int4_q(%x: !x) -> tensor<?x1536xf16> {
  %w = qf.weight_ref "int4" : !qf.weight<1536x1536, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1536x1536, #qf.enc<int4, group = 128, scale = f16>> -> tensor<?x1536xf16>
  return %y : tensor<?x1536xf16>
}
func.func @uint4_kv(%x: !x) -> tensor<?x256xf16> {
  %w = qf.weight_ref "uint4" : !qf.weight<256x1536, #qf.enc<uint4, group = 128, scale = f16, zero = int>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<uint4, group = 128, scale = f16, zero = int>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @uint4_float_zero_bf16(%x: !x) -> tensor<?x1000xf16> {
  %w = qf.weight_ref "uint4f" : !qf.weight<1000x1536, #qf.enc<uint4, group = 64, scale = bf16, zero = float>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1000x1536, #qf.enc<uint4, group = 64, scale = bf16, zero = float>> -> tensor<?x1000xf16>
  return %y : tensor<?x1000xf16>
}
func.func @int8_mlp(%x: !x) -> tensor<?x8960xf16> {
  %w = qf.weight_ref "int8" : !qf.weight<8960x1536, #qf.enc<int8, per_channel, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<8960x1536, #qf.enc<int8, per_channel, scale = f16>> -> tensor<?x8960xf16>
  return %y : tensor<?x8960xf16>
}
func.func @uint8(%x: !x) -> tensor<?x256xf16> {
  %w = qf.weight_ref "uint8" : !qf.weight<256x1536, #qf.enc<uint8, group = 128, scale = f16, zero = int>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<uint8, group = 128, scale = f16, zero = int>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @fp8(%x: !x) -> tensor<?x1536xf16> {
  %w = qf.weight_ref "fp8" : !qf.weight<1536x1536, #qf.enc<fp8e4m3, per_channel, scale = f32>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1536x1536, #qf.enc<fp8e4m3, per_channel, scale = f32>> -> tensor<?x1536xf16>
  return %y : tensor<?x1536xf16>
}
func.func @nf4(%x: !x) -> tensor<?x8960xf16> {
  %w = qf.weight_ref "nf4" : !qf.weight<8960x1536, #qf.enc<nf4, group = 64, scale = f32>>
  %y = qf.matmul %x, %w : !x, !qf.weight<8960x1536, #qf.enc<nf4, group = 64, scale = f32>> -> tensor<?x8960xf16>
  return %y : tensor<?x8960xf16>
}
func.func @nvfp4(%x: !x) -> tensor<?x1536xf16> {
  %w = qf.weight_ref "nvfp4" : !qf.weight<1536x1536, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1536x1536, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>> -> tensor<?x1536xf16>
  return %y : tensor<?x1536xf16>
}
func.func @mxfp4(%x: !x) -> tensor<?x1536xf16> {
  %w = qf.weight_ref "mxfp4" : !qf.weight<1536x1536, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1536x1536, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>> -> tensor<?x1536xf16>
  return %y : tensor<?x1536xf16>
}
func.func @codebook_inline(%x: !x) -> tensor<?x1536xf16> {
  %w = qf.weight_ref "cb" : !qf.weight<1536x1536, #qf.enc<codebook, bits = 4, table = dense<[-1.0, -0.75, -0.5, -0.375, -0.25, -0.125, -0.0625, 0.0, 0.0625, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 1.0]> : tensor<16xf16>, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1536x1536, #qf.enc<codebook, bits = 4, table = dense<[-1.0, -0.75, -0.5, -0.375, -0.25, -0.125, -0.0625, 0.0, 0.0625, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 1.0]> : tensor<16xf16>, group = 128, scale = f16>> -> tensor<?x1536xf16>
  return %y : tensor<?x1536xf16>
}
func.func @codebook_named(%x: !x) -> tensor<?x256xf16> {
  %w = qf.weight_ref "cbn" : !qf.weight<256x1536, #qf.enc<codebook, bits = 4, table = "lut" : f32, per_channel, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<codebook, bits = 4, table = "lut" : f32, per_channel, scale = f16>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @int4_down_splitk(%x: tensor<?x8960xf16>) -> tensor<?x256xf16> {
  %w = qf.weight_ref "down" : !qf.weight<256x8960, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x8960xf16>, !qf.weight<256x8960, #qf.enc<int4, group = 128, scale = f16>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @sparse24_f16(%x: !x) -> tensor<?x1536xf16> {
  %w = qf.weight_ref "sp24" : !qf.weight<1536x1536, #qf.enc<f16, sparse = 2:4>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1536x1536, #qf.enc<f16, sparse = 2:4>> -> tensor<?x1536xf16>
  return %y : tensor<?x1536xf16>
}
// Odd K (not a multiple of 256): narrower loads and small groups.
func.func @int4_odd_k(%x: tensor<?x1064xf16>) -> tensor<?x1000xf16> {
  %w = qf.weight_ref "int4_k1064" : !qf.weight<1000x1064, #qf.enc<int4, group = 8, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x1064xf16>, !qf.weight<1000x1064, #qf.enc<int4, group = 8, scale = f16>> -> tensor<?x1000xf16>
  return %y : tensor<?x1000xf16>
}
func.func @int8_odd_k(%x: tensor<?x1000xf16>) -> tensor<?x333xf16> {
  %w = qf.weight_ref "int8_k1000" : !qf.weight<333x1000, #qf.enc<int8, per_channel, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x1000xf16>, !qf.weight<333x1000, #qf.enc<int8, per_channel, scale = f16>> -> tensor<?x333xf16>
  return %y : tensor<?x333xf16>
}
