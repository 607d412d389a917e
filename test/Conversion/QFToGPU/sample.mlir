// RUN: qfuse-opt %s --qf-to-gpu="chip=sm_90 batch-sizes=1,8" | FileCheck %s

// One block per row: 1024 threads for a 151936 vocabulary (18992 16-byte
// vectors, 19 contiguous ones per thread), 32 for 1000 (125 vectors, 4 per
// thread). The launch binds the four operands and the result; a [1, ...]
// params or mask is shared by every row, an [M, ...] one is read per row
// (its own kernel).
// CHECK-LABEL: func.func @sample
// CHECK: qf.sample %{{.*}} {qf.launches = [
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<operand 2>, #qf.arg<operand 3>, #qf.arg<result 0>], batch = 1, block = [1024, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@qf_sample_n151936, params = ["logits", "params", "penalty_mask", "counters", "y"], shared_bytes = 256>,
// CHECK-SAME: batch = 8, block = [1024, 1, 1], {{.*}}grid = [8, 1, 1], kernel = @qf_kernels::@qf_sample_n151936,
// CHECK: qf.sample %{{.*}} {qf.launches = [
// CHECK-SAME: batch = 4, block = [32, 1, 1], {{.*}}grid = [4, 1, 1], kernel = @qf_kernels::@qf_sample_n1000_rowparams_rowmask,
func.func @sample(%l: tensor<?x151936xf16>, %p: tensor<1x8xi32>, %m: tensor<1x151936xi8>, %c: tensor<?xi32>,
                  %l4: tensor<4x1000xf16>, %p4: tensor<4x8xi32>, %m4: tensor<4x1000xi8>, %c4: tensor<4xi32>)
    -> (tensor<?xi32>, tensor<4xi32>) {
  %a = qf.sample %l, %p, %m, %c : tensor<?x151936xf16>, tensor<1x8xi32>, tensor<1x151936xi8>, tensor<?xi32> -> tensor<?xi32>
  %b = qf.sample %l4, %p4, %m4, %c4 : tensor<4x1000xf16>, tensor<4x8xi32>, tensor<4x1000xi8>, tensor<4xi32> -> tensor<4xi32>
  return %a, %b : tensor<?xi32>, tensor<4xi32>
}
