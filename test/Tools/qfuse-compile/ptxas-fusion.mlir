// REQUIRES: ptxas
// RUN: qfuse-compile %S/Inputs/llama-block.mlir --emit=ptx --batch-sizes=1,2,4,8 -o %t.ptx
// RUN: not grep -q "\.local" %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s

// Every fused matvec of a Llama block at batches 1, 2, 4 and 8 assembles
// without spills: 4 kernels (q, k and v grouped, with the RMSNorm
// prologue; o_proj and down_proj with residuals; gate/up with the prologue
// and silu_mul) x 4 batches.
// CHECK-COUNT-16: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK-NOT: error
