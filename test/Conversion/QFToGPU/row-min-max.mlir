// RUN: qfuse-opt %s --qf-to-gpu="chip=sm_90" | FileCheck %s
// RUN: qfuse-compile %s --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: not grep -E "min\.f32|max\.f32|min\.ftz|max\.ftz|\.local" %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// qf.row_min_max: one warp per row, 4 rows per 128-thread block; rows and
// K name the kernel. Params bind the weights and the [rows, 2] result.
// CHECK-LABEL: func.func @whole_warps
// CHECK: qf.row_min_max {{.*}}qf.launches = [#qf.launch<args = [#qf.arg<operand 0>, #qf.arg<result 0>], batch = 256, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [64, 1, 1], kernel = @qf_kernels::@qf_row_min_max_r256_k384, params = ["w", "min_max"], shared_bytes = 0>]
func.func @whole_warps(%w: tensor<256x384xf32>) -> tensor<256x2xf32> {
  %mm = qf.row_min_max %w : tensor<256x384xf32> -> tensor<256x2xf32>
  return %mm : tensor<256x2xf32>
}

// 30 rows (the last block has 2 warps of rows) and K = 100 (the last step
// reads 4 columns per warp).
// CHECK-LABEL: func.func @tails
// CHECK: grid = [8, 1, 1], kernel = @qf_kernels::@qf_row_min_max_r30_k100, params = ["w", "min_max"]
func.func @tails(%w: tensor<30x100xf32>) -> tensor<30x2xf32> {
  %mm = qf.row_min_max %w : tensor<30x100xf32> -> tensor<30x2xf32>
  return %mm : tensor<30x2xf32>
}

// The selection is comparisons and selects (std::min / std::max, then the
// column on a tie), never min.f32 / max.f32, whose choice between -0 and
// +0 is not the reference's (checked by the RUN line above): a strict
// less-than per element, then per butterfly step an equality and the
// column comparison; lane 0 stores both values.
// PTX-LABEL: .entry qf_row_min_max_r256_k384(
// PTX: ld.global.nc.{{(b|f)}}32
// PTX: setp.lt.f32
// PTX: shfl.sync.bfly.b32
// PTX: setp.eq.f32
// PTX: st.global.{{(b|f)}}32
// PTX: st.global.{{(b|f)}}32
// PTX-LABEL: .entry qf_row_min_max_r30_k100(
// PTX: min.u32
// PTXAS-COUNT-2: 0 bytes spill stores, 0 bytes spill loads
