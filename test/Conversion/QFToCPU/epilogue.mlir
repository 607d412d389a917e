// RUN: qfuse-opt %s -split-input-file --qf-to-cpu | FileCheck %s

// Prologue and epilogues, in the op's order: RMSNorm on the f32 activations
// (rounded to the activation type, as a separate qf.rms_norm's result),
// silu(gate) * up over the two weights (the up projection's components are
// the `up_` parameters), then the residual; the result is rounded once.
#e = #qf.enc<int8, per_channel, scale = f16>

func.func @mlp(%x: tensor<?x128xbf16>, %w: !qf.weight<32x128, #e>, %u: !qf.weight<32x128, #e>,
               %g: tensor<128xbf16>, %r: tensor<?x32xbf16>) -> tensor<?x32xbf16> {
  %y = qf.fused_matmul %x, %w up(%u : !qf.weight<32x128, #e>) norm(%g : tensor<128xbf16>)
         residual(%r : tensor<?x32xbf16>)
         {norm_eps = 1.0e-05 : f32, activation = #qf<activation silu_mul>}
       : tensor<?x128xbf16>, !qf.weight<32x128, #e> -> tensor<?x32xbf16>
  return %y : tensor<?x32xbf16>
}

// CHECK: qf.cpu_reference = {function = @qf_cpu::@qf_cpu_matmul_0, params = ["x", "norm", "codes", "scales", "up_codes", "up_scales", "residual", "y"]}
// CHECK: func.func @qf_cpu_matmul_0(%[[X:.*]]: memref<?x128xbf16>, %[[G:.*]]: memref<128xbf16>, %[[C:.*]]: memref<32x128xi8>, %{{.*}}: memref<32x1xf16>, %[[UC:.*]]: memref<32x128xi8>, %{{.*}}: memref<32x1xf16>, %[[R:.*]]: memref<?x32xbf16>, %[[Y:.*]]: memref<?x32xbf16>)
// RMSNorm: 1 / sqrt(sum(x^2) / K + eps), then x * r * gamma, rounded to bf16.
// CHECK: arith.divf %{{.*}}, %cst{{.*}} : f32
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: memref.load %[[G]]
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.extf %{{.*}} : bf16 to f32
// Gate and up rows: row n of each weight.
// CHECK: %[[GATE:.*]] = memref.alloc() : memref<128xf32>
// CHECK: %[[UP:.*]] = memref.alloc() : memref<128xf32>
// CHECK: scf.for %[[N:.*]] = %c0 to %c32 step %c1 {
// CHECK: memref.load %[[C]][%[[N]],
// CHECK: memref.load %[[UC]][%[[N]],
// silu(g) = g / (1 + exp(-g)), times up.
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: arith.mulf
// CHECK: memref.load %[[R]]
// CHECK: arith.addf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: memref.store %{{.*}}, %[[Y]]

// -----

// Bias on every weight row, before the residual.
#e = #qf.enc<int8, per_channel, scale = f16>

func.func @biased(%x: tensor<?x128xf16>, %w: !qf.weight<64x128, #e>,
                  %b: tensor<64xf16>, %r: tensor<?x64xf16>) -> tensor<?x64xf16> {
  %y = qf.fused_matmul %x, %w bias(%b : tensor<64xf16>) residual(%r : tensor<?x64xf16>)
       : tensor<?x128xf16>, !qf.weight<64x128, #e> -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}

// CHECK: qf.cpu_reference = {function = @qf_cpu::@qf_cpu_matmul_0, params = ["x", "codes", "scales", "bias", "residual", "y"]}
// CHECK: func.func @qf_cpu_matmul_0(%{{.*}}: memref<?x128xf16>, %{{.*}}: memref<64x128xi8>, %{{.*}}: memref<64x1xf16>, %[[B:.*]]: memref<64xf16>, %[[R:.*]]: memref<?x64xf16>, %[[Y:.*]]: memref<?x64xf16>)
// CHECK: scf.for %[[N:.*]] = %c0 to %c64 step %c1 {
// CHECK: memref.load %[[B]][%[[N]]]
// CHECK: memref.load %[[R]]
// CHECK: memref.store %{{.*}}, %[[Y]]
