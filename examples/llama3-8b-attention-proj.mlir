// The attention projections of one Llama-3-8B decoder layer (hidden 4096,
// 32 heads, 8 KV heads of 128) with int4 group-128 weights, as a user or the
// Python frontend writes them: dequantize, then matmul.
#int4 = #qf.enc<int4, group = 128, scale = f16>

func.func @attention_projections(%x: tensor<?x4096xf16>)
    -> (tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>) {
  %wq = qf.weight_ref "model.layers.0.self_attn.q_proj" : !qf.weight<4096x4096, #int4>
  %wk = qf.weight_ref "model.layers.0.self_attn.k_proj" : !qf.weight<1024x4096, #int4>
  %wv = qf.weight_ref "model.layers.0.self_attn.v_proj" : !qf.weight<1024x4096, #int4>
  %dq = qf.dequantize %wq : !qf.weight<4096x4096, #int4> -> tensor<4096x4096xf16>
  %dk = qf.dequantize %wk : !qf.weight<1024x4096, #int4> -> tensor<1024x4096xf16>
  %dv = qf.dequantize %wv : !qf.weight<1024x4096, #int4> -> tensor<1024x4096xf16>
  %q = qf.matmul %x, %dq : tensor<?x4096xf16>, tensor<4096x4096xf16> -> tensor<?x4096xf16>
  %k = qf.matmul %x, %dk : tensor<?x4096xf16>, tensor<1024x4096xf16> -> tensor<?x1024xf16>
  %v = qf.matmul %x, %dv : tensor<?x4096xf16>, tensor<1024x4096xf16> -> tensor<?x1024xf16>
  return %q, %k, %v : tensor<?x4096xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>
}
