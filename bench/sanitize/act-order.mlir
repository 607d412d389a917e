// act_order (GPTQ desc_act) at batch 1 (the matvec reads its activations in
// the weight's column order through shared memory) and batch 16 (the
// permute launch, then the tensor-core kernel on a plain weight); small
// shapes for the sanitizer round (bench/sanitize/README.md).
!x = tensor<?x512xf16>
func.func @act_order(%x: !x {qf.name = "x"}) -> tensor<?x256xf16> {
  %w = qf.weight_ref "w" : !qf.weight<256x512, #qf.enc<int4, group = 128, scale = f16, act_order>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x512, #qf.enc<int4, group = 128, scale = f16, act_order>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
