// The MLP projections of one Qwen2.5-1.5B decoder layer (hidden 1536,
// intermediate 8960): NF4 gate/up weights (bitsandbytes: blocks of 64, f32
// absmax) and an int8 per-channel down projection. The SiLU-gated product
// between them joins when the decode-layer lowering lands (issue 6).
#nf4 = #qf.enc<nf4, group = 64, scale = f32>
#int8 = #qf.enc<int8, per_channel, scale = f16>

func.func @mlp_projections(%x: tensor<?x1536xf16>, %h: tensor<?x8960xf16>)
    -> (tensor<?x8960xf16>, tensor<?x8960xf16>, tensor<?x1536xf16>) {
  %wg = qf.weight_ref "model.layers.0.mlp.gate_proj" : !qf.weight<8960x1536, #nf4>
  %wu = qf.weight_ref "model.layers.0.mlp.up_proj" : !qf.weight<8960x1536, #nf4>
  %wd = qf.weight_ref "model.layers.0.mlp.down_proj" : !qf.weight<1536x8960, #int8>
  %g = qf.matmul %x, %wg : tensor<?x1536xf16>, !qf.weight<8960x1536, #nf4> -> tensor<?x8960xf16>
  %u = qf.matmul %x, %wu : tensor<?x1536xf16>, !qf.weight<8960x1536, #nf4> -> tensor<?x8960xf16>
  %y = qf.matmul %h, %wd : tensor<?x8960xf16>, !qf.weight<1536x8960, #int8> -> tensor<?x1536xf16>
  return %g, %u, %y : tensor<?x8960xf16>, tensor<?x8960xf16>, tensor<?x1536xf16>
}
