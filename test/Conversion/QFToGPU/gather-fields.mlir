// RUN: qfuse-opt %s --qf-to-gpu | FileCheck %s
// RUN: qfuse-compile %s --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}
// RUN: qfuse-compile %s -o %t.qfa
// RUN: FileCheck %s --check-prefix=ART < %t.qfa

// The layout gather (FieldGatherKernel.h): every qf.quantize of dense
// codes of 1 to 8 bits records the launch of qf_gather_fields_b<w>, one
// kernel per width however many encodings share it, with zero immediates
// (the runtime's DeviceGather launches it per weight and layout). 3-bit
// (and 5-, 6-, 7-bit) fields straddle the 32-bit words: their kernel
// shifts each field into place across the word's edges; 3-bit codes also
// record the 1-bit gather that writes their mma layout's bit planes.
#int4 = #qf.enc<int4, group = 64, scale = f16>
#nf4 = #qf.enc<nf4, group = 64, scale = f32>
#int8 = #qf.enc<int8, per_channel, scale = f16>
#cb2 = #qf.enc<codebook, bits = 2, table = dense<[-1.5, -0.5, 0.5, 1.5]> : tensor<4xf16>, per_channel, scale = f16>
#cb3 = #qf.enc<codebook, bits = 3, table = dense<[-4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0]> : tensor<8xf16>, per_channel, scale = f16>

// CHECK-LABEL: func.func @widths
// CHECK: qf.quantize {{.*}}@qf_quantize_0_k256_f16{{.*}}#qf.launch<args = [#qf.arg<component "codes">, #qf.arg<scratch "qf_gather_table">, #qf.arg<scratch "qf_gather_perm">, #qf.arg<scratch "qf_gather_dst">, #qf.arg<scratch "qf_quantize_status">, #qf.arg<i32 0>, {{.*}}block = [256, 1, 1], dynamic_shared_bytes = 0, grid = [1, 1, 1], kernel = @qf_kernels::@qf_gather_fields_b4, params = ["src", "table", "perm", "dst", "status", "words", "fields", "period", "tilesK", "tileN", "tileK", "n", "k", "srcRowBytes", "srcBits", "hasPerm", "signedSrc", "minCode", "maxCode", "addend", "padParity"]
// CHECK: qf.quantize {{.*}}@qf_gather_fields_b4
// CHECK: qf.quantize {{.*}}@qf_gather_fields_b8
// CHECK: qf.quantize {{.*}}@qf_gather_fields_b2
// CHECK: qf.quantize {{.*}}@qf_gather_fields_b3{{.*}}@qf_gather_fields_b1
// CHECK: return
func.func @widths(%a: tensor<8x256xf16>) -> (!qf.weight<8x256, #int4>, !qf.weight<8x256, #nf4>, !qf.weight<8x256, #int8>, !qf.weight<8x256, #cb2>, !qf.weight<8x256, #cb3>) {
  %0 = qf.quantize %a : tensor<8x256xf16> -> !qf.weight<8x256, #int4>
  %1 = qf.quantize %a : tensor<8x256xf16> -> !qf.weight<8x256, #nf4>
  %2 = qf.quantize %a : tensor<8x256xf16> -> !qf.weight<8x256, #int8>
  %3 = qf.quantize %a : tensor<8x256xf16> -> !qf.weight<8x256, #cb2>
  %4 = qf.quantize %a : tensor<8x256xf16> -> !qf.weight<8x256, #cb3>
  return %0, %1, %2, %3, %4 : !qf.weight<8x256, #int4>, !qf.weight<8x256, #nf4>, !qf.weight<8x256, #int8>, !qf.weight<8x256, #cb2>, !qf.weight<8x256, #cb3>
}

// One kernel per width, 256 threads, one word per thread.
// CHECK: llvm.func @qf_gather_fields_b4({{.*}}) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>}
// CHECK: llvm.func @qf_gather_fields_b8
// CHECK: llvm.func @qf_gather_fields_b2
// CHECK: llvm.func @qf_gather_fields_b3
// CHECK: llvm.func @qf_gather_fields_b1
// CHECK-NOT: llvm.func @qf_gather_fields


// Byte loads of the source (ld.global.nc), one 32-bit store of the word.
// PTX-LABEL: .entry qf_gather_fields_b4(
// PTX: ld.global.nc.b8
// PTX: st.global.b32

// The 3-bit word: fields before and after its edges, shifted left or
// right by where they start.
// PTX-LABEL: .entry qf_gather_fields_b3(
// PTX-DAG: shl.b32
// PTX-DAG: shr.u32
// PTX: st.global.b32

// ART: "launch": "qf_gather_fields_b4",
// ART-NEXT: "op": "qf.quantize"
