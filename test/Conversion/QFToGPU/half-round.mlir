// RUN: qfuse-opt %s --qf-to-gpu | FileCheck %s
// RUN: qfuse-compile %s --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// No flush to zero: bf16 values in f16's subnormal range keep their bits.
// RUN: not grep -E "\.ftz|\.approx|\.local" %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}
// RUN: %if ptxas %{ qfuse-compile %s --chip=sm_80 --emit=ptx -o %t.80.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_80 %t.80.ptx -o %t.80.cubin %}
// RUN: qfuse-compile %s -o %t.qfa
// RUN: FileCheck %s --check-prefix=ART < %t.qfa

// The bf16 -> f16 rounding (HalfRoundKernel.h): a qf.quantize of a bf16
// input records the launch of qf_round_bf16_to_f16 with count 0 (it writes
// nothing; qfuse-quantize launches it per weight, DeviceHalfRound.h), one
// kernel however many ops record it; an f16 input records none.
#int4 = #qf.enc<int4, group = 128, scale = f16>

// CHECK-LABEL: func.func @bf16_input
// CHECK: qf.quantize {{.*}}@qf_quantize_0_k256_bf16{{.*}}#qf.launch<args = [#qf.arg<scratch "qf_round_src">, #qf.arg<scratch "qf_round_dst">, #qf.arg<scratch "qf_quantize_status">, #qf.arg<i32 0>], batch = 1, block = [256, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@qf_round_bf16_to_f16, params = ["src", "dst", "status", "count"]
func.func @bf16_input(%a: tensor<4x256xbf16>) -> !qf.weight<4x256, #int4> {
  %w = qf.quantize %a : tensor<4x256xbf16> -> !qf.weight<4x256, #int4>
  return %w : !qf.weight<4x256, #int4>
}

// CHECK-LABEL: func.func @bf16_again
// CHECK: @qf_quantize_1_k512_bf16{{.*}}@qf_round_bf16_to_f16
func.func @bf16_again(%a: tensor<4x512xbf16>) -> !qf.weight<4x512, #int4> {
  %w = qf.quantize %a : tensor<4x512xbf16> -> !qf.weight<4x512, #int4>
  return %w : !qf.weight<4x512, #int4>
}

// CHECK-LABEL: func.func @f16_input
// CHECK-NOT: qf_round_bf16_to_f16
// CHECK: return
func.func @f16_input(%a: tensor<4x256xf16>) -> !qf.weight<4x256, #int4> {
  %w = qf.quantize %a : tensor<4x256xf16> -> !qf.weight<4x256, #int4>
  return %w : !qf.weight<4x256, #int4>
}

// One kernel: i16 in, widened exactly, rounded by the conversion; a NaN's
// bits selected; the status word on overflow.
// CHECK: llvm.func @qf_round_bf16_to_f16(
// CHECK-SAME: i32) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>}
// CHECK: llvm.fpext {{.*}} : bf16 to f32
// CHECK: llvm.fptrunc {{.*}} : f32 to f16
// CHECK: llvm.select
// CHECK-NOT: llvm.func @qf_round_bf16_to_f16(

// PTX: .entry qf_round_bf16_to_f16(
// PTX: cvt.rn.f16.f32

// ART: "qf_round_bf16_to_f16"
