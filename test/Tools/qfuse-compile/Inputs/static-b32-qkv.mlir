// q/k/v reading one static batch of 32 rows (fusion.mlir: a module without
// --batch-sizes is compiled for its static batch).
#int4 = #qf.enc<int4, group = 128, scale = f16>
func.func @qkv(%x: tensor<32x512xf16> {qf.name = "x"}) -> (tensor<32x512xf16>, tensor<32x256xf16>, tensor<32x256xf16>) {
  %wq = qf.weight_ref "q" : !qf.weight<512x512, #int4>
  %wk = qf.weight_ref "k" : !qf.weight<256x512, #int4>
  %wv = qf.weight_ref "v" : !qf.weight<256x512, #int4>
  %q = qf.matmul %x, %wq : tensor<32x512xf16>, !qf.weight<512x512, #int4> -> tensor<32x512xf16>
  %k = qf.matmul %x, %wk : tensor<32x512xf16>, !qf.weight<256x512, #int4> -> tensor<32x256xf16>
  %v = qf.matmul %x, %wv : tensor<32x512xf16>, !qf.weight<256x512, #int4> -> tensor<32x256xf16>
  return %q, %k, %v : tensor<32x512xf16>, tensor<32x256xf16>, tensor<32x256xf16>
}
