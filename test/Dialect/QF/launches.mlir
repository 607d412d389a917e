// #qf.launch and #qf.fallback_gemm, the entries of qf.launches that
// qf-to-gpu records and the artifact writer reads: they print and parse
// back with every optional field, the layout in full.

// RUN: qfuse-opt %s | qfuse-opt | FileCheck %s

// CHECK-LABEL: func.func @records
// CHECK: qf.launches = [#qf.launch<args = [#qf.arg<operand 0>, #qf.arg<result 0>, #qf.arg<f32 9.99999974E-6>], batch = 8, block = [256, 1, 1], dynamic_shared_bytes = 512, grid = [8, 2, 1], kernel = @qf_kernels::@k, params = ["x", "y", "eps"], shared_bytes = 64>
// CHECK-SAME: #qf.launch<batch = 512, block = [256, 1, 1], dynamic_shared_bytes = 0, grid = [1024, 1, 1], kernel = @qf_kernels::@qf_dequant_0, layout = #qf.layout<row_major>, member = 1, params = ["codes", "w"], shared_bytes = 0, step = "dequantize", weight = "up">
// CHECK-SAME: #qf.fallback_gemm<batch = 512, into = "gate", member = 1>
// CHECK-SAME: #qf.launch<batch = 16, block = [128, 1, 1], dynamic_shared_bytes = 34816, grid = [1, 64, 1], input = "permuted", kernel = @qf_kernels::@qf_mma_0_m16, params = ["x", "codes", "y"], shared_bytes = 0>]
func.func @records() {
  return {qf.launches = [
    #qf.launch<args = [#qf.arg<operand 0>, #qf.arg<result 0>, #qf.arg<f32 1.0e-5>], batch = 8, block = [256, 1, 1], dynamic_shared_bytes = 512, grid = [8, 2, 1], kernel = @qf_kernels::@k, params = ["x", "y", "eps"], shared_bytes = 64>,
    #qf.launch<batch = 512, block = [256, 1, 1], dynamic_shared_bytes = 0, grid = [1024, 1, 1], kernel = @qf_kernels::@qf_dequant_0, layout = #qf.layout<row_major>, member = 1, params = ["codes", "w"], shared_bytes = 0, step = "dequantize", weight = "up">,
    #qf.fallback_gemm<batch = 512, into = "gate", member = 1>,
    #qf.launch<batch = 16, block = [128, 1, 1], dynamic_shared_bytes = 34816, grid = [1, 64, 1], input = "permuted", kernel = @qf_kernels::@qf_mma_0_m16, params = ["x", "codes", "y"], shared_bytes = 0>]}
}

// Every kind of #qf.arg, and what it carries.
// CHECK-LABEL: func.func @every_arg_kind
// CHECK: args = [#qf.arg<operand 2>, #qf.arg<result 1>, #qf.arg<i32 -7>, #qf.arg<f32 2.500000e-01>, #qf.arg<activations "input">, #qf.arg<component "perm">, #qf.arg<scratch "gate">, #qf.arg<output>, #qf.arg<residual>]
func.func @every_arg_kind() {
  return {qf.launches = [
    #qf.launch<args = [#qf.arg<operand 2>, #qf.arg<result 1>, #qf.arg<i32 -7>, #qf.arg<f32 0.25>, #qf.arg<activations "input">, #qf.arg<component "perm">, #qf.arg<scratch "gate">, #qf.arg<output>, #qf.arg<residual>], batch = 1, block = [32, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@k, params = ["a", "b", "c", "d", "e", "f", "g", "h", "i"], shared_bytes = 0>]}
}
