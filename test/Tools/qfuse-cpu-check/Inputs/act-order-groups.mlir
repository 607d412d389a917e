// act_order projections that share their input, as a decoder layer has
// them: q/k/v (a qf.group after qf-fuse-shared-input) and gate/up under
// silu_mul (one gated matmul after qf-fuse-gated-mlp), int4 group 128 and
// uint4 group 64 with zero points. Shared by the qfuse-cpu-check act_order
// group test and the runtime's PermGuards GPU test.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#aoz = #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order>
func.func @qkv(%x: tensor<?x512xf16>) -> (tensor<?x512xf16>, tensor<?x128xf16>, tensor<?x128xf16>) {
  %wq = qf.weight_ref "q_proj" : !qf.weight<512x512, #ao>
  %wk = qf.weight_ref "k_proj" : !qf.weight<128x512, #ao>
  %wv = qf.weight_ref "v_proj" : !qf.weight<128x512, #ao>
  %q = qf.matmul %x, %wq : tensor<?x512xf16>, !qf.weight<512x512, #ao> -> tensor<?x512xf16>
  %k = qf.matmul %x, %wk : tensor<?x512xf16>, !qf.weight<128x512, #ao> -> tensor<?x128xf16>
  %v = qf.matmul %x, %wv : tensor<?x512xf16>, !qf.weight<128x512, #ao> -> tensor<?x128xf16>
  return %q, %k, %v : tensor<?x512xf16>, tensor<?x128xf16>, tensor<?x128xf16>
}
func.func @gate_up(%x: tensor<?x512xf16>) -> tensor<?x1024xf16> {
  %wg = qf.weight_ref "gate_proj" : !qf.weight<1024x512, #aoz>
  %wu = qf.weight_ref "up_proj" : !qf.weight<1024x512, #aoz>
  %g = qf.matmul %x, %wg : tensor<?x512xf16>, !qf.weight<1024x512, #aoz> -> tensor<?x1024xf16>
  %u = qf.matmul %x, %wu : tensor<?x512xf16>, !qf.weight<1024x512, #aoz> -> tensor<?x1024xf16>
  %a = qf.silu_mul %g, %u : tensor<?x1024xf16>
  return %a : tensor<?x1024xf16>
}
