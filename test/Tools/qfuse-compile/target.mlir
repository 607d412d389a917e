// --chip resolves through the one table of known chips (#qf.target): an
// unknown chip is refused with the known names, sm_89 is a PTX target of its
// own, and act_order past batch 1 runs the tensor-core kernel on permuted
// activations on either (the matvec's shared activations would need 166912
// bytes at batch 8, more than sm_80's blocks may use).

// RUN: not qfuse-compile %S/Inputs/formats.mlir --chip=sm_75 --emit=ptx -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: qfuse-compile: unknown --chip 'sm_75'; expected sm_80, sm_89, sm_90 or sm_90a

// RUN: qfuse-compile %S/Inputs/formats.mlir --chip=sm_89 --batch-sizes=1 --emit=ptx -o - | FileCheck %s --check-prefix=ADA
// ADA: .target sm_89

// RUN: qfuse-compile %S/Inputs/act-order-11008.mlir --chip=sm_90 --batch-sizes=8 --emit=ptx -o - | FileCheck %s --check-prefix=HOPPER
// HOPPER: .target sm_90
// HOPPER: .entry qf_permute_k11008
// HOPPER: .entry qf_mma_0_m8

// RUN: qfuse-compile %S/Inputs/act-order-11008.mlir --chip=sm_80 --batch-sizes=8 --emit=ptx -o - | FileCheck %s --check-prefix=AMPERE
// AMPERE: .target sm_80
// AMPERE: .entry qf_permute_k11008
// AMPERE: .entry qf_mma_0_m8
