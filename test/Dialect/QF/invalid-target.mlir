// Every diagnostic of the #qf.target verifier, one case each.

// RUN: qfuse-opt %s -split-input-file -verify-diagnostics

// expected-error@+1 {{chip must be sm_<NN> or sm_<NN>a, got 'hopper'}}
func.func @chip_not_sm() attributes {qf.target = #qf.target<chip = "hopper", sm_count = 132, max_shared_per_block = 232448, bandwidth_gbps = 4800, peak_f16_tflops = 989>} {
  return
}

// -----

// expected-error@+1 {{chip must be sm_<NN> or sm_<NN>a, got 'sm_'}}
func.func @chip_without_version() attributes {qf.target = #qf.target<chip = "sm_", sm_count = 132, max_shared_per_block = 232448, bandwidth_gbps = 4800, peak_f16_tflops = 989>} {
  return
}

// -----

// expected-error@+1 {{target sizes must be positive, got sm_count = 0, max_shared_per_block = 232448, bandwidth_gbps = 4800, peak_f16_tflops = 989}}
func.func @no_sms() attributes {qf.target = #qf.target<chip = "sm_90", sm_count = 0, max_shared_per_block = 232448, bandwidth_gbps = 4800, peak_f16_tflops = 989>} {
  return
}
