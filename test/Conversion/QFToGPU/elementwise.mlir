// RUN: qfuse-opt %s --qf-to-gpu="chip=sm_90 batch-sizes=1,8" | FileCheck %s

// qf.silu_mul and qf.add walk the [M, H] rows as one flat array in vectors
// of the widest f16 width dividing H, grid-stride. The vector count
// M * H / width is an i32 immediate, so one kernel per op kind and width
// serves every batch: silu_mul over 14336 halves is 1792 vectors of 8 at
// batch 1 (7 blocks of 256) and 14336 at batch 8 (56 blocks).
// CHECK-LABEL: func.func @mlp
// CHECK: qf.silu_mul %{{.*}} {qf.launches = [
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<result 0>, #qf.arg<i32 1792>], batch = 1, block = [256, 1, 1], dynamic_shared_bytes = 0, grid = [7, 1, 1], kernel = @qf_kernels::@qf_silu_mul_v8, params = ["gate", "up", "y", "n"], shared_bytes = 0>,
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<result 0>, #qf.arg<i32 14336>], batch = 8, {{.*}}grid = [56, 1, 1], kernel = @qf_kernels::@qf_silu_mul_v8,
// CHECK: qf.add %{{.*}} {qf.launches = [
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<result 0>, #qf.arg<i32 512>], batch = 1, {{.*}}grid = [2, 1, 1], kernel = @qf_kernels::@qf_add_v8, params = ["lhs", "rhs", "y", "n"]
// CHECK-SAME: #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<operand 1>, #qf.arg<result 0>, #qf.arg<i32 4096>], batch = 8, {{.*}}grid = [16, 1, 1], kernel = @qf_kernels::@qf_add_v8,
// The second residual add reuses the kernel.
// CHECK: qf.add %{{.*}}kernel = @qf_kernels::@qf_add_v8,
func.func @mlp(%g: tensor<?x14336xf16>, %u: tensor<?x14336xf16>, %h: tensor<?x4096xf16>, %o: tensor<?x4096xf16>) -> (tensor<?x14336xf16>, tensor<?x4096xf16>) {
  %a = qf.silu_mul %g, %u : tensor<?x14336xf16>
  %r = qf.add %h, %o : tensor<?x4096xf16>
  %r2 = qf.add %r, %o : tensor<?x4096xf16>
  return %a, %r2 : tensor<?x14336xf16>, tensor<?x4096xf16>
}

// Rows of 100 halves take 8-byte vectors, rows of 7 single halves; a large
// tensor caps the grid at 1024 blocks and loops.
// CHECK-LABEL: func.func @widths
// CHECK: qf.add {{.*}}#qf.arg<i32 50>], batch = 2, {{.*}}grid = [1, 1, 1], kernel = @qf_kernels::@qf_add_v4,
// CHECK: qf.add {{.*}}#qf.arg<i32 21>], batch = 3, {{.*}}kernel = @qf_kernels::@qf_add_v1,
// CHECK: qf.silu_mul {{.*}}#qf.arg<i32 524288>], batch = 512, {{.*}}grid = [1024, 1, 1], kernel = @qf_kernels::@qf_silu_mul_v8,
func.func @widths(%a: tensor<2x100xf16>, %b: tensor<3x7xf16>, %c: tensor<512x8192xf16>) -> (tensor<2x100xf16>, tensor<3x7xf16>, tensor<512x8192xf16>) {
  %x = qf.add %a, %a : tensor<2x100xf16>
  %y = qf.add %b, %b : tensor<3x7xf16>
  %z = qf.silu_mul %c, %c : tensor<512x8192xf16>
  return %x, %y, %z : tensor<2x100xf16>, tensor<3x7xf16>, tensor<512x8192xf16>
}

// One kernel each; the vector count is the fourth (i32) parameter.
// CHECK: gpu.module @qf_kernels
// CHECK-LABEL: llvm.func @qf_silu_mul_v8(
// CHECK-SAME: %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias}, %[[N:.*]]: i32)
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: nvvm.read.ptx.sreg.nctaid.x
// CHECK: llvm.icmp "slt" %{{.*}}, %[[N]]
// CHECK: llvm.load {{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: llvm.load {{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// silu(g) = g / (1 + 2^(-g log2 e)), in f32.
// CHECK-COUNT-8: ex2.approx.ftz.f32
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK-LABEL: llvm.func @qf_add_v8(
// CHECK-COUNT-8: llvm.fadd {{.*}} : f32
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK-LABEL: llvm.func @qf_add_v4(
// CHECK: llvm.load {{.*}} invariant {alignment = 8 : i64} : !llvm.ptr<1> -> vector<2xi32>
// CHECK-LABEL: llvm.func @qf_add_v1(
// CHECK: llvm.load {{.*}} invariant {alignment = 2 : i64} : !llvm.ptr<1> -> f16
// CHECK-NOT: llvm.func
