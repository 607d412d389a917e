// An act_order weight whose gathered activations at batch 8 (K x 8 x 2 =
// 176128 bytes of shared memory) fit a Hopper block (227 KB) but not an
// Ampere one (163 KB): the limit comes from the chip's #qf.target.
!x = tensor<?x11008xf16>
func.func @down_act_order(%x: !x) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "down" : !qf.weight<4096x11008, #qf.enc<int4, group = 128, scale = f16, act_order>>
  %y = qf.matmul %x, %w : !x, !qf.weight<4096x11008, #qf.enc<int4, group = 128, scale = f16, act_order>> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}
