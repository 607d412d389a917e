// Every 2:4 format the mma.sp kernel decodes, in small shapes that are not
// whole 32 x 128 tiles of the 2:4 fragment layout (N past a tile row, K a
// whole number of tiles or half a tile past them), and silu_mul over a 2:4
// gate and up. (Shapes the layout pads within a tile's columns:
// unittests/Format/SparseMmaLayoutTest.cpp.)
// Read by ../mma-sparse24.mlir.
func.func @f16(%x: tensor<?x384xf16>) -> tensor<?x96xf16> {
  %w = qf.weight_ref "f16" : !qf.weight<96x384, #qf.enc<f16, sparse = 2:4>>
  %y = qf.matmul %x, %w : tensor<?x384xf16>, !qf.weight<96x384, #qf.enc<f16, sparse = 2:4>> -> tensor<?x96xf16>
  return %y : tensor<?x96xf16>
}
func.func @int4(%x: tensor<?x512xf16>) -> tensor<?x72xf16> {
  %w = qf.weight_ref "int4" : !qf.weight<72x512, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>>
  %y = qf.matmul %x, %w : tensor<?x512xf16>, !qf.weight<72x512, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>> -> tensor<?x72xf16>
  return %y : tensor<?x72xf16>
}
func.func @uint4_zero(%x: tensor<?x320xf16>) -> tensor<?x40xf16> {
  %w = qf.weight_ref "uint4_zero" : !qf.weight<40x320, #qf.enc<uint4, group = 64, scale = f16, zero = int, sparse = 2:4>>
  %y = qf.matmul %x, %w : tensor<?x320xf16>, !qf.weight<40x320, #qf.enc<uint4, group = 64, scale = f16, zero = int, sparse = 2:4>> -> tensor<?x40xf16>
  return %y : tensor<?x40xf16>
}
func.func @int8(%x: tensor<?x448xf16>) -> tensor<?x64xf16> {
  %w = qf.weight_ref "int8" : !qf.weight<64x448, #qf.enc<int8, per_channel, scale = f16, sparse = 2:4>>
  %y = qf.matmul %x, %w : tensor<?x448xf16>, !qf.weight<64x448, #qf.enc<int8, per_channel, scale = f16, sparse = 2:4>> -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}
func.func @uint8_zero_float(%x: tensor<?x256xf16>) -> tensor<?x33xf16> {
  %w = qf.weight_ref "uint8_zero_float" : !qf.weight<33x256, #qf.enc<uint8, group = 64, scale = f16, zero = float, sparse = 2:4>>
  %y = qf.matmul %x, %w : tensor<?x256xf16>, !qf.weight<33x256, #qf.enc<uint8, group = 64, scale = f16, zero = float, sparse = 2:4>> -> tensor<?x33xf16>
  return %y : tensor<?x33xf16>
}
func.func @fp8(%x: tensor<?x192xf16>) -> tensor<?x100xf16> {
  %w = qf.weight_ref "fp8" : !qf.weight<100x192, #qf.enc<fp8e4m3, per_channel, scale = f32, sparse = 2:4>>
  %y = qf.matmul %x, %w : tensor<?x192xf16>, !qf.weight<100x192, #qf.enc<fp8e4m3, per_channel, scale = f32, sparse = 2:4>> -> tensor<?x100xf16>
  return %y : tensor<?x100xf16>
}
func.func @gate_up(%x: tensor<?x256xf16>) -> tensor<?x160xf16> {
  %g = qf.weight_ref "gate" : !qf.weight<160x256, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>>
  %u = qf.weight_ref "up" : !qf.weight<160x256, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>>
  %yg = qf.matmul %x, %g : tensor<?x256xf16>, !qf.weight<160x256, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>> -> tensor<?x160xf16>
  %yu = qf.matmul %x, %u : tensor<?x256xf16>, !qf.weight<160x256, #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>> -> tensor<?x160xf16>
  %a = qf.silu_mul %yg, %yu : tensor<?x160xf16>
  return %a : tensor<?x160xf16>
}
