// RUN: qfuse-opt %s --qf-to-gpu | FileCheck %s
// RUN: qfuse-compile %s --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// No contraction, approximation, flush to zero or local memory: every
// rounding is the one format::quantizeRTN does (integer mad.lo/mad.wide of
// the layout gather's addresses round nothing).
// RUN: not grep -E "fma\.|mad\.(rn|rz|rm|rp|f|sat)|\.approx|\.ftz|\.local" %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}
// RUN: %if ptxas %{ qfuse-compile %s --chip=sm_80 --emit=ptx -o %t.80.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_80 %t.80.ptx -o %t.80.cubin %}
// RUN: %if ptxas %{ qfuse-compile %s --chip=sm_90a --emit=ptx -o %t.90a.ptx %}
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.90a.ptx -o %t.90a.cubin %}
// RUN: qfuse-compile %s -o %t.qfa
// RUN: FileCheck %s --check-prefix=ART < %t.qfa

// qf.quantize: one kernel per (encoding, K, input type), one block per row
// (the grid is the op's N; the runtime launches any N), its threads over
// the row's units (WeightQuantizer.h): 32 groups of 128 at K = 4096, so 32
// threads. Params: w, the row-major components, status. Then the record of
// the 4-bit layout gather (gather-fields.mlir), which the runtime launches.
// CHECK-LABEL: func.func @int4
// CHECK: qf.quantize %{{.*}} {qf.launches = [#qf.launch<args = [#qf.arg<operand 0>, #qf.arg<component "codes">, #qf.arg<component "scales">, #qf.arg<scratch "qf_quantize_status">], batch = 1, block = [32, 1, 1], dynamic_shared_bytes = 0, grid = [64, 1, 1], kernel = @qf_kernels::@qf_quantize_0_k4096_f16, params = ["w", "codes", "scales", "status"], shared_bytes = 0>, #qf.launch<args = [#qf.arg<component "codes">, #qf.arg<scratch "qf_gather_table">, #qf.arg<scratch "qf_gather_perm">, #qf.arg<scratch "qf_gather_dst">, #qf.arg<scratch "qf_quantize_status">, #qf.arg<i32 0>, {{.*}}kernel = @qf_kernels::@qf_gather_fields_b4, params = ["src", "table", "perm", "dst", "status", "words", {{.*}}>]}
// Another row count shares the kernel.
// CHECK: qf.quantize %{{.*}} grid = [8, 1, 1], kernel = @qf_kernels::@qf_quantize_0_k4096_f16,
#int4 = #qf.enc<int4, group = 128, scale = f16>
func.func @int4(%a: tensor<64x4096xf16>, %b: tensor<8x4096xf16>) -> (!qf.weight<64x4096, #int4>, !qf.weight<8x4096, #int4>) {
  %w = qf.quantize %a : tensor<64x4096xf16> -> !qf.weight<64x4096, #int4>
  %v = qf.quantize %b : tensor<8x4096xf16> -> !qf.weight<8x4096, #int4>
  return %w, %v : !qf.weight<64x4096, #int4>, !qf.weight<8x4096, #int4>
}

// uint4 with integer zero points: a unit is the two groups that share a
// zero byte (16 units at K = 2048, group 64); zeros follow scales.
// CHECK-LABEL: func.func @uint4_bf16
// CHECK: block = [32, 1, 1], {{.*}}kernel = @qf_kernels::@qf_quantize_1_k2048_bf16, params = ["w", "codes", "scales", "zeros", "status"]
#u4 = #qf.enc<uint4, group = 64, scale = bf16, zero = int>
func.func @uint4_bf16(%a: tensor<16x2048xbf16>) -> !qf.weight<16x2048, #u4> {
  %w = qf.quantize %a : tensor<16x2048xbf16> -> !qf.weight<16x2048, #u4>
  return %w : !qf.weight<16x2048, #u4>
}

// nf4 over 14336 columns: 224 groups of 64, so 224 threads (7 warps).
// CHECK-LABEL: func.func @nf4
// CHECK: block = [224, 1, 1], {{.*}}kernel = @qf_kernels::@qf_quantize_2_k14336_f16
#nf4 = #qf.enc<nf4, group = 64, scale = f32>
func.func @nf4(%a: tensor<4x14336xf16>) -> !qf.weight<4x14336, #nf4> {
  %w = qf.quantize %a : tensor<4x14336xf16> -> !qf.weight<4x14336, #nf4>
  return %w : !qf.weight<4x14336, #nf4>
}

// NVFP4: one more input, amax (the tensor's largest |w|, one f32 the
// runtime finds on the device before the launch: a block sees one row),
// and the one-element global_scale component. 16 groups of 16 at K = 256.
// CHECK-LABEL: func.func @nvfp4_bf16
// CHECK: qf.quantize %{{.*}} {qf.launches = [#qf.launch<args = [#qf.arg<operand 0>, #qf.arg<scratch "qf_quantize_amax">, #qf.arg<component "codes">, #qf.arg<component "scales">, #qf.arg<component "global_scale">, #qf.arg<scratch "qf_quantize_status">], batch = 1, block = [32, 1, 1], {{.*}}kernel = @qf_kernels::@qf_quantize_3_k256_bf16, params = ["w", "amax", "codes", "scales", "global_scale", "status"]
#nvfp4 = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>
func.func @nvfp4_bf16(%a: tensor<8x256xbf16>) -> !qf.weight<8x256, #nvfp4> {
  %w = qf.quantize %a : tensor<8x256xbf16> -> !qf.weight<8x256, #nvfp4>
  return %w : !qf.weight<8x256, #nvfp4>
}

// act_order at load (no g_idx): the plain encoding's groups, and g_idx
// ([K] i32, col / group) as one more component, written by block 0; the
// codes still repack on the device (the b4 gather follows).
// CHECK-LABEL: func.func @act_order
// CHECK: qf.quantize %{{.*}} {qf.launches = [#qf.launch<args = [#qf.arg<operand 0>, #qf.arg<component "codes">, #qf.arg<component "scales">, #qf.arg<component "g_idx">, #qf.arg<scratch "qf_quantize_status">], batch = 1, block = [32, 1, 1], {{.*}}kernel = @qf_kernels::@qf_quantize_4_k4096_f16, params = ["w", "codes", "scales", "g_idx", "status"], {{.*}}@qf_gather_fields_b4
#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
func.func @act_order(%a: tensor<16x4096xf16>) -> !qf.weight<16x4096, #ao> {
  %w = qf.quantize %a : tensor<16x4096xf16> -> !qf.weight<16x4096, #ao>
  return %w : !qf.weight<16x4096, #ao>
}

// 2:4: the kept two of each quad and their positions (meta, [N, K/8]);
// the layout gathers of codes and meta follow (gather-fields-sparse24.mlir).
// CHECK-LABEL: func.func @sparse
// CHECK: qf.quantize %{{.*}} {qf.launches = [#qf.launch<args = [#qf.arg<operand 0>, #qf.arg<component "codes">, #qf.arg<component "scales">, #qf.arg<component "zeros">, #qf.arg<component "meta">, #qf.arg<scratch "qf_quantize_status">], batch = 1, block = [32, 1, 1], {{.*}}kernel = @qf_kernels::@qf_quantize_5_k2048_bf16, params = ["w", "codes", "scales", "zeros", "meta", "status"], shared_bytes = 0>, #qf.launch<{{.*}}@qf_gather_fields_b4{{.*}}>, #qf.launch<{{.*}}@qf_gather_fields_b2{{.*}}>, #qf.launch<{{.*}}kernel = @qf_kernels::@qf_round_bf16_to_f16{{.*}}>]}
#sp = #qf.enc<uint4, group = 64, scale = bf16, zero = int, sparse = 2:4>
func.func @sparse(%a: tensor<16x2048xbf16>) -> !qf.weight<16x2048, #sp> {
  %w = qf.quantize %a : tensor<16x2048xbf16> -> !qf.weight<16x2048, #sp>
  return %w : !qf.weight<16x2048, #sp>
}

// The kernels: row = ctaid.x, N = nctaid.x; f64 statistics and division,
// rint as cvt.rni, the scale rounded up through cvt.rn and a compare.
// CHECK: gpu.module @qf_kernels
// CHECK: llvm.func @qf_quantize_0_k4096_f16(%{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias}, %{{.*}}: !llvm.ptr<1> {llvm.noalias}, %{{.*}}: !llvm.ptr<1> {llvm.noalias}) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 32, 1, 1>}
// CHECK: nvvm.read.ptx.sreg.nctaid.x
// CHECK: nvvm.read.ptx.sreg.ctaid.x
// CHECK: llvm.fdiv {{.*}} : f64
// CHECK: llvm.intr.roundeven({{.*}}) : (f64) -> f64
// CHECK: llvm.func @qf_quantize_1_k2048_bf16
// CHECK: llvm.func @qf_quantize_2_k14336_f16
// NVFP4: w and amax are read only; the global scale 2688 / amax in f64,
// written by thread 0 of block 0.
// CHECK: llvm.func @qf_quantize_3_k256_bf16(%{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.noalias}, %{{.*}}: !llvm.ptr<1> {llvm.noalias}, %{{.*}}: !llvm.ptr<1> {llvm.noalias}, %{{.*}}: !llvm.ptr<1> {llvm.noalias})
// CHECK: llvm.fdiv %{{.*}}, %{{.*}} : f64
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// act_order: block 0 stores g_idx as i32; 2:4: strict compares of |w| in
// f32 pick the kept two.
// CHECK: llvm.func @qf_quantize_4_k4096_f16
// CHECK: llvm.store %{{.*}}, %{{.*}} : i32, !llvm.ptr
// CHECK: llvm.func @qf_quantize_5_k2048_bf16
// CHECK: llvm.fcmp "ogt" %{{.*}}, %{{.*}} : f32

// PTX: .entry qf_quantize_0_k4096_f16(
// PTX: div.rn.f64
// PTX: cvt.rni.f64.f64
// PTX: cvt.rn.f32.f64
// PTX: .entry qf_quantize_3_k256_bf16(
// PTX: div.rn.f64

// The global scale and amax are one f32 each; the NVFP4 launch binds amax.
// ART: "name": "qf_quantize_3_k256_bf16.codes",
// ART: "dtype": "f32",
// ART-NEXT: "name": "qf_quantize_3_k256_bf16.global_scale",
// ART: "dtype": "f32",
// ART-NEXT: "name": "qf_quantize_amax",
// ART: "encoding": "int4, group = 128, scale = f16"
// ART: "launch": "qf_quantize_0_k4096_f16",
// ART-NEXT: "op": "qf.quantize"
// ART: "buffer": "qf_quantize_amax"
// ART: "encoding": "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale",
// ART: "launch": "qf_quantize_3_k256_bf16",
// ART: "version": 6
