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
// act_order (GPTQ desc_act): columns stored sorted by group, activations
// gathered through `perm` into shared memory.
func.func @int4_act_order(%x: !x) -> tensor<?x1536xf16> {
  %w = qf.weight_ref "int4_act" : !qf.weight<1536x1536, #qf.enc<int4, group = 128, scale = f16, act_order>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1536x1536, #qf.enc<int4, group = 128, scale = f16, act_order>> -> tensor<?x1536xf16>
  return %y : tensor<?x1536xf16>
}
func.func @uint4_act_order_odd_n(%x: !x) -> tensor<?x1000xf16> {
  %w = qf.weight_ref "uint4_act" : !qf.weight<1000x1536, #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1000x1536, #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order>> -> tensor<?x1000xf16>
  return %y : tensor<?x1000xf16>
}
func.func @int8_act_order_odd_k(%x: tensor<?x1000xf16>) -> tensor<?x333xf16> {
  %w = qf.weight_ref "int8_act_k1000" : !qf.weight<333x1000, #qf.enc<int8, group = 40, scale = f16, act_order>>
  %y = qf.matmul %x, %w : tensor<?x1000xf16>, !qf.weight<333x1000, #qf.enc<int8, group = 40, scale = f16, act_order>> -> tensor<?x333xf16>
  return %y : tensor<?x333xf16>
}
// 2:4 sparse integers: kept codes, group scales over logical columns.
func.func @sparse24_int4(%x: !x) -> tensor<?x1000xf16> {
  %w = qf.weight_ref "sp24_int4" : !qf.weight<1000x1536, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1000x1536, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>> -> tensor<?x1000xf16>
  return %y : tensor<?x1000xf16>
}
func.func @sparse24_uint4(%x: !x) -> tensor<?x256xf16> {
  %w = qf.weight_ref "sp24_uint4" : !qf.weight<256x1536, #qf.enc<uint4, group = 64, scale = f16, zero = int, sparse = 2:4>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<uint4, group = 64, scale = f16, zero = int, sparse = 2:4>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @sparse24_int8(%x: !x) -> tensor<?x333xf16> {
  %w = qf.weight_ref "sp24_int8" : !qf.weight<333x1536, #qf.enc<int8, per_channel, scale = f16, sparse = 2:4>>
  %y = qf.matmul %x, %w : !x, !qf.weight<333x1536, #qf.enc<int8, per_channel, scale = f16, sparse = 2:4>> -> tensor<?x333xf16>
  return %y : tensor<?x333xf16>
}
// Codebooks of 2, 3 and 8 bits (replicated shared tables; 8 bits two
// entries per word).
func.func @codebook2(%x: !x) -> tensor<?x1536xf16> {
  %w = qf.weight_ref "cb2" : !qf.weight<1536x1536, #qf.enc<codebook, bits = 2, table = dense<[-1.0, -0.25, 0.25, 1.0]> : tensor<4xf16>, group = 64, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1536x1536, #qf.enc<codebook, bits = 2, table = dense<[-1.0, -0.25, 0.25, 1.0]> : tensor<4xf16>, group = 64, scale = f16>> -> tensor<?x1536xf16>
  return %y : tensor<?x1536xf16>
}
func.func @codebook3(%x: !x) -> tensor<?x8960xf16> {
  %w = qf.weight_ref "cb3" : !qf.weight<8960x1536, #qf.enc<codebook, bits = 3, table = dense<[-1.0, -0.5, -0.25, -0.125, 0.125, 0.25, 0.5, 1.0]> : tensor<8xf16>, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<8960x1536, #qf.enc<codebook, bits = 3, table = dense<[-1.0, -0.5, -0.25, -0.125, 0.125, 0.25, 0.5, 1.0]> : tensor<8xf16>, group = 128, scale = f16>> -> tensor<?x8960xf16>
  return %y : tensor<?x8960xf16>
}
func.func @codebook3_odd(%x: tensor<?x1056xf16>) -> tensor<?x333xf16> {
  %w = qf.weight_ref "cb3_k1056" : !qf.weight<333x1056, #qf.enc<codebook, bits = 3, table = "lut3" : f16, group = 32, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x1056xf16>, !qf.weight<333x1056, #qf.enc<codebook, bits = 3, table = "lut3" : f16, group = 32, scale = f16>> -> tensor<?x333xf16>
  return %y : tensor<?x333xf16>
}
func.func @codebook8(%x: !x) -> tensor<?x1000xf16> {
  %w = qf.weight_ref "cb8" : !qf.weight<1000x1536, #qf.enc<codebook, bits = 8, table = "lut8" : f32, per_channel, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1000x1536, #qf.enc<codebook, bits = 8, table = "lut8" : f32, per_channel, scale = f16>> -> tensor<?x1000xf16>
  return %y : tensor<?x1000xf16>
}
