// Every way a tuning database can be wrong is an error naming the file and
// the entry ($[i] counts from 0), never a crash.

// RUN: rm -rf %t && split-file %s %t
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="tuning-db=%t/missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="tuning-db=%t/not-json.json" 2>&1 | FileCheck %s --check-prefix=NOTJSON
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="tuning-db=%t/not-array.json" 2>&1 | FileCheck %s --check-prefix=NOTARRAY
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="tuning-db=%t/not-object.json" 2>&1 | FileCheck %s --check-prefix=NOTOBJECT
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="tuning-db=%t/missing-k.json" 2>&1 | FileCheck %s --check-prefix=MISSINGK
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="tuning-db=%t/bad-m.json" 2>&1 | FileCheck %s --check-prefix=BADM
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="tuning-db=%t/unknown-field.json" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="tuning-db=%t/bad-encoding.json" 2>&1 | FileCheck %s --check-prefix=BADENC
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="tuning-db=%t/encoding-not-string.json" 2>&1 | FileCheck %s --check-prefix=ENCTYPE
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="tuning-db=%t/bad-tiling.json" 2>&1 | FileCheck %s --check-prefix=BADTILING
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="tuning-db=%t/invalid-tiling.json" 2>&1 | FileCheck %s --check-prefix=INVALIDTILING
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="tuning-db=%t/duplicate.json" 2>&1 | FileCheck %s --check-prefix=DUPLICATE
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="tuning-db=%t/contract.json" 2>&1 | FileCheck %s --check-prefix=CONTRACT
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="tuning-db=%t/wgmma-no-chip.json" 2>&1 | FileCheck %s --check-prefix=WGMMACHIP
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="tuning-db=%t/bad-chip.json" 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="sm-count=-1" 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not qfuse-opt %t/input.mlir --qf-select-tiling="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=CHIP

// MISSING: error: tuning database '{{.*}}missing.json': cannot read: {{.*}}
// NOTJSON: error: tuning database '{{.*}}not-json.json': invalid JSON: [2:11, byte=13]: Expected object key
// NOTARRAY: error: tuning database '{{.*}}not-array.json': expected a JSON array of {"m", "n", "k", "encoding", "tiling"} entries
// NOTOBJECT: error: tuning database '{{.*}}not-object.json': $[1]: expected an object with "m", "n", "k", "encoding" and "tiling"
// MISSINGK: error: tuning database '{{.*}}missing-k.json': $[0].k: expected a positive integer, but the field is missing
// BADM: error: tuning database '{{.*}}bad-m.json': $[0].m: expected a positive integer{{$}}
// UNKNOWN: error: tuning database '{{.*}}unknown-field.json': $[0]: unknown field "tilling"; expected m, n, k, encoding, tiling (and optionally measured_us, chip)
// BADENC: error: tuning database '{{.*}}bad-encoding.json': $[0].encoding: cannot parse "int4, gruop = 128, scale = f16" as #qf.enc<int4, gruop = 128, scale = f16>: unknown encoding entry 'gruop'
// ENCTYPE: error: tuning database '{{.*}}encoding-not-string.json': $[0].encoding: expected a string, the body of #qf.enc<...>
// BADTILING: error: tuning database '{{.*}}bad-tiling.json': $[1].tiling: cannot parse "matvec, block_n = " as #qf.tiling<matvec, block_n = >: expected integer value
// INVALIDTILING: error: tuning database '{{.*}}invalid-tiling.json': $[0].tiling: cannot parse "matvec, block_m = 16" as #qf.tiling<matvec, block_m = 16>: matvec kernels take batch block_m <= 8, got 16; use 'mma' for larger batches
// DUPLICATE: error: tuning database '{{.*}}duplicate.json': $[2]: repeats the shape of $[0] (m = 1, n = 4096, k = 4096, same encoding)
// CONTRACT: error: 'qf.fused_matmul' op tuning database '{{.*}}contract.json' gives #qf.tiling<matvec, block_n = 4> for M = 1, N = 4096, K = 4104, but vec_bytes must divide a row's 2052 packed bytes
// WGMMACHIP: error: tuning database '{{.*}}wgmma-no-chip.json': $[0]: a wgmma tiling runs on sm_90a only; mark the entry "chip": "sm_90a"
// BADCHIP: error: tuning database '{{.*}}bad-chip.json': $[0].chip: expected "sm_90a" (the one target with entries of its own)
// OPTION: error: qf-select-tiling needs non-negative sm-count (0: the chip's), positive bandwidth-gbps and batch, got -1, 4.300000e+03, 1
// CHIP: error: qf-select-tiling: unknown chip 'sm_75'; expected sm_80, sm_89, sm_90 or sm_90a

//--- input.mlir
#int4 = #qf.enc<int4, group = 128, scale = f16>
#int4pc = #qf.enc<int4, per_channel, scale = f16>
func.func @layer(%x: tensor<1x4096xf16>, %z: tensor<1x4104xf16>) {
  %w = qf.weight_ref "q_proj" : !qf.weight<4096x4096, #int4>
  %0 = qf.fused_matmul %x, %w : tensor<1x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<1x4096xf16>
  %v = qf.weight_ref "odd" : !qf.weight<4096x4104, #int4pc>
  %1 = qf.fused_matmul %z, %v : tensor<1x4104xf16>, !qf.weight<4096x4104, #int4pc> -> tensor<1x4096xf16>
  return
}

//--- not-json.json
[
  {"m": 1,, "n": 4096}
]

//--- not-array.json
{"m": 1, "n": 4096, "k": 4096, "encoding": "int4, group = 128, scale = f16", "tiling": "matvec"}

//--- not-object.json
[
  {"m": 1, "n": 4096, "k": 4096, "encoding": "int4, group = 128, scale = f16", "tiling": "matvec"},
  "matvec, block_n = 4"
]

//--- missing-k.json
[{"m": 1, "n": 4096, "encoding": "int4, group = 128, scale = f16", "tiling": "matvec"}]

//--- bad-m.json
[{"m": 0, "n": 4096, "k": 4096, "encoding": "int4, group = 128, scale = f16", "tiling": "matvec"}]

//--- unknown-field.json
[{"m": 1, "n": 4096, "k": 4096, "encoding": "int4, group = 128, scale = f16", "tilling": "matvec"}]

//--- bad-encoding.json
[{"m": 1, "n": 4096, "k": 4096, "encoding": "int4, gruop = 128, scale = f16", "tiling": "matvec"}]

//--- encoding-not-string.json
[{"m": 1, "n": 4096, "k": 4096, "encoding": 4, "tiling": "matvec"}]

//--- bad-tiling.json
[
  {"m": 1, "n": 4096, "k": 4096, "encoding": "int4, group = 128, scale = f16", "tiling": "matvec"},
  {"m": 8, "n": 4096, "k": 4096, "encoding": "int4, group = 128, scale = f16", "tiling": "matvec, block_n = "}
]

//--- invalid-tiling.json
[{"m": 1, "n": 4096, "k": 4096, "encoding": "int4, group = 128, scale = f16", "tiling": "matvec, block_m = 16"}]

//--- duplicate.json
[
  {"m": 1, "n": 4096, "k": 4096, "encoding": "int4, group = 128, scale = f16", "tiling": "matvec"},
  {"m": 8, "n": 4096, "k": 4096, "encoding": "int4, group = 128, scale = f16", "tiling": "matvec"},
  {"m": 1, "n": 4096, "k": 4096, "encoding": "int4, group=128, scale=f16", "tiling": "matvec, block_n = 8"}
]

//--- contract.json
[{"m": 1, "n": 4096, "k": 4104, "encoding": "int4, per_channel, scale = f16", "tiling": "matvec, block_n = 4"}]

//--- wgmma-no-chip.json
[{"m": 128, "n": 4096, "k": 4096, "encoding": "int4, group = 128, scale = f16", "tiling": "wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 4"}]

//--- bad-chip.json
[{"m": 128, "n": 4096, "k": 4096, "encoding": "int4, group = 128, scale = f16", "tiling": "mma, block_m = 64, block_n = 64, block_k = 64, stages = 4", "chip": "sm_90"}]
