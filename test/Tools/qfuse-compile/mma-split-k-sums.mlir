// RUN: qfuse-compile %s --emit=ptx --chip=sm_90a --batch-sizes=16 -o %t.ptx 2>/dev/null
// RUN: FileCheck %s < %t.ptx

// The k groups of a split-K block share the adds of their sums: after k
// groups 1.. have stored their partials, k group s adds slice s of them
// (a branch a k group, which LLVM makes a jump table), and k group 0 then
// loads each other slice once (TensorCoreReduce.cpp, reduceSplitK). Every
// warp adding all 7 other k groups' 16 sums a lane took 112 loads each.

// 4096 x 4096 int4-g128 at M = 16: block_m 16, block_n 32, split_k 8.
// CHECK-LABEL: .entry qf_mma_0_m16(
// CHECK: $L_brx_{{[0-9]+}}: .branchtargets
// CHECK-COUNT-8: $L__BB{{[0-9_]+}}{{[,;]$}}
// CHECK-NEXT: brx.idx
// CHECK: bar.sync 0;
// CHECK-COUNT-14: ld.shared.b32
// CHECK-NOT: ld.shared
// CHECK: ret;

func.func @proj(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "w" : !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x4096xf16>, !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}
