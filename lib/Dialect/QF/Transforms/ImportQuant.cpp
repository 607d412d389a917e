//===- ImportQuant.cpp - upstream quant types -> qf encodings ---------------===//
//
// Turns weights typed with the upstream `quant` dialect into `!qf.weight`s,
// and says precisely why where qf cannot express the type.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/Passes.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "qf-import-quant"

namespace mlir {
namespace qf {
#define GEN_PASS_DEF_QFIMPORTQUANT
#include "qfuse/Dialect/QF/Transforms/Passes.h.inc"
} // namespace qf
} // namespace mlir

using namespace mlir;
using namespace mlir::qf;

namespace {

using EmitErrorFn = llvm::function_ref<InFlightDiagnostic()>;

/// Signed storage must be symmetric (all zero points 0); unsigned storage
/// carries integer zero points, which qf stores like the codes.
FailureOr<ElementFormat> storageFormat(quant::QuantizedType q,
                                       bool allZeroPointsZero,
                                       EmitErrorFn emitError,
                                       ZeroPointKind &zero) {
  unsigned width = q.getStorageTypeIntegralWidth();
  if (!isa<IntegerType>(q.getStorageType()) || (width != 4 && width != 8))
    return (emitError() << "storage type " << q.getStorageType()
                        << " has no qf format; qf imports 4- and 8-bit integer "
                           "storage"),
           failure();
  if (q.isSigned()) {
    if (!allZeroPointsZero)
      return (emitError() << "signed storage with non-zero zero points has no "
                             "qf format; qf's int4/int8 are symmetric"),
             failure();
    zero = ZeroPointKind::None;
    return width == 4 ? ElementFormat::Int4 : ElementFormat::Int8;
  }
  zero = ZeroPointKind::Int;
  return width == 4 ? ElementFormat::UInt4 : ElementFormat::UInt8;
}

/// The qf encoding of a quant element type on an [N, K] weight, or failure
/// with a diagnostic.
FailureOr<EncodingAttr> importEncoding(Type element, EmitErrorFn emitError) {
  MLIRContext *ctx = element.getContext();
  auto q = dyn_cast<quant::QuantizedType>(element);
  if (!q)
    return (emitError() << "element type " << element
                        << " is not a quant dialect type"),
           failure();
  Type expressed = q.getExpressedType();
  if (!(expressed.isF16() || expressed.isBF16() || expressed.isF32()))
    return (emitError() << "expressed type " << expressed
                        << " cannot be a qf scale type (f16, bf16, f32)"),
           failure();

  int64_t group;
  bool allZero;
  if (auto perAxis = dyn_cast<quant::UniformQuantizedPerAxisType>(q)) {
    if (perAxis.getQuantizedDimension() != 0)
      return (emitError() << "per-axis quantization along dimension "
                          << perAxis.getQuantizedDimension()
                          << " has no qf form; qf scales are per output "
                             "channel (dimension 0)"),
             failure();
    group = EncodingAttr::kPerChannel;
    allZero = llvm::all_of(perAxis.getZeroPoints(),
                           [](int64_t z) { return z == 0; });
  } else if (auto sub = dyn_cast<quant::UniformQuantizedSubChannelType>(q)) {
    int64_t rowBlock = -1, colBlock = -1;
    for (auto [dim, size] :
         llvm::zip(sub.getQuantizedDimensions(), sub.getBlockSizes())) {
      if (dim == 0)
        rowBlock = size;
      else if (dim == 1)
        colBlock = size;
    }
    if (rowBlock != 1 || colBlock < 2)
      return (emitError() << "sub-channel blocks must be {0:1, 1:G} (one row, "
                             "G columns) for qf group scales"),
             failure();
    group = colBlock;
    allZero = llvm::all_of(sub.getZeroPoints().getValues<APInt>(),
                           [](const APInt &z) { return z.isZero(); });
  } else {
    return (emitError() << "per-tensor quantization has no qf form; qf scales "
                           "are per output channel or per group along K"),
           failure();
  }

  ZeroPointKind zero;
  FailureOr<ElementFormat> format =
      storageFormat(q, allZero, emitError, zero);
  if (failed(format))
    return failure();
  return EncodingAttr::getChecked(emitError, ctx, *format, /*indexBits=*/0u,
                                  DenseFPElementsAttr(), StringAttr(), Type(),
                                  group, expressed, /*globalScale=*/false, zero,
                                  /*actOrder=*/false, Sparsity::Dense);
}

/// Rewrites one quant-typed qf.tensor_ref and its quant.dcast users.
LogicalResult importWeight(TensorRefOp ref) {
  auto type = cast<RankedTensorType>(ref.getType());
  auto emitError = [&]() -> InFlightDiagnostic {
    InFlightDiagnostic diag = ref.emitOpError();
    diag << "cannot import weight '" << ref.getName() << "': ";
    return diag;
  };
  if (type.getRank() != 2)
    return emitError() << "qf weights are [N, K] matrices, got " << type;
  FailureOr<EncodingAttr> encoding =
      importEncoding(type.getElementType(), emitError);
  if (failed(encoding))
    return failure();
  for (Operation *user : ref->getUsers())
    if (!isa<quant::DequantizeCastOp>(user))
      return emitError() << "used by '" << user->getName()
                         << "'; only quant.dcast users can be imported";
  auto weightType = WeightType::getChecked(
      emitError, ref.getContext(), type.getDimSize(0), type.getDimSize(1),
      *encoding, LayoutAttr::get(ref.getContext()));
  if (!weightType)
    return failure();

  OpBuilder builder(ref);
  auto weight =
      WeightRefOp::create(builder, ref.getLoc(), weightType, ref.getName());
  for (Operation *user : llvm::make_early_inc_range(ref->getUsers())) {
    auto dcast = cast<quant::DequantizeCastOp>(user);
    builder.setInsertionPoint(dcast);
    auto dequant = DequantizeOp::create(builder, dcast.getLoc(),
                                        dcast.getType(), weight.getResult());
    dcast.replaceAllUsesWith(dequant.getResult());
    dcast.erase();
  }
  ref.emitRemark() << "imported '" << ref.getName() << "' as " << weightType
                   << "; scale and zero-point values written in the quant "
                      "type are not carried, the runtime reads them from the "
                      "checkpoint";
  ref.erase();
  return success();
}

struct QFImportQuantPass
    : public qf::impl::QFImportQuantBase<QFImportQuantPass> {
  void runOnOperation() override {
    SmallVector<TensorRefOp> refs;
    getOperation()->walk([&](TensorRefOp ref) {
      if (isa<quant::QuantizedType>(ref.getType().getElementType()))
        refs.push_back(ref);
    });
    bool failedAny = false;
    for (TensorRefOp ref : refs)
      failedAny |= failed(importWeight(ref));
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
