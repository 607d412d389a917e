// One int4-g128 projection of 4096 x 4096 with a dynamic M: large enough
// that sm_90a runs wgmma from batch 128 (docs/defaults.md).
func.func @proj(%x: tensor<?x4096xf16> {qf.name = "x"}) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "w" : !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x4096xf16>, !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}
