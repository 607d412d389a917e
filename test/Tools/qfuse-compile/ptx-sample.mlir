// REQUIRES: ptxas
// RUN: qfuse-compile %S/../../../unittests/Runtime/Inputs/sample-shared.mlir --emit=ptx --batch-sizes=1,8 -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: not grep -q "\.local" %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: qfuse-compile %S/../../../unittests/Runtime/Inputs/sample-odd.mlir --emit=ptx --chip=sm_80 --features=+ptx80 --batch-sizes=8 -o %t80.ptx
// RUN: %ptxas -arch=sm_80 -v %t80.ptx -o %t80.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// The sampler kernel for a 152k vocabulary: 16-byte non-coherent loads of
// the logits with 8-byte loads of the penalty mask, warp butterflies for the
// argmax and the block reductions, ex2 for the relative probabilities, the
// block scan's shfl.up, and Philox's 32x32->64 multiplies; it assembles
// without spills for sm_90 and sm_80.
// CHECK-LABEL: .entry qf_sample_n151936(
// CHECK: ld.global.nc.v4.b32
// CHECK: ld.global.nc.v2.b32
// CHECK: shfl.sync.bfly.b32
// CHECK: bar.sync 0;
// CHECK: ex2.approx.ftz.f32
// CHECK: shfl.sync.up.b32
// CHECK: mul.wide.u32
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: error
