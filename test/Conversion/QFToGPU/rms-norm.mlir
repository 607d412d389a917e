// RUN: qfuse-opt %s --qf-to-gpu="chip=sm_90 batch-sizes=1,8" | FileCheck %s

// One block per row (grid M). H = 4096 is 512 16-byte vectors: 256 threads
// holding two each; H = 3584 (448 vectors) 224 threads holding two. The
// kernel is named by H and eps, so the two norms of a layer with the same
// eps share it, and batch 8 launches it on 8 rows.
// CHECK-LABEL: func.func @norms
// CHECK: qf.rms_norm {{.*}}qf.launches = [
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<result 0>], batch = 1, block = [256, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@qf_rms_norm_h4096_eps1em05, params = ["x", "gamma", "y"], shared_bytes = 128>,
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<result 0>], batch = 8, block = [256, 1, 1], dynamic_shared_bytes = 0, grid = [8, 1, 1], kernel = @qf_kernels::@qf_rms_norm_h4096_eps1em05,
// CHECK: qf.rms_norm {{.*}}kernel = @qf_kernels::@qf_rms_norm_h4096_eps1em05,
// CHECK: qf.rms_norm {{.*}}qf.launches = [
// CHECK-SAME: batch = 1, block = [224, 1, 1], {{.*}}kernel = @qf_kernels::@qf_rms_norm_h3584_eps1em06,
func.func @norms(%x: tensor<?x4096xf16>, %g: tensor<4096xf16>, %g2: tensor<4096xf16>, %y: tensor<?x3584xf16>, %g3: tensor<3584xf16>) -> (tensor<?x4096xf16>, tensor<?x3584xf16>) {
  %a = qf.rms_norm %x, %g {eps = 1.0e-05 : f32} : tensor<?x4096xf16>, tensor<4096xf16> -> tensor<?x4096xf16>
  %b = qf.rms_norm %a, %g2 {eps = 1.0e-05 : f32} : tensor<?x4096xf16>, tensor<4096xf16> -> tensor<?x4096xf16>
  %c = qf.rms_norm %y, %g3 {eps = 1.0e-06 : f32} : tensor<?x3584xf16>, tensor<3584xf16> -> tensor<?x3584xf16>
  return %b, %c : tensor<?x4096xf16>, tensor<?x3584xf16>
}

// A row of 256 is one warp: no shared memory, no barrier.
// CHECK-LABEL: func.func @one_warp
// CHECK: block = [32, 1, 1], {{.*}}kernel = @qf_kernels::@qf_rms_norm_h256_eps1em05, params = ["x", "gamma", "y"], shared_bytes = 0>
func.func @one_warp(%x: tensor<1x256xf16>, %g: tensor<256xf16>) -> tensor<1x256xf16> {
  %a = qf.rms_norm %x, %g {eps = 1.0e-05 : f32} : tensor<1x256xf16>, tensor<256xf16> -> tensor<1x256xf16>
  return %a : tensor<1x256xf16>
}

// Both row loads are issued first; sum(x^2) goes through a warp xor
// butterfly with the full mask, then the 8 warp sums through shared memory
// after one barrier; rstd = 1 / sqrt(sum / H + eps).
// CHECK: gpu.module @qf_kernels
// CHECK-DAG: llvm.mlir.global internal @qf_rms_norm_h4096_eps1em05_partials() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<32 x f32>
// CHECK-LABEL: llvm.func @qf_rms_norm_h4096_eps1em05(
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK-COUNT-2: llvm.load {{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: %[[FULL:.*]] = llvm.mlir.constant(-1 : i32)
// CHECK-NEXT: nvvm.shfl.sync bfly %[[FULL]]
// CHECK-COUNT-4: nvvm.shfl.sync bfly
// CHECK: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-8: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK: llvm.mlir.constant(9.99999974E-6 : f32)
// CHECK: llvm.intr.sqrt
// CHECK: llvm.fdiv
// CHECK-COUNT-2: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK-LABEL: llvm.func @qf_rms_norm_h3584_eps1em06(
// CHECK-NOT: llvm.icmp "ult"
// CHECK: nvvm.barrier0
// CHECK-LABEL: llvm.func @qf_rms_norm_h256_eps1em05(
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.return
