// RUN: qfuse-opt %s --qf-to-cpu=lower-to-llvm | FileCheck %s

// With lower-to-llvm, @qf_cpu holds only LLVM dialect: the function, its
// C-interface wrapper (memref descriptors by pointer, for ExecutionEngine or
// mlir-runner) and the constant table; bf16 conversions are integer ops.
#e = #qf.enc<nf4, group = 64, scale = bf16>
func.func @nf4(%x: tensor<?x128xbf16>, %w: !qf.weight<32x128, #e>) -> tensor<?x32xbf16> {
  %y = qf.fused_matmul %x, %w : tensor<?x128xbf16>, !qf.weight<32x128, #e> -> tensor<?x32xbf16>
  return %y : tensor<?x32xbf16>
}

// CHECK: module @qf_cpu {
// CHECK: llvm.mlir.global private constant @qf_cpu_matmul_0_table(dense<{{.*}}> : tensor<16xf32>)
// CHECK: llvm.func @qf_cpu_matmul_0(
// CHECK: llvm.call @malloc
// CHECK: llvm.call @free
// CHECK: llvm.func @_mlir_ciface_qf_cpu_matmul_0(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-NOT: scf.
// CHECK-NOT: memref.
// CHECK-NOT: arith.
// CHECK-NOT: bf16
// CHECK: }
