// The output is written to a temporary name and renamed when complete: a
// compile that fails leaves no file at -o (and removes none that was there
// before it), and a path that cannot be written is named in the error.

// RUN: rm -rf %t && mkdir -p %t
// RUN: not qfuse-compile %s -o %t/out.qfa 2>&1 | FileCheck %s --check-prefix=FAIL
// RUN: not test -e %t/out.qfa
// RUN: echo previous > %t/kept.qfa
// RUN: not qfuse-compile %s -o %t/kept.qfa 2>&1 | FileCheck %s --check-prefix=FAIL
// RUN: FileCheck %s --check-prefix=KEPT < %t/kept.qfa
// FAIL: group size 128 does not divide K = 100
// KEPT: previous

// RUN: not qfuse-compile %S/Inputs/formats.mlir --batch-sizes=1 --emit=ptx -o %t/missing/dir/out.ptx 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// UNWRITABLE: qfuse-compile: cannot write '{{.*}}missing/dir/out.ptx':

// RUN: qfuse-compile %S/Inputs/formats.mlir --batch-sizes=1 --emit=ptx -o %t/ok.ptx
// RUN: FileCheck %s --check-prefix=OK < %t/ok.ptx
// RUN: ls %t | FileCheck %s --check-prefix=ONLY
// OK: .visible .entry
// ONLY: kept.qfa
// ONLY-NEXT: ok.ptx
// ONLY-NOT: {{.}}

// A weight the verifier refuses (the group does not divide K): the compile
// fails before anything is written.
func.func @bad_group(%x: tensor<1x100xf16>) -> tensor<1x64xf16> {
  %w = qf.weight_ref "w" : !qf.weight<64x100, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.matmul %x, %w : tensor<1x100xf16>, !qf.weight<64x100, #qf.enc<int4, group = 128, scale = f16>> -> tensor<1x64xf16>
  return %y : tensor<1x64xf16>
}
