// RUN: qfuse-opt %s --qf-to-gpu --verify-diagnostics | FileCheck %s
// RUN: qfuse-compile %s --emit=ptx -o %t.ptx
// RUN: not grep -E "fma\.|mad\.(rn|rz|rm|rp|f|sat)|\.approx|\.ftz|\.local" %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}
// RUN: %if ptxas %{ qfuse-compile %s --chip=sm_80 --emit=ptx -o %t.80.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_80 %t.80.ptx -o %t.80.cubin %}
// RUN: %if ptxas %{ qfuse-compile %s --chip=sm_90a --emit=ptx -o %t.90a.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.90a.ptx -o %t.90a.cubin %}

// Unquantized 2:4 (f16 or bf16 kept values) gets a qf.quantize kernel (no
// remark: --verify-diagnostics fails on one): select24's two of each quad,
// each rounded from the input's bits as format::floatToHalf /
// floatToBFloat16 round its f32 value, into "codes" (two bytes per kept
// value) and their positions into "meta"; no scales. Its 2:4 fragment
// layout is gathered on the device: qf_gather_fields_b16 (the kept values)
// and _b2 (meta) are recorded beside it (gather-fields-sparse24.mlir).
// qfuse-cpu-check compares the bytes with
// format::quantizeRTN (quantize-formats.mlir #35-#40), QuantizeGpuTest on
// the GPU.
#h = #qf.enc<f16, sparse = 2:4>
#b = #qf.enc<bf16, sparse = 2:4>

// CHECK-LABEL: func.func @kept
// CHECK: qf.quantize {{.*}}@qf_quantize_0_k256_f16, params = ["w", "codes", "meta", "status"]{{.*}}@qf_gather_fields_b16{{.*}}@qf_gather_fields_b2{{.*}}>]}
// CHECK: qf.quantize {{.*}}@qf_quantize_1_k196_bf16, params = ["w", "codes", "meta", "status"]{{.*}}@qf_gather_fields_b16{{.*}}@qf_gather_fields_b2{{.*}}>, #qf.launch<{{.*}}@qf_round_bf16_to_f16{{.*}}>]}
// CHECK: qf.quantize {{.*}}@qf_quantize_2_k256_f32, params = ["w", "codes", "meta", "status"]{{.*}}@qf_gather_fields_b16{{.*}}>]}
// CHECK: qf.quantize {{.*}}@qf_quantize_3_k196_f16, params = ["w", "codes", "meta", "status"]{{.*}}@qf_gather_fields_b16{{.*}}>]}
// CHECK: return
func.func @kept(%a: tensor<8x256xf16>, %c: tensor<8x196xbf16>, %f: tensor<8x256xf32>, %g: tensor<8x196xf16>) -> (!qf.weight<8x256, #h>, !qf.weight<8x196, #h>, !qf.weight<8x256, #h>, !qf.weight<8x196, #b>) {
  %0 = qf.quantize %a : tensor<8x256xf16> -> !qf.weight<8x256, #h>
  %1 = qf.quantize %c : tensor<8x196xbf16> -> !qf.weight<8x196, #h>
  %2 = qf.quantize %f : tensor<8x256xf32> -> !qf.weight<8x256, #h>
  %3 = qf.quantize %g : tensor<8x196xf16> -> !qf.weight<8x196, #b>
  return %0, %1, %2, %3 : !qf.weight<8x256, #h>, !qf.weight<8x196, #h>, !qf.weight<8x256, #h>, !qf.weight<8x196, #b>
}

// f16: a NaN's sign | 0x7E00 (32256) | its top 9 payload bits (511), any
// other value the conversion's round to nearest even; bf16: the integer
// rounding (x + 0x7FFF (32767) + lsb) >> 16, a NaN's top half | 0x40 (64),
// no float conversion to f16. Four units of 64 columns per K = 256 row:
// one warp.
// CHECK-LABEL: llvm.func @qf_quantize_0_k256_f16(
// CHECK-SAME: nvvm.maxntid = array<i32: 32, 1, 1>
// CHECK: llvm.mlir.constant(511 : i32)
// CHECK: llvm.mlir.constant(32256 : i32)
// CHECK: llvm.fptrunc %{{.*}} : f32 to f16
// CHECK-LABEL: llvm.func @qf_quantize_1_k196_bf16(
// CHECK-LABEL: llvm.func @qf_quantize_3_k196_f16(
// CHECK-NOT: f32 to f16
// CHECK: llvm.mlir.constant(32767 : i32)
// CHECK: llvm.mlir.constant(64 : i32)

// PTX-LABEL: .entry qf_quantize_2_k256_f32(
// PTX: cvt.rn.f16.f32
