// The sanitizer round's matmul (bench/sanitize/README.md): one small int4-g128
// weight, compiled three times by bench/make-gpu-checks.sh -- the matvec
// (batches 1 and 3), the mma.sync kernel (batch 16) and the dequantize +
// cuBLAS fallback (batch 16 with --dequant-gemm-min-batch=16).
!x = tensor<?x512xf16>
func.func @int4(%x: !x {qf.name = "x"}) -> tensor<?x256xf16> {
  %w = qf.weight_ref "w" : !qf.weight<256x512, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : !x, !qf.weight<256x512, #qf.enc<int4, group = 128, scale = f16>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
