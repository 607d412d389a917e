// RUN: qfuse-opt %s --qf-to-cpu | FileCheck %s

// Prologue and epilogues, in the op's order: RMSNorm on the f32 activations,
// bias on every weight row, silu(gate) * up over the stacked [gate; up]
// rows, then the residual; the result is rounded once.
#e = #qf.enc<int8, per_channel, scale = f16>

func.func @mlp(%x: tensor<?x128xbf16>, %w: !qf.weight<64x128, #e>, %g: tensor<128xbf16>,
               %b: tensor<64xbf16>, %r: tensor<?x32xbf16>) -> tensor<?x32xbf16> {
  %y = qf.fused_matmul %x, %w norm(%g : tensor<128xbf16>) bias(%b : tensor<64xbf16>)
         residual(%r : tensor<?x32xbf16>)
         {norm_eps = 1.0e-05 : f32, activation = #qf<activation silu_mul>}
       : tensor<?x128xbf16>, !qf.weight<64x128, #e> -> tensor<?x32xbf16>
  return %y : tensor<?x32xbf16>
}

// CHECK: qf.cpu_reference = {function = @qf_cpu::@qf_cpu_matmul_0, params = ["x", "norm", "codes", "scales", "bias", "residual", "y"]}
// CHECK: func.func @qf_cpu_matmul_0(%[[X:.*]]: memref<?x128xbf16>, %[[G:.*]]: memref<128xbf16>, %{{.*}}: memref<64x128xi8>, %{{.*}}: memref<64x1xf16>, %[[B:.*]]: memref<64xbf16>, %[[R:.*]]: memref<?x32xbf16>, %[[Y:.*]]: memref<?x32xbf16>)
// RMSNorm: 1 / sqrt(sum(x^2) / K + eps), then x * r * gamma.
// CHECK: arith.divf %{{.*}}, %cst{{.*}} : f32
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: memref.load %[[G]]
// Gate and up rows: n and n + 32.
// CHECK: %[[GATE:.*]] = memref.alloc() : memref<128xf32>
// CHECK: %[[UP:.*]] = memref.alloc() : memref<128xf32>
// CHECK: scf.for %[[N:.*]] = %c0 to %c32 step %c1 {
// CHECK: %[[NUP:.*]] = arith.addi %[[N]], %c32 : index
// CHECK: memref.load %[[B]][%[[N]]]
// CHECK: memref.load %[[B]][%[[NUP]]]
// silu(g) = g / (1 + exp(-g)), times up.
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: arith.mulf
// CHECK: memref.load %[[R]]
// CHECK: arith.addf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: memref.store %{{.*}}, %[[Y]]
