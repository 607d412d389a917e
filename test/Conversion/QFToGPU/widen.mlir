// RUN: qfuse-opt %s --qf-to-gpu | FileCheck %s
// RUN: qfuse-compile %s --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// No flush to zero: f16 subnormals widen to their f32 values.
// RUN: not grep -E "\.ftz|\.approx|\.local" %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}
// RUN: %if ptxas %{ qfuse-compile %s --chip=sm_80 --emit=ptx -o %t.80.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_80 %t.80.ptx -o %t.80.cubin %}
// RUN: qfuse-compile %s -o %t.qfa
// RUN: FileCheck %s --check-prefix=ART < %t.qfa

// The f16/bf16 -> f32 widening (WidenKernel.h): a qf.quantize of an f16 or
// bf16 input records the launch of its type's widening kernel with count 0
// (it writes nothing; qfuse-quantize's GPTQ solver launches it per module,
// DeviceWiden.h), one kernel per type however many ops record it; an f32
// input records none.
#int4 = #qf.enc<int4, group = 128, scale = f16>

// CHECK-LABEL: func.func @f16_input
// CHECK: qf.quantize {{.*}}#qf.launch<args = [#qf.arg<scratch "qf_widen_src">, #qf.arg<scratch "qf_widen_dst">, #qf.arg<i32 0>], batch = 1, block = [256, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@qf_widen_f16_to_f32, params = ["src", "dst", "count"]
func.func @f16_input(%a: tensor<4x256xf16>) -> !qf.weight<4x256, #int4> {
  %w = qf.quantize %a : tensor<4x256xf16> -> !qf.weight<4x256, #int4>
  return %w : !qf.weight<4x256, #int4>
}

// CHECK-LABEL: func.func @f16_again
// CHECK: @qf_widen_f16_to_f32
func.func @f16_again(%a: tensor<4x512xf16>) -> !qf.weight<4x512, #int4> {
  %w = qf.quantize %a : tensor<4x512xf16> -> !qf.weight<4x512, #int4>
  return %w : !qf.weight<4x512, #int4>
}

// The bf16 input records the rounding to f16 and the widening.
// CHECK-LABEL: func.func @bf16_input
// CHECK: @qf_round_bf16_to_f16{{.*}}@qf_widen_bf16_to_f32
func.func @bf16_input(%a: tensor<4x256xbf16>) -> !qf.weight<4x256, #int4> {
  %w = qf.quantize %a : tensor<4x256xbf16> -> !qf.weight<4x256, #int4>
  return %w : !qf.weight<4x256, #int4>
}

// CHECK-LABEL: func.func @f32_input
// CHECK-NOT: qf_widen
// CHECK: return
func.func @f32_input(%a: tensor<4x256xf32>) -> !qf.weight<4x256, #int4> {
  %w = qf.quantize %a : tensor<4x256xf32> -> !qf.weight<4x256, #int4>
  return %w : !qf.weight<4x256, #int4>
}

// f16: the exact conversion, a NaN's bits selected; bf16: a shift.
// CHECK: llvm.func @qf_widen_f16_to_f32(
// CHECK-SAME: i32) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>}
// CHECK: llvm.fpext {{.*}} : f16 to f32
// CHECK: llvm.select
// CHECK-NOT: llvm.func @qf_widen_f16_to_f32(
// CHECK: llvm.func @qf_widen_bf16_to_f32(
// CHECK: llvm.shl
// CHECK-NOT: llvm.func @qf_widen_bf16_to_f32(

// PTX-DAG: .entry qf_widen_f16_to_f32(
// PTX-DAG: .entry qf_widen_bf16_to_f32(
// PTX-DAG: cvt.f32.f16

// ART-DAG: "qf_widen_f16_to_f32"
// ART-DAG: "qf_widen_bf16_to_f32"
