// REQUIRES: ptxas
// RUN: qfuse-compile %S/Inputs/mma-odd.mlir --emit=ptx --batch-sizes=16,64 -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: not grep -q "\.local" %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | awk '/Function properties for/ { f = $NF } /spill stores/ && $5 != 0 { print f ": " $0 }' | count 0

// Shapes that are not whole tiles lower to the same kernel over the padded
// fragment layout. N = 1000 (even): whole pairs stored under a column
// guard, no code tile copy needs a size (K = 1536 is whole steps).
// CHECK-LABEL: .entry qf_mma_0_m16(
// CHECK-NOT: st.global.b16
// CHECK: st.global.b32
// K = 1056 = 33 tiles of 32: the last 64-wide step's second tile does not
// exist and is zero-filled (cp.async with a source size).
// CHECK-LABEL: .entry qf_mma_4_m16(
// CHECK: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, %r{{[0-9]+}};
// N = 1001 (odd): a pair is not 4-byte aligned, so elements are stored one
// at a time, each under its own column guard.
// CHECK-LABEL: .entry qf_mma_6_m16(
// CHECK: st.global.b16
// CHECK-NOT: st.global.b32
// CHECK-LABEL: .entry qf_mma_10_m16(
// CHECK: st.global.b16
// fp8, K = 520 (17 tiles): the same zero-filled tile copies.
// CHECK-LABEL: .entry qf_mma_12_m16(
// CHECK: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, %r{{[0-9]+}};
// bf16 activations with an odd N.
// CHECK-LABEL: .entry qf_mma_14_m16(
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-DAG: st.global.b16
// The q/k/v group (N = 1000, 250, 250: member blocks start at whole tiles)
// and silu_mul (N = 700).
// CHECK-LABEL: .entry qf_mma_16_m16(
// CHECK-LABEL: .entry qf_mma_18_m16(
// CHECK: ex2.approx.ftz.f32
