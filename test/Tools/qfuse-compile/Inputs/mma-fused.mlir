// The fusions the tensor-core kernel takes, on inputs that come straight
// from the function arguments, so that `qfuse-bench --check` compares every
// launch with the C++ reference at batches past 8 (fused-ops.mlir puts an
// RMSNorm prologue in front, which that kernel does not fuse, so its
// matmuls there are checked on the norm launch's output): q/k/v in one
// qf.group launch (qf-fuse-shared-input), gate/up with the silu_mul epilogue
// (written fused: qfuse-compile does not fuse it past batch 8 until it is
// GPU-checked), and a residual epilogue. int4 g128 and an 8-bit gate/up,
// dynamic M.
#int4 = #qf.enc<int4, group = 128, scale = f16>
#int8 = #qf.enc<int8, per_channel, scale = f16>
func.func @mma_fused(%x: tensor<?x512xf16> {qf.name = "x"},
                     %a: tensor<?x1024xf16> {qf.name = "a"},
                     %r: tensor<?x512xf16> {qf.name = "r"})
    -> (tensor<?x512xf16>, tensor<?x256xf16>, tensor<?x256xf16>,
        tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<?x512xf16>) {
  %wq = qf.weight_ref "q_proj" : !qf.weight<512x512, #int4>
  %q = qf.matmul %x, %wq : tensor<?x512xf16>, !qf.weight<512x512, #int4> -> tensor<?x512xf16>
  %wk = qf.weight_ref "k_proj" : !qf.weight<256x512, #int4>
  %k = qf.matmul %x, %wk : tensor<?x512xf16>, !qf.weight<256x512, #int4> -> tensor<?x256xf16>
  %wv = qf.weight_ref "v_proj" : !qf.weight<256x512, #int4>
  %v = qf.matmul %x, %wv : tensor<?x512xf16>, !qf.weight<256x512, #int4> -> tensor<?x256xf16>
  %wg = qf.weight_ref "gate_proj" : !qf.weight<1024x512, #int4>
  %wu = qf.weight_ref "up_proj" : !qf.weight<1024x512, #int4>
  %act = qf.fused_matmul %x, %wg up(%wu : !qf.weight<1024x512, #int4>) {activation = #qf<activation silu_mul>}
      : tensor<?x512xf16>, !qf.weight<1024x512, #int4> -> tensor<?x1024xf16>
  %wg8 = qf.weight_ref "gate8_proj" : !qf.weight<1024x512, #int8>
  %wu8 = qf.weight_ref "up8_proj" : !qf.weight<1024x512, #int8>
  %act8 = qf.fused_matmul %x, %wg8 up(%wu8 : !qf.weight<1024x512, #int8>) {activation = #qf<activation silu_mul>}
      : tensor<?x512xf16>, !qf.weight<1024x512, #int8> -> tensor<?x1024xf16>
  %wd = qf.weight_ref "down_proj" : !qf.weight<512x1024, #int4>
  %d = qf.matmul %a, %wd : tensor<?x1024xf16>, !qf.weight<512x1024, #int4> -> tensor<?x512xf16>
  %h = qf.add %r, %d : tensor<?x512xf16>
  return %q, %k, %v, %act, %act8, %h : tensor<?x512xf16>, tensor<?x256xf16>, tensor<?x256xf16>, tensor<?x1024xf16>, tensor<?x1024xf16>, tensor<?x512xf16>
}
