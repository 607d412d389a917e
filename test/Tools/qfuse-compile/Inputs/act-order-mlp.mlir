// An act_order MLP: gate and up on one input, silu_mul, down_proj.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
func.func @mlp(%x: tensor<?x512xf16>) -> tensor<?x512xf16> {
  %wg = qf.weight_ref "gate_proj" : !qf.weight<1024x512, #ao>
  %wu = qf.weight_ref "up_proj" : !qf.weight<1024x512, #ao>
  %wd = qf.weight_ref "down_proj" : !qf.weight<512x1024, #ao>
  %g = qf.matmul %x, %wg : tensor<?x512xf16>, !qf.weight<1024x512, #ao> -> tensor<?x1024xf16>
  %u = qf.matmul %x, %wu : tensor<?x512xf16>, !qf.weight<1024x512, #ao> -> tensor<?x1024xf16>
  %a = qf.silu_mul %g, %u : tensor<?x1024xf16>
  %y = qf.matmul %a, %wd : tensor<?x1024xf16>, !qf.weight<512x1024, #ao> -> tensor<?x512xf16>
  return %y : tensor<?x512xf16>
}
