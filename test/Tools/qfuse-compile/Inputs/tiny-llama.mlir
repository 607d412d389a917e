// The decode step of a tiny Llama (hidden 256, 4 heads / 2 kv heads of 64,
// 2 layers, intermediate 512, vocab 1000, KV cache of 512 positions):
// PYTHONPATH=python-frontend python3 -m qfuse emit --config CONFIG
//   --encoding int4-g128 --batch dynamic
#int4_g128 = #qf.enc<int4, group = 128, scale = f16>
module attributes {qf.model = {architecture = "LlamaForCausalLM", vocab_size = 1000 : i64, hidden_size = 256 : i64, intermediate_size = 512 : i64, num_layers = 2 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64, max_seq = 512 : i64, tie_word_embeddings = false, encoding = "int4-g128"}} {
  func.func @decode_step(%ids: tensor<?xi32> {qf.name = "input_ids"}, %pos: tensor<?xi32> {qf.name = "positions"}, %kc0: tensor<512x128xf16> {qf.name = "model.layers.0.self_attn.key_cache"}, %vc0: tensor<512x128xf16> {qf.name = "model.layers.0.self_attn.value_cache"}, %kc1: tensor<512x128xf16> {qf.name = "model.layers.1.self_attn.key_cache"}, %vc1: tensor<512x128xf16> {qf.name = "model.layers.1.self_attn.value_cache"}) -> (tensor<?xi32> {qf.name = "next_token"}, tensor<?x1000xf16> {qf.name = "logits"}, tensor<512x128xf16>, tensor<512x128xf16>, tensor<512x128xf16>, tensor<512x128xf16>) {
    %embed = qf.tensor_ref "model.embed_tokens.weight" : tensor<1000x256xf16>
    %h = qf.embedding %embed, %ids : tensor<1000x256xf16>, tensor<?xi32> -> tensor<?x256xf16>
    // layer 0
    %g0 = qf.tensor_ref "model.layers.0.input_layernorm.weight" : tensor<256xf16>
    %x0 = qf.rms_norm %h, %g0 {eps = 1.0e-05 : f32} : tensor<?x256xf16>, tensor<256xf16> -> tensor<?x256xf16>
    %wq0 = qf.weight_ref "model.layers.0.self_attn.q_proj" : !qf.weight<256x256, #int4_g128>
    %q0 = qf.matmul %x0, %wq0 : tensor<?x256xf16>, !qf.weight<256x256, #int4_g128> -> tensor<?x256xf16>
    %wk0 = qf.weight_ref "model.layers.0.self_attn.k_proj" : !qf.weight<128x256, #int4_g128>
    %k0 = qf.matmul %x0, %wk0 : tensor<?x256xf16>, !qf.weight<128x256, #int4_g128> -> tensor<?x128xf16>
    %wv0 = qf.weight_ref "model.layers.0.self_attn.v_proj" : !qf.weight<128x256, #int4_g128>
    %v0 = qf.matmul %x0, %wv0 : tensor<?x256xf16>, !qf.weight<128x256, #int4_g128> -> tensor<?x128xf16>
    %qr0 = qf.rotary %q0, %pos {head_dim = 64 : i64, theta = 10000.0 : f64} : tensor<?x256xf16>, tensor<?xi32> -> tensor<?x256xf16>
    %kr0 = qf.rotary %k0, %pos {head_dim = 64 : i64, theta = 10000.0 : f64} : tensor<?x128xf16>, tensor<?xi32> -> tensor<?x128xf16>
    %attn0, %attn0_kc, %attn0_vc = qf.attention %qr0, %kr0, %v0, %kc0, %vc0, %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64} : (tensor<?x256xf16>, tensor<?x128xf16>, tensor<?x128xf16>, tensor<512x128xf16>, tensor<512x128xf16>, tensor<?xi32>) -> (tensor<?x256xf16>, tensor<512x128xf16>, tensor<512x128xf16>)
    %wo0 = qf.weight_ref "model.layers.0.self_attn.o_proj" : !qf.weight<256x256, #int4_g128>
    %o0 = qf.matmul %attn0, %wo0 : tensor<?x256xf16>, !qf.weight<256x256, #int4_g128> -> tensor<?x256xf16>
    %h0a = qf.add %h, %o0 : tensor<?x256xf16>
    %g0m = qf.tensor_ref "model.layers.0.post_attention_layernorm.weight" : tensor<256xf16>
    %x0m = qf.rms_norm %h0a, %g0m {eps = 1.0e-05 : f32} : tensor<?x256xf16>, tensor<256xf16> -> tensor<?x256xf16>
    %wgate0 = qf.weight_ref "model.layers.0.mlp.gate_proj" : !qf.weight<512x256, #int4_g128>
    %gate0 = qf.matmul %x0m, %wgate0 : tensor<?x256xf16>, !qf.weight<512x256, #int4_g128> -> tensor<?x512xf16>
    %wup0 = qf.weight_ref "model.layers.0.mlp.up_proj" : !qf.weight<512x256, #int4_g128>
    %up0 = qf.matmul %x0m, %wup0 : tensor<?x256xf16>, !qf.weight<512x256, #int4_g128> -> tensor<?x512xf16>
    %act0 = qf.silu_mul %gate0, %up0 : tensor<?x512xf16>
    %wdown0 = qf.weight_ref "model.layers.0.mlp.down_proj" : !qf.weight<256x512, #int4_g128>
    %down0 = qf.matmul %act0, %wdown0 : tensor<?x512xf16>, !qf.weight<256x512, #int4_g128> -> tensor<?x256xf16>
    %h0 = qf.add %h0a, %down0 : tensor<?x256xf16>
    // layer 1
    %g1 = qf.tensor_ref "model.layers.1.input_layernorm.weight" : tensor<256xf16>
    %x1 = qf.rms_norm %h0, %g1 {eps = 1.0e-05 : f32} : tensor<?x256xf16>, tensor<256xf16> -> tensor<?x256xf16>
    %wq1 = qf.weight_ref "model.layers.1.self_attn.q_proj" : !qf.weight<256x256, #int4_g128>
    %q1 = qf.matmul %x1, %wq1 : tensor<?x256xf16>, !qf.weight<256x256, #int4_g128> -> tensor<?x256xf16>
    %wk1 = qf.weight_ref "model.layers.1.self_attn.k_proj" : !qf.weight<128x256, #int4_g128>
    %k1 = qf.matmul %x1, %wk1 : tensor<?x256xf16>, !qf.weight<128x256, #int4_g128> -> tensor<?x128xf16>
    %wv1 = qf.weight_ref "model.layers.1.self_attn.v_proj" : !qf.weight<128x256, #int4_g128>
    %v1 = qf.matmul %x1, %wv1 : tensor<?x256xf16>, !qf.weight<128x256, #int4_g128> -> tensor<?x128xf16>
    %qr1 = qf.rotary %q1, %pos {head_dim = 64 : i64, theta = 10000.0 : f64} : tensor<?x256xf16>, tensor<?xi32> -> tensor<?x256xf16>
    %kr1 = qf.rotary %k1, %pos {head_dim = 64 : i64, theta = 10000.0 : f64} : tensor<?x128xf16>, tensor<?xi32> -> tensor<?x128xf16>
    %attn1, %attn1_kc, %attn1_vc = qf.attention %qr1, %kr1, %v1, %kc1, %vc1, %pos {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64} : (tensor<?x256xf16>, tensor<?x128xf16>, tensor<?x128xf16>, tensor<512x128xf16>, tensor<512x128xf16>, tensor<?xi32>) -> (tensor<?x256xf16>, tensor<512x128xf16>, tensor<512x128xf16>)
    %wo1 = qf.weight_ref "model.layers.1.self_attn.o_proj" : !qf.weight<256x256, #int4_g128>
    %o1 = qf.matmul %attn1, %wo1 : tensor<?x256xf16>, !qf.weight<256x256, #int4_g128> -> tensor<?x256xf16>
    %h1a = qf.add %h0, %o1 : tensor<?x256xf16>
    %g1m = qf.tensor_ref "model.layers.1.post_attention_layernorm.weight" : tensor<256xf16>
    %x1m = qf.rms_norm %h1a, %g1m {eps = 1.0e-05 : f32} : tensor<?x256xf16>, tensor<256xf16> -> tensor<?x256xf16>
    %wgate1 = qf.weight_ref "model.layers.1.mlp.gate_proj" : !qf.weight<512x256, #int4_g128>
    %gate1 = qf.matmul %x1m, %wgate1 : tensor<?x256xf16>, !qf.weight<512x256, #int4_g128> -> tensor<?x512xf16>
    %wup1 = qf.weight_ref "model.layers.1.mlp.up_proj" : !qf.weight<512x256, #int4_g128>
    %up1 = qf.matmul %x1m, %wup1 : tensor<?x256xf16>, !qf.weight<512x256, #int4_g128> -> tensor<?x512xf16>
    %act1 = qf.silu_mul %gate1, %up1 : tensor<?x512xf16>
    %wdown1 = qf.weight_ref "model.layers.1.mlp.down_proj" : !qf.weight<256x512, #int4_g128>
    %down1 = qf.matmul %act1, %wdown1 : tensor<?x512xf16>, !qf.weight<256x512, #int4_g128> -> tensor<?x256xf16>
    %h1 = qf.add %h1a, %down1 : tensor<?x256xf16>
    // final norm, lm_head, greedy token
    %gnorm = qf.tensor_ref "model.norm.weight" : tensor<256xf16>
    %xnorm = qf.rms_norm %h1, %gnorm {eps = 1.0e-05 : f32} : tensor<?x256xf16>, tensor<256xf16> -> tensor<?x256xf16>
    %wlogits = qf.weight_ref "lm_head" : !qf.weight<1000x256, #int4_g128>
    %logits = qf.matmul %xnorm, %wlogits : tensor<?x256xf16>, !qf.weight<1000x256, #int4_g128> -> tensor<?x1000xf16>
    %next = qf.argmax %logits : tensor<?x1000xf16> -> tensor<?xi32>
    return %next, %logits, %attn0_kc, %attn0_vc, %attn1_kc, %attn1_vc : tensor<?xi32>, tensor<?x1000xf16>, tensor<512x128xf16>, tensor<512x128xf16>, tensor<512x128xf16>, tensor<512x128xf16>
  }
}
