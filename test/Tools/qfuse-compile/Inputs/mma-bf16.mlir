// bf16 activations on the tensor-core kernel: every format of
// mma-formats.mlir with bf16 x and y (the only kernel that reads bf16, so
// it runs these at every batch, 1 included), and its fusions (q/k/v as one
// qf.group launch, gate/up with silu_mul, a bias epilogue) on argument
// inputs. Compiled by the PTX test and by bench/make-artifacts.sh, whose
// GPU round checks every launch against the C++ reference; the CPU
// reference test decodes the same ops.
!x = tensor<?x1536xbf16>

func.func @int4_q_bf16(%x: !x) -> tensor<?x1536xbf16> {
  %w = qf.weight_ref "int4" : !qf.weight<1536x1536, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1536x1536, #qf.enc<int4, group = 128, scale = f16>> -> tensor<?x1536xbf16>
  return %y : tensor<?x1536xbf16>
}
func.func @int4_per_channel_bf16(%x: !x) -> tensor<?x256xbf16> {
  %w = qf.weight_ref "int4pc" : !qf.weight<256x1536, #qf.enc<int4, per_channel, scale = bf16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<int4, per_channel, scale = bf16>> -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}
func.func @uint4_kv_bf16(%x: !x) -> tensor<?x256xbf16> {
  %w = qf.weight_ref "uint4" : !qf.weight<256x1536, #qf.enc<uint4, group = 128, scale = f16, zero = int>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<uint4, group = 128, scale = f16, zero = int>> -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}
func.func @uint4_g32_bf16(%x: !x) -> tensor<?x512xbf16> {
  %w = qf.weight_ref "uint4g32" : !qf.weight<512x1536, #qf.enc<uint4, group = 32, scale = f16, zero = int>>
  %y = qf.matmul %x, %w : !x, !qf.weight<512x1536, #qf.enc<uint4, group = 32, scale = f16, zero = int>> -> tensor<?x512xbf16>
  return %y : tensor<?x512xbf16>
}
func.func @nf4_bf16(%x: !x) -> tensor<?x2048xbf16> {
  %w = qf.weight_ref "nf4" : !qf.weight<2048x1536, #qf.enc<nf4, group = 64, scale = f32>>
  %y = qf.matmul %x, %w : !x, !qf.weight<2048x1536, #qf.enc<nf4, group = 64, scale = f32>> -> tensor<?x2048xbf16>
  return %y : tensor<?x2048xbf16>
}
func.func @nvfp4_bf16(%x: !x) -> tensor<?x1536xbf16> {
  %w = qf.weight_ref "nvfp4" : !qf.weight<1536x1536, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1536x1536, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>> -> tensor<?x1536xbf16>
  return %y : tensor<?x1536xbf16>
}
func.func @mxfp4_bf16(%x: !x) -> tensor<?x256xbf16> {
  %w = qf.weight_ref "mxfp4" : !qf.weight<256x1536, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>> -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}
func.func @codebook_inline_bf16(%x: !x) -> tensor<?x256xbf16> {
  %w = qf.weight_ref "cb" : !qf.weight<256x1536, #qf.enc<codebook, bits = 4, table = dense<[-1.0, -0.75, -0.5, -0.375, -0.25, -0.125, -0.0625, 0.0, 0.0625, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 1.0]> : tensor<16xf32>, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<codebook, bits = 4, table = dense<[-1.0, -0.75, -0.5, -0.375, -0.25, -0.125, -0.0625, 0.0, 0.0625, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 1.0]> : tensor<16xf32>, group = 128, scale = f16>> -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}
func.func @codebook_named_bf16(%x: !x) -> tensor<?x256xbf16> {
  %w = qf.weight_ref "cbn" : !qf.weight<256x1536, #qf.enc<codebook, bits = 4, table = "lut" : f32, per_channel, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<codebook, bits = 4, table = "lut" : f32, per_channel, scale = f16>> -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}
func.func @int4_down_splitk_bf16(%x: tensor<?x8960xbf16>) -> tensor<?x1536xbf16> {
  %w = qf.weight_ref "down" : !qf.weight<1536x8960, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x8960xbf16>, !qf.weight<1536x8960, #qf.enc<int4, group = 128, scale = f16>> -> tensor<?x1536xbf16>
  return %y : tensor<?x1536xbf16>
}
func.func @int8_q_bf16(%x: !x) -> tensor<?x1536xbf16> {
  %w = qf.weight_ref "int8" : !qf.weight<1536x1536, #qf.enc<int8, per_channel, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1536x1536, #qf.enc<int8, per_channel, scale = f16>> -> tensor<?x1536xbf16>
  return %y : tensor<?x1536xbf16>
}
func.func @uint8_kv_bf16(%x: !x) -> tensor<?x256xbf16> {
  %w = qf.weight_ref "uint8" : !qf.weight<256x1536, #qf.enc<uint8, group = 128, scale = f16, zero = int>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<uint8, group = 128, scale = f16, zero = int>> -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}
func.func @fp8_mlp_bf16(%x: !x) -> tensor<?x2048xbf16> {
  %w = qf.weight_ref "fp8" : !qf.weight<2048x1536, #qf.enc<fp8e4m3, per_channel, scale = f32>>
  %y = qf.matmul %x, %w : !x, !qf.weight<2048x1536, #qf.enc<fp8e4m3, per_channel, scale = f32>> -> tensor<?x2048xbf16>
  return %y : tensor<?x2048xbf16>
}
#int4 = #qf.enc<int4, group = 128, scale = f16>
#fp8 = #qf.enc<fp8e4m3, per_channel, scale = f32>
func.func @mma_fused_bf16(%x: tensor<?x512xbf16> {qf.name = "x"})
    -> (tensor<?x512xbf16>, tensor<?x256xbf16>, tensor<?x256xbf16>,
        tensor<?x1024xbf16>, tensor<?x1024xbf16>, tensor<?x512xbf16>) {
  %wq = qf.weight_ref "q_proj" : !qf.weight<512x512, #int4>
  %q = qf.matmul %x, %wq : tensor<?x512xbf16>, !qf.weight<512x512, #int4> -> tensor<?x512xbf16>
  %wk = qf.weight_ref "k_proj" : !qf.weight<256x512, #int4>
  %k = qf.matmul %x, %wk : tensor<?x512xbf16>, !qf.weight<256x512, #int4> -> tensor<?x256xbf16>
  %wv = qf.weight_ref "v_proj" : !qf.weight<256x512, #int4>
  %v = qf.matmul %x, %wv : tensor<?x512xbf16>, !qf.weight<256x512, #int4> -> tensor<?x256xbf16>
  %wg = qf.weight_ref "gate_proj" : !qf.weight<1024x512, #int4>
  %wu = qf.weight_ref "up_proj" : !qf.weight<1024x512, #int4>
  %act = qf.fused_matmul %x, %wg up(%wu : !qf.weight<1024x512, #int4>) {activation = #qf<activation silu_mul>}
      : tensor<?x512xbf16>, !qf.weight<1024x512, #int4> -> tensor<?x1024xbf16>
  %wg8 = qf.weight_ref "gate8_proj" : !qf.weight<1024x512, #fp8>
  %wu8 = qf.weight_ref "up8_proj" : !qf.weight<1024x512, #fp8>
  %act8 = qf.fused_matmul %x, %wg8 up(%wu8 : !qf.weight<1024x512, #fp8>) {activation = #qf<activation silu_mul>}
      : tensor<?x512xbf16>, !qf.weight<1024x512, #fp8> -> tensor<?x1024xbf16>
  %bias = qf.tensor_ref "o_proj.bias" : tensor<512xbf16>
  %wo = qf.weight_ref "o_proj" : !qf.weight<512x512, #int4>
  %o = qf.fused_matmul %x, %wo bias(%bias : tensor<512xbf16>)
      : tensor<?x512xbf16>, !qf.weight<512x512, #int4> -> tensor<?x512xbf16>
  return %q, %k, %v, %act, %act8, %o : tensor<?x512xbf16>, tensor<?x256xbf16>, tensor<?x256xbf16>, tensor<?x1024xbf16>, tensor<?x1024xbf16>, tensor<?x512xbf16>
}
// 2-, 3- and 8-bit codebooks (bf16 tables) and float zero points (q - z
// rounded once to bf16; uint8 forms it in f32 before packing); appended,
// so that the kernels above keep their names.
func.func @codebook2_bf16(%x: !x) -> tensor<?x256xbf16> {
  %w = qf.weight_ref "cb2" : !qf.weight<256x1536, #qf.enc<codebook, bits = 2, table = dense<[-1.0, -0.25, 0.25, 1.0]> : tensor<4xf16>, group = 64, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<codebook, bits = 2, table = dense<[-1.0, -0.25, 0.25, 1.0]> : tensor<4xf16>, group = 64, scale = f16>> -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}
func.func @codebook3_named_bf16(%x: !x) -> tensor<?x512xbf16> {
  %w = qf.weight_ref "cb3n" : !qf.weight<512x1536, #qf.enc<codebook, bits = 3, table = "lut3" : f16, group = 128, scale = bf16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<512x1536, #qf.enc<codebook, bits = 3, table = "lut3" : f16, group = 128, scale = bf16>> -> tensor<?x512xbf16>
  return %y : tensor<?x512xbf16>
}
func.func @codebook8_named_bf16(%x: !x) -> tensor<?x256xbf16> {
  %w = qf.weight_ref "cb8" : !qf.weight<256x1536, #qf.enc<codebook, bits = 8, table = "lut8" : f32, per_channel, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<codebook, bits = 8, table = "lut8" : f32, per_channel, scale = f16>> -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}
func.func @uint4_zero_float_bf16(%x: !x) -> tensor<?x256xbf16> {
  %w = qf.weight_ref "uint4zf" : !qf.weight<256x1536, #qf.enc<uint4, group = 128, scale = bf16, zero = float>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x1536, #qf.enc<uint4, group = 128, scale = bf16, zero = float>> -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}
func.func @uint8_zero_float_bf16(%x: !x) -> tensor<?x512xbf16> {
  %w = qf.weight_ref "uint8zf" : !qf.weight<512x1536, #qf.enc<uint8, group = 32, scale = f16, zero = float>>
  %y = qf.matmul %x, %w : !x, !qf.weight<512x1536, #qf.enc<uint8, group = 32, scale = f16, zero = float>> -> tensor<?x512xbf16>
  return %y : tensor<?x512xbf16>
}
