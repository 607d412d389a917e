// RUN: qfuse-opt %s --qf-to-gpu | FileCheck %s

// Layers with the same projection shape and encoding share one kernel; a
// different shape gets its own.
#e = #qf.enc<int4, group = 128, scale = f16>
#l = #qf.layout<tiled, tile_n = 1, tile_k = 32>
!w = !qf.weight<4096x4096, #e, #l>
!k = !qf.weight<1024x4096, #e, #l>
#t = #qf.tiling<matvec, block_n = 4, k_unroll = 4>

// CHECK-LABEL: func.func @two_layers
// CHECK: kernel = @qf_kernels::@qf_matvec_0_m1
// CHECK: kernel = @qf_kernels::@qf_matvec_1_m1
// CHECK: kernel = @qf_kernels::@qf_matvec_0_m1
// CHECK: gpu.module @qf_kernels
// CHECK-COUNT-2: llvm.func @qf_matvec_
// CHECK-NOT: llvm.func @qf_matvec_
func.func @two_layers(%x: tensor<1x4096xf16>) -> (tensor<1x4096xf16>, tensor<1x1024xf16>, tensor<1x4096xf16>) {
  %w0 = qf.weight_ref "model.layers.0.self_attn.q_proj" : !w
  %k0 = qf.weight_ref "model.layers.0.self_attn.k_proj" : !k
  %w1 = qf.weight_ref "model.layers.1.self_attn.q_proj" : !w
  %y0 = qf.fused_matmul %x, %w0 {tiling = #t} : tensor<1x4096xf16>, !w -> tensor<1x4096xf16>
  %z0 = qf.fused_matmul %x, %k0 {tiling = #t} : tensor<1x4096xf16>, !k -> tensor<1x1024xf16>
  %y1 = qf.fused_matmul %y0, %w1 {tiling = #t} : tensor<1x4096xf16>, !w -> tensor<1x4096xf16>
  return %y0, %z0, %y1 : tensor<1x4096xf16>, tensor<1x1024xf16>, tensor<1x4096xf16>
}
