// RUN: qfuse-opt %s --qf-to-gpu="chip=sm_90 batch-sizes=1,8" | FileCheck %s

// One block per row (grid M) copies table row ids[m] in 16-byte vectors,
// 256 threads for H = 4096 (512 vectors, two per thread); batches 1 and 8
// share the kernel.
// CHECK-LABEL: func.func @embed
// CHECK: qf.embedding %{{.*}} {qf.launches = [
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<result 0>], batch = 1, block = [256, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@qf_embedding_v128256_h4096, params = ["table", "ids", "y"], shared_bytes = 0>,
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<result 0>], batch = 8, block = [256, 1, 1], dynamic_shared_bytes = 0, grid = [8, 1, 1], kernel = @qf_kernels::@qf_embedding_v128256_h4096,
func.func @embed(%t: tensor<128256x4096xf16>, %ids: tensor<?xi32>) -> tensor<?x4096xf16> {
  %h = qf.embedding %t, %ids : tensor<128256x4096xf16>, tensor<?xi32> -> tensor<?x4096xf16>
  return %h : tensor<?x4096xf16>
}

// An id outside [0, V) (unsigned compare: negative ids too) never reads the
// table; its row is written as NaN.
// CHECK-LABEL: llvm.func @qf_embedding_v128256_h4096(
// CHECK: %[[M:.*]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK: %[[ID:.*]] = llvm.load %{{.*}} invariant {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: %[[V:.*]] = llvm.mlir.constant(128256 : i32)
// CHECK: llvm.icmp "ult" %[[ID]], %[[V]]
// CHECK: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK: llvm.mlir.constant(0x7FC00000 : f32)
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
