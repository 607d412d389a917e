// RUN: qfuse-opt %s --qf-to-gpu="chip=sm_90 batch-sizes=1,8" | FileCheck %s

// One block of 1024 threads per row; a 152064 vocabulary is 19008 16-byte
// vectors, 4 per thread per trip: 5 trips, the last one partial.
// CHECK-LABEL: func.func @greedy
// CHECK: qf.argmax %{{.*}} {qf.launches = [
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<result 0>], batch = 1, block = [1024, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@qf_argmax_n152064, params = ["x", "y"], shared_bytes = 256>,
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<result 0>], batch = 8, block = [1024, 1, 1], dynamic_shared_bytes = 0, grid = [8, 1, 1], kernel = @qf_kernels::@qf_argmax_n152064,
// A small vocabulary takes only the threads it needs (125 vectors: 128).
// CHECK: qf.argmax %{{.*}} {qf.launches = [
// CHECK-SAME: batch = 2, block = [128, 1, 1], {{.*}}grid = [2, 1, 1], kernel = @qf_kernels::@qf_argmax_n1000,
func.func @greedy(%l: tensor<?x152064xf16>, %s: tensor<2x1000xf16>) -> (tensor<?xi32>, tensor<2xi32>) {
  %t = qf.argmax %l : tensor<?x152064xf16> -> tensor<?xi32>
  %u = qf.argmax %s : tensor<2x1000xf16> -> tensor<2xi32>
  return %t, %u : tensor<?xi32>, tensor<2xi32>
}

// Each thread keeps (best, index) from (-inf, INT32_MAX) and takes
// x > best || (x == best && i < index): ordered compares, so NaN never
// wins; the same rule merges lanes (xor butterfly on value and index) and
// then the warps' winners in warp 0. A row of NaN only gives -1.
// CHECK: gpu.module @qf_kernels
// CHECK-LABEL: llvm.func @qf_argmax_n152064(
// CHECK-SAME: nvvm.maxntid = array<i32: 1024, 1, 1>
// CHECK: llvm.mlir.constant(0xFF800000 : f32)
// CHECK: llvm.mlir.constant(2147483647 : i32)
// CHECK: llvm.mlir.constant(5 : i32)
// CHECK-COUNT-4: llvm.load {{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.fcmp "ogt"
// CHECK-NEXT: llvm.fcmp "oeq"
// CHECK-NEXT: llvm.icmp "slt"
// CHECK-COUNT-10: nvvm.shfl.sync bfly
// CHECK: nvvm.barrier0
// CHECK-COUNT-10: nvvm.shfl.sync bfly
// CHECK: llvm.mlir.constant(-1 : i32)
// CHECK: llvm.store {{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
