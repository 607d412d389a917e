// RUN: qfuse-opt %s -split-input-file --qf-to-gpu="batch-sizes=1 fallback-on-limits=true" -verify-diagnostics | FileCheck %s
// RUN: not qfuse-opt %s -split-input-file --qf-to-gpu="batch-sizes=1" 2>&1 | FileCheck %s --check-prefix=STRICT

// A tiling whose generator cannot plan it (a limit qf-select-tiling does not
// model) runs the dequantize + cuBLAS fallback with a remark, instead of
// failing the compile (fallback-on-limits, which qfuse-compile sets): here
// the matvec's 32-code loads do not align with groups of 48. Without it
// the generator's diagnostic stands.
// STRICT: error: 'qf.fused_matmul' op group size 48 does not align with the kernel's 8-code words and 32-code loads
#g48 = #qf.enc<int4, group = 48, scale = f16>
#l1 = #qf.layout<tiled, tile_n = 1, tile_k = 32>
!w = !qf.weight<1024x4128, #g48, #l1>
// CHECK-LABEL: func.func @group48
// CHECK: qf.launches = [#qf.launch<batch = 1, {{[^>]*}}kernel = @qf_kernels::@qf_dequant_0, layout = #tiled_1x32, member = 0, {{[^>]*}}step = "dequantize", weight = "weight">
// CHECK-SAME: #qf.fallback_gemm<batch = 1, into = "y", member = 0>]
// CHECK-NOT: qf_matvec
func.func @group48(%x: tensor<?x4128xf16>) -> tensor<?x1024xf16> {
  %w = qf.weight_ref "w" : !w
  // expected-remark @+1 {{M = 1 runs the dequantize + cuBLAS fallback (the matvec generator cannot take #qf.tiling<matvec, block_n = 8, k_unroll = 2>: group size 48 does not align with the kernel's 8-code words and 32-code loads)}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 8, k_unroll = 2>} : tensor<?x4128xf16>, !w -> tensor<?x1024xf16>
  return %y : tensor<?x1024xf16>
}

// -----

// With an RMSNorm prologue the fallback runs the norm as a launch of its
// own, into scratch `normed`, which the gemm reads.
#g48 = #qf.enc<int4, group = 48, scale = f16>
#l1 = #qf.layout<tiled, tile_n = 1, tile_k = 32>
!w = !qf.weight<1024x4128, #g48, #l1>
// CHECK-LABEL: func.func @group48_norm
// CHECK: qf.launches = [#qf.launch<args = [#qf.arg<activations "input">, #qf.arg<operand 2>, #qf.arg<scratch "normed">], batch = 1, {{[^>]*}}kernel = @qf_kernels::@qf_rms_norm_h4128_eps1em05, {{[^>]*}}step = "rms_norm">
// CHECK-SAME: step = "dequantize"
// CHECK-SAME: #qf.fallback_gemm<batch = 1, into = "y", member = 0>]
func.func @group48_norm(%x: tensor<?x4128xf16>, %g: tensor<4128xf16>) -> tensor<?x1024xf16> {
  %w = qf.weight_ref "w" : !w
  // expected-remark @+1 {{M = 1 runs the dequantize + cuBLAS fallback}}
  %y = qf.fused_matmul %x, %w norm(%g : tensor<4128xf16>) {norm_eps = 1.0e-5 : f32, tiling = #qf.tiling<matvec, block_n = 8, k_unroll = 2>} : tensor<?x4128xf16>, !w -> tensor<?x1024xf16>
  return %y : tensor<?x1024xf16>
}
