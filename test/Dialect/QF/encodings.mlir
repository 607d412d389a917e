// Round trip of every #qf.enc form and #qf.layout, through the custom and the
// generic printer, and the short aliases the dialect prints encodings under.

// RUN: qfuse-opt %s -split-input-file | qfuse-opt -split-input-file | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --mlir-print-op-generic | qfuse-opt -split-input-file | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --mlir-print-local-scope | FileCheck %s --check-prefix=LOCAL

// GPTQ symmetric int4: entries print in canonical order whatever the input order.
// CHECK: #int4_g128 = #qf.enc<int4, group = 128, scale = f16>{{$}}
// CHECK-LABEL: func.func @int4
// CHECK: qf.weight_ref "sym" : !qf.weight<4096x4096, #int4_g128>
// LOCAL-LABEL: func.func @int4
// LOCAL: !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>
// LOCAL: !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>
func.func @int4() {
  %0 = qf.weight_ref "sym" : !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>
  %1 = qf.weight_ref "reordered" : !qf.weight<4096x4096, #qf.enc<int4, scale = f16, group = 128>>
  return
}

// -----

// GPTQ/AWQ asymmetric uint4 with packed integer zero points, and with float
// zero points (one per group, in the scale type).
// CHECK: #uint4_g128 = #qf.enc<uint4, group = 128, scale = f16, zero = int>{{$}}
// CHECK: #uint4_g64 = #qf.enc<uint4, group = 64, scale = bf16, zero = float>{{$}}
// CHECK-LABEL: func.func @uint4
// CHECK: qf.weight_ref "zint" : !qf.weight<4096x11008, #uint4_g128>
// CHECK: qf.weight_ref "zfloat" : !qf.weight<4096x11008, #uint4_g64>
func.func @uint4() {
  %0 = qf.weight_ref "zint" : !qf.weight<4096x11008, #qf.enc<uint4, group = 128, scale = f16, zero = int>>
  %1 = qf.weight_ref "zfloat" : !qf.weight<4096x11008, #qf.enc<uint4, zero = float, group = 64, scale = bf16>>
  return
}

// -----

// CHECK: #int8_pc = #qf.enc<int8, per_channel, scale = bf16>{{$}}
// CHECK: #uint8_g64 = #qf.enc<uint8, group = 64, scale = f32, zero = int>{{$}}
// CHECK-LABEL: func.func @int8
// CHECK: qf.weight_ref "s8" : !qf.weight<1024x4096, #int8_pc>
// CHECK: qf.weight_ref "u8" : !qf.weight<1024x4096, #uint8_g64>
func.func @int8() {
  %0 = qf.weight_ref "s8" : !qf.weight<1024x4096, #qf.enc<int8, per_channel, scale = bf16>>
  %1 = qf.weight_ref "u8" : !qf.weight<1024x4096, #qf.enc<uint8, group = 64, scale = f32, zero = int>>
  return
}

// -----

// CHECK: #fp8e4m3_pc = #qf.enc<fp8e4m3, per_channel, scale = f32>{{$}}
// CHECK-LABEL: func.func @fp8e4m3
// CHECK: qf.weight_ref "fp8" : !qf.weight<1024x4096, #fp8e4m3_pc>
func.func @fp8e4m3() {
  %0 = qf.weight_ref "fp8" : !qf.weight<1024x4096, #qf.enc<fp8e4m3, per_channel, scale = f32>>
  return
}

// -----

// NVFP4: E4M3 scales over 16 elements and a global f32 scale.
// MXFP4: E8M0 power-of-two scales over 32 elements.
// CHECK: #fp4e2m1_g16 = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>{{$}}
// CHECK: #fp4e2m1_g32 = #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>{{$}}
// CHECK-LABEL: func.func @fp4e2m1
// CHECK: qf.weight_ref "nvfp4" : !qf.weight<1024x4096, #fp4e2m1_g16>
// CHECK: qf.weight_ref "mxfp4" : !qf.weight<1024x4096, #fp4e2m1_g32>
func.func @fp4e2m1() {
  %0 = qf.weight_ref "nvfp4" : !qf.weight<1024x4096, #qf.enc<fp4e2m1, global_scale, group = 16, scale = f8E4M3FN>>
  %1 = qf.weight_ref "mxfp4" : !qf.weight<1024x4096, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>>
  return
}

// -----

// MX scales also apply to fp8e4m3 and int8.
// CHECK: #fp8e4m3_g32 = #qf.enc<fp8e4m3, group = 32, scale = f8E8M0FNU>{{$}}
// CHECK: #int8_g32 = #qf.enc<int8, group = 32, scale = f8E8M0FNU>{{$}}
// CHECK-LABEL: func.func @mx8
// CHECK: !qf.weight<64x64, #fp8e4m3_g32>
// CHECK: !qf.weight<64x64, #int8_g32>
func.func @mx8() {
  %0 = qf.weight_ref "mxfp8" : !qf.weight<64x64, #qf.enc<fp8e4m3, group = 32, scale = f8E8M0FNU>>
  %1 = qf.weight_ref "mxint8" : !qf.weight<64x64, #qf.enc<int8, group = 32, scale = f8E8M0FNU>>
  return
}

// -----

// CHECK: #nf4_g64 = #qf.enc<nf4, group = 64, scale = f32>{{$}}
// CHECK-LABEL: func.func @nf4
// CHECK: qf.weight_ref "nf4" : !qf.weight<1024x4096, #nf4_g64>
func.func @nf4() {
  %0 = qf.weight_ref "nf4" : !qf.weight<1024x4096, #qf.enc<nf4, group = 64, scale = f32>>
  return
}

// -----

// Codebooks with inline tables of 2^bits values, for every width from 2 to 8
// bits, f16 and f32 tables, splat and non-splat (the 256-entry table prints
// in hex, little-endian f16: -1.0 = 0xBC00 ... 127/128 = 0x3BF0).
// CHECK: #codebook_g128 = #qf.enc<codebook, bits = 2, table = dense<[-1.500000e+00, -5.000000e-01, 5.000000e-01, 1.500000e+00]> : tensor<4xf16>, group = 128, scale = f16>{{$}}
// CHECK: #codebook_g128_1 = #qf.enc<codebook, bits = 3, table = dense<[-4.000000e+00, -3.000000e+00, -2.000000e+00, -1.000000e+00, 0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<8xf32>, group = 128, scale = f16>{{$}}
// CHECK: #codebook_g128_2 = #qf.enc<codebook, bits = 4, table = dense<[-8.000000e+00, -7.000000e+00, -6.000000e+00, -5.000000e+00, -4.000000e+00, -3.000000e+00, -2.000000e+00, -1.000000e+00, 0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00]> : tensor<16xf16>, group = 128, scale = f16>{{$}}
// CHECK: #codebook_g128_3 = #qf.enc<codebook, bits = 5, table = dense<2.500000e-01> : tensor<32xf16>, group = 128, scale = f16>{{$}}
// CHECK: #codebook_g128_4 = #qf.enc<codebook, bits = 6, table = dense<-7.500000e-01> : tensor<64xf32>, group = 128, scale = f16>{{$}}
// CHECK: #codebook_g128_5 = #qf.enc<codebook, bits = 7, table = dense<1.250000e-01> : tensor<128xf16>, group = 128, scale = bf16>{{$}}
// CHECK: #codebook_g128_6 = #qf.enc<codebook, bits = 8, table = dense<{{"0x00BCF0BB([0-9A-F]{252}){4}E03BF03B"}}> : tensor<256xf16>, group = 128, scale = f16>{{$}}
// CHECK-LABEL: func.func @codebook_inline
// CHECK: qf.weight_ref "b2" : !qf.weight<64x256, #codebook_g128>
// CHECK: qf.weight_ref "b3" : !qf.weight<64x256, #codebook_g128_1>
// CHECK: qf.weight_ref "b4" : !qf.weight<64x256, #codebook_g128_2>
// CHECK: qf.weight_ref "b5" : !qf.weight<64x256, #codebook_g128_3>
// CHECK: qf.weight_ref "b6" : !qf.weight<64x256, #codebook_g128_4>
// CHECK: qf.weight_ref "b7" : !qf.weight<64x256, #codebook_g128_5>
// CHECK: qf.weight_ref "b8" : !qf.weight<64x256, #codebook_g128_6>
func.func @codebook_inline() {
  %0 = qf.weight_ref "b2" : !qf.weight<64x256, #qf.enc<codebook, bits = 2,
      table = dense<[-1.5, -0.5, 0.5, 1.5]> : tensor<4xf16>, group = 128, scale = f16>>
  %1 = qf.weight_ref "b3" : !qf.weight<64x256, #qf.enc<codebook, bits = 3,
      table = dense<[-4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0]> : tensor<8xf32>,
      group = 128, scale = f16>>
  %2 = qf.weight_ref "b4" : !qf.weight<64x256, #qf.enc<codebook, bits = 4,
      table = dense<[-8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0, -1.0,
                     0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]> : tensor<16xf16>,
      group = 128, scale = f16>>
  %3 = qf.weight_ref "b5" : !qf.weight<64x256, #qf.enc<codebook, bits = 5,
      table = dense<0.25> : tensor<32xf16>, group = 128, scale = f16>>
  %4 = qf.weight_ref "b6" : !qf.weight<64x256, #qf.enc<codebook, bits = 6,
      table = dense<-0.75> : tensor<64xf32>, group = 128, scale = f16>>
  %5 = qf.weight_ref "b7" : !qf.weight<64x256, #qf.enc<codebook, bits = 7,
      table = dense<0.125> : tensor<128xf16>, group = 128, scale = bf16>>
  %6 = qf.weight_ref "b8" : !qf.weight<64x256, #qf.enc<codebook, bits = 8,
      table = dense<[
    -1.0, -0.9921875, -0.984375, -0.9765625, -0.96875, -0.9609375, -0.953125, -0.9453125,
    -0.9375, -0.9296875, -0.921875, -0.9140625, -0.90625, -0.8984375, -0.890625, -0.8828125,
    -0.875, -0.8671875, -0.859375, -0.8515625, -0.84375, -0.8359375, -0.828125, -0.8203125,
    -0.8125, -0.8046875, -0.796875, -0.7890625, -0.78125, -0.7734375, -0.765625, -0.7578125,
    -0.75, -0.7421875, -0.734375, -0.7265625, -0.71875, -0.7109375, -0.703125, -0.6953125,
    -0.6875, -0.6796875, -0.671875, -0.6640625, -0.65625, -0.6484375, -0.640625, -0.6328125,
    -0.625, -0.6171875, -0.609375, -0.6015625, -0.59375, -0.5859375, -0.578125, -0.5703125,
    -0.5625, -0.5546875, -0.546875, -0.5390625, -0.53125, -0.5234375, -0.515625, -0.5078125,
    -0.5, -0.4921875, -0.484375, -0.4765625, -0.46875, -0.4609375, -0.453125, -0.4453125,
    -0.4375, -0.4296875, -0.421875, -0.4140625, -0.40625, -0.3984375, -0.390625, -0.3828125,
    -0.375, -0.3671875, -0.359375, -0.3515625, -0.34375, -0.3359375, -0.328125, -0.3203125,
    -0.3125, -0.3046875, -0.296875, -0.2890625, -0.28125, -0.2734375, -0.265625, -0.2578125,
    -0.25, -0.2421875, -0.234375, -0.2265625, -0.21875, -0.2109375, -0.203125, -0.1953125,
    -0.1875, -0.1796875, -0.171875, -0.1640625, -0.15625, -0.1484375, -0.140625, -0.1328125,
    -0.125, -0.1171875, -0.109375, -0.1015625, -0.09375, -0.0859375, -0.078125, -0.0703125,
    -0.0625, -0.0546875, -0.046875, -0.0390625, -0.03125, -0.0234375, -0.015625, -0.0078125,
    0.0, 0.0078125, 0.015625, 0.0234375, 0.03125, 0.0390625, 0.046875, 0.0546875,
    0.0625, 0.0703125, 0.078125, 0.0859375, 0.09375, 0.1015625, 0.109375, 0.1171875,
    0.125, 0.1328125, 0.140625, 0.1484375, 0.15625, 0.1640625, 0.171875, 0.1796875,
    0.1875, 0.1953125, 0.203125, 0.2109375, 0.21875, 0.2265625, 0.234375, 0.2421875,
    0.25, 0.2578125, 0.265625, 0.2734375, 0.28125, 0.2890625, 0.296875, 0.3046875,
    0.3125, 0.3203125, 0.328125, 0.3359375, 0.34375, 0.3515625, 0.359375, 0.3671875,
    0.375, 0.3828125, 0.390625, 0.3984375, 0.40625, 0.4140625, 0.421875, 0.4296875,
    0.4375, 0.4453125, 0.453125, 0.4609375, 0.46875, 0.4765625, 0.484375, 0.4921875,
    0.5, 0.5078125, 0.515625, 0.5234375, 0.53125, 0.5390625, 0.546875, 0.5546875,
    0.5625, 0.5703125, 0.578125, 0.5859375, 0.59375, 0.6015625, 0.609375, 0.6171875,
    0.625, 0.6328125, 0.640625, 0.6484375, 0.65625, 0.6640625, 0.671875, 0.6796875,
    0.6875, 0.6953125, 0.703125, 0.7109375, 0.71875, 0.7265625, 0.734375, 0.7421875,
    0.75, 0.7578125, 0.765625, 0.7734375, 0.78125, 0.7890625, 0.796875, 0.8046875,
    0.8125, 0.8203125, 0.828125, 0.8359375, 0.84375, 0.8515625, 0.859375, 0.8671875,
    0.875, 0.8828125, 0.890625, 0.8984375, 0.90625, 0.9140625, 0.921875, 0.9296875,
    0.9375, 0.9453125, 0.953125, 0.9609375, 0.96875, 0.9765625, 0.984375, 0.9921875
      ]> : tensor<256xf16>, group = 128, scale = f16>>
  return
}

// -----

// Codebooks with a table resolved by name at run time.
// CHECK: #codebook_g64 = #qf.enc<codebook, bits = 2, table = "lut.layer1" : f16, group = 64, scale = f32>{{$}}
// CHECK: #codebook_pc = #qf.enc<codebook, bits = 4, table = "lut.layer0" : f32, per_channel, scale = f16>{{$}}
// CHECK-LABEL: func.func @codebook_named
// CHECK: qf.weight_ref "cb0" : !qf.weight<4096x4096, #codebook_pc>
// CHECK: qf.weight_ref "cb1" : !qf.weight<4096x4096, #codebook_g64>
func.func @codebook_named() {
  %0 = qf.weight_ref "cb0" : !qf.weight<4096x4096, #qf.enc<codebook, bits = 4, table = "lut.layer0" : f32, per_channel, scale = f16>>
  %1 = qf.weight_ref "cb1" : !qf.weight<4096x4096, #qf.enc<codebook, table = "lut.layer1" : f16, bits = 2, group = 64, scale = f32>>
  return
}

// -----

// Scale granularities: per channel, powers of two from 16 to 256, and odd
// divisors of K (7 and 35 of K = 70; 7 of an int8 K = 49).
// CHECK: #int4_g16 = #qf.enc<int4, group = 16, scale = f16>{{$}}
// CHECK: #int4_g256 = #qf.enc<int4, group = 256, scale = f16>{{$}}
// CHECK: #int4_g32 = #qf.enc<int4, group = 32, scale = f16>{{$}}
// CHECK: #int4_g35 = #qf.enc<int4, group = 35, scale = f16>{{$}}
// CHECK: #int4_g64 = #qf.enc<int4, group = 64, scale = f16>{{$}}
// CHECK: #int4_g7 = #qf.enc<int4, group = 7, scale = f16>{{$}}
// CHECK: #int4_pc = #qf.enc<int4, per_channel, scale = f16>{{$}}
// CHECK: #int8_g7 = #qf.enc<int8, group = 7, scale = f32>{{$}}
// CHECK-LABEL: func.func @groups
// CHECK: qf.weight_ref "pc" : !qf.weight<256x4096, #int4_pc>
// CHECK: qf.weight_ref "g16" : !qf.weight<256x4096, #int4_g16>
// CHECK: qf.weight_ref "g32" : !qf.weight<256x4096, #int4_g32>
// CHECK: qf.weight_ref "g64" : !qf.weight<256x4096, #int4_g64>
// CHECK: qf.weight_ref "g256" : !qf.weight<256x4096, #int4_g256>
// CHECK: qf.weight_ref "g7" : !qf.weight<256x70, #int4_g7>
// CHECK: qf.weight_ref "g35" : !qf.weight<256x70, #int4_g35>
// CHECK: qf.weight_ref "i8g7" : !qf.weight<256x49, #int8_g7>
func.func @groups() {
  %0 = qf.weight_ref "pc" : !qf.weight<256x4096, #qf.enc<int4, per_channel, scale = f16>>
  %1 = qf.weight_ref "g16" : !qf.weight<256x4096, #qf.enc<int4, group = 16, scale = f16>>
  %2 = qf.weight_ref "g32" : !qf.weight<256x4096, #qf.enc<int4, group = 32, scale = f16>>
  %3 = qf.weight_ref "g64" : !qf.weight<256x4096, #qf.enc<int4, group = 64, scale = f16>>
  %4 = qf.weight_ref "g256" : !qf.weight<256x4096, #qf.enc<int4, group = 256, scale = f16>>
  %5 = qf.weight_ref "g7" : !qf.weight<256x70, #qf.enc<int4, group = 7, scale = f16>>
  %6 = qf.weight_ref "g35" : !qf.weight<256x70, #qf.enc<int4, group = 35, scale = f16>>
  %7 = qf.weight_ref "i8g7" : !qf.weight<256x49, #qf.enc<int8, group = 7, scale = f32>>
  return
}

// -----

// act_order (g_idx) keeps the group alias; it only shows in the definition.
// CHECK: #int4_g128 = #qf.enc<int4, group = 128, scale = f16, act_order>{{$}}
// CHECK: #uint4_g32 = #qf.enc<uint4, group = 32, scale = f16, zero = int, act_order>{{$}}
// CHECK-LABEL: func.func @act_order
// CHECK: qf.weight_ref "desc" : !qf.weight<4096x4096, #int4_g128>
// CHECK: qf.weight_ref "desc_asym" : !qf.weight<4096x4096, #uint4_g32>
func.func @act_order() {
  %0 = qf.weight_ref "desc" : !qf.weight<4096x4096, #qf.enc<int4, act_order, group = 128, scale = f16>>
  %1 = qf.weight_ref "desc_asym" : !qf.weight<4096x4096, #qf.enc<uint4, group = 32, scale = f16, zero = int, act_order>>
  return
}

// -----

// 2:4 structured sparsity: unquantized f16 and bf16, and on int4 / uint8 / fp8;
// with act_order too (its columns stay in checkpoint order).
// CHECK: #bf16_2of4 = #qf.enc<bf16, sparse = 2:4>{{$}}
// CHECK: #f16 = #qf.enc<f16>{{$}}
// CHECK: #f16_2of4 = #qf.enc<f16, sparse = 2:4>{{$}}
// CHECK: #fp8e4m3_pc_2of4 = #qf.enc<fp8e4m3, per_channel, scale = f32, sparse = 2:4>{{$}}
// CHECK: #int4_g128_2of4 = #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>{{$}}
// CHECK: #uint4_g64_2of4 = #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order, sparse = 2:4>{{$}}
// CHECK: #uint8_g64_2of4 = #qf.enc<uint8, group = 64, scale = f16, zero = float, sparse = 2:4>{{$}}
// CHECK-LABEL: func.func @sparse24
// CHECK: qf.weight_ref "f16" : !qf.weight<1024x4096, #f16_2of4>
// CHECK: qf.weight_ref "bf16" : !qf.weight<1024x4096, #bf16_2of4>
// CHECK: qf.weight_ref "int4" : !qf.weight<1024x4096, #int4_g128_2of4>
// CHECK: qf.weight_ref "uint8" : !qf.weight<1024x4096, #uint8_g64_2of4>
// CHECK: qf.weight_ref "fp8" : !qf.weight<1024x4096, #fp8e4m3_pc_2of4>
// CHECK: qf.weight_ref "dense" : !qf.weight<1024x4096, #f16>
// CHECK: qf.weight_ref "desc_act" : !qf.weight<1024x4096, #uint4_g64_2of4>
func.func @sparse24() {
  %0 = qf.weight_ref "f16" : !qf.weight<1024x4096, #qf.enc<f16, sparse = 2:4>>
  %1 = qf.weight_ref "bf16" : !qf.weight<1024x4096, #qf.enc<bf16, sparse = 2:4>>
  %2 = qf.weight_ref "int4" : !qf.weight<1024x4096, #qf.enc<int4, sparse = 2:4, group = 128, scale = f16>>
  %3 = qf.weight_ref "uint8" : !qf.weight<1024x4096, #qf.enc<uint8, group = 64, scale = f16, zero = float, sparse = 2:4>>
  %4 = qf.weight_ref "fp8" : !qf.weight<1024x4096, #qf.enc<fp8e4m3, per_channel, scale = f32, sparse = 2:4>>
  %5 = qf.weight_ref "dense" : !qf.weight<1024x4096, #qf.enc<f16>>
  %6 = qf.weight_ref "desc_act" : !qf.weight<1024x4096, #qf.enc<uint4, act_order, group = 64, scale = f16, zero = int, sparse = 2:4>>
  return
}

// -----

// The row-major layout is the default and is elided; tiled layouts print
// their tile and, unless it is 1, their interleave.
// CHECK: #int4_g128 = #qf.enc<int4, group = 128, scale = f16>{{$}}
// CHECK: #tiled_16x64 = #qf.layout<tiled, tile_n = 16, tile_k = 64, interleave = 4>{{$}}
// CHECK: #tiled_32x128 = #qf.layout<tiled, tile_n = 32, tile_k = 128>{{$}}
// CHECK-LABEL: func.func @layouts
// CHECK: qf.weight_ref "default" : !qf.weight<1024x4096, #int4_g128>{{$}}
// CHECK: qf.weight_ref "row_major" : !qf.weight<1024x4096, #int4_g128>{{$}}
// CHECK: qf.weight_ref "interleaved" : !qf.weight<1024x4096, #int4_g128, #tiled_16x64>{{$}}
// CHECK: qf.weight_ref "plain_tiles" : !qf.weight<1024x4096, #int4_g128, #tiled_32x128>{{$}}
// CHECK: qf.weight_ref "interleave_1" : !qf.weight<1024x4096, #int4_g128, #tiled_32x128>{{$}}
// LOCAL-LABEL: func.func @layouts
// LOCAL: "default" : !qf.weight<1024x4096, #qf.enc<int4, group = 128, scale = f16>>{{$}}
// LOCAL: "row_major" : !qf.weight<1024x4096, #qf.enc<int4, group = 128, scale = f16>>{{$}}
// LOCAL: "interleaved" : !qf.weight<1024x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 16, tile_k = 64, interleave = 4>>{{$}}
// LOCAL: "plain_tiles" : !qf.weight<1024x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 128>>{{$}}
func.func @layouts() {
  %0 = qf.weight_ref "default" : !qf.weight<1024x4096, #qf.enc<int4, group = 128, scale = f16>>
  %1 = qf.weight_ref "row_major" : !qf.weight<1024x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<row_major>>
  %2 = qf.weight_ref "interleaved" : !qf.weight<1024x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 16, tile_k = 64, interleave = 4>>
  %3 = qf.weight_ref "plain_tiles" : !qf.weight<1024x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 128>>
  %4 = qf.weight_ref "interleave_1" : !qf.weight<1024x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_k = 128, interleave = 1, tile_n = 32>>
  return
}

// -----

// Attribute aliases written in the input are resolved; the printer picks its
// own names.
#my_enc = #qf.enc<nf4, group = 128, scale = bf16>
#my_layout = #qf.layout<tiled, tile_n = 8, tile_k = 128, interleave = 2>
// CHECK: #nf4_g128 = #qf.enc<nf4, group = 128, scale = bf16>{{$}}
// CHECK: #tiled_8x128 = #qf.layout<tiled, tile_n = 8, tile_k = 128, interleave = 2>{{$}}
// CHECK-LABEL: func.func @user_aliases
// CHECK: qf.weight_ref "w" : !qf.weight<512x1024, #nf4_g128, #tiled_8x128>{{$}}
func.func @user_aliases() {
  %0 = qf.weight_ref "w" : !qf.weight<512x1024, #my_enc, #my_layout>
  return
}

// -----

// #qf.tiling, as attached to fused matmuls: defaults are not printed.
// CHECK-LABEL: func.func @tilings
// CHECK-SAME: qf.a = #qf.tiling<matvec>,
// CHECK-SAME: qf.b = #qf.tiling<matvec, block_m = 8, block_n = 4, threads_per_row = 16, vec_bytes = 8, k_unroll = 2, split_k = 4>,
// CHECK-SAME: qf.c = #qf.tiling<mma, block_m = 64, block_n = 128, block_k = 64, stages = 3>
func.func @tilings() attributes {
    qf.a = #qf.tiling<matvec, block_m = 1, block_n = 1, block_k = 0, threads_per_row = 32, vec_bytes = 16, k_unroll = 1, split_k = 1, stages = 1>,
    qf.b = #qf.tiling<matvec, split_k = 4, block_n = 4, block_m = 8, threads_per_row = 16, vec_bytes = 8, k_unroll = 2>,
    qf.c = #qf.tiling<mma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} {
  return
}
