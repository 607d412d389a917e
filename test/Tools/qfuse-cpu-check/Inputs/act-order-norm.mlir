// act_order projections reading an RMSNorm's output, as a decoder layer has
// them: q/k/v (one qf.group), gate/up under silu_mul, and a lone weight.
// After qf-fuse-act-order-norm the norm is each one's prologue, which
// qf-to-gpu runs as one norm launch writing the rows in the first weight's
// sorted column order (docs/act-order.md). Shared by the qfuse-cpu-check
// test and the runtime's PermGuards GPU test.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#aoz = #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order>
func.func @qkv(%h: tensor<?x512xf16>, %g: tensor<512xf16>) -> (tensor<?x512xf16>, tensor<?x128xf16>, tensor<?x128xf16>) {
  %wq = qf.weight_ref "q_proj" : !qf.weight<512x512, #ao>
  %wk = qf.weight_ref "k_proj" : !qf.weight<128x512, #ao>
  %wv = qf.weight_ref "v_proj" : !qf.weight<128x512, #ao>
  %x = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<?x512xf16>, tensor<512xf16> -> tensor<?x512xf16>
  %q = qf.matmul %x, %wq : tensor<?x512xf16>, !qf.weight<512x512, #ao> -> tensor<?x512xf16>
  %k = qf.matmul %x, %wk : tensor<?x512xf16>, !qf.weight<128x512, #ao> -> tensor<?x128xf16>
  %v = qf.matmul %x, %wv : tensor<?x512xf16>, !qf.weight<128x512, #ao> -> tensor<?x128xf16>
  return %q, %k, %v : tensor<?x512xf16>, tensor<?x128xf16>, tensor<?x128xf16>
}
func.func @gate_up(%h: tensor<?x512xf16>, %g: tensor<512xf16>) -> tensor<?x1024xf16> {
  %wg = qf.weight_ref "gate_proj" : !qf.weight<1024x512, #aoz>
  %wu = qf.weight_ref "up_proj" : !qf.weight<1024x512, #aoz>
  %x = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<?x512xf16>, tensor<512xf16> -> tensor<?x512xf16>
  %gt = qf.matmul %x, %wg : tensor<?x512xf16>, !qf.weight<1024x512, #aoz> -> tensor<?x1024xf16>
  %u = qf.matmul %x, %wu : tensor<?x512xf16>, !qf.weight<1024x512, #aoz> -> tensor<?x1024xf16>
  %a = qf.silu_mul %gt, %u : tensor<?x1024xf16>
  return %a : tensor<?x1024xf16>
}
func.func @lone(%h: tensor<?x1024xf16>, %g: tensor<1024xf16>) -> tensor<?x512xf16> {
  %w = qf.weight_ref "o_proj" : !qf.weight<512x1024, #ao>
  %x = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<?x1024xf16>, tensor<1024xf16> -> tensor<?x1024xf16>
  %y = qf.matmul %x, %w : tensor<?x1024xf16>, !qf.weight<512x1024, #ao> -> tensor<?x512xf16>
  return %y : tensor<?x512xf16>
}
