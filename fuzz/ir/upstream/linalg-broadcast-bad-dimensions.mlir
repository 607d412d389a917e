// FUZZ-RUN: qfuse-opt %s
// linalg.broadcast's parser (upstream MLIR 22.1) adds the attribute it failed
// to parse: a null attribute, dereferenced (mlir-opt crashes the same way).
func.func @f(%b: tensor<512xf16>, %e: tensor<1x512xf16>) -> tensor<1x512xf16> {
  %bb = linalg.broadcast ins(%b : tensor<512xf16>) outs(%e : tensor<1x512xf16>) dimensions = [0xi32>
  return %bb : tensor<1x512xf16>
}
