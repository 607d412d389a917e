// #qf.target: its text round-trips, and its verifier names what is wrong.

// RUN: qfuse-opt %s -split-input-file | FileCheck %s

// CHECK-LABEL: @hopper
// CHECK-SAME: qf.target = #qf.target<chip = "sm_90a", sm_count = 132, max_shared_per_block = 232448, bandwidth_gbps = 4800, peak_f16_tflops = 989>
func.func @hopper() attributes {qf.target = #qf.target<chip = "sm_90a", sm_count = 132, max_shared_per_block = 232448, bandwidth_gbps = 4800, peak_f16_tflops = 989>} {
  return
}

// -----

// CHECK-LABEL: @ampere
// CHECK-SAME: chip = "sm_80"
func.func @ampere() attributes {qf.target = #qf.target<chip = "sm_80", sm_count = 108, max_shared_per_block = 166912, bandwidth_gbps = 2039, peak_f16_tflops = 312>} {
  return
}
