// RUN: qfuse-opt %s --qf-to-gpu | FileCheck %s
// RUN: qfuse-opt %s --qf-to-gpu="chip=sm_80" | FileCheck %s --check-prefix=SM80

// The Llama-3-8B q_proj (4096 x 4096, int4 g128) at batch 1: one kernel in
// gpu.module @qf_kernels, written in the LLVM/NVVM dialects, and the launch
// recorded on the op.
#e = #qf.enc<int4, group = 128, scale = f16>
#l = #qf.layout<tiled, tile_n = 1, tile_k = 32>
!w = !qf.weight<4096x4096, #e, #l>

// CHECK: module attributes {gpu.container_module}
// CHECK-LABEL: func.func @q_proj
// CHECK: qf.fused_matmul
// CHECK-SAME: qf.launches = [#qf.launch<batch = 1, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [1024, 1, 1], kernel = @qf_kernels::@qf_matvec_0_m1, params = ["x", "codes", "scales", "y"], shared_bytes = 0>]
// CHECK: gpu.module @qf_kernels [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// split_k = 1: each warp stores its own rows, no shared memory, no barrier.
// CHECK-NOT: _partials
// CHECK: llvm.func @qf_matvec_0_m1(%{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias})
// CHECK-SAME: nvvm.kernel
// CHECK-SAME: nvvm.maxntid = array<i32: 128, 1, 1>
// 128-bit invariant code loads, four in flight (k_unroll = 4):
// CHECK-COUNT-4: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// The in-register int4 decode: mask-and-or into half2(1024 + e).
// CHECK: llvm.inline_asm asm_dialect = att "lop3.b32 $0, $1, $2, $3, 0xea;", "=r,r,n,n"
// CHECK: llvm.intr.fma({{.*}}) : (vector<2xf16>, vector<2xf16>, vector<2xf16>) -> vector<2xf16>
// Warp reduction by butterfly shuffles.
// CHECK: nvvm.shfl.sync bfly
// CHECK-NOT: nvvm.barrier0
// CHECK-NOT: scf.
// CHECK-NOT: arith.

// SM80: gpu.module @qf_kernels [#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">]
func.func @q_proj(%x: tensor<1x4096xf16>) -> tensor<1x4096xf16> {
  %w = qf.weight_ref "model.layers.0.self_attn.q_proj" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>}
         : tensor<1x4096xf16>, !w -> tensor<1x4096xf16>
  return %y : tensor<1x4096xf16>
}
