// RUN: qfuse-opt %s --qf-to-gpu | FileCheck %s
// RUN: qfuse-compile %s --emit=ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// Gathers of fields whose width does not divide 32 (FieldGatherKernel.cpp):
// 3-, 5-, 6- and 7-bit codebooks record qf_gather_fields_b3/b5/b6/b7, one
// kernel per width. Word w holds stream bits [32 w, 32 w + 32): its first
// field is 32 w / f (in 64 bits: 32 w overflows i32 past 2^26 words), which
// starts r = 32 w mod f bits before the word, and 32 / f + 2 slots cover
// every field that overlaps it; a slot's field sits at s * f - r, shifted
// left, or right when it began in the word before, and dropped when it
// starts past the word (the select keeps the shift amount below 32). A
// 3-bit encoding also records qf_gather_fields_b1: the mma fragment
// layout keeps 3-bit codes as two bit planes, gathered as 1-bit fields.
#cb3 = #qf.enc<codebook, bits = 3, table = dense<[-4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0]> : tensor<8xf16>, per_channel, scale = f16>
#cb5 = #qf.enc<codebook, bits = 5, table = dense<[-16.0, -15.0, -14.0, -13.0, -12.0, -11.0, -10.0, -9.0, -8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]> : tensor<32xf16>, group = 32, scale = f16>
#cb6 = #qf.enc<codebook, bits = 6, table = dense<[-32.0, -31.0, -30.0, -29.0, -28.0, -27.0, -26.0, -25.0, -24.0, -23.0, -22.0, -21.0, -20.0, -19.0, -18.0, -17.0, -16.0, -15.0, -14.0, -13.0, -12.0, -11.0, -10.0, -9.0, -8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0]> : tensor<64xf16>, per_channel, scale = f16>
#cb7 = #qf.enc<codebook, bits = 7, table = dense<[-64.0, -63.0, -62.0, -61.0, -60.0, -59.0, -58.0, -57.0, -56.0, -55.0, -54.0, -53.0, -52.0, -51.0, -50.0, -49.0, -48.0, -47.0, -46.0, -45.0, -44.0, -43.0, -42.0, -41.0, -40.0, -39.0, -38.0, -37.0, -36.0, -35.0, -34.0, -33.0, -32.0, -31.0, -30.0, -29.0, -28.0, -27.0, -26.0, -25.0, -24.0, -23.0, -22.0, -21.0, -20.0, -19.0, -18.0, -17.0, -16.0, -15.0, -14.0, -13.0, -12.0, -11.0, -10.0, -9.0, -8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0]> : tensor<128xf16>, group = 64, scale = f16>

// CHECK-LABEL: func.func @odd_widths
// CHECK: qf.quantize {{.*}}kernel = @qf_kernels::@qf_gather_fields_b3, params{{.*}}kernel = @qf_kernels::@qf_gather_fields_b1, params = ["src", "table", "perm", "dst", "status", "words", "fields", "period", "tilesK", "tileN", "tileK", "n", "k", "srcRowBytes", "srcBits", "hasPerm", "signedSrc", "minCode", "maxCode", "addend", "padParity"]
// CHECK: qf.quantize {{.*}}@qf_gather_fields_b5
// CHECK-NOT: @qf_gather_fields_b1
// CHECK-SAME: {{$}}
// CHECK: qf.quantize {{.*}}@qf_gather_fields_b6
// CHECK-NOT: @qf_gather_fields_b1
// CHECK-SAME: {{$}}
// CHECK: qf.quantize {{.*}}@qf_gather_fields_b7
// CHECK-NOT: @qf_gather_fields_b1
// CHECK-SAME: {{$}}
// CHECK: qf.quantize {{.*}}@qf_gather_fields_b3{{.*}}@qf_gather_fields_b1
// CHECK: return
func.func @odd_widths(%a: tensor<8x128xf16>) -> (!qf.weight<8x128, #cb3>, !qf.weight<8x128, #cb5>, !qf.weight<8x128, #cb6>, !qf.weight<8x128, #cb7>, !qf.weight<8x128, #cb3>) {
  %0 = qf.quantize %a : tensor<8x128xf16> -> !qf.weight<8x128, #cb3>
  %1 = qf.quantize %a : tensor<8x128xf16> -> !qf.weight<8x128, #cb5>
  %2 = qf.quantize %a : tensor<8x128xf16> -> !qf.weight<8x128, #cb6>
  %3 = qf.quantize %a : tensor<8x128xf16> -> !qf.weight<8x128, #cb7>
  %4 = qf.quantize %a : tensor<8x128xf16> -> !qf.weight<8x128, #cb3>
  return %0, %1, %2, %3, %4 : !qf.weight<8x128, #cb3>, !qf.weight<8x128, #cb5>, !qf.weight<8x128, #cb6>, !qf.weight<8x128, #cb7>, !qf.weight<8x128, #cb3>
}

// The 3-bit word: first and r from 32 w in 64 bits; slot 0's field at
// 0 - r, its shift amount |at| kept only while at < 32, shifted left when
// at >= 0 and right otherwise; slot 11 (the last, 11 * 3 = 33 - r) and
// then the one 32-bit store.
// CHECK-LABEL: llvm.func @qf_gather_fields_b3(
// CHECK: %[[W64:.*]] = llvm.mul %{{.*}}, %{{.*}} : i64
// CHECK: %[[F3:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK-NEXT: %[[FIRST:.*]] = llvm.udiv %[[W64]], %[[F3]] : i64
// CHECK: %[[R64:.*]] = llvm.urem %[[W64]], %{{.*}} : i64
// CHECK-NEXT: %[[R:.*]] = llvm.trunc %[[R64]] : i64 to i32
// CHECK: %[[AT:.*]] = llvm.sub %{{.*}}, %[[R]] : i32
// CHECK-NEXT: %[[C32:.*]] = llvm.mlir.constant(32 : i32) : i32
// CHECK-NEXT: %[[IN:.*]] = llvm.icmp "slt" %[[AT]], %[[C32]] : i32
// CHECK-NEXT: %[[LEFT:.*]] = llvm.icmp "sge" %[[AT]], %{{.*}} : i32
// CHECK-NEXT: %[[NEG:.*]] = llvm.sub %{{.*}}, %[[AT]] : i32
// CHECK-NEXT: %[[ABS:.*]] = llvm.select %[[LEFT]], %[[AT]], %[[NEG]] : i1, i32
// CHECK-NEXT: %[[AMT:.*]] = llvm.select %[[IN]], %[[ABS]], %{{.*}} : i1, i32
// CHECK-NEXT: %[[RIGHT:.*]] = llvm.lshr %[[STORED:.*]], %[[AMT]] : i32
// CHECK-NEXT: %[[LSHIFT:.*]] = llvm.shl %[[STORED]], %[[AMT]] : i32
// CHECK-NEXT: %[[PIECE:.*]] = llvm.select %[[LEFT]], %[[LSHIFT]], %[[RIGHT]] : i1, i32
// CHECK-NEXT: llvm.select %[[IN]], %[[PIECE]], %{{.*}} : i1, i32
// CHECK: %[[C33:.*]] = llvm.mlir.constant(33 : i32) : i32
// CHECK-NEXT: llvm.sub %[[C33]], %[[R]] : i32
// CHECK-NOT: llvm.mlir.constant(36 : i32)
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>

// The mma fragment layout's 3-bit planes: 1-bit fields, 32 a word, each
// at its own bit (FieldGather.h).
// CHECK-LABEL: llvm.func @qf_gather_fields_b1(
// CHECK: llvm.mlir.constant(31 : i32) : i32
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>

// 5 bits: 32 / 5 + 2 = 8 slots, the last at 35 - r.
// CHECK-LABEL: llvm.func @qf_gather_fields_b5(
// CHECK: %[[F5:.*]] = llvm.mlir.constant(5 : i64) : i64
// CHECK-NEXT: llvm.udiv %{{.*}}, %[[F5]] : i64
// CHECK: llvm.mlir.constant(35 : i32) : i32
// CHECK-NOT: llvm.mlir.constant(40 : i32)
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>

// 6 bits: 7 slots, the last at 36 - r.
// CHECK-LABEL: llvm.func @qf_gather_fields_b6(
// CHECK: %[[F6:.*]] = llvm.mlir.constant(6 : i64) : i64
// CHECK-NEXT: llvm.udiv %{{.*}}, %[[F6]] : i64
// CHECK: llvm.mlir.constant(36 : i32) : i32
// CHECK-NOT: llvm.mlir.constant(42 : i32)
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>

// 7 bits: 6 slots, the last at 35 - r.
// CHECK-LABEL: llvm.func @qf_gather_fields_b7(
// CHECK: %[[F7:.*]] = llvm.mlir.constant(7 : i64) : i64
// CHECK-NEXT: llvm.udiv %{{.*}}, %[[F7]] : i64
// CHECK: llvm.mlir.constant(35 : i32) : i32
// CHECK-NOT: llvm.mlir.constant(42 : i32)
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
// CHECK-NOT: llvm.func @qf_gather_fields

// Every width's entry in the PTX, byte loads of the source (ld.global.nc)
// and one 32-bit store of the word; ptxas assembles all five.
// PTX-LABEL: .entry qf_gather_fields_b3(
// PTX: ld.global.nc.b8
// PTX: st.global.b32
// PTX-LABEL: .entry qf_gather_fields_b1(
// PTX: st.global.b32
// PTX-LABEL: .entry qf_gather_fields_b5(
// PTX: st.global.b32
// PTX-LABEL: .entry qf_gather_fields_b6(
// PTX: st.global.b32
// PTX-LABEL: .entry qf_gather_fields_b7(
// PTX: st.global.b32
