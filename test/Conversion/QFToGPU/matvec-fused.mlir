// RUN: qfuse-opt %s -split-input-file --qf-to-gpu | FileCheck %s

// RMSNorm prologue (Llama q_proj at batch 2): every block reduces its rows'
// sum of squares (shuffles, then shared memory), takes 1 / sqrt.rn, and
// normalizes each loaded x pair with gamma, rounding to f16.
#e = #qf.enc<int4, group = 128, scale = f16>
#l = #qf.layout<tiled, tile_n = 1, tile_k = 32>
!w = !qf.weight<4096x4096, #e, #l>

// CHECK-LABEL: func.func @norm_prologue
// CHECK: qf.launches = [#qf.launch<batch = 2, {{.*}}, kernel = @qf_kernels::@qf_matvec_0_m2, params = ["x", "norm", "codes", "scales", "y"], shared_bytes = 32>]
// CHECK: llvm.mlir.global internal @qf_matvec_0_m2_sumsq() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<8 x f32>
// CHECK: llvm.func @qf_matvec_0_m2(
// The sum of squares: 16-byte loads of x, f32 fma, a barrier, sqrt.rn.
// CHECK: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.intr.fma({{.*}}) : (f32, f32, f32) -> f32
// CHECK: nvvm.shfl.sync bfly
// CHECK: nvvm.barrier0
// CHECK: llvm.inline_asm asm_dialect = att "sqrt.rn.f32 $0, $1;", "=f,f"
// CHECK: llvm.fdiv
// The main loop: weight codes, gamma, then x * scale * gamma rounded to f16.
// CHECK: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.inline_asm asm_dialect = att "cvt.rn.f16x2.f32 $0, $1, $2;", "=r,f,f"
// CHECK: llvm.intr.fma({{.*}}) : (vector<2xf16>, vector<2xf16>, vector<2xf16>) -> vector<2xf16>
func.func @norm_prologue(%x: tensor<2x4096xf16>, %g: tensor<4096xf16>) -> tensor<2x4096xf16> {
  %w = qf.weight_ref "q" : !w
  %y = qf.fused_matmul %x, %w norm(%g : tensor<4096xf16>) {norm_eps = 1.0e-05 : f32, tiling = #qf.tiling<matvec, block_m = 2, block_n = 8>}
         : tensor<2x4096xf16>, !w -> tensor<2x4096xf16>
  return %y : tensor<2x4096xf16>
}

// -----

// Gated MLP (Llama gate/up, 14336 x 4096): block_n = 16 counts gate and up
// rows, so a block produces 8 outputs (grid 14336 / 8); the up weight's
// components are the `up_` parameters; silu through ex2.approx.
#e = #qf.enc<int4, group = 128, scale = f16>
#l = #qf.layout<tiled, tile_n = 1, tile_k = 32>
!w = !qf.weight<14336x4096, #e, #l>

// CHECK-LABEL: func.func @gated
// CHECK: qf.launches = [#qf.launch<batch = 1, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [1792, 1, 1], kernel = @qf_kernels::@qf_matvec_0_m1, params = ["x", "codes", "scales", "up_codes", "up_scales", "residual", "y"], shared_bytes = 0>]
// CHECK: llvm.func @qf_matvec_0_m1(
// CHECK: llvm.inline_asm asm_dialect = att "ex2.approx.ftz.f32 $0, $1;", "=f,f"
// CHECK: llvm.fdiv
func.func @gated(%x: tensor<1x4096xf16>, %r: tensor<1x14336xf16>) -> tensor<1x14336xf16> {
  %wg = qf.weight_ref "gate" : !w
  %wu = qf.weight_ref "up" : !w
  %y = qf.fused_matmul %x, %wg up(%wu : !w) residual(%r : tensor<1x14336xf16>) {activation = #qf<activation silu_mul>, tiling = #qf.tiling<matvec, block_n = 16>}
         : tensor<1x4096xf16>, !w -> tensor<1x14336xf16>
  return %y : tensor<1x14336xf16>
}

// -----

// Gated with split_k = 2, NVFP4 (a global scale per weight) and the norm
// under act_order is not combinable; here: gated + norm + split-K partials.
#e = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>
!w = !qf.weight<512x1024, #e>

// CHECK-LABEL: func.func @gated_norm_split
// CHECK: params = ["x", "norm", "codes", "scales", "global_scale", "up_codes", "up_scales", "up_global_scale", "y"]
func.func @gated_norm_split(%x: tensor<1x1024xf16>, %g: tensor<1024xf16>) -> tensor<1x512xf16> {
  %wg = qf.weight_ref "gate" : !w
  %wu = qf.weight_ref "up" : !w
  %y = qf.fused_matmul %x, %wg up(%wu : !w) norm(%g : tensor<1024xf16>) {norm_eps = 1.0e-06 : f32, activation = #qf<activation silu_mul>, tiling = #qf.tiling<matvec, block_n = 4, split_k = 2>}
         : tensor<1x1024xf16>, !w -> tensor<1x512xf16>
  return %y : tensor<1x512xf16>
}

// -----

// A qf.group (qf-fuse-shared-input): q (256 rows, 64 blocks of 4) and k
// (128 rows, 32 blocks) in one launch of 96 blocks, recorded on q; member
// 1's parameters carry a `.1` suffix; k records no launch.
#e = #qf.enc<int4, group = 128, scale = f16>
#l = #qf.layout<tiled, tile_n = 1, tile_k = 32>

// CHECK-LABEL: func.func @group
// CHECK: qf.launches = [#qf.launch<batch = 1, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [96, 1, 1], kernel = @qf_kernels::@qf_matvec_0_m1, params = ["x", "norm", "codes", "scales", "residual", "y", "codes.1", "scales.1", "residual.1", "y.1"], shared_bytes = 16>]
// CHECK: qf.launches = []
// The member is chosen once per block from the block index.
// CHECK: llvm.func @qf_matvec_0_m1(
// CHECK: nvvm.read.ptx.sreg.ctaid.x
// CHECK: llvm.icmp "uge"
// CHECK: llvm.select
func.func @group(%x: tensor<1x1024xf16>, %g: tensor<1024xf16>, %rq: tensor<1x256xf16>, %rk: tensor<1x128xf16>) -> (tensor<1x256xf16>, tensor<1x128xf16>) {
  %wq = qf.weight_ref "q" : !qf.weight<256x1024, #e, #l>
  %wk = qf.weight_ref "k" : !qf.weight<128x1024, #e, #l>
  %q = qf.fused_matmul %x, %wq norm(%g : tensor<1024xf16>) residual(%rq : tensor<1x256xf16>) {norm_eps = 1.0e-05 : f32, qf.group = 0 : i64, tiling = #qf.tiling<matvec, block_n = 4>}
         : tensor<1x1024xf16>, !qf.weight<256x1024, #e, #l> -> tensor<1x256xf16>
  %k = qf.fused_matmul %x, %wk norm(%g : tensor<1024xf16>) residual(%rk : tensor<1x128xf16>) {norm_eps = 1.0e-05 : f32, qf.group = 0 : i64, tiling = #qf.tiling<matvec, block_n = 8, split_k = 2>}
         : tensor<1x1024xf16>, !qf.weight<128x1024, #e, #l> -> tensor<1x128xf16>
  return %q, %k : tensor<1x256xf16>, tensor<1x128xf16>
}
