// The qf.* attributes passes leave on ops (QFOpAttributes.cpp): each
// malformed one is refused where it is written, with what was expected.

// RUN: qfuse-opt %s -split-input-file -verify-diagnostics

#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<256x256, #int4, #qf.layout<tiled, tile_n = 1, tile_k = 32>>
func.func @batch_zero(%x: tensor<?x256xf16>) -> tensor<?x256xf16> {
  %w = qf.weight_ref "w" : !w
  // expected-error@+1 {{batch must be positive, got 0}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 0, tiling = #qf.tiling<matvec, block_n = 4>>]} : tensor<?x256xf16>, !w -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}

// -----

func.func @batch_tilings_elsewhere() {
  // expected-error@+1 {{qf.batch_tilings belongs on a qf.fused_matmul}}
  return {qf.batch_tilings = []}
}

// -----

#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<256x256, #int4, #qf.layout<tiled, tile_n = 1, tile_k = 32>>
func.func @batch_tilings_not_array(%x: tensor<?x256xf16>) -> tensor<?x256xf16> {
  %w = qf.weight_ref "w" : !w
  // expected-error@+1 {{qf.batch_tilings must be an array of #qf.batch_tiling<...>, got 16 : i64}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4>, qf.batch_tilings = 16} : tensor<?x256xf16>, !w -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}

// -----

#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<256x256, #int4, #qf.layout<tiled, tile_n = 1, tile_k = 32>>
func.func @negative_group(%x: tensor<1x256xf16>) -> tensor<1x256xf16> {
  %w = qf.weight_ref "w" : !w
  // expected-error@+1 {{qf.group must be a non-negative i64, got -1 : i64}}
  %y = qf.fused_matmul %x, %w {qf.group = -1} : tensor<1x256xf16>, !w -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

func.func @group_elsewhere() {
  // expected-error@+1 {{qf.group belongs on a qf.fused_matmul}}
  return {qf.group = 0}
}

// -----

func.func @launch_not_typed() {
  // expected-error@+1 {{qf.launches entry {batch = 1 : i64} must be a #qf.launch<...> or #qf.fallback_gemm<...>}}
  return {qf.launches = [{batch = 1 : i64}]}
}

// -----

func.func @launch_without_kernel() {
  // expected-error@+1 {{struct is missing required parameter: kernel}}
  return {qf.launches = [#qf.launch<batch = 1, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], params = ["x"], shared_bytes = 0>]}
}

// -----

func.func @launch_grid_of_two() {
  // expected-error@+1 {{grid and block are array<i64: x, y, z>, got array<i64: 1, 1> and array<i64: 128, 1, 1>}}
  return {qf.launches = [#qf.launch<batch = 1, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1], kernel = @qf_kernels::@k, params = ["x"], shared_bytes = 0>]}
}

// -----

func.func @launch_args_short() {
  // expected-error@+1 {{1 args for 2 params (expected one per parameter)}}
  return {qf.launches = [#qf.launch<args = [#qf.arg<operand 0>], batch = 1, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@k, params = ["x", "y"], shared_bytes = 0>]}
}

// -----

func.func @launch_arg_not_typed() {
  // expected-error@+1 {{argument {operand = 0 : i64} must be a #qf.arg<...>}}
  return {qf.launches = [#qf.launch<args = [{operand = 0 : i64}], batch = 1, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@k, params = ["x"], shared_bytes = 0>]}
}

// -----

func.func @launch_arg_unknown_kind() {
  // expected-error@+2 {{failed to parse QF_LaunchAttr parameter 'args'}}
  // expected-error@+1 {{unknown argument kind 'input'; expected operand, result, i32, f32, activations, component, scratch, output, residual or reader_component}}
  return {qf.launches = [#qf.launch<args = [#qf.arg<input 0>], batch = 1, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@k, params = ["x"], shared_bytes = 0>]}
}

// -----

func.func @launch_arg_operand_named() {
  // expected-error@+2 {{failed to parse QF_LaunchAttr parameter 'args'}}
  // expected-error@+1 {{expected integer value}}
  return {qf.launches = [#qf.launch<args = [#qf.arg<operand "x">], batch = 1, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@k, params = ["x"], shared_bytes = 0>]}
}

// -----

func.func @launch_arg_negative_operand() {
  // expected-error@+2 {{failed to parse QF_LaunchAttr parameter 'args'}}
  // expected-error@+1 {{operand index must be non-negative, got -1}}
  return {qf.launches = [#qf.launch<args = [#qf.arg<operand -1>], batch = 1, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@k, params = ["x"], shared_bytes = 0>]}
}

// -----

func.func @launch_arg_i32_out_of_range() {
  // expected-error@+2 {{failed to parse QF_LaunchAttr parameter 'args'}}
  // expected-error@+1 {{i32 value 4294967296 is out of range}}
  return {qf.launches = [#qf.launch<args = [#qf.arg<i32 4294967296>], batch = 1, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@k, params = ["n"], shared_bytes = 0>]}
}

// -----

func.func @launch_input_not_permuted() {
  // expected-error@+1 {{input must be "permuted", got "sorted"}}
  return {qf.launches = [#qf.launch<batch = 1, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], input = "sorted", kernel = @qf_kernels::@k, params = ["x"], shared_bytes = 0>]}
}

// -----

func.func @fallback_step_without_member() {
  // expected-error@+1 {{step and member come together}}
  return {qf.launches = [#qf.launch<batch = 1, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@k, params = ["w"], shared_bytes = 0, step = "add">]}
}

// -----

func.func @dequantize_without_weight() {
  // expected-error@+1 {{a dequantize step names its weight, "weight" or "up"}}
  return {qf.launches = [#qf.launch<batch = 1, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@k, member = 0, params = ["w"], shared_bytes = 0, step = "dequantize">]}
}

// -----

func.func @fallback_gemm_into_nothing() {
  // expected-error@+1 {{into must be "y", "gate" or "up", got "z"}}
  return {qf.launches = [#qf.fallback_gemm<batch = 1, into = "z", member = 0>]}
}
