//===- QFTypes.td - qf types ---------------------------------*- tablegen -*-===//
//
// `!qf.weight`: a packed quantized weight matrix whose encoding and storage
// layout are part of its type, so every pass sees both.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_DIALECT_QF_IR_QFTYPES_TD
#define QFUSE_DIALECT_QF_IR_QFTYPES_TD

include "qfuse/Dialect/QF/IR/QFAttrs.td"

def QF_WeightType : TypeDef<QF_Dialect, "Weight"> {
  let mnemonic = "weight";
  let summary = "A packed quantized weight matrix of logical shape [N, K]";
  let description = [{
    ```mlir
    !qf.weight<4096x14336, #qf.enc<int4, group = 128, scale = f16>>
    !qf.weight<1024x4096, #qf.enc<nf4, group = 64, scale = f32>,
               #qf.layout<tiled, tile_n = 16, tile_k = 64, interleave = 4>>
    ```
    N is the output dimension, K the input (reduction) dimension, as in the
    Hugging Face [out, in] weight convention. The layout is omitted when it is
    `#qf.layout<row_major>`.
  }];
  let parameters = (ins
    "int64_t":$n,
    "int64_t":$k,
    "::mlir::qf::EncodingAttr":$encoding,
    "::mlir::qf::LayoutAttr":$layout
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "int64_t":$n, "int64_t":$k,
                                        "EncodingAttr":$encoding), [{
      return $_get(encoding.getContext(), n, k, encoding,
                   LayoutAttr::get(encoding.getContext()));
    }]>
  ];
  let extraClassDeclaration = [{
    /// Scale groups along K.
    int64_t getNumGroups() const { return getEncoding().getNumGroups(getK()); }
  }];
}

def QF_AnyWeight : Type<CPred<"::llvm::isa<::mlir::qf::WeightType>($_self)">,
                        "packed quantized weight", "::mlir::qf::WeightType">;

#endif // QFUSE_DIALECT_QF_IR_QFTYPES_TD
