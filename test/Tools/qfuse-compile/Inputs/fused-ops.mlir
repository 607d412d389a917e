// Each fusion of qf-fuse-* on inputs that come straight from the function
// arguments, so that `qfuse-bench --check` compares every fused launch with
// the C++ reference (a chained block, like llama-block.mlir, is checked by
// the whole-model tests instead): q/k/v sharing one launch behind an RMSNorm
// prologue (or the norm launch's output, where it stays a launch), gate/up
// with the prologue and the silu_mul epilogue, and a residual epilogue.
// int4 g128, dynamic M.
#int4 = #qf.enc<int4, group = 128, scale = f16>
func.func @fused(%x: tensor<?x256xf16> {qf.name = "x"},
                 %x2: tensor<?x256xf16> {qf.name = "x2"},
                 %a: tensor<?x512xf16> {qf.name = "a"},
                 %r: tensor<?x256xf16> {qf.name = "r"})
    -> (tensor<?x256xf16>, tensor<?x128xf16>, tensor<?x128xf16>,
        tensor<?x512xf16>, tensor<?x256xf16>) {
  %g = qf.tensor_ref "attn_norm.weight" : tensor<256xf16>
  %n = qf.rms_norm %x, %g {eps = 1.0e-05 : f32} : tensor<?x256xf16>, tensor<256xf16> -> tensor<?x256xf16>
  %wq = qf.weight_ref "q_proj" : !qf.weight<256x256, #int4>
  %q = qf.matmul %n, %wq : tensor<?x256xf16>, !qf.weight<256x256, #int4> -> tensor<?x256xf16>
  %wk = qf.weight_ref "k_proj" : !qf.weight<128x256, #int4>
  %k = qf.matmul %n, %wk : tensor<?x256xf16>, !qf.weight<128x256, #int4> -> tensor<?x128xf16>
  %wv = qf.weight_ref "v_proj" : !qf.weight<128x256, #int4>
  %v = qf.matmul %n, %wv : tensor<?x256xf16>, !qf.weight<128x256, #int4> -> tensor<?x128xf16>
  %g2 = qf.tensor_ref "mlp_norm.weight" : tensor<256xf16>
  %n2 = qf.rms_norm %x2, %g2 {eps = 1.0e-05 : f32} : tensor<?x256xf16>, tensor<256xf16> -> tensor<?x256xf16>
  %wg = qf.weight_ref "gate_proj" : !qf.weight<512x256, #int4>
  %gate = qf.matmul %n2, %wg : tensor<?x256xf16>, !qf.weight<512x256, #int4> -> tensor<?x512xf16>
  %wu = qf.weight_ref "up_proj" : !qf.weight<512x256, #int4>
  %up = qf.matmul %n2, %wu : tensor<?x256xf16>, !qf.weight<512x256, #int4> -> tensor<?x512xf16>
  %act = qf.silu_mul %gate, %up : tensor<?x512xf16>
  %wd = qf.weight_ref "down_proj" : !qf.weight<256x512, #int4>
  %d = qf.matmul %a, %wd : tensor<?x512xf16>, !qf.weight<256x512, #int4> -> tensor<?x256xf16>
  %h = qf.add %r, %d : tensor<?x256xf16>
  return %q, %k, %v, %act, %h : tensor<?x256xf16>, tensor<?x128xf16>, tensor<?x128xf16>, tensor<?x512xf16>, tensor<?x256xf16>
}
