// RUN: qfuse-opt %s --qf-to-gpu --verify-diagnostics | FileCheck %s
// RUN: qfuse-compile %s -o %t.qfa 2>&1 | FileCheck %s --check-prefix=REMARKS
// RUN: FileCheck %s --check-prefix=ART < %t.qfa

// What the generated quantizer does not take is never refused: a remark
// names the reason, the op gets no quantize launch, and the artifact holds
// the quantize launches of the others only; the runtime quantizes the rest
// on the host (format::quantizeRTN). Their codes still repack into the
// kernel layouts on the device: each op of a 4-bit encoding records the
// qf_gather_fields_b4 launch. (Every 2:4 encoding now has a kernel: groups
// that split quads too, quantize-span.mlir.)
#int4 = #qf.enc<int4, group = 128, scale = f16>
#named = #qf.enc<codebook, bits = 4, table = "lut" : f16, group = 64, scale = f16>

// CHECK-LABEL: func.func @mixed
// CHECK: qf.quantize %{{.*}} {qf.launches = [#qf.launch<{{.*}}@qf_quantize_0_k256_f16{{.*}}@qf_gather_fields_b4
// CHECK-NOT: @qf_quantize_
// CHECK: qf.quantize %{{.*}} {qf.launches = [#qf.launch<{{.*}}@qf_gather_fields_b4{{.*}}>]} : {{.*}}#codebook_g64>
// CHECK: return
func.func @mixed(%a: tensor<32x256xf16>) -> (!qf.weight<32x256, #int4>, !qf.weight<32x256, #named>) {
  %0 = qf.quantize %a : tensor<32x256xf16> -> !qf.weight<32x256, #int4>
  // expected-remark@+1 {{qf-to-gpu: qf.quantize to #qf.enc<codebook, bits = 4, table = "lut" : f16, group = 64, scale = f16> has no GPU kernel (a named codebook table is only known at run time); the runtime quantizes it on the host (format::quantizeRTN)}}
  %1 = qf.quantize %a : tensor<32x256xf16> -> !qf.weight<32x256, #named>
  return %0, %1 : !qf.weight<32x256, #int4>, !qf.weight<32x256, #named>
}

// REMARKS-COUNT-1: remark: qf-to-gpu: qf.quantize to
// ART: "launch": "qf_quantize_0_k256_f16",
// ART-NEXT: "op": "qf.quantize"
// ART-NOT: "launch": "qf_quantize_
// ART: "version": 6
