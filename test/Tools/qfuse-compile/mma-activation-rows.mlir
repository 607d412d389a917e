// RUN: qfuse-compile %s --emit=ptx --chip=sm_90a --batch-sizes=16 -o %t.ptx 2>/dev/null
// RUN: FileCheck %s < %t.ptx

// A k group's threads copy a step's activation tile row by row in passes;
// passes 8 rows apart (the swizzle's period) give a thread the same column
// and swizzle, so only the first passes compute addresses and the later
// ones add constants (TensorCorePipeline.cpp, issueActivations).

// 4096 x 4096 int4-g128 at M = 16: block_k 128 (16 chunks a row), one warp
// a k group, so a pass is 2 rows and passes 4-7 reuse passes 0-3's
// addresses, 8 rows on: 2048 bytes of shared memory, 65536 of x.
// CHECK-LABEL: .entry qf_mma_0_m16(
// CHECK: cp.async.ca.shared.global {{\[}}[[D0:%rd[0-9]+]]{{\]}}, {{\[}}[[S0:%rd[0-9]+]]{{\]}}, 16;
// CHECK: cp.async.ca.shared.global {{\[}}[[D1:%rd[0-9]+]]{{\]}}, {{\[}}[[S1:%rd[0-9]+]]{{\]}}, 16;
// CHECK: cp.async.ca.shared.global {{\[}}[[D2:%rd[0-9]+]]{{\]}}, {{\[}}[[S2:%rd[0-9]+]]{{\]}}, 16;
// CHECK: cp.async.ca.shared.global {{\[}}[[D3:%rd[0-9]+]]{{\]}}, {{\[}}[[S3:%rd[0-9]+]]{{\]}}, 16;
// CHECK-NEXT: cp.async.ca.shared.global {{\[}}[[D0]]+2048], {{\[}}[[S0]]+65536], 16;
// CHECK-NEXT: cp.async.ca.shared.global {{\[}}[[D1]]+2048], {{\[}}[[S1]]+65536], 16;
// CHECK-NEXT: cp.async.ca.shared.global {{\[}}[[D2]]+2048], {{\[}}[[S2]]+65536], 16;
// CHECK-NEXT: cp.async.ca.shared.global {{\[}}[[D3]]+2048], {{\[}}[[S3]]+65536], 16;

func.func @proj(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "w" : !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : tensor<?x4096xf16>, !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}
