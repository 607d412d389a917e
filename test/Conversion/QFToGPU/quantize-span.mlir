// RUN: qfuse-opt %s --qf-to-gpu --verify-diagnostics | FileCheck %s
// RUN: qfuse-compile %s --emit=ptx -o %t.ptx
// RUN: not grep -E "fma\.|mad\.(rn|rz|rm|rp|f|sat)|\.approx|\.ftz|\.local" %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}
// RUN: %if ptxas %{ qfuse-compile %s --chip=sm_80 --emit=ptx -o %t.80.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_80 %t.80.ptx -o %t.80.cubin %}
// RUN: %if ptxas %{ qfuse-compile %s --chip=sm_90a --emit=ptx -o %t.90a.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.90a.ptx -o %t.90a.cubin %}

// Groups whose codes, 2:4 positions or integer zero points do not fill
// whole bytes: a unit spans the fewest groups that do (WeightQuantizer's
// unitGroups), so every thread still writes whole bytes, and the op gets
// a kernel (no remark: --verify-diagnostics fails on one). qfuse-cpu-check
// compares their bytes with format::quantizeRTN (quantize-formats.mlir
// #30-#34). 2:4 groups that split quads (2 or 6 columns) take the kept
// values of their own columns; a unit is then 4 groups (whole quads, whole
// bytes; #41-#45).
#sp4 = #qf.enc<int8, group = 4, scale = f16, sparse = 2:4>
#sp2 = #qf.enc<int8, group = 2, scale = f16, sparse = 2:4>
#sp6 = #qf.enc<uint4, group = 6, scale = f16, zero = int, sparse = 2:4>
#u8z = #qf.enc<uint8, group = 4, scale = f16, zero = int, sparse = 2:4>
#cb3 = #qf.enc<codebook, bits = 3, table = dense<[-4.0, -3.0, -2.0, -1.0, 0.0, 1.5, 2.0, 3.0]> : tensor<8xf16>, group = 4, scale = f16>

// CHECK-LABEL: func.func @spans
// CHECK: qf.quantize {{.*}}@qf_quantize_0_k196_f16, params = ["w", "codes", "scales", "meta", "status"]{{.*}}@qf_gather_fields_b8{{.*}}@qf_gather_fields_b2
// CHECK: qf.quantize {{.*}}@qf_quantize_1_k196_f16, params = ["w", "codes", "scales", "zeros", "meta", "status"]
// CHECK: qf.quantize {{.*}}@qf_quantize_2_k256_f16, params = ["w", "codes", "scales", "status"]
// CHECK: return
func.func @spans(%a: tensor<8x196xf16>, %b: tensor<8x256xf16>) -> (!qf.weight<8x196, #sp4>, !qf.weight<8x196, #u8z>, !qf.weight<8x256, #cb3>) {
  %0 = qf.quantize %a : tensor<8x196xf16> -> !qf.weight<8x196, #sp4>
  %1 = qf.quantize %a : tensor<8x196xf16> -> !qf.weight<8x196, #u8z>
  %2 = qf.quantize %b : tensor<8x256xf16> -> !qf.weight<8x256, #cb3>
  return %0, %1, %2 : !qf.weight<8x196, #sp4>, !qf.weight<8x196, #u8z>, !qf.weight<8x256, #cb3>
}

// Units of 4 groups: 8 columns under groups of 2 (K = 256: 32 units, one
// warp), 24 under groups of 6 (K = 192: 8 units).
// CHECK-LABEL: func.func @split_quads
// CHECK: qf.quantize {{.*}}block = [32, 1, 1]{{.*}}@qf_quantize_3_k256_f16, params = ["w", "codes", "scales", "meta", "status"]{{.*}}@qf_gather_fields_b8{{.*}}@qf_gather_fields_b2
// CHECK: qf.quantize {{.*}}block = [32, 1, 1]{{.*}}@qf_quantize_4_k192_f16, params = ["w", "codes", "scales", "zeros", "meta", "status"]{{.*}}@qf_gather_fields_b4{{.*}}@qf_gather_fields_b2
// CHECK: return
func.func @split_quads(%a: tensor<8x256xf16>, %b: tensor<8x192xf16>) -> (!qf.weight<8x256, #sp2>, !qf.weight<8x192, #sp6>) {
  %0 = qf.quantize %a : tensor<8x256xf16> -> !qf.weight<8x256, #sp2>
  %1 = qf.quantize %b : tensor<8x192xf16> -> !qf.weight<8x192, #sp6>
  return %0, %1 : !qf.weight<8x256, #sp2>, !qf.weight<8x192, #sp6>
}

// CHECK: llvm.func @qf_quantize_0_k196_f16
// CHECK: llvm.func @qf_quantize_1_k196_f16
// CHECK: llvm.func @qf_quantize_2_k256_f16
// CHECK: llvm.func @qf_quantize_3_k256_f16
// CHECK: llvm.func @qf_quantize_4_k192_f16
