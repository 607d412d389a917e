// Canonicalization patterns of qf.matmul and qf.dequantize, and CSE of the
// (pure) weight references.

// RUN: qfuse-opt %s -split-input-file --canonicalize | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --cse | FileCheck %s --check-prefix=CSE

#enc = #qf.enc<int4, group = 128, scale = f16>

// A matmul on a dequantized weight becomes a matmul on the packed weight; the
// dequantize, now dead, goes away.
// CHECK-LABEL: func.func @matmul_of_dequantize
// CHECK-SAME: (%[[X:.*]]: tensor<?x4096xf16>)
// CHECK: %[[W:.*]] = qf.weight_ref "w" : !qf.weight<1024x4096, #int4_g128>
// CHECK-NOT: qf.dequantize
// CHECK: %[[Y:.*]] = qf.matmul %[[X]], %[[W]] : tensor<?x4096xf16>, !qf.weight<1024x4096, #int4_g128> -> tensor<?x1024xf16>
// CHECK: return %[[Y]]
func.func @matmul_of_dequantize(%x: tensor<?x4096xf16>) -> tensor<?x1024xf16> {
  %w = qf.weight_ref "w" : !qf.weight<1024x4096, #enc>
  %d = qf.dequantize %w : !qf.weight<1024x4096, #enc> -> tensor<1024x4096xf16>
  %y = qf.matmul %x, %d : tensor<?x4096xf16>, tensor<1024x4096xf16> -> tensor<?x1024xf16>
  return %y : tensor<?x1024xf16>
}

// -----

#enc = #qf.enc<nf4, group = 64, scale = f32>

// The dequantized weight also feeds a return: both matmuls still take the
// packed weight, the dequantize stays for its other user.
// CHECK-LABEL: func.func @matmul_of_shared_dequantize
// CHECK-SAME: (%[[X:.*]]: tensor<1x256xbf16>, %[[X2:.*]]: tensor<8x256xbf16>)
// CHECK: %[[W:.*]] = qf.weight_ref "w" : !qf.weight<512x256, #nf4_g64>
// CHECK: %[[D:.*]] = qf.dequantize %[[W]] : !qf.weight<512x256, #nf4_g64> -> tensor<512x256xbf16>
// CHECK: %[[Y:.*]] = qf.matmul %[[X]], %[[W]] : tensor<1x256xbf16>, !qf.weight<512x256, #nf4_g64> -> tensor<1x512xbf16>
// CHECK: %[[Y2:.*]] = qf.matmul %[[X2]], %[[W]] : tensor<8x256xbf16>, !qf.weight<512x256, #nf4_g64> -> tensor<8x512xbf16>
// CHECK: return %[[Y]], %[[Y2]], %[[D]]
func.func @matmul_of_shared_dequantize(%x: tensor<1x256xbf16>, %x2: tensor<8x256xbf16>)
    -> (tensor<1x512xbf16>, tensor<8x512xbf16>, tensor<512x256xbf16>) {
  %w = qf.weight_ref "w" : !qf.weight<512x256, #enc>
  %d = qf.dequantize %w : !qf.weight<512x256, #enc> -> tensor<512x256xbf16>
  %y = qf.matmul %x, %d : tensor<1x256xbf16>, tensor<512x256xbf16> -> tensor<1x512xbf16>
  %y2 = qf.matmul %x2, %d : tensor<8x256xbf16>, tensor<512x256xbf16> -> tensor<8x512xbf16>
  return %y, %y2, %d : tensor<1x512xbf16>, tensor<8x512xbf16>, tensor<512x256xbf16>
}

// -----

// A dense weight that is not a dequantize stays dense.
// CHECK-LABEL: func.func @matmul_dense_weight
// CHECK-SAME: (%[[X:.*]]: tensor<1x64xf16>)
// CHECK: %[[D:.*]] = qf.tensor_ref "dense" : tensor<32x64xf16>
// CHECK: %[[Y:.*]] = qf.matmul %[[X]], %[[D]] : tensor<1x64xf16>, tensor<32x64xf16> -> tensor<1x32xf16>
// CHECK: return %[[Y]]
func.func @matmul_dense_weight(%x: tensor<1x64xf16>) -> tensor<1x32xf16> {
  %d = qf.tensor_ref "dense" : tensor<32x64xf16>
  %y = qf.matmul %x, %d : tensor<1x64xf16>, tensor<32x64xf16> -> tensor<1x32xf16>
  return %y : tensor<1x32xf16>
}

// -----

#enc = #qf.enc<uint4, group = 32, scale = f16, zero = int>

// Rounding an f32 dequantize to f16 or bf16 is a dequantize to that type.
// CHECK-LABEL: func.func @truncf_of_dequantize
// CHECK: %[[W:.*]] = qf.weight_ref "w" : !qf.weight<64x128, #uint4_g32>
// CHECK-NOT: arith.truncf
// CHECK-DAG: %[[H:.*]] = qf.dequantize %[[W]] : !qf.weight<64x128, #uint4_g32> -> tensor<64x128xf16>
// CHECK-DAG: %[[B:.*]] = qf.dequantize %[[W]] : !qf.weight<64x128, #uint4_g32> -> tensor<64x128xbf16>
// CHECK-NOT: tensor<64x128xf32>
// CHECK: return %[[H]], %[[B]]
func.func @truncf_of_dequantize() -> (tensor<64x128xf16>, tensor<64x128xbf16>) {
  %w = qf.weight_ref "w" : !qf.weight<64x128, #enc>
  %d = qf.dequantize %w : !qf.weight<64x128, #enc> -> tensor<64x128xf32>
  %h = arith.truncf %d : tensor<64x128xf32> to tensor<64x128xf16>
  %b = arith.truncf %d : tensor<64x128xf32> to tensor<64x128xbf16>
  return %h, %b : tensor<64x128xf16>, tensor<64x128xbf16>
}

// -----

#enc = #qf.enc<int8, per_channel, scale = f32>

// The two patterns compose: truncf(dequantize) -> dequantize, then the matmul
// takes the packed weight.
// CHECK-LABEL: func.func @truncf_then_matmul
// CHECK-SAME: (%[[X:.*]]: tensor<1x64xf16>)
// CHECK: %[[W:.*]] = qf.weight_ref "w"
// CHECK-NOT: qf.dequantize
// CHECK-NOT: arith.truncf
// CHECK: %[[Y:.*]] = qf.matmul %[[X]], %[[W]] : tensor<1x64xf16>, !qf.weight<32x64, #int8_pc> -> tensor<1x32xf16>
// CHECK: return %[[Y]]
func.func @truncf_then_matmul(%x: tensor<1x64xf16>) -> tensor<1x32xf16> {
  %w = qf.weight_ref "w" : !qf.weight<32x64, #enc>
  %d = qf.dequantize %w : !qf.weight<32x64, #enc> -> tensor<32x64xf32>
  %h = arith.truncf %d : tensor<32x64xf32> to tensor<32x64xf16>
  %y = qf.matmul %x, %h : tensor<1x64xf16>, tensor<32x64xf16> -> tensor<1x32xf16>
  return %y : tensor<1x32xf16>
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

// Not folded: an explicit rounding mode and fast-math flags change what the
// truncation means; qf.dequantize always rounds to nearest even.
// CHECK-LABEL: func.func @truncf_rounding_mode
// CHECK: %[[D:.*]] = qf.dequantize %{{.*}} -> tensor<64x64xf32>
// CHECK: %[[Z:.*]] = arith.truncf %[[D]] toward_zero : tensor<64x64xf32> to tensor<64x64xf16>
// CHECK: %[[F:.*]] = arith.truncf %[[D]] fastmath<afn> : tensor<64x64xf32> to tensor<64x64xf16>
// CHECK: return %[[Z]], %[[F]]
func.func @truncf_rounding_mode() -> (tensor<64x64xf16>, tensor<64x64xf16>) {
  %w = qf.weight_ref "w" : !qf.weight<64x64, #enc>
  %d = qf.dequantize %w : !qf.weight<64x64, #enc> -> tensor<64x64xf32>
  %z = arith.truncf %d toward_zero : tensor<64x64xf32> to tensor<64x64xf16>
  %f = arith.truncf %d fastmath<afn> : tensor<64x64xf32> to tensor<64x64xf16>
  return %z, %f : tensor<64x64xf16>, tensor<64x64xf16>
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

// Not folded: qf.dequantize cannot produce f8 (the fold would build an
// invalid op).
// CHECK-LABEL: func.func @truncf_to_f8
// CHECK: %[[D:.*]] = qf.dequantize %{{.*}} -> tensor<64x64xf32>
// CHECK: %[[T:.*]] = arith.truncf %[[D]] : tensor<64x64xf32> to tensor<64x64xf8E4M3FN>
// CHECK: return %[[T]]
func.func @truncf_to_f8() -> tensor<64x64xf8E4M3FN> {
  %w = qf.weight_ref "w" : !qf.weight<64x64, #enc>
  %d = qf.dequantize %w : !qf.weight<64x64, #enc> -> tensor<64x64xf32>
  %t = arith.truncf %d : tensor<64x64xf32> to tensor<64x64xf8E4M3FN>
  return %t : tensor<64x64xf8E4M3FN>
}

// -----

// Not folded: the truncated value is not a dequantize.
// CHECK-LABEL: func.func @truncf_of_argument
// CHECK-SAME: (%[[A:.*]]: tensor<64x64xf32>)
// CHECK: %[[T:.*]] = arith.truncf %[[A]] : tensor<64x64xf32> to tensor<64x64xf16>
// CHECK: return %[[T]]
func.func @truncf_of_argument(%a: tensor<64x64xf32>) -> tensor<64x64xf16> {
  %t = arith.truncf %a : tensor<64x64xf32> to tensor<64x64xf16>
  return %t : tensor<64x64xf16>
}

// -----

#enc = #qf.enc<int4, group = 128, scale = f16>

// Weight references are pure: CSE makes two references to the same name and
// type one value and keeps different names apart; both passes drop the
// unused one.
// CHECK-LABEL: func.func @weight_ref_cse
// CHECK-NOT: "unused"
// CHECK: return
// CSE-LABEL: func.func @weight_ref_cse
// CSE: %[[A:.*]] = qf.weight_ref "a"
// CSE: %[[B:.*]] = qf.weight_ref "b"
// CSE-NOT: qf.weight_ref
// CSE: return %[[A]], %[[A]], %[[B]]
func.func @weight_ref_cse() -> (!qf.weight<1024x4096, #enc>, !qf.weight<1024x4096, #enc>,
                                !qf.weight<1024x4096, #enc>) {
  %a0 = qf.weight_ref "a" : !qf.weight<1024x4096, #enc>
  %a1 = qf.weight_ref "a" : !qf.weight<1024x4096, #enc>
  %b = qf.weight_ref "b" : !qf.weight<1024x4096, #enc>
  %u = qf.weight_ref "unused" : !qf.weight<1024x4096, #enc>
  return %a0, %a1, %b : !qf.weight<1024x4096, #enc>, !qf.weight<1024x4096, #enc>,
                        !qf.weight<1024x4096, #enc>
}

// -----

#enc = #qf.enc<int4, group = 128, scale = f16>
#tiled = #qf.layout<tiled, tile_n = 16, tile_k = 64>

// The same name under another type (layout) is another value.
// CSE-LABEL: func.func @weight_ref_cse_types
// CSE: %[[A:.*]] = qf.weight_ref "a" : !qf.weight<1024x4096, #int4_g128>
// CSE: %[[T:.*]] = qf.weight_ref "a" : !qf.weight<1024x4096, #int4_g128, #tiled_16x64>
// CSE: return %[[A]], %[[T]]
func.func @weight_ref_cse_types() -> (!qf.weight<1024x4096, #enc>, !qf.weight<1024x4096, #enc, #tiled>) {
  %a = qf.weight_ref "a" : !qf.weight<1024x4096, #enc>
  %t = qf.weight_ref "a" : !qf.weight<1024x4096, #enc, #tiled>
  return %a, %t : !qf.weight<1024x4096, #enc>, !qf.weight<1024x4096, #enc, #tiled>
}

// -----

// Two identical dequantizes of one weight are one value.
// CSE-LABEL: func.func @dequantize_cse
// CSE: %[[W:.*]] = qf.weight_ref "w"
// CSE: %[[D:.*]] = qf.dequantize %[[W]]
// CSE-NOT: qf.dequantize
// CSE: return %[[D]], %[[D]]
func.func @dequantize_cse() -> (tensor<64x64xf16>, tensor<64x64xf16>) {
  %w = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f16>>
  %d0 = qf.dequantize %w : !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f16>> -> tensor<64x64xf16>
  %d1 = qf.dequantize %w : !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f16>> -> tensor<64x64xf16>
  return %d0, %d1 : tensor<64x64xf16>, tensor<64x64xf16>
}
