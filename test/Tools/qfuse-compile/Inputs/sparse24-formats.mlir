// Every 2:4 format the mma.sp kernel lowers (f16 values, int4, uint4 with
// integer zero points, int8, uint8 with float zero points, fp8), on shapes
// that exercise it: N not a whole 32-row tile, a long K, silu_mul over a
// gate and an up weight. Compiled past the matvec's batches by the PTX test
// (ptx-mma-sparse24.mlir) and by bench/sparse24/make-artifacts.sh, whose GPU
// round checks every batch against the C++ reference.
!x = tensor<?x4096xf16>

func.func @f16(%x: !x) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "f16" : !qf.weight<4096x4096, #qf.enc<f16, sparse = 2:4>>
  %y = qf.matmul %x, %w : !x, !qf.weight<4096x4096, #qf.enc<f16, sparse = 2:4>> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}
func.func @int4(%x: !x) -> tensor<?x1024xf16> {
  %w = qf.weight_ref "int4" : !qf.weight<1024x4096, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1024x4096, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>> -> tensor<?x1024xf16>
  return %y : tensor<?x1024xf16>
}
func.func @uint4_tail(%x: !x) -> tensor<?x1000xf16> {
  %w = qf.weight_ref "uint4" : !qf.weight<1000x4096, #qf.enc<uint4, group = 64, scale = f16, zero = int, sparse = 2:4>>
  %y = qf.matmul %x, %w : !x, !qf.weight<1000x4096, #qf.enc<uint4, group = 64, scale = f16, zero = int, sparse = 2:4>> -> tensor<?x1000xf16>
  return %y : tensor<?x1000xf16>
}
func.func @int8_down(%x: tensor<?x14336xf16>) -> tensor<?x512xf16> {
  %w = qf.weight_ref "int8" : !qf.weight<512x14336, #qf.enc<int8, per_channel, scale = f16, sparse = 2:4>>
  %y = qf.matmul %x, %w : tensor<?x14336xf16>, !qf.weight<512x14336, #qf.enc<int8, per_channel, scale = f16, sparse = 2:4>> -> tensor<?x512xf16>
  return %y : tensor<?x512xf16>
}
func.func @uint8_zero_float(%x: !x) -> tensor<?x256xf16> {
  %w = qf.weight_ref "uint8" : !qf.weight<256x4096, #qf.enc<uint8, group = 64, scale = f16, zero = float, sparse = 2:4>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x4096, #qf.enc<uint8, group = 64, scale = f16, zero = float, sparse = 2:4>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @fp8(%x: !x) -> tensor<?x512xf16> {
  %w = qf.weight_ref "fp8" : !qf.weight<512x4096, #qf.enc<fp8e4m3, per_channel, scale = f32, sparse = 2:4>>
  %y = qf.matmul %x, %w : !x, !qf.weight<512x4096, #qf.enc<fp8e4m3, per_channel, scale = f32, sparse = 2:4>> -> tensor<?x512xf16>
  return %y : tensor<?x512xf16>
}
func.func @gate_up(%x: !x) -> tensor<?x1024xf16> {
  %g = qf.weight_ref "gate" : !qf.weight<1024x4096, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>>
  %u = qf.weight_ref "up" : !qf.weight<1024x4096, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>>
  %yg = qf.matmul %x, %g : !x, !qf.weight<1024x4096, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>> -> tensor<?x1024xf16>
  %yu = qf.matmul %x, %u : !x, !qf.weight<1024x4096, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>> -> tensor<?x1024xf16>
  %a = qf.silu_mul %yg, %yu : tensor<?x1024xf16>
  return %a : tensor<?x1024xf16>
}
