// Shapes that are not whole tensor-core tiles, past the matvec's batches:
// N not a multiple of 32 (even and odd), K not a multiple of 32 or of
// block_k, for 4-bit and 8-bit codes, group and per-channel scales, and the
// fusions (a q/k/v qf.group with tails in every member, silu_mul). The
// fragment layout pads them to whole 32 x 32 tiles (MmaLayout.h); the
// kernel zero-fills the activations and code tiles past K and stores no
// column past N. Compiled by the PTX test and by bench/make-artifacts.sh,
// whose GPU round checks every launch against the C++ reference; the CPU
// reference test decodes the same padded bytes.
func.func @int4_n1000(%x: tensor<?x1536xf16>) -> tensor<?x1000xf16> {
  %w = qf.weight_ref "int4_n1000" : !qf.weight<1000x1536, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x1536xf16>, !qf.weight<1000x1536, #qf.enc<int4, group = 128, scale = f16>> -> tensor<?x1000xf16>
  return %y : tensor<?x1000xf16>
}
func.func @int4_pc_k1000(%x: tensor<?x1000xf16>) -> tensor<?x1000xf16> {
  %w = qf.weight_ref "int4_k1000" : !qf.weight<1000x1000, #qf.enc<int4, per_channel, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x1000xf16>, !qf.weight<1000x1000, #qf.enc<int4, per_channel, scale = f16>> -> tensor<?x1000xf16>
  return %y : tensor<?x1000xf16>
}
func.func @uint4_g32_k1056(%x: tensor<?x1056xf16>) -> tensor<?x520xf16> {
  %w = qf.weight_ref "uint4_k1056" : !qf.weight<520x1056, #qf.enc<uint4, group = 32, scale = f16, zero = int>>
  %y = qf.matmul %x, %w : tensor<?x1056xf16>, !qf.weight<520x1056, #qf.enc<uint4, group = 32, scale = f16, zero = int>> -> tensor<?x520xf16>
  return %y : tensor<?x520xf16>
}
func.func @nvfp4_n1001(%x: tensor<?x1008xf16>) -> tensor<?x1001xf16> {
  %w = qf.weight_ref "nvfp4_n1001" : !qf.weight<1001x1008, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>>
  %y = qf.matmul %x, %w : tensor<?x1008xf16>, !qf.weight<1001x1008, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>> -> tensor<?x1001xf16>
  return %y : tensor<?x1001xf16>
}
func.func @nf4_n999(%x: tensor<?x1088xf16>) -> tensor<?x999xf16> {
  %w = qf.weight_ref "nf4_n999" : !qf.weight<999x1088, #qf.enc<nf4, group = 64, scale = f32>>
  %y = qf.matmul %x, %w : tensor<?x1088xf16>, !qf.weight<999x1088, #qf.enc<nf4, group = 64, scale = f32>> -> tensor<?x999xf16>
  return %y : tensor<?x999xf16>
}
func.func @int8_n257_k1000(%x: tensor<?x1000xf16>) -> tensor<?x257xf16> {
  %w = qf.weight_ref "int8_n257" : !qf.weight<257x1000, #qf.enc<int8, per_channel, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x1000xf16>, !qf.weight<257x1000, #qf.enc<int8, per_channel, scale = f16>> -> tensor<?x257xf16>
  return %y : tensor<?x257xf16>
}
func.func @fp8_n100_k520(%x: tensor<?x520xf16>) -> tensor<?x100xf16> {
  %w = qf.weight_ref "fp8_n100" : !qf.weight<100x520, #qf.enc<fp8e4m3, per_channel, scale = f32>>
  %y = qf.matmul %x, %w : tensor<?x520xf16>, !qf.weight<100x520, #qf.enc<fp8e4m3, per_channel, scale = f32>> -> tensor<?x100xf16>
  return %y : tensor<?x100xf16>
}
func.func @bf16_n1001_k1000(%x: tensor<?x1000xbf16>) -> tensor<?x1001xbf16> {
  %w = qf.weight_ref "bf16_n1001" : !qf.weight<1001x1000, #qf.enc<int4, per_channel, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x1000xbf16>, !qf.weight<1001x1000, #qf.enc<int4, per_channel, scale = f16>> -> tensor<?x1001xbf16>
  return %y : tensor<?x1001xbf16>
}
#int4 = #qf.enc<int4, group = 32, scale = f16>
func.func @odd_fused(%x: tensor<?x544xf16> {qf.name = "x"})
    -> (tensor<?x1000xf16>, tensor<?x250xf16>, tensor<?x250xf16>, tensor<?x700xf16>) {
  %wq = qf.weight_ref "q_odd" : !qf.weight<1000x544, #int4>
  %q = qf.matmul %x, %wq : tensor<?x544xf16>, !qf.weight<1000x544, #int4> -> tensor<?x1000xf16>
  %wk = qf.weight_ref "k_odd" : !qf.weight<250x544, #int4>
  %k = qf.matmul %x, %wk : tensor<?x544xf16>, !qf.weight<250x544, #int4> -> tensor<?x250xf16>
  %wv = qf.weight_ref "v_odd" : !qf.weight<250x544, #int4>
  %v = qf.matmul %x, %wv : tensor<?x544xf16>, !qf.weight<250x544, #int4> -> tensor<?x250xf16>
  %wg = qf.weight_ref "gate_odd" : !qf.weight<700x544, #int4>
  %wu = qf.weight_ref "up_odd" : !qf.weight<700x544, #int4>
  %act = qf.fused_matmul %x, %wg up(%wu : !qf.weight<700x544, #int4>) {activation = #qf<activation silu_mul>}
      : tensor<?x544xf16>, !qf.weight<700x544, #int4> -> tensor<?x700xf16>
  return %q, %k, %v, %act : tensor<?x1000xf16>, tensor<?x250xf16>, tensor<?x250xf16>, tensor<?x700xf16>
}
