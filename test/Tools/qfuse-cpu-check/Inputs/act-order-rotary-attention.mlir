// The rotary form of act-order-attention.mlir (rope_theta: one launch
// rotates, writes the caches and attends, as a decoder layer runs it),
// read by an act_order o_proj: up to batch 16 that launch stores its
// output in o_proj's sorted column order. Compiled by
// `ninja qfuse-act-order-artifacts` for the runtime's PermGuards GPU test.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
func.func @rotary_attention_o(%q: tensor<?x512xf16>, %k: tensor<?x128xf16>, %v: tensor<?x128xf16>, %kc: tensor<64x128xf16>, %vc: tensor<64x128xf16>, %pos: tensor<?xi32>) -> (tensor<?x512xf16>, tensor<64x128xf16>, tensor<64x128xf16>) {
  %a, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {num_heads = 8 : i64, num_kv_heads = 2 : i64, head_dim = 64 : i64, rope_theta = 10000.0 : f64} : (tensor<?x512xf16>, tensor<?x128xf16>, tensor<?x128xf16>, tensor<64x128xf16>, tensor<64x128xf16>, tensor<?xi32>) -> (tensor<?x512xf16>, tensor<64x128xf16>, tensor<64x128xf16>)
  %wo = qf.weight_ref "o_proj" : !qf.weight<512x512, #ao>
  %y = qf.matmul %a, %wo : tensor<?x512xf16>, !qf.weight<512x512, #ao> -> tensor<?x512xf16>
  return %y, %kc1, %vc1 : tensor<?x512xf16>, tensor<64x128xf16>, tensor<64x128xf16>
}
