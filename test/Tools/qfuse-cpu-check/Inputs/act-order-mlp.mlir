// MLPs whose down_proj is act_order and reads the gated gate/up matmul
// (qf-fuse-gated-mlp): qf-to-gpu has the gated kernel store its output in
// down_proj's sorted column order (no permute launch). Gate and up
// act_order too (int4 group 128), or plain (int4 group 128) before an
// asymmetric uint4 group 64 down_proj. Read by
// test/Tools/qfuse-compile/act-order-sorted-output.mlir and, compiled by
// `ninja qfuse-act-order-artifacts`, the runtime's PermGuards GPU test.
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
#aoz = #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order>
#plain = #qf.enc<int4, group = 128, scale = f16>
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
func.func @mlp_plain_gate_up(%x: tensor<?x512xf16>) -> tensor<?x512xf16> {
  %wg = qf.weight_ref "gate_plain" : !qf.weight<1536x512, #plain>
  %wu = qf.weight_ref "up_plain" : !qf.weight<1536x512, #plain>
  %wd = qf.weight_ref "down_asym" : !qf.weight<512x1536, #aoz>
  %g = qf.matmul %x, %wg : tensor<?x512xf16>, !qf.weight<1536x512, #plain> -> tensor<?x1536xf16>
  %u = qf.matmul %x, %wu : tensor<?x512xf16>, !qf.weight<1536x512, #plain> -> tensor<?x1536xf16>
  %a = qf.silu_mul %g, %u : tensor<?x1536xf16>
  %y = qf.matmul %a, %wd : tensor<?x1536xf16>, !qf.weight<512x1536, #aoz> -> tensor<?x512xf16>
  return %y : tensor<?x512xf16>
}
