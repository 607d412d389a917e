// One op per layout family at a prefill batch: with qf-select-tiling at
// M = 512 the 4-bit weight takes the tensor-core kernel's layout, the 8-bit
// one stays row-major.
func.func @int4_prefill(%x: tensor<?x1024xf16>) -> tensor<?x512xf16> {
  %w = qf.weight_ref "int4_prefill" : !qf.weight<512x1024, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x1024xf16>, !qf.weight<512x1024, #qf.enc<int4, group = 128, scale = f16>> -> tensor<?x512xf16>
  return %y : tensor<?x512xf16>
}
func.func @int8_prefill(%x: tensor<?x1024xf16>) -> tensor<?x256xf16> {
  %w = qf.weight_ref "int8_prefill" : !qf.weight<256x1024, #qf.enc<int8, per_channel, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x1024xf16>, !qf.weight<256x1024, #qf.enc<int8, per_channel, scale = f16>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
