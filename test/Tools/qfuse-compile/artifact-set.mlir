// --chip with a list compiles the module once per chip (side by side, on
// threads and contexts of their own) and writes one artifact set (docs/artifact.md, Artifact sets): the variants in --chip
// order, each byte for byte what a single-chip compile writes, each tiled
// for its own chip (sm_90a runs wgmma at batch 128, sm_80 and sm_90
// mma.sync). A single chip still writes a plain artifact.

// RUN: rm -rf %t && mkdir -p %t
// RUN: qfuse-compile %S/Inputs/one-matmul-4096.mlir --batch-sizes=1,128 --no-cubin --chip=sm_80,sm_90,sm_90a -o %t/set.qfa
// RUN: FileCheck %s --strict-whitespace < %t/set.qfa
// CHECK:      {{^}}{
// CHECK-NEXT: {{^}}  "format": "qfuse-artifact-set",
// CHECK-NEXT: {{^}}  "version": 1,
// CHECK-NEXT: {{^}}  "variants": [
// CHECK-NEXT: {{^}}{
// CHECK:      "chip": "sm_80"
// CHECK-NOT:  qf_wgmma
// CHECK:      {{^}}},
// CHECK-NEXT: {{^}}{
// CHECK:      "chip": "sm_90"
// CHECK-NOT:  qf_wgmma
// CHECK:      {{^}}},
// CHECK-NEXT: {{^}}{
// CHECK:      "name": "qf_wgmma_1_m128"
// CHECK:      "chip": "sm_90a"
// CHECK:      {{^}}}
// CHECK-NEXT: {{^}}  ]
// CHECK-NEXT: {{^}}}

// RUN: qfuse-compile %S/Inputs/one-matmul-4096.mlir --batch-sizes=1,128 --no-cubin --chip=sm_80 -o %t/sm_80.qfa
// RUN: qfuse-compile %S/Inputs/one-matmul-4096.mlir --batch-sizes=1,128 --no-cubin --chip=sm_90 -o %t/sm_90.qfa
// RUN: qfuse-compile %S/Inputs/one-matmul-4096.mlir --batch-sizes=1,128 --no-cubin --chip=sm_90a -o %t/sm_90a.qfa
// RUN: FileCheck %s --check-prefix=PLAIN < %t/sm_90.qfa
// PLAIN: "format": "qfuse-artifact"
// PLAIN-NOT: variants
// RUN: %python -c "import sys; s = open(sys.argv[1]).read(); sys.exit(sum(open(p).read() .rstrip(chr(10)) + tail not in s for p, tail in zip(sys.argv[2:], [',', ',', chr(10) + '  ]'])))" %t/set.qfa %t/sm_80.qfa %t/sm_90.qfa %t/sm_90a.qfa

// A list is checked before anything compiles: every chip known, none twice,
// and MLIR or PTX only for one chip.
// RUN: not qfuse-compile %S/Inputs/one-matmul-4096.mlir --chip=sm_80,sm_75 -o %t/bad.qfa 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: qfuse-compile: unknown --chip 'sm_75'; expected sm_80, sm_89, sm_90 or sm_90a (or a comma-separated list of them)
// RUN: not qfuse-compile %S/Inputs/one-matmul-4096.mlir --chip=sm_90,sm_80,sm_90 -o %t/bad.qfa 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: qfuse-compile: --chip lists 'sm_90' twice; an artifact set holds one artifact per chip
// RUN: not qfuse-compile %S/Inputs/one-matmul-4096.mlir --chip=sm_80,sm_90 --emit=ptx -o %t/bad.ptx 2>&1 | FileCheck %s --check-prefix=EMIT
// EMIT: qfuse-compile: --emit=mlir and --emit=ptx take one --chip; a list (sm_80,sm_90) makes an artifact set
// RUN: not test -e %t/bad.qfa
// RUN: not test -e %t/bad.ptx

// The chips compile side by side; their diagnostics come in --chip order,
// each text once, and every failing chip is named. No file is written.
// RUN: echo '{"bad": 1' > %t/bad-db.json
// RUN: not qfuse-compile %S/Inputs/one-matmul-4096.mlir --chip=sm_80,sm_90,sm_90a --tuning-db=%t/bad-db.json -o %t/bad.qfa 2>&1 | FileCheck %s --check-prefix=FAILED
// FAILED:      error: tuning database '{{.*}}bad-db.json': invalid JSON
// FAILED-NEXT: qfuse-compile: compiling for sm_80 failed
// FAILED-NEXT: qfuse-compile: sm_90: the same diagnostics as sm_80
// FAILED-NEXT: qfuse-compile: compiling for sm_90 failed
// FAILED-NEXT: qfuse-compile: sm_90a: the same diagnostics as sm_80
// FAILED-NEXT: qfuse-compile: compiling for sm_90a failed
// FAILED-NOT:  error
// RUN: not test -e %t/bad.qfa
