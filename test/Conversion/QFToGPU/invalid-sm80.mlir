// RUN: qfuse-opt %s -split-input-file --qf-to-gpu="chip=sm_80" -verify-diagnostics

#e = #qf.enc<fp8e4m3, per_channel, scale = f32>
func.func @fp8(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e>) -> tensor<1x256xf16> {
  // expected-error@+1 {{fp8 E4M3 values or scales need cvt.f16x2.e4m3x2 (sm_89 or newer); target is sm_80}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

#e = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>
func.func @nvfp4(%x: tensor<1x4096xf16>, %w: !qf.weight<256x4096, #e>) -> tensor<1x256xf16> {
  // expected-error@+1 {{fp8 E4M3 values or scales need cvt.f16x2.e4m3x2 (sm_89 or newer); target is sm_80}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec>} : tensor<1x4096xf16>, !qf.weight<256x4096, #e> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}
