// RUN: qfuse-opt %s --qf-to-cpu | FileCheck %s

// Scalar formats decoded with integer ops on the raw bytes.

// uint8 with float zero points: scale * (q - zero), both in the scale type.
// CHECK-LABEL: func.func @qf_cpu_matmul_0(
// CHECK-SAME: %{{.*}}: memref<16x64xi8>, %[[S0:.*]]: memref<16x2xbf16>, %[[Z0:.*]]: memref<16x2xbf16>
// CHECK: arith.uitofp
// CHECK: memref.load %[[S0]]
// CHECK: memref.load %[[Z0]]
// CHECK: arith.subf
// CHECK: arith.mulf
func.func @uint8_fz(%x: tensor<?x64xf16>, %w: !qf.weight<16x64, #qf.enc<uint8, group = 32, scale = bf16, zero = float>>) -> tensor<?x16xf16> {
  %y = qf.fused_matmul %x, %w : tensor<?x64xf16>, !qf.weight<16x64, #qf.enc<uint8, group = 32, scale = bf16, zero = float>> -> tensor<?x16xf16>
  return %y : tensor<?x16xf16>
}

// fp8 E4M3: s << 31 | (e + 120) << 23 | m << 20, subnormals m * 2^-9.
// CHECK-LABEL: func.func @qf_cpu_matmul_1(
// CHECK-DAG: arith.shli %{{.*}}, %c20_i32 : i32
// CHECK-DAG: arith.addi %{{.*}}, %c120_i32 : i32
// CHECK-DAG: arith.shli %{{.*}}, %c23_i32 : i32
// CHECK-DAG: arith.shli %{{.*}}, %c31_i32 : i32
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK: arith.select
func.func @fp8(%x: tensor<?x64xf16>, %w: !qf.weight<16x64, #qf.enc<fp8e4m3, per_channel, scale = f32>>) -> tensor<?x16xf16> {
  %y = qf.fused_matmul %x, %w : tensor<?x64xf16>, !qf.weight<16x64, #qf.enc<fp8e4m3, per_channel, scale = f32>> -> tensor<?x16xf16>
  return %y : tensor<?x16xf16>
}

// NVFP4: E4M3 block scales (i8 bytes) and an f32 global scale:
// (e2m1 * scale) / global.
// CHECK-LABEL: func.func @qf_cpu_matmul_2(
// CHECK-SAME: %{{.*}}: memref<16x32xi8>, %{{.*}}: memref<16x4xi8>, %[[GS:.*]]: memref<1xf32>
// CHECK: memref.get_global @qf_cpu_matmul_2_table : memref<16xf32>
// CHECK: arith.addi %{{.*}}, %c120_i32
// CHECK: %[[GV:.*]] = memref.load %[[GS]]
// CHECK: %[[P:.*]] = arith.mulf
// CHECK: arith.divf %[[P]], %[[GV]] : f32
func.func @nvfp4(%x: tensor<?x64xf16>, %w: !qf.weight<16x64, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>>) -> tensor<?x16xf16> {
  %y = qf.fused_matmul %x, %w : tensor<?x64xf16>, !qf.weight<16x64, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>> -> tensor<?x16xf16>
  return %y : tensor<?x16xf16>
}

// MXFP4: E8M0 scales are f32 exponent fields (byte 0 is 2^-127, 0x400000).
// CHECK-LABEL: func.func @qf_cpu_matmul_3(
// CHECK-SAME: %{{.*}}: memref<16x32xi8>, %{{.*}}: memref<16x2xi8>
// CHECK: arith.constant 4194304 : i32
// CHECK: arith.shli %{{.*}}, %c23_i32
func.func @mxfp4(%x: tensor<?x64xf16>, %w: !qf.weight<16x64, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>>) -> tensor<?x16xf16> {
  %y = qf.fused_matmul %x, %w : tensor<?x64xf16>, !qf.weight<16x64, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>> -> tensor<?x16xf16>
  return %y : tensor<?x16xf16>
}
