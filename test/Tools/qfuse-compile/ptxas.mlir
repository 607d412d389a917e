// REQUIRES: ptxas
// RUN: qfuse-compile %S/Inputs/formats.mlir --emit=ptx --batch-sizes=1,2,4,8 -o %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s
// RUN: qfuse-compile %S/Inputs/formats.mlir --emit=ptx --chip=sm_80 --features=+ptx80 -o %t80.ptx 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: %ptxas -arch=sm_80 %t80.ptx -o %t80.cubin

// ptxas accepts every generated kernel without spills: 98, the 25 ops at 4
// batch sizes less the kernels act_order weights share with plain ones (they
// run them on permuted activations), plus one permute kernel per K.
// CHECK-COUNT-98: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// CHECK-NOT: error

// sm_80 has no fp8 conversion instruction: fp8 and NVFP4 run the
// dequantize + cuBLAS fallback there (docs/fallback.md).
// SM80: remark: M = 1 runs the dequantize + cuBLAS fallback (no matvec (fp8 E4M3 values or scales need cvt.f16x2.e4m3x2 (sm_89 or newer); target is sm_80)
