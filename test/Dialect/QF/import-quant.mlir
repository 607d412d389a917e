// qf-import-quant: upstream `quant` weight types become !qf.weight encodings
// (with a remark saying where the scale values come from), and what qf cannot
// express is an error at the qf.tensor_ref.

// RUN: qfuse-opt %s -split-input-file --qf-import-quant -verify-diagnostics | FileCheck %s

// Per-axis along the output channels (axis 0), signed 8-bit storage with zero
// points 0: symmetric int8, per channel.
// CHECK: #int8_pc = #qf.enc<int8, per_channel, scale = f16>
// CHECK-LABEL: func.func @per_axis_i8
// CHECK-NOT: qf.tensor_ref
// CHECK-NOT: quant.dcast
// CHECK: %[[W:.*]] = qf.weight_ref "model.layers.0.mlp.down_proj.weight" : !qf.weight<4x256, #int8_pc>
// CHECK: %[[D:.*]] = qf.dequantize %[[W]] : !qf.weight<4x256, #int8_pc> -> tensor<4x256xf16>
// CHECK: return %[[D]]
func.func @per_axis_i8() -> tensor<4x256xf16> {
  // expected-remark@+1 {{imported 'model.layers.0.mlp.down_proj.weight' as '!qf.weight<4x256, #qf.enc<int8, per_channel, scale = f16>>'; scale and zero-point values written in the quant type are not carried, the runtime reads them from the checkpoint}}
  %t = qf.tensor_ref "model.layers.0.mlp.down_proj.weight" : tensor<4x256x!quant.uniform<i8:f16:0, {0.1, 0.2, 0.3:0, 0.4}>>
  %d = quant.dcast %t : tensor<4x256x!quant.uniform<i8:f16:0, {0.1, 0.2, 0.3:0, 0.4}>> to tensor<4x256xf16>
  return %d : tensor<4x256xf16>
}

// -----

// Signed 4-bit storage, zero points written as 0: symmetric int4.
// CHECK: #int4_pc = #qf.enc<int4, per_channel, scale = f32>
// CHECK-LABEL: func.func @per_axis_i4
// CHECK: %[[W:.*]] = qf.weight_ref "w" : !qf.weight<2x64, #int4_pc>
// CHECK: %[[D:.*]] = qf.dequantize %[[W]] : !qf.weight<2x64, #int4_pc> -> tensor<2x64xf32>
// CHECK: return %[[D]]
func.func @per_axis_i4() -> tensor<2x64xf32> {
  // expected-remark@+1 {{imported 'w' as '!qf.weight<2x64, #qf.enc<int4, per_channel, scale = f32>>'}}
  %t = qf.tensor_ref "w" : tensor<2x64x!quant.uniform<i4:f32:0, {0.5:0, 0.25:0}>>
  %d = quant.dcast %t : tensor<2x64x!quant.uniform<i4:f32:0, {0.5:0, 0.25:0}>> to tensor<2x64xf32>
  return %d : tensor<2x64xf32>
}

// -----

// Unsigned storage carries integer zero points: uint4 / uint8 with zero = int.
// CHECK-DAG: #uint4_pc = #qf.enc<uint4, per_channel, scale = bf16, zero = int>
// CHECK-DAG: #uint8_pc = #qf.enc<uint8, per_channel, scale = f16, zero = int>
// CHECK-LABEL: func.func @per_axis_unsigned
// CHECK: %[[W4:.*]] = qf.weight_ref "u4" : !qf.weight<2x64, #uint4_pc>
// CHECK: %[[D4:.*]] = qf.dequantize %[[W4]] : !qf.weight<2x64, #uint4_pc> -> tensor<2x64xbf16>
// CHECK: %[[W8:.*]] = qf.weight_ref "u8" : !qf.weight<2x64, #uint8_pc>
// CHECK: %[[D8:.*]] = qf.dequantize %[[W8]] : !qf.weight<2x64, #uint8_pc> -> tensor<2x64xf16>
// CHECK: return %[[D4]], %[[D8]]
func.func @per_axis_unsigned() -> (tensor<2x64xbf16>, tensor<2x64xf16>) {
  // expected-remark@+1 {{imported 'u4' as '!qf.weight<2x64, #qf.enc<uint4, per_channel, scale = bf16, zero = int>>'}}
  %t4 = qf.tensor_ref "u4" : tensor<2x64x!quant.uniform<u4:bf16:0, {0.5:8, 0.25:7}>>
  %d4 = quant.dcast %t4 : tensor<2x64x!quant.uniform<u4:bf16:0, {0.5:8, 0.25:7}>> to tensor<2x64xbf16>
  // expected-remark@+1 {{imported 'u8' as '!qf.weight<2x64, #qf.enc<uint8, per_channel, scale = f16, zero = int>>'}}
  %t8 = qf.tensor_ref "u8" : tensor<2x64x!quant.uniform<u8:f16:0, {0.5:128, 0.25:0}>>
  %d8 = quant.dcast %t8 : tensor<2x64x!quant.uniform<u8:f16:0, {0.5:128, 0.25:0}>> to tensor<2x64xf16>
  return %d4, %d8 : tensor<2x64xbf16>, tensor<2x64xf16>
}

// -----

// Sub-channel blocks of one row and 128 columns: group = 128.
// CHECK-DAG: #int4_g128 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-DAG: #uint4_g128 = #qf.enc<uint4, group = 128, scale = f32, zero = int>
// CHECK-LABEL: func.func @sub_channel
// CHECK: %[[WS:.*]] = qf.weight_ref "sym" : !qf.weight<2x256, #int4_g128>
// CHECK: %[[DS:.*]] = qf.dequantize %[[WS]] : !qf.weight<2x256, #int4_g128> -> tensor<2x256xf16>
// CHECK: %[[WA:.*]] = qf.weight_ref "asym" : !qf.weight<2x256, #uint4_g128>
// CHECK: %[[DA:.*]] = qf.dequantize %[[WA]] : !qf.weight<2x256, #uint4_g128> -> tensor<2x256xf32>
// CHECK: return %[[DS]], %[[DA]]
func.func @sub_channel() -> (tensor<2x256xf16>, tensor<2x256xf32>) {
  // expected-remark@+1 {{imported 'sym' as '!qf.weight<2x256, #qf.enc<int4, group = 128, scale = f16>>'}}
  %ts = qf.tensor_ref "sym" : tensor<2x256x!quant.uniform<i4:f16:{0:1, 1:128}, {{1.0, 2.0}, {3.0, 4.0}}>>
  %ds = quant.dcast %ts : tensor<2x256x!quant.uniform<i4:f16:{0:1, 1:128}, {{1.0, 2.0}, {3.0, 4.0}}>> to tensor<2x256xf16>
  // expected-remark@+1 {{imported 'asym' as '!qf.weight<2x256, #qf.enc<uint4, group = 128, scale = f32, zero = int>>'}}
  %ta = qf.tensor_ref "asym" : tensor<2x256x!quant.uniform<u4:f32:{0:1, 1:128}, {{1.0:8, 2.0:8}, {3.0:7, 4.0:9}}>>
  %da = quant.dcast %ta : tensor<2x256x!quant.uniform<u4:f32:{0:1, 1:128}, {{1.0:8, 2.0:8}, {3.0:7, 4.0:9}}>> to tensor<2x256xf32>
  return %ds, %da : tensor<2x256xf16>, tensor<2x256xf32>
}

// -----

// Every quant.dcast of one weight becomes a dequantize of one weight_ref; a
// weight with no users still becomes a weight_ref; dense tensors are left alone.
// CHECK-LABEL: func.func @users
// CHECK: %[[G:.*]] = qf.tensor_ref "norm" : tensor<64xf16>
// CHECK: %[[W:.*]] = qf.weight_ref "w" : !qf.weight<2x64, #int8_pc>
// CHECK: %[[D0:.*]] = qf.dequantize %[[W]] : !qf.weight<2x64, #int8_pc> -> tensor<2x64xf16>
// CHECK: %[[D1:.*]] = qf.dequantize %[[W]] : !qf.weight<2x64, #int8_pc> -> tensor<2x64xf16>
// CHECK: qf.weight_ref "unused" : !qf.weight<2x64, #int8_pc>
// CHECK: return %[[G]], %[[D0]], %[[D1]]
func.func @users() -> (tensor<64xf16>, tensor<2x64xf16>, tensor<2x64xf16>) {
  %g = qf.tensor_ref "norm" : tensor<64xf16>
  // expected-remark@+1 {{imported 'w'}}
  %t = qf.tensor_ref "w" : tensor<2x64x!quant.uniform<i8:f16:0, {0.5, 0.25}>>
  %d0 = quant.dcast %t : tensor<2x64x!quant.uniform<i8:f16:0, {0.5, 0.25}>> to tensor<2x64xf16>
  %d1 = quant.dcast %t : tensor<2x64x!quant.uniform<i8:f16:0, {0.5, 0.25}>> to tensor<2x64xf16>
  // expected-remark@+1 {{imported 'unused'}}
  %u = qf.tensor_ref "unused" : tensor<2x64x!quant.uniform<i8:f16:0, {0.5, 0.25}>>
  return %g, %d0, %d1 : tensor<64xf16>, tensor<2x64xf16>, tensor<2x64xf16>
}

// -----

// The imported weight feeds qf.matmul like any dequantized weight.
// CHECK-LABEL: func.func @into_matmul
// CHECK: %[[W:.*]] = qf.weight_ref "w" : !qf.weight<2x256, #int4_g128>
// CHECK: %[[D:.*]] = qf.dequantize %[[W]]
// CHECK: qf.matmul %{{.*}}, %[[D]] : tensor<1x256xf16>, tensor<2x256xf16> -> tensor<1x2xf16>
func.func @into_matmul(%x: tensor<1x256xf16>) -> tensor<1x2xf16> {
  // expected-remark@+1 {{imported 'w'}}
  %t = qf.tensor_ref "w" : tensor<2x256x!quant.uniform<i4:f16:{0:1, 1:128}, {{1.0, 2.0}, {3.0, 4.0}}>>
  %d = quant.dcast %t : tensor<2x256x!quant.uniform<i4:f16:{0:1, 1:128}, {{1.0, 2.0}, {3.0, 4.0}}>> to tensor<2x256xf16>
  %y = qf.matmul %x, %d : tensor<1x256xf16>, tensor<2x256xf16> -> tensor<1x2xf16>
  return %y : tensor<1x2xf16>
}

// -----

// Errors.

func.func @per_tensor() -> tensor<2x64xf32> {
  // expected-error@+1 {{'qf.tensor_ref' op cannot import weight 'w': per-tensor quantization has no qf form; qf scales are per output channel or per group along K}}
  %t = qf.tensor_ref "w" : tensor<2x64x!quant.uniform<i8:f32, 0.5>>
  %d = quant.dcast %t : tensor<2x64x!quant.uniform<i8:f32, 0.5>> to tensor<2x64xf32>
  return %d : tensor<2x64xf32>
}

// -----

func.func @per_axis_1() -> tensor<2x4xf32> {
  // expected-error@+1 {{'qf.tensor_ref' op cannot import weight 'w': per-axis quantization along dimension 1 has no qf form; qf scales are per output channel (dimension 0)}}
  %t = qf.tensor_ref "w" : tensor<2x4x!quant.uniform<i8:f32:1, {1.0, 2.0, 3.0, 4.0}>>
  %d = quant.dcast %t : tensor<2x4x!quant.uniform<i8:f32:1, {1.0, 2.0, 3.0, 4.0}>> to tensor<2x4xf32>
  return %d : tensor<2x4xf32>
}

// -----

func.func @sub_channel_two_rows() -> tensor<4x256xf32> {
  // expected-error@+1 {{'qf.tensor_ref' op cannot import weight 'w': sub-channel blocks must be {0:1, 1:G} (one row, G columns) for qf group scales}}
  %t = qf.tensor_ref "w" : tensor<4x256x!quant.uniform<i8:f32:{0:2, 1:128}, {{1.0, 2.0}, {3.0, 4.0}}>>
  %d = quant.dcast %t : tensor<4x256x!quant.uniform<i8:f32:{0:2, 1:128}, {{1.0, 2.0}, {3.0, 4.0}}>> to tensor<4x256xf32>
  return %d : tensor<4x256xf32>
}

// -----

func.func @sub_channel_columns_only() -> tensor<2x256xf32> {
  // expected-error@+1 {{'qf.tensor_ref' op cannot import weight 'w': sub-channel blocks must be {0:1, 1:G} (one row, G columns) for qf group scales}}
  %t = qf.tensor_ref "w" : tensor<2x256x!quant.uniform<i8:f32:{1:128}, {{1.0, 2.0}}>>
  %d = quant.dcast %t : tensor<2x256x!quant.uniform<i8:f32:{1:128}, {{1.0, 2.0}}>> to tensor<2x256xf32>
  return %d : tensor<2x256xf32>
}

// -----

func.func @sub_channel_group_1() -> tensor<2x2xf32> {
  // expected-error@+1 {{'qf.tensor_ref' op cannot import weight 'w': sub-channel blocks must be {0:1, 1:G} (one row, G columns) for qf group scales}}
  %t = qf.tensor_ref "w" : tensor<2x2x!quant.uniform<i8:f32:{0:1, 1:1}, {{1.0, 2.0}, {3.0, 4.0}}>>
  %d = quant.dcast %t : tensor<2x2x!quant.uniform<i8:f32:{0:1, 1:1}, {{1.0, 2.0}, {3.0, 4.0}}>> to tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

// -----

func.func @i16_storage() -> tensor<2x64xf32> {
  // expected-error@+1 {{'qf.tensor_ref' op cannot import weight 'w': storage type 'i16' has no qf format; qf imports 4- and 8-bit integer storage}}
  %t = qf.tensor_ref "w" : tensor<2x64x!quant.uniform<i16:f32:0, {1.0, 2.0}>>
  %d = quant.dcast %t : tensor<2x64x!quant.uniform<i16:f32:0, {1.0, 2.0}>> to tensor<2x64xf32>
  return %d : tensor<2x64xf32>
}

// -----

func.func @signed_zero_point() -> tensor<2x64xf32> {
  // expected-error@+1 {{'qf.tensor_ref' op cannot import weight 'w': signed storage with non-zero zero points has no qf format; qf's int4/int8 are symmetric}}
  %t = qf.tensor_ref "w" : tensor<2x64x!quant.uniform<i8:f32:0, {1.0:0, 2.0:3}>>
  %d = quant.dcast %t : tensor<2x64x!quant.uniform<i8:f32:0, {1.0:0, 2.0:3}>> to tensor<2x64xf32>
  return %d : tensor<2x64xf32>
}

// -----

func.func @signed_zero_point_sub_channel() -> tensor<2x256xf32> {
  // expected-error@+1 {{'qf.tensor_ref' op cannot import weight 'w': signed storage with non-zero zero points has no qf format; qf's int4/int8 are symmetric}}
  %t = qf.tensor_ref "w" : tensor<2x256x!quant.uniform<i4:f32:{0:1, 1:128}, {{1.0, 2.0:-1}, {3.0, 4.0}}>>
  %d = quant.dcast %t : tensor<2x256x!quant.uniform<i4:f32:{0:1, 1:128}, {{1.0, 2.0:-1}, {3.0, 4.0}}>> to tensor<2x256xf32>
  return %d : tensor<2x256xf32>
}

// -----

func.func @non_dcast_user() -> tensor<2x64x!quant.uniform<i8:f32:0, {1.0, 2.0}>> {
  // expected-error@+1 {{'qf.tensor_ref' op cannot import weight 'w': used by 'func.return'; only quant.dcast users can be imported}}
  %t = qf.tensor_ref "w" : tensor<2x64x!quant.uniform<i8:f32:0, {1.0, 2.0}>>
  %d = quant.dcast %t : tensor<2x64x!quant.uniform<i8:f32:0, {1.0, 2.0}>> to tensor<2x64xf32>
  return %t : tensor<2x64x!quant.uniform<i8:f32:0, {1.0, 2.0}>>
}

// -----

func.func @not_a_matrix() -> tensor<64xf32> {
  // expected-error@+1 {{'qf.tensor_ref' op cannot import weight 'w': qf weights are [N, K] matrices, got 'tensor<64x!quant.uniform<i8:f32, 5.000000e-01>>'}}
  %t = qf.tensor_ref "w" : tensor<64x!quant.uniform<i8:f32, 0.5>>
  %d = quant.dcast %t : tensor<64x!quant.uniform<i8:f32, 0.5>> to tensor<64xf32>
  return %d : tensor<64xf32>
}

// -----

func.func @f64_expressed() -> tensor<2x64xf64> {
  // expected-error@+1 {{'qf.tensor_ref' op cannot import weight 'w': expressed type 'f64' cannot be a qf scale type (f16, bf16, f32)}}
  %t = qf.tensor_ref "w" : tensor<2x64x!quant.uniform<i8:f64:0, {1.0, 2.0}>>
  %d = quant.dcast %t : tensor<2x64x!quant.uniform<i8:f64:0, {1.0, 2.0}>> to tensor<2x64xf64>
  return %d : tensor<2x64xf64>
}

// -----

// The !qf.weight verifier still applies: 4-bit rows must end on a byte.
func.func @odd_k_int4() -> tensor<2x7xf32> {
  // expected-error@+1 {{'qf.tensor_ref' op cannot import weight 'w': a row of 7 stored 4-bit codes does not end on a byte boundary (K = 7)}}
  %t = qf.tensor_ref "w" : tensor<2x7x!quant.uniform<i4:f32:0, {1.0, 2.0}>>
  %d = quant.dcast %t : tensor<2x7x!quant.uniform<i4:f32:0, {1.0, 2.0}>> to tensor<2x7xf32>
  return %d : tensor<2x7xf32>
}

// -----

// One weight failing does not stop the others from being imported.
func.func @partial() -> (tensor<2x64xf32>, tensor<2x64xf32>) {
  // expected-error@+1 {{per-tensor quantization has no qf form}}
  %a = qf.tensor_ref "a" : tensor<2x64x!quant.uniform<i8:f32, 0.5>>
  %da = quant.dcast %a : tensor<2x64x!quant.uniform<i8:f32, 0.5>> to tensor<2x64xf32>
  // expected-remark@+1 {{imported 'b' as '!qf.weight<2x64, #qf.enc<int8, per_channel, scale = f32>>'}}
  %b = qf.tensor_ref "b" : tensor<2x64x!quant.uniform<i8:f32:0, {1.0, 2.0}>>
  %db = quant.dcast %b : tensor<2x64x!quant.uniform<i8:f32:0, {1.0, 2.0}>> to tensor<2x64xf32>
  return %da, %db : tensor<2x64xf32>, tensor<2x64xf32>
}
