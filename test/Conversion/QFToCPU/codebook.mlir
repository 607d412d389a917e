// RUN: qfuse-opt %s --qf-to-cpu | FileCheck %s

// Table formats: nf4, fp4 and inline codebooks read a private constant f32
// table; a named codebook reads the "table" parameter in its own type.
// Codes that cross bytes (3-bit) read the next byte too, clamped to the row.

#nf4 = #qf.enc<nf4, group = 64, scale = f32>
#cb3 = #qf.enc<codebook, bits = 3, table = dense<[-1.0, -0.5, -0.25, 0.0, 0.125, 0.25, 0.5, 1.0]> : tensor<8xf16>, group = 32, scale = f16>
#cb8 = #qf.enc<codebook, bits = 8, table = "lut" : f16, per_channel, scale = bf16>

func.func @nf4(%x: tensor<?x128xf16>, %w: !qf.weight<32x128, #nf4>) -> tensor<?x32xf16> {
  %y = qf.fused_matmul %x, %w : tensor<?x128xf16>, !qf.weight<32x128, #nf4> -> tensor<?x32xf16>
  return %y : tensor<?x32xf16>
}
func.func @cb3(%x: tensor<?x128xf16>, %w: !qf.weight<32x128, #cb3>) -> tensor<?x32xf16> {
  %y = qf.fused_matmul %x, %w : tensor<?x128xf16>, !qf.weight<32x128, #cb3> -> tensor<?x32xf16>
  return %y : tensor<?x32xf16>
}
func.func @cb8(%x: tensor<?x128xf16>, %w: !qf.weight<32x128, #cb8>) -> tensor<?x32xf16> {
  %y = qf.fused_matmul %x, %w : tensor<?x128xf16>, !qf.weight<32x128, #cb8> -> tensor<?x32xf16>
  return %y : tensor<?x32xf16>
}

// CHECK: qf.cpu_reference = {function = @qf_cpu::@qf_cpu_matmul_0, params = ["x", "codes", "scales", "y"]}
// CHECK: qf.cpu_reference = {function = @qf_cpu::@qf_cpu_matmul_1, params = ["x", "codes", "scales", "y"]}
// CHECK: qf.cpu_reference = {function = @qf_cpu::@qf_cpu_matmul_2, params = ["x", "codes", "scales", "table", "y"]}

// CHECK: module @qf_cpu {
// CHECK-DAG: memref.global "private" constant @qf_cpu_matmul_0_table : memref<16xf32> = dense<[-1.000000e+00, -0.6961928{{.*}}, 1.000000e+00]>
// CHECK-DAG: memref.global "private" constant @qf_cpu_matmul_1_table : memref<8xf32> = dense<[-1.000000e+00, -5.000000e-01, -2.500000e-01, 0.000000e+00, 1.250000e-01, 2.500000e-01, 5.000000e-01, 1.000000e+00]>

// CHECK-LABEL: func.func @qf_cpu_matmul_0(
// CHECK-SAME: memref<32x64xi8>, %{{.*}}: memref<32x2xf32>
// CHECK: %[[T0:.*]] = memref.get_global @qf_cpu_matmul_0_table : memref<16xf32>
// CHECK: memref.load %[[T0]][%{{.*}}] : memref<16xf32>

// 3-bit codes: 48 bytes per row; the second byte is clamped to byte 47.
// CHECK-LABEL: func.func @qf_cpu_matmul_1(
// CHECK-SAME: memref<32x48xi8>, %{{.*}}: memref<32x4xf16>
// CHECK: %[[T1:.*]] = memref.get_global @qf_cpu_matmul_1_table : memref<8xf32>
// CHECK: arith.minui %{{.*}}, %c47
// CHECK: arith.shli %{{.*}}, %c8_i32
// CHECK: arith.andi %{{.*}}, %c7_i32
// CHECK: memref.load %[[T1]]

// 8-bit named table, per-channel bf16 scales.
// CHECK-LABEL: func.func @qf_cpu_matmul_2(
// CHECK-SAME: %{{.*}}: memref<32x128xi8>, %{{.*}}: memref<32x1xbf16>, %[[TABLE:.*]]: memref<256xf16>, %{{.*}}: memref<?x32xf16>)
// CHECK-NOT: memref.get_global
// CHECK: memref.load %[[TABLE]][%{{.*}}] : memref<256xf16>
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.extf %{{.*}} : bf16 to f32
