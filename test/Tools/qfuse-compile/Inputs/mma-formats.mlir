// Every format the tensor-core generator lowers (dense 2-, 3-, 4- and 8-bit
// codes, integer and float zero points), on shapes that exercise its partitioning: k/v-sized N = 256, a
// long K with split-K, several blocks along N. Compiled for batches 9..512
// by the PTX test and by bench/make-artifacts.sh, whose GPU round checks
// every batch against the C++ reference.
!x = tensor<?x1536xf16>

func.func @int4_q(%x: !x) -> tensor<?x1536xf16> {
  %w = qf.weight_ref "int4" : !qf.weight<1536x1536, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1536x1536, #qf.enc<int4, group = 128, scale = f16>> -> tensor<?x1536xf16>
  return %y : tensor<?x1536xf16>
}
func.func @int4_per_channel_bf16(%x: !x) -> tensor<?x256xf16> {
  %w = qf.weight_ref "int4pc" : !qf.weight<256x1536, #qf.enc<int4, per_channel, scale = bf16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<int4, per_channel, scale = bf16>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @uint4_kv(%x: !x) -> tensor<?x256xf16> {
  %w = qf.weight_ref "uint4" : !qf.weight<256x1536, #qf.enc<uint4, group = 128, scale = f16, zero = int>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<uint4, group = 128, scale = f16, zero = int>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @uint4_g32(%x: !x) -> tensor<?x512xf16> {
  %w = qf.weight_ref "uint4g32" : !qf.weight<512x1536, #qf.enc<uint4, group = 32, scale = f16, zero = int>>
  %y = qf.matmul %x, %w : !x, !qf.weight<512x1536, #qf.enc<uint4, group = 32, scale = f16, zero = int>> -> tensor<?x512xf16>
  return %y : tensor<?x512xf16>
}
func.func @nf4(%x: !x) -> tensor<?x2048xf16> {
  %w = qf.weight_ref "nf4" : !qf.weight<2048x1536, #qf.enc<nf4, group = 64, scale = f32>>
  %y = qf.matmul %x, %w : !x, !qf.weight<2048x1536, #qf.enc<nf4, group = 64, scale = f32>> -> tensor<?x2048xf16>
  return %y : tensor<?x2048xf16>
}
func.func @nvfp4(%x: !x) -> tensor<?x1536xf16> {
  %w = qf.weight_ref "nvfp4" : !qf.weight<1536x1536, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1536x1536, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>> -> tensor<?x1536xf16>
  return %y : tensor<?x1536xf16>
}
func.func @mxfp4(%x: !x) -> tensor<?x256xf16> {
  %w = qf.weight_ref "mxfp4" : !qf.weight<256x1536, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @codebook_inline(%x: !x) -> tensor<?x256xf16> {
  %w = qf.weight_ref "cb" : !qf.weight<256x1536, #qf.enc<codebook, bits = 4, table = dense<[-1.0, -0.75, -0.5, -0.375, -0.25, -0.125, -0.0625, 0.0, 0.0625, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 1.0]> : tensor<16xf32>, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<codebook, bits = 4, table = dense<[-1.0, -0.75, -0.5, -0.375, -0.25, -0.125, -0.0625, 0.0, 0.0625, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 1.0]> : tensor<16xf32>, group = 128, scale = f16>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @codebook_named(%x: !x) -> tensor<?x256xf16> {
  %w = qf.weight_ref "cbn" : !qf.weight<256x1536, #qf.enc<codebook, bits = 4, table = "lut" : f32, per_channel, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<codebook, bits = 4, table = "lut" : f32, per_channel, scale = f16>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @int4_down_splitk(%x: tensor<?x8960xf16>) -> tensor<?x1536xf16> {
  %w = qf.weight_ref "down" : !qf.weight<1536x8960, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x8960xf16>, !qf.weight<1536x8960, #qf.enc<int4, group = 128, scale = f16>> -> tensor<?x1536xf16>
  return %y : tensor<?x1536xf16>
}
func.func @int8_q(%x: !x) -> tensor<?x1536xf16> {
  %w = qf.weight_ref "int8" : !qf.weight<1536x1536, #qf.enc<int8, per_channel, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1536x1536, #qf.enc<int8, per_channel, scale = f16>> -> tensor<?x1536xf16>
  return %y : tensor<?x1536xf16>
}
func.func @uint8_kv(%x: !x) -> tensor<?x256xf16> {
  %w = qf.weight_ref "uint8" : !qf.weight<256x1536, #qf.enc<uint8, group = 128, scale = f16, zero = int>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<uint8, group = 128, scale = f16, zero = int>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @fp8_mlp(%x: !x) -> tensor<?x2048xf16> {
  %w = qf.weight_ref "fp8" : !qf.weight<2048x1536, #qf.enc<fp8e4m3, per_channel, scale = f32>>
  %y = qf.matmul %x, %w : !x, !qf.weight<2048x1536, #qf.enc<fp8e4m3, per_channel, scale = f32>> -> tensor<?x2048xf16>
  return %y : tensor<?x2048xf16>
}
// Codebooks of 2, 3 and 8 bits (MmaLayout.h's 256-, 384- and 1024-byte
// tiles, decoded through a shared table) and float zero points (q - z with
// z a float of the scale type per group); appended, so that the kernels
// above keep their names.
func.func @codebook2(%x: !x) -> tensor<?x256xf16> {
  %w = qf.weight_ref "cb2" : !qf.weight<256x1536, #qf.enc<codebook, bits = 2, table = dense<[-1.0, -0.25, 0.25, 1.0]> : tensor<4xf16>, group = 64, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<codebook, bits = 2, table = dense<[-1.0, -0.25, 0.25, 1.0]> : tensor<4xf16>, group = 64, scale = f16>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @codebook3(%x: !x) -> tensor<?x512xf16> {
  %w = qf.weight_ref "cb3" : !qf.weight<512x1536, #qf.enc<codebook, bits = 3, table = dense<[-1.0, -0.5, -0.25, -0.125, 0.125, 0.25, 0.5, 1.0]> : tensor<8xf32>, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<512x1536, #qf.enc<codebook, bits = 3, table = dense<[-1.0, -0.5, -0.25, -0.125, 0.125, 0.25, 0.5, 1.0]> : tensor<8xf32>, group = 128, scale = f16>> -> tensor<?x512xf16>
  return %y : tensor<?x512xf16>
}
func.func @codebook3_named(%x: !x) -> tensor<?x256xf16> {
  %w = qf.weight_ref "cb3n" : !qf.weight<256x1536, #qf.enc<codebook, bits = 3, table = "lut3" : f16, per_channel, scale = f32>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<codebook, bits = 3, table = "lut3" : f16, per_channel, scale = f32>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @codebook8_named(%x: !x) -> tensor<?x1536xf16> {
  %w = qf.weight_ref "cb8" : !qf.weight<1536x1536, #qf.enc<codebook, bits = 8, table = "lut8" : f32, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1536x1536, #qf.enc<codebook, bits = 8, table = "lut8" : f32, group = 128, scale = f16>> -> tensor<?x1536xf16>
  return %y : tensor<?x1536xf16>
}
func.func @uint4_zero_float(%x: !x) -> tensor<?x256xf16> {
  %w = qf.weight_ref "uint4zf" : !qf.weight<256x1536, #qf.enc<uint4, group = 128, scale = f16, zero = float>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<uint4, group = 128, scale = f16, zero = float>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @uint4_zero_float_g32(%x: !x) -> tensor<?x512xf16> {
  %w = qf.weight_ref "uint4zf32" : !qf.weight<512x1536, #qf.enc<uint4, group = 32, scale = f32, zero = float>>
  %y = qf.matmul %x, %w : !x, !qf.weight<512x1536, #qf.enc<uint4, group = 32, scale = f32, zero = float>> -> tensor<?x512xf16>
  return %y : tensor<?x512xf16>
}
func.func @uint8_zero_float(%x: !x) -> tensor<?x256xf16> {
  %w = qf.weight_ref "uint8zf" : !qf.weight<256x1536, #qf.enc<uint8, group = 64, scale = bf16, zero = float>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<uint8, group = 64, scale = bf16, zero = float>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
