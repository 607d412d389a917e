// RUN: qfuse-opt %s --qf-to-gpu | FileCheck %s
// RUN: qfuse-compile %s --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}
// RUN: %if ptxas %{ qfuse-compile %s --chip=sm_80 --emit=ptx -o %t.80.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_80 %t.80.ptx -o %t.80.cubin %}
// RUN: %if ptxas %{ qfuse-compile %s --chip=sm_90a --emit=ptx -o %t.90a.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.90a.ptx -o %t.90a.cubin %}
// RUN: qfuse-compile %s -o %t.qfa
// RUN: FileCheck %s --check-prefix=ART < %t.qfa

// 2:4 layouts on the device (format::sparseRepackGathers): a 2:4
// qf.quantize of 4- or 8-bit kept values records two gathers, the kept
// codes (qf_gather_fields_b<w> from "codes") and the 2-bit positions
// (qf_gather_fields_b2 from "meta", padParity: a padded quad keeps
// positions (0, 1)). Weights the host quantizes record them too. 16-bit
// kept values (unquantized 2:4) record qf_gather_fields_b16, whose fields
// span two source bytes.
#i4 = #qf.enc<int4, group = 32, scale = f16, sparse = 2:4>
#u8 = #qf.enc<uint8, per_channel, scale = f16, zero = int, sparse = 2:4>
#h = #qf.enc<f16, sparse = 2:4>

// CHECK-LABEL: func.func @int4
// CHECK: qf.quantize %{{.*}} {qf.launches = [#qf.launch<{{.*}}@qf_quantize_0_k256_f16{{.*}}>, #qf.launch<args = [#qf.arg<component "codes">, #qf.arg<scratch "qf_gather_table">, #qf.arg<scratch "qf_gather_perm">, #qf.arg<scratch "qf_gather_dst">, #qf.arg<scratch "qf_quantize_status">, {{.*}}kernel = @qf_kernels::@qf_gather_fields_b4, {{.*}}>, #qf.launch<args = [#qf.arg<component "meta">, #qf.arg<scratch "qf_gather_table">, {{.*}}kernel = @qf_kernels::@qf_gather_fields_b2, params = [{{.*}}"addend", "padParity"], {{.*}}>]}
func.func @int4(%a: tensor<64x256xf16>) -> !qf.weight<64x256, #i4> {
  %w = qf.quantize %a : tensor<64x256xf16> -> !qf.weight<64x256, #i4>
  return %w : !qf.weight<64x256, #i4>
}

// CHECK-LABEL: func.func @uint8
// CHECK: qf.quantize %{{.*}} {qf.launches = [#qf.launch<{{.*}}@qf_quantize_1_k256_f16{{.*}}>, #qf.launch<args = [#qf.arg<component "codes">, {{.*}}@qf_gather_fields_b8, {{.*}}>, #qf.launch<args = [#qf.arg<component "meta">, {{.*}}@qf_gather_fields_b2, {{.*}}>]}
func.func @uint8(%a: tensor<64x256xf16>) -> !qf.weight<64x256, #u8> {
  %w = qf.quantize %a : tensor<64x256xf16> -> !qf.weight<64x256, #u8>
  return %w : !qf.weight<64x256, #u8>
}

// CHECK-LABEL: func.func @half
// CHECK: qf.quantize %{{.*}} {qf.launches = [#qf.launch<{{.*}}@qf_quantize_2_k256_f16{{.*}}>, #qf.launch<args = [#qf.arg<component "codes">, {{.*}}@qf_gather_fields_b16, {{.*}}>, #qf.launch<args = [#qf.arg<component "meta">, {{.*}}@qf_gather_fields_b2, {{.*}}>]}
// CHECK: return
func.func @half(%a: tensor<64x256xf16>) -> !qf.weight<64x256, #h> {
  %w = qf.quantize %a : tensor<64x256xf16> -> !qf.weight<64x256, #h>
  return %w : !qf.weight<64x256, #h>
}

// One kernel per width; the padding select reads padParity (the last
// immediate) and the column's low bit.
// CHECK: llvm.func @qf_gather_fields_b4({{.*}}) attributes {nvvm.kernel
// CHECK: llvm.func @qf_gather_fields_b2({{.*}}, %arg19: i32, %arg20: i32) attributes {nvvm.kernel
// CHECK: llvm.icmp "ne" %arg20, %{{.*}} : i32
// CHECK: llvm.func @qf_gather_fields_b8
// CHECK: llvm.func @qf_gather_fields_b16
// CHECK-NOT: llvm.func @qf_gather_fields

// PTX-LABEL: .entry qf_gather_fields_b2(
// PTX: .param .u32 qf_gather_fields_b2_param_20
// PTX-NEXT: )
// PTX: ld.param.b32 %{{.*}}, [qf_gather_fields_b2_param_20];
// PTX: st.global.b32

// ART: "launch": "qf_gather_fields_b4",
// ART: "launch": "qf_gather_fields_b2",
// ART: "launch": "qf_gather_fields_b16",

// Two slots of two source bytes each.
// PTX-LABEL: .entry qf_gather_fields_b16(
// PTX-COUNT-4: ld.global.nc.b8
