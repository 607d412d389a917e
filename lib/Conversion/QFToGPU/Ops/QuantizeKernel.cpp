//===- QuantizeKernel.cpp - qf.quantize as a GPU kernel
//--------------------===//
//
// Round-to-nearest of a dense [N, K] weight into the row-major packed
// components of format::quantizeRTN, on the device. The arithmetic is
// WeightQuantizer's (qfuse/Conversion/WeightQuantizer.h), the same IR the
// CPU reference runs, so the bytes are quantizeRTN's. One block per row n
// (N is the grid: one kernel per (encoding, K, input type) serves every
// row count); thread t quantizes the units t, t + T, ... of the row:
//
//   qf_quantize_<i>(w, [amax,] codes, scales[, zeros][, global_scale]
//                   [, g_idx][, meta], status)
//     [global = prepareGlobalScale(amax[0])]           // NVFP4
//     [if (ctaid.x == 0 && tid == 0) global_scale[0] = global]
//     for (u = tid; u < units; u += T)
//       if (!quantizeUnit(ctaid.x, u)) status[0] = 1   // non-finite input
//                                                      // or scale overflow
//
// NVFP4's `amax` is the tensor's largest |w| (f32), which the caller finds
// with a device reduction before the launch: a block sees one row only.
// act_order's g_idx ([K], k / group) is written by block 0's units.
//
// Units own whole bytes of every output, so no thread reads or waits for
// another's; the outputs need no zeroing. The caller zeroes `status` and,
// when it reads 1, quantizes on the host, which names the bad element.
//
//===----------------------------------------------------------------------===//

#include "Ops/QuantizeKernel.h"

#include "Ops/FieldGatherKernel.h"
#include "Ops/HalfRoundKernel.h"
#include "Ops/WidenKernel.h"

#include "Common/KernelCommon.h"
#include "LaunchRecord.h"
#include "Ops/OpKernelCommon.h"
#include "qfuse/Conversion/WeightQuantizer.h"
#include "qfuse/Dialect/QF/IR/FormatBridge.h"
#include "qfuse/format/Packing.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::qf;

namespace {

/// A row-major memref over the global pointer `ptr` whose leading
/// dimension is `rows` (an index; the static size where the type has one).
Value wrapRows(ImplicitLocOpBuilder &b, const LLVMTypeConverter &converter,
               MemRefType type, Value ptr, Value rows) {
  Value generic = LLVM::AddrSpaceCastOp::create(
      b, LLVM::LLVMPointerType::get(b.getContext()), ptr);
  auto desc =
      MemRefDescriptor::poison(b, b.getLoc(), converter.convertType(type));
  desc.setAllocatedPtr(b, b.getLoc(), generic);
  desc.setAlignedPtr(b, b.getLoc(), generic);
  desc.setConstantOffset(b, b.getLoc(), 0);
  int64_t stride = 1;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    if (ShapedType::isDynamic(type.getDimSize(d)))
      desc.setSize(b, b.getLoc(), d,
                   arith::IndexCastOp::create(b, b.getI64Type(), rows));
    else
      desc.setConstantSize(b, b.getLoc(), d, type.getDimSize(d));
    desc.setConstantStride(b, b.getLoc(), d, stride);
    stride *=
        ShapedType::isDynamic(type.getDimSize(d)) ? 1 : type.getDimSize(d);
  }
  return UnrealizedConversionCastOp::create(b, TypeRange{type},
                                            ValueRange{Value(desc)})
      .getResult(0);
}

} // namespace

KernelLaunch qf::emitQuantizeKernel(gpu::GPUModuleOp module, StringRef name,
                                    const qfuse::format::Encoding &enc,
                                    int64_t k, Type input, int64_t rows,
                                    Location loc) {
  MLIRContext *ctx = module.getContext();
  auto components = quantizeComponentTypes(ctx, enc, ShapedType::kDynamic, k);
  ImplicitLocOpBuilder b(loc, ctx);
  ScalarEmitter probe(b);
  // Units per row decide the block: whole warps, at most 256 threads.
  QuantizeBuffers none{};
  int64_t units = WeightQuantizer(probe, enc, k, none).unitsPerRow();
  int64_t threads = std::min<int64_t>(256, (units + 31) / 32 * 32);

  KernelLaunch launch;
  launch.name = name.str();
  launch.params.push_back({"w", "ptr"});
  const unsigned inputs = enc.globalScale ? 2 : 1;
  if (enc.globalScale)
    launch.params.push_back({kQuantizeAmaxParam, "ptr"});
  for (const auto &component : components)
    launch.params.push_back({component.first, "ptr"});
  launch.params.push_back({"status", "ptr"});
  launch.gridX = rows;
  launch.blockX = threads;
  if (module.lookupSymbol(name))
    return launch;

  SmallVector<ParamKind> kinds(launch.params.size(), ParamKind::Out);
  std::fill_n(kinds.begin(), inputs, ParamKind::In);
  LLVM::LLVMFuncOp fn = createKernelEntry(b, module, name, kinds, threads);
  LLVMTypeConverter converter(ctx);
  Value rowCount = arith::IndexCastUIOp::create(
      b, b.getIndexType(), NVVM::GridDimXOp::create(b, b.getI32Type()));
  Value n = arith::IndexCastUIOp::create(
      b, b.getIndexType(), NVVM::BlockIdXOp::create(b, b.getI32Type()));
  Value tid = arith::IndexCastUIOp::create(
      b, b.getIndexType(), NVVM::ThreadIdXOp::create(b, b.getI32Type()));
  auto wType = MemRefType::get({ShapedType::kDynamic, k}, input);
  QuantizeBuffers buffers;
  buffers.input = wrapRows(b, converter, wType, fn.getArgument(0), rowCount);
  for (auto [i, component] : llvm::enumerate(components)) {
    Value memref = wrapRows(b, converter, component.second,
                            fn.getArgument(i + inputs), rowCount);
    buffers.bind(component.first, memref);
  }
  Value status = wrapRows(b, converter, MemRefType::get({1}, b.getI32Type()),
                          fn.getArguments().back(), rowCount);

  ScalarEmitter e(b);
  WeightQuantizer quantizer(e, enc, k, buffers);
  if (enc.globalScale) {
    Value amax = wrapRows(b, converter, MemRefType::get({1}, b.getF32Type()),
                          fn.getArgument(1), rowCount);
    Value ok = quantizer.prepareGlobalScale(e.load(amax, {e.idx(0)}));
    // Every thread computes the global scale; one writes it.
    Value first = arith::AndIOp::create(b, e.eq(n, e.idx(0)),
                                        e.eq(tid, e.idx(0)));
    auto writer = scf::IfOp::create(b, first, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(writer.thenBlock());
    quantizer.storeGlobalScale();
    // Only ever 1: a 0 here could overwrite another thread's 1.
    auto failed = scf::IfOp::create(
        b, arith::XOrIOp::create(b, ok, arith::ConstantIntOp::create(b, 1, 1)),
        /*withElseRegion=*/false);
    b.setInsertionPointToStart(failed.thenBlock());
    e.store(e.c32(1), status, {e.idx(0)});
  }
  auto loop = scf::ForOp::create(b, tid, e.idx(units), e.idx(threads));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value ok = quantizer.quantizeUnit(n, loop.getInductionVar());
    auto failed = scf::IfOp::create(
        b, arith::XOrIOp::create(b, ok, arith::ConstantIntOp::create(b, 1, 1)),
        /*withElseRegion=*/false);
    b.setInsertionPointToStart(failed.thenBlock());
    e.store(e.c32(1), status, {e.idx(0)});
  }
  LLVM::ReturnOp::create(b, ValueRange{});
  return launch;
}

namespace {

/// The launch records of the gathers that pack `enc`'s codes into the
/// weight's kernel layouts on the device (FieldGatherKernel.h), reading the
/// quantize kernel's "codes" (and, for 2:4, a 2-bit gather reading "meta":
/// format::sparseRepackGathers; 2:4's 16-bit kept values too; for 3-bit
/// codes a 1-bit one, their mma bit planes); empty where
/// no gather takes the code width. The runtime launches them with each layout's values; here they
/// are recorded with zero immediates (launches that write nothing).
SmallVector<Attribute> gatherRecords(QuantizeOp op, gpu::GPUModuleOp module,
                                     const qfuse::format::Encoding &enc) {
  const unsigned bits = qfuse::format::codeBits(enc);
  const bool gathered = enc.isSparse24()
                            ? bits == 4 || bits == 8 || bits == 16
                            : bits >= 1 && bits <= 8;
  if (!gathered)
    return {};
  MLIRContext *ctx = op.getContext();
  auto scratch = [&](StringRef name) {
    return LaunchArgAttr::get(ctx, LaunchArgKind::Scratch, name);
  };
  OpBuilder b(ctx);
  SmallVector<Attribute> records;
  auto record = [&](unsigned width, StringRef component) {
    OpLaunch gather = emitFieldGatherLaunch(
        module, width,
        LaunchArgAttr::get(ctx, LaunchArgKind::Component, component),
        scratch("qf_gather_table"), scratch("qf_gather_perm"),
        scratch("qf_gather_dst"), scratch("qf_quantize_status"), op.getLoc());
    records.push_back(launchRecord(b, gather.launch, /*batch=*/1,
                                   {gather.args}));
  };
  record(bits, "codes");
  if (enc.isSparse24())
    record(2, "meta");
  // 3-bit codes' mma fragment layout is two bit planes: a 1-bit gather
  // (format::repackGather).
  if (bits == 3)
    record(1, "codes");
  return records;
}

/// The launch records of the input conversions a qf.quantize carries, each
/// with count 0 (a launch that writes nothing; qfuse-quantize launches them
/// per weight): of a bf16 input the rounding to f16 (HalfRoundKernel.h,
/// DeviceHalfRound.h), which makes the calibration plan's f16 weights of a
/// bf16 checkpoint on the device; of an f16 or bf16 input the exact
/// widening to f32 (WidenKernel.h, DeviceWiden.h), GPTQ's f32 weights.
SmallVector<Attribute> conversionRecords(QuantizeOp op,
                                         gpu::GPUModuleOp module) {
  Type input = op.getInput().getType().getElementType();
  SmallVector<Attribute> records;
  if (!input.isF16() && !input.isBF16())
    return records;
  MLIRContext *ctx = op.getContext();
  auto scratch = [&](StringRef name) {
    return LaunchArgAttr::get(ctx, LaunchArgKind::Scratch, name);
  };
  OpBuilder b(ctx);
  if (input.isBF16()) {
    OpLaunch round = emitHalfRoundLaunch(
        module, scratch("qf_round_src"), scratch("qf_round_dst"),
        scratch("qf_quantize_status"), op.getLoc());
    records.push_back(launchRecord(b, round.launch, /*batch=*/1,
                                   {round.args}));
  }
  OpLaunch widen = emitWidenLaunch(module, input, scratch("qf_widen_src"),
                                   scratch("qf_widen_dst"), op.getLoc());
  records.push_back(launchRecord(b, widen.launch, /*batch=*/1, {widen.args}));
  return records;
}

} // namespace

void qf::lowerQuantize(QuantizeOp op, gpu::GPUModuleOp module,
                       llvm::StringMap<std::string> &kernels) {
  WeightType weight = op.getResult().getType();
  qfuse::format::Encoding enc = toFormatEncoding(weight.getEncoding());
  int64_t k = weight.getK();
  OpBuilder b(op.getContext());
  SmallVector<Attribute> gathers = gatherRecords(op, module, enc);
  SmallVector<Attribute> conversions = conversionRecords(op, module);
  std::string reason =
      weight.getLayout().isRowMajor()
          ? quantizeUnsupportedReason(enc, k)
          : "the kernel writes row-major components, not the layout's order";
  if (!reason.empty()) {
    op.emitRemark() << "qf-to-gpu: qf.quantize to " << weight.getEncoding()
                    << " has no GPU kernel (" << reason
                    << "); the runtime quantizes it on the host "
                       "(format::quantizeRTN)";
    // The layouts of what the host quantizes still repack on the device.
    SmallVector<Attribute> records(gathers.begin(), gathers.end());
    records.append(conversions.begin(), conversions.end());
    if (!records.empty())
      op->setAttr("qf.launches", b.getArrayAttr(records));
    return;
  }
  Type input = op.getInput().getType().getElementType();
  std::string key;
  llvm::raw_string_ostream os(key);
  os << weight.getEncoding() << "|" << k << "|" << input;
  auto it = kernels.find(key);
  if (it == kernels.end()) {
    std::string name;
    llvm::raw_string_ostream nameOs(name);
    nameOs << "qf_quantize_" << kernels.size() << "_k" << k << "_" << input;
    it = kernels.try_emplace(key, name).first;
  }
  KernelLaunch launch = emitQuantizeKernel(module, it->second, enc, k, input,
                                           weight.getN(), op.getLoc());
  MLIRContext *ctx = op.getContext();
  SmallVector<LaunchArgAttr> args = {operandArg(ctx, 0)};
  for (size_t i = 1; i + 1 < launch.params.size(); ++i)
    args.push_back(
        launch.params[i].name == kQuantizeAmaxParam
            ? LaunchArgAttr::get(ctx, LaunchArgKind::Scratch,
                                 kQuantizeAmaxBuffer)
            : LaunchArgAttr::get(ctx, LaunchArgKind::Component,
                                 launch.params[i].name));
  args.push_back(
      LaunchArgAttr::get(ctx, LaunchArgKind::Scratch, "qf_quantize_status"));
  SmallVector<Attribute> records = {
      launchRecord(b, launch, /*batch=*/1, {args})};
  records.append(gathers.begin(), gathers.end());
  records.append(conversions.begin(), conversions.end());
  op->setAttr("qf.launches", b.getArrayAttr(records));
}
