// A Llama decoder block without rotary and attention (the query stands in
// for the attention output), as python-frontend emits it: RMSNorm, q/k/v,
// o_proj and its residual add, RMSNorm, gate/up, silu_mul, down_proj and
// its residual add. Hidden 256, intermediate 512, int4 g128, dynamic M.
#int4 = #qf.enc<int4, group = 128, scale = f16>
func.func @block(%h: tensor<?x256xf16> {qf.name = "hidden"})
    -> (tensor<?x256xf16>, tensor<?x128xf16>, tensor<?x128xf16>) {
  %g0 = qf.tensor_ref "model.layers.0.input_layernorm.weight" : tensor<256xf16>
  %x0 = qf.rms_norm %h, %g0 {eps = 1.0e-05 : f32} : tensor<?x256xf16>, tensor<256xf16> -> tensor<?x256xf16>
  %wq = qf.weight_ref "model.layers.0.self_attn.q_proj" : !qf.weight<256x256, #int4>
  %q = qf.matmul %x0, %wq : tensor<?x256xf16>, !qf.weight<256x256, #int4> -> tensor<?x256xf16>
  %wk = qf.weight_ref "model.layers.0.self_attn.k_proj" : !qf.weight<128x256, #int4>
  %k = qf.matmul %x0, %wk : tensor<?x256xf16>, !qf.weight<128x256, #int4> -> tensor<?x128xf16>
  %wv = qf.weight_ref "model.layers.0.self_attn.v_proj" : !qf.weight<128x256, #int4>
  %v = qf.matmul %x0, %wv : tensor<?x256xf16>, !qf.weight<128x256, #int4> -> tensor<?x128xf16>
  %wo = qf.weight_ref "model.layers.0.self_attn.o_proj" : !qf.weight<256x256, #int4>
  %o = qf.matmul %q, %wo : tensor<?x256xf16>, !qf.weight<256x256, #int4> -> tensor<?x256xf16>
  %h1 = qf.add %h, %o : tensor<?x256xf16>
  %g1 = qf.tensor_ref "model.layers.0.post_attention_layernorm.weight" : tensor<256xf16>
  %x1 = qf.rms_norm %h1, %g1 {eps = 1.0e-05 : f32} : tensor<?x256xf16>, tensor<256xf16> -> tensor<?x256xf16>
  %wg = qf.weight_ref "model.layers.0.mlp.gate_proj" : !qf.weight<512x256, #int4>
  %gate = qf.matmul %x1, %wg : tensor<?x256xf16>, !qf.weight<512x256, #int4> -> tensor<?x512xf16>
  %wu = qf.weight_ref "model.layers.0.mlp.up_proj" : !qf.weight<512x256, #int4>
  %up = qf.matmul %x1, %wu : tensor<?x256xf16>, !qf.weight<512x256, #int4> -> tensor<?x512xf16>
  %act = qf.silu_mul %gate, %up : tensor<?x512xf16>
  %wd = qf.weight_ref "model.layers.0.mlp.down_proj" : !qf.weight<256x512, #int4>
  %down = qf.matmul %act, %wd : tensor<?x512xf16>, !qf.weight<256x512, #int4> -> tensor<?x256xf16>
  %h2 = qf.add %h1, %down : tensor<?x256xf16>
  return %h2, %k, %v : tensor<?x256xf16>, tensor<?x128xf16>, tensor<?x128xf16>
}
