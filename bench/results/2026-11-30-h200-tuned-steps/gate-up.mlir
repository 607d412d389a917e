func.func @gate_up(%x: tensor<?x4096xf16> {qf.name = "x"}) -> tensor<?x14336xf16> {
  %w = qf.weight_ref "gate" : !qf.weight<14336x4096, #qf.enc<int4, group = 128, scale = f16>>
  %u = qf.weight_ref "up" : !qf.weight<14336x4096, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.fused_matmul %x, %w up(%u : !qf.weight<14336x4096, #qf.enc<int4, group = 128, scale = f16>>) {activation = #qf<activation silu_mul>} : tensor<?x4096xf16>, !qf.weight<14336x4096, #qf.enc<int4, group = 128, scale = f16>> -> tensor<?x14336xf16>
  return %y : tensor<?x14336xf16>
}
