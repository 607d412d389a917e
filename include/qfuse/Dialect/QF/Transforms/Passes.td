//===- Passes.td - qf transformation passes ------------------*- tablegen -*-===//

#ifndef QFUSE_DIALECT_QF_TRANSFORMS_PASSES_TD
#define QFUSE_DIALECT_QF_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def QFImportQuant : Pass<"qf-import-quant"> {
  let summary = "Import upstream `quant` dialect weight types into qf encodings";
  let description = [{
    Rewrites weights typed with the upstream `quant` dialect into packed qf
    weights:

    ```mlir
    %t = qf.tensor_ref "w" : tensor<256x1024x!quant.uniform<i4:f16:{0:1, 1:128}, {...}>>
    %d = quant.dcast %t : tensor<256x1024x!quant.uniform<...>> to tensor<256x1024xf16>
    ```
    becomes
    ```mlir
    %w = qf.weight_ref "w" : !qf.weight<256x1024, #qf.enc<int4, group = 128, scale = f16>>
    %d = qf.dequantize %w : !qf.weight<...> -> tensor<256x1024xf16>
    ```
    Per-axis types on axis 0 become `per_channel`, sub-channel types with
    blocks {0:1, 1:G} become `group = G`; signed storage needs zero points of
    0, unsigned storage becomes `zero = int`. Scale and zero-point values
    written inside the type are not carried: qf weights are resolved by name,
    and the runtime reads them from the checkpoint (a remark says so). What
    qf cannot express (per-tensor scales, other axes or block shapes, other
    storage widths, uses other than `quant.dcast`) is an error at the op.
  }];
  let dependentDialects = ["::mlir::qf::QFDialect",
                           "::mlir::quant::QuantDialect"];
}

#endif // QFUSE_DIALECT_QF_TRANSFORMS_PASSES_TD
