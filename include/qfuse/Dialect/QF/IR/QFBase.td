//===- QFBase.td - qf dialect definition ---------------------*- tablegen -*-===//
//
// The `qf` dialect: packed quantized weights, their encodings and layouts, and
// the ops that fused quantized decode and GPTQ are built from.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_DIALECT_QF_IR_QFBASE_TD
#define QFUSE_DIALECT_QF_IR_QFBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def QF_Dialect : Dialect {
  let name = "qf";
  let cppNamespace = "::mlir::qf";
  let summary = "Quantized weights and the fused kernels that consume them";
  let description = [{
    `qf` represents weight-quantized LLM layers precisely enough that every
    pass, the runtime and the Python frontend agree on what the bytes mean:

    * `!qf.weight<NxK, #qf.enc<...>, #qf.layout<...>>` is a packed weight
      matrix of logical shape [N, K] (out x in). The encoding says how each
      element is stored (int4, uint4 + zero points, int8, fp8, fp4, NF4,
      codebooks, 2:4 sparsity) and how it is scaled (per channel or per group
      along K); the layout says how the packed bytes are ordered in memory.
    * Weights are never inlined: `qf.weight_ref` names tensors that the
      runtime resolves from safetensors files.
    * `qf.matmul` is activations [M, K] times weight^T -> [M, N] with f32
      accumulation; `qf.fused_matmul` is what fusion passes produce.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  // qf.batch_tilings, qf.group and qf.launches on the ops that carry them.
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    // Defined beside the storage classes they instantiate.
    void registerAttributes();
    void registerTypes();
  }];
}

class QF_Op<string mnemonic, list<Trait> traits = []>
    : Op<QF_Dialect, mnemonic, traits>;

#endif // QFUSE_DIALECT_QF_IR_QFBASE_TD
