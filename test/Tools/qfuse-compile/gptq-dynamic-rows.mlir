// RUN: qfuse-compile %s --batch-sizes=8,12 --no-cubin -o %t.qfa
// RUN: FileCheck %s < %t.qfa

// qf.gptq_block_update with a dynamic row count (the GPTQ artifact of
// python3 -m qfuse compile-gptq): one kernel per batch size, named by its
// rows, and one plan per batch that launches it over ceil(rows / 4) blocks
// of four warps. The buffers keep the dynamic rows as "M".
func.func @rows(
    %w: tensor<?x128xf32> {qf.name = "w:int4, group = 32, scale = f16 (dynamic b128)"},
    %u: tensor<128x128xf32> {qf.name = "u (dynamic b128)"})
    -> (tensor<?x128xi8> {qf.name = "codes (dynamic b128)"},
        tensor<?x128xf32> {qf.name = "err (dynamic b128)"},
        tensor<?x4xf32> {qf.name = "scales_out (dynamic b128)"}) {
  %c, %e, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<int4, group = 32, scale = f16>}
    : (tensor<?x128xf32>, tensor<128x128xf32>) -> (tensor<?x128xi8>, tensor<?x128xf32>, tensor<?x4xf32>)
  return %c, %e, %s : tensor<?x128xi8>, tensor<?x128xf32>, tensor<?x4xf32>
}

// CHECK-LABEL: "buffers": [
// CHECK:       "name": "w:int4, group = 32, scale = f16 (dynamic b128)",
// CHECK-NEXT:  "shape": [
// CHECK-NEXT:    "M",
// CHECK-NEXT:    128
// CHECK:       "name": "scales_out (dynamic b128)",
// CHECK-NEXT:  "shape": [
// CHECK-NEXT:    "M",
// CHECK-NEXT:    4

// CHECK-LABEL: "kernels": [
// CHECK:       "name": "qf_gptq_block_int4_sf16_g32_r8_b128",
// CHECK:       "name": "qf_gptq_block_int4_sf16_g32_r12_b128",
// CHECK:       .visible .entry qf_gptq_block_int4_sf16_g32_r8_b128(
// CHECK-SAME:  .visible .entry qf_gptq_block_int4_sf16_g32_r12_b128(

// Each launch names its op and grid (artifact version 4), which the GPTQ
// solver reads instead of buffer or kernel names.
// CHECK-LABEL: "plans": [
// CHECK:       "batch": 8,
// CHECK:       "encoding": "int4, group = 32, scale = f16",
// CHECK:       "grid": [
// CHECK-NEXT:    2,
// CHECK:       "launch": "qf_gptq_block_int4_sf16_g32_r8_b128",
// CHECK-NEXT:  "op": "qf.gptq_block_update",
// CHECK:       "batch": 12,
// CHECK:       "grid": [
// CHECK-NEXT:    3,
// CHECK:       "launch": "qf_gptq_block_int4_sf16_g32_r12_b128",
// CHECK-NOT:   "batch":
// CHECK:       "producer": "qfuse-compile"
// CHECK:       "version": 4
