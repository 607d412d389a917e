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

func.func @launch_without_kernel() {
  // expected-error@+1 {{qf.launches entry {batch = 1 : i64, block = array<i64: 128, 1, 1>, dynamic_shared_bytes = 0 : i64, grid = array<i64: 1, 1, 1>, params = ["x"], shared_bytes = 0 : i64} needs 'kernel', a symbol reference to its kernel}}
  return {qf.launches = [{batch = 1 : i64, block = array<i64: 128, 1, 1>, dynamic_shared_bytes = 0 : i64, grid = array<i64: 1, 1, 1>, params = ["x"], shared_bytes = 0 : i64}]}
}

// -----

func.func @launch_grid_of_two() {
  // expected-error@+1 {{needs 'grid' as array<i64: x, y, z>}}
  return {qf.launches = [{batch = 1 : i64, block = array<i64: 128, 1, 1>, dynamic_shared_bytes = 0 : i64, grid = array<i64: 1, 1>, kernel = @qf_kernels::@k, params = ["x"], shared_bytes = 0 : i64}]}
}

// -----

func.func @launch_layout_not_a_layout() {
  // expected-error@+1 {{has a 'layout' that is not a #qf.layout}}
  return {qf.launches = [{batch = 1 : i64, block = array<i64: 128, 1, 1>, dynamic_shared_bytes = 0 : i64, grid = array<i64: 1, 1, 1>, kernel = @qf_kernels::@k, layout = 3 : i64, params = ["x"], shared_bytes = 0 : i64}]}
}
