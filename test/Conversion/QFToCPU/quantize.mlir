// RUN: qfuse-opt %s --qf-to-cpu --split-input-file --verify-diagnostics | FileCheck %s

// qf.quantize lowers to one function per (encoding, K, input type) over a
// dynamic row count, built from WeightQuantizer: f64 statistics, roundeven,
// the packed components of format::quantizeRTN and a status word. Two ops
// with the same encoding and K share it.
#e = #qf.enc<uint4, group = 128, scale = f16, zero = int>
func.func @quantize(%a: tensor<64x256xf16>, %b: tensor<32x256xf16>)
    -> (!qf.weight<64x256, #e>, !qf.weight<32x256, #e>) {
  %w = qf.quantize %a : tensor<64x256xf16> -> !qf.weight<64x256, #e>
  %v = qf.quantize %b : tensor<32x256xf16> -> !qf.weight<32x256, #e>
  return %w, %v : !qf.weight<64x256, #e>, !qf.weight<32x256, #e>
}

// CHECK-LABEL: func.func @quantize
// CHECK: qf.quantize %{{.*}} {qf.cpu_reference = {function = @qf_cpu::@qf_cpu_quantize_0, params = ["w", "codes", "scales", "zeros", "status"]}}
// CHECK: qf.quantize %{{.*}} {qf.cpu_reference = {function = @qf_cpu::@qf_cpu_quantize_0,
// CHECK: module @qf_cpu
// CHECK: func.func @qf_cpu_quantize_0(%{{.*}}: memref<?x256xf16>, %{{.*}}: memref<?x128xi8>, %{{.*}}: memref<?x2xf16>, %{{.*}}: memref<?x1xi8>, %{{.*}}: memref<1xi32>) attributes {llvm.emit_c_interface}
// CHECK: math.roundeven {{.*}} : f64
// CHECK: arith.divf {{.*}} : f64
// CHECK-NOT: func.func

// -----

// NVFP4: the function finds the tensor's largest magnitude itself (a loop
// over every row before the units), derives the global scale and writes it
// as the one-element global_scale component.
#nvfp4 = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>
func.func @nvfp4(%a: tensor<16x64xf16>) -> !qf.weight<16x64, #nvfp4> {
  %w = qf.quantize %a : tensor<16x64xf16> -> !qf.weight<16x64, #nvfp4>
  return %w : !qf.weight<16x64, #nvfp4>
}

// CHECK-LABEL: func.func @nvfp4
// CHECK: qf.cpu_reference = {function = @qf_cpu::@qf_cpu_quantize_0, params = ["w", "codes", "scales", "global_scale", "status"]}
// CHECK: func.func @qf_cpu_quantize_0(%[[W:.*]]: memref<?x64xf16>, %{{.*}}: memref<?x32xi8>, %{{.*}}: memref<?x4xi8>, %[[GS:.*]]: memref<1xf32>, %{{.*}}: memref<1xi32>)
// CHECK: %[[C2688:.*]] = arith.constant 2.688000e+03 : f64
// CHECK: memref.dim %[[W]]
// CHECK: %[[AMAX:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK: %[[AMAXD:.*]] = arith.extf %[[AMAX]] : f32 to f64
// CHECK: arith.divf %[[C2688]], %[[AMAXD]] : f64
// CHECK: memref.store %{{.*}}, %[[GS]][%{{.*}}] : memref<1xf32>

// -----

// act_order at load has no g_idx: consecutive groups, and the units of row
// 0 write g_idx[c] = c / group. 2:4 keeps two of each quad: the function
// reads the four, picks by |w| with strict compares (the lower position on
// a tie) and writes the positions to meta ([N, K/8]).
#ao24 = #qf.enc<uint4, group = 64, scale = f16, zero = int, act_order, sparse = 2:4>
func.func @act_order_2of4(%a: tensor<16x128xf16>) -> !qf.weight<16x128, #ao24> {
  %w = qf.quantize %a : tensor<16x128xf16> -> !qf.weight<16x128, #ao24>
  return %w : !qf.weight<16x128, #ao24>
}

// CHECK-LABEL: func.func @act_order_2of4
// CHECK: params = ["w", "codes", "scales", "zeros", "g_idx", "meta", "status"]
// CHECK: func.func @qf_cpu_quantize_0(%{{.*}}: memref<?x128xf16>, %{{.*}}: memref<?x32xi8>, %{{.*}}: memref<?x2xf16>, %{{.*}}: memref<?x1xi8>, %[[GIDX:.*]]: memref<128xi32>, %[[META:.*]]: memref<?x16xi8>, %{{.*}}: memref<1xi32>)
// CHECK: arith.cmpf ogt, {{.*}} : f32
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: memref.store %{{.*}}, %[[META]][%{{.*}}, %{{.*}}] : memref<?x16xi8>
// CHECK: arith.divui %{{.*}}, %c64
// CHECK: memref.store %{{.*}}, %[[GIDX]][%{{.*}}] : memref<128xi32>

// -----

// What the generated quantizer does not take keeps no function: a remark
// says why, and the host's format::quantizeRTN quantizes it.
#named = #qf.enc<codebook, bits = 4, table = "lut" : f16, group = 32, scale = f16>
func.func @named_table(%a: tensor<16x64xf16>) -> !qf.weight<16x64, #named> {
  // expected-remark@+1 {{a named codebook table is only known at run time}}
  %w = qf.quantize %a : tensor<16x64xf16> -> !qf.weight<16x64, #named>
  return %w : !qf.weight<16x64, #named>
}

// -----

// 2:4 in groups of 2: each kept value goes to the group of its own column
// (format::quantizeRTN's groups), so a group runs over the quads it
// overlaps and takes the kept values whose column is in it: the column
// compares gate the carried statistics and streams. (qfuse-cpu-check's
// #41-#45 compare the bytes.)
#sp2 = #qf.enc<int8, group = 2, scale = f16, sparse = 2:4>
func.func @sparse_group2(%a: tensor<16x64xf16>) -> !qf.weight<16x64, #sp2> {
  %w = qf.quantize %a : tensor<16x64xf16> -> !qf.weight<16x64, #sp2>
  return %w : !qf.weight<16x64, #sp2>
}

// CHECK-LABEL: func.func @sparse_group2
// CHECK: params = ["w", "codes", "scales", "meta", "status"]
// CHECK: func.func @qf_cpu_quantize_0(%{{.*}}: memref<?x64xf16>, %{{.*}}: memref<?x32xi8>, %{{.*}}: memref<?x32xf16>, %{{.*}}: memref<?x8xi8>, %{{.*}}: memref<1xi32>)
// CHECK: arith.cmpi uge, %{{.*}}, %{{.*}} : index
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : index
