// act_order down_proj reading a silu_mul of its own (gate/up not fused into
// the gated kernel), as --fuse=default leaves it on sm_90a from batch 128.
// After qf-fuse-act-order-silu-mul the silu_mul is the matmul's prologue,
// which qf-to-gpu runs as one launch writing the products in the weight's
// sorted column order (docs/act-order.md).
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#aoz = #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order>
func.func @down(%g: tensor<?x1024xf16>, %u: tensor<?x1024xf16>) -> tensor<?x512xf16> {
  %w = qf.weight_ref "down_proj" : !qf.weight<512x1024, #ao>
  %a = qf.silu_mul %g, %u : tensor<?x1024xf16>
  %y = qf.matmul %a, %w : tensor<?x1024xf16>, !qf.weight<512x1024, #ao> -> tensor<?x512xf16>
  return %y : tensor<?x512xf16>
}
func.func @down_zero(%g: tensor<?x768xf16>, %u: tensor<?x768xf16>) -> tensor<?x256xf16> {
  %w = qf.weight_ref "down_proj_z" : !qf.weight<256x768, #aoz>
  %a = qf.silu_mul %g, %u : tensor<?x768xf16>
  %y = qf.matmul %a, %w : tensor<?x768xf16>, !qf.weight<256x768, #aoz> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
// act_order with 2:4 keeps the checkpoint's column order (no perm): the
// prologue runs as the plain silu_mul launch before the fallback's gemm.
func.func @down_sparse(%g: tensor<?x512xf16>, %u: tensor<?x512xf16>) -> tensor<?x256xf16> {
  %w = qf.weight_ref "down_proj_sp24" : !qf.weight<256x512, #qf.enc<int4, group = 128, scale = f16, act_order, sparse = 2:4>>
  %a = qf.silu_mul %g, %u : tensor<?x512xf16>
  %y = qf.matmul %a, %w : tensor<?x512xf16>, !qf.weight<256x512, #qf.enc<int4, group = 128, scale = f16, act_order, sparse = 2:4>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
