//===- MatVecKernel.cpp - The fused dequant-matvec kernel
//------------------===//
//
// One kernel family for decode (batch M = 1..8): each warp streams packed
// weight rows with 16-byte invariant loads (`ld.global.nc.v4`), decodes them
// in registers into half2 pairs, multiplies by the activations (reused across
// the warp's rows), and accumulates per scale span in half2, then in f32
// across spans. Warps are reduced with shuffles; `split_k` warps of a block
// share rows and are reduced through shared memory, so no atomics and no
// second kernel are needed. The tiling contract is that of qf-select-tiling:
//
//   block      = 4 warps (8 when split_k = 8)
//   rowGroups  = warps / split_k      (warp groups working on distinct rows)
//   rowsPerWarp= block_n / rowGroups  (rows a warp handles at once)
//   a warp of slice s covers chunks [s*C/S, (s+1)*C/S) of each of its rows,
//   a chunk being one lane's `vec_bytes` load; lanes take consecutive chunks
//   (coalesced), `k_unroll` chunks per lane are loaded before any is used.
//
//   RMSNorm prologue (`norm`): every block first reduces the sum of squares
//     of its x rows (K x batch f16, read through L2, cheap next to the
//     weight stream at batch <= 8), then each lane normalizes the
//     activations it loads: round_f16(x * rsqrt(mean + eps) * gamma[k]),
//     computed in f32 and rounded to f16 exactly as a separate qf.rms_norm
//     result would be, so the fused matvec reads the values the unfused one
//     reads (f32 sums in another order can move a value by one f16 ulp).
//   silu_mul (`up_*` parameters): the gate and up weights stay separate
//     tensors; a warp's rows are the gate rows of R/2 outputs followed by
//     the up rows of the same outputs (block_n counts both), read through
//     two sets of weight pointers with the same loop, and the epilogue
//     combines silu(gate) * up once both are reduced.
//   qf.group (horizontal fusion): the members' blocks follow each other in
//     the grid (member i owns ceil(N_i / block outputs) blocks); each block
//     selects its member's pointers and N once, then runs the same body.
//   act_order is not the kernel's: qf-to-gpu runs such a weight (stored
//     with its columns sorted by group, Layout.h) as a plain one on
//     activations already in that order (docs/act-order.md).
//
//===----------------------------------------------------------------------===//

#include "MatVec/MatVecKernel.h"
#include "MatVec/MatVecBuilder.h"

#include "Common/KernelCommon.h"
#include "Common/KernelEmitter.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "qfuse/Conversion/MatVecOccupancy.h"
#include "qfuse/format/Layout.h"
#include "qfuse/format/Numerics.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::matvec;

LLVM::GlobalOp matvec::sharedArray(OpBuilder &b, gpu::GPUModuleOp module,
                                   Location loc, StringRef name, Type element,
                                   int64_t count) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto type = LLVM::LLVMArrayType::get(element, count);
  return LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/false,
                                LLVM::Linkage::Internal, name, Attribute(),
                                /*alignment=*/16, /*addrSpace=*/3);
}

Value matvec::sharedAddr(ImplicitLocOpBuilder &b, LLVM::GlobalOp global) {
  return LLVM::AddressOfOp::create(b, global);
}

/// Blocks of the launch grid: one per `out_block_n` output rows of each
/// member.
int64_t MatVecBuilder::gridBlocks(ArrayRef<int64_t> memberNs) const {
  int64_t blocks = 0;
  for (int64_t n : memberNs)
    blocks += llvm::divideCeil(n, p.outBlockN);
  return blocks;
}

/// Resident blocks per SM to ask ptxas for (see build()).
int64_t MatVecBuilder::minBlocksPerSM(int64_t launchBlocks) const {
  MatVecOccupancyShape shape{p.rowsPerWarp, p.m, p.unroll, p.vecBytes,
                             p.warps, p.norm, p.sharedBytes};
  return getMatVecResidentBlocks(shape, launchBlocks,
                                 spec.target.getSmCount());
}

/// The kernel's parameters, in order; the runtime binds them by name.
SmallVector<std::string>
MatVecBuilder::parameterNames(ArrayRef<int64_t> memberNs) {
  EncodingAttr enc = spec.encoding;
  SmallVector<std::string> names = {"x"};
  if (p.norm)
    names.push_back("norm");
  // The weight's components; the up projection's are the same names with
  // an `up_` prefix (the artifact binds them to the up weight).
  auto addWeight = [&](StringRef prefix) {
    auto named = [&](StringRef c) { return (prefix + c).str(); };
    names.push_back(named("codes"));
    if (enc.isQuantized())
      names.push_back(named("scales"));
    if (enc.isSparse24())
      names.push_back(named("meta"));
    if (enc.getZeroPoint() != ZeroPointKind::None)
      names.push_back(named("zeros"));
    if (enc.getGlobalScale())
      names.push_back(named("global_scale"));
  };
  addWeight("");
  if (enc.getFormat() == ElementFormat::Codebook && enc.getTableName())
    names.push_back("table");
  if (p.gated)
    addWeight("up_");
  if (spec.hasBias)
    names.push_back("bias");
  if (spec.hasResidual)
    names.push_back("residual");
  names.push_back("y");
  if (spec.scatterOutput)
    names.push_back("y_order");
  // qf.group members 1..: their own weight, epilogue operands and output.
  for (size_t i = 1; i < memberNs.size(); ++i) {
    std::string suffix = "." + std::to_string(i);
    auto named = [&](StringRef c) { return (c + suffix).str(); };
    for (StringRef c : {"codes", "scales", "meta", "zeros", "global_scale"})
      if (llvm::is_contained(names, c))
        names.push_back(named(c));
    if (spec.hasBias)
      names.push_back(named("bias"));
    if (spec.hasResidual)
      names.push_back(named("residual"));
    names.push_back(named("y"));
  }
  return names;
}

/// Reads the kernel's arguments; under qf.group, picks the block's member's
/// pointers and N, and its block index within the member.
void MatVecBuilder::bindArguments(KernelFunction &kernel,
                                  ArrayRef<int64_t> memberNs) {
  auto arg = [&](StringRef n) { return kernel.arg(n); };
  x = arg("x");
  normGamma = arg("norm");
  for (int64_t w = 0; w < (p.gated ? 2 : 1); ++w) {
    std::string prefix = w ? "up_" : "";
    weights[w] = {arg(prefix + "codes"), arg(prefix + "scales"),
                  arg(prefix + "meta"), arg(prefix + "zeros"),
                  arg(prefix + "global_scale")};
  }
  table = arg("table");
  bias = arg("bias");
  residual = arg("residual");
  y = arg("y");
  yOrder = arg("y_order");
  // qf.group: the block's member, from the block index; its pointers and N
  // replace member 0's (uniform per block, so no divergence).
  blockId = e.ctaidX();
  nRows = e.c32(p.n);
  if (memberNs.size() > 1) {
    Value ctaid = blockId, base = e.c32(0);
    int64_t start = 0;
    for (size_t i = 1; i < memberNs.size(); ++i) {
      start += (memberNs[i - 1] + p.outBlockN - 1) / p.outBlockN;
      std::string suffix = "." + std::to_string(i);
      Value isMember = arith::CmpIOp::create(b, arith::CmpIPredicate::uge,
                                             ctaid, e.c32(start));
      auto pick = [&](Value &v, StringRef c) {
        if (v)
          v = LLVM::SelectOp::create(b, isMember, arg((c + suffix).str()), v);
      };
      WeightArgs &w = weights[0];
      pick(w.codes, "codes");
      pick(w.scales, "scales");
      pick(w.meta, "meta");
      pick(w.zeros, "zeros");
      pick(w.globalScale, "global_scale");
      pick(bias, "bias");
      pick(residual, "residual");
      pick(y, "y");
      nRows = arith::SelectOp::create(b, isMember, e.c32(memberNs[i]), nRows);
      base = arith::SelectOp::create(b, isMember, e.c32(start), base);
    }
    blockId = e.sub(ctaid, base);
  }
}

/// Thread 0 asks L2 for the block's rows of codes and scales of each
/// weight (gate and up when gated): rows of both are contiguous
/// (loadCodeWords, groupIndex). Only data no kernel ahead writes.
void MatVecBuilder::prefetchWeights() {
  Value first = e.mul(blockId, e.c32(p.outBlockN));
  Value last = e.minu(e.add(first, e.c32(p.outBlockN)), nRows);
  auto isThread0 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                         e.tidX(), e.c32(0));
  auto ifOp = scf::IfOp::create(b, TypeRange(), isThread0,
                                /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Type scaleType = spec.encoding.getScaleType();
  int64_t scaleRowBytes =
      scaleType ? (p.perChannel ? 1 : p.numGroups) *
                      std::max<int64_t>(1, scaleType.getIntOrFloatBitWidth() / 8)
                : 0;
  for (int64_t w = 0; w < (p.gated ? 2 : 1); ++w) {
    auto rows = [&](Value ptr, int64_t bytesPerRow) {
      if (ptr && bytesPerRow > 0)
        prefetchL2BeforeWait(b, ptr, e.mul(e.zext64(first), e.c64(bytesPerRow)),
                             e.mul(e.zext64(last), e.c64(bytesPerRow)));
    };
    rows(weights[w].codes, p.rowBytes);
    rows(weights[w].scales, scaleRowBytes);
  }
}

/// Declares the shared arrays the plan needs and fills the code table, the
/// RMSNorm row scales.
void MatVecBuilder::setUpSharedMemory() {
  int64_t R = p.rowsPerWarp, M = p.m;
  if (p.splitK > 1)
    redSmem =
        sharedAddr(b, sharedArray(b, module, b.getLoc(), name + "_partials",
                                  e.f32(), p.warps * R * M));
  if (p.lutWords > 0) {
    lut.base = sharedAddr(b, sharedArray(b, module, b.getLoc(),
                                         name + "_lut", e.i32(), p.lutWords));
    buildLut();
    lut.laneBytes = e.mul(e.band(e.tidX(), e.c32(31)), e.c32(4));
  }
  if (p.norm) {
    normSmem = sharedAddr(b, sharedArray(b, module, b.getLoc(), name + "_sumsq",
                                         e.f32(), p.warps * M));
    computeRowScales();
  }
}

/// The main and remainder loops over the slice's chunks of the warp's rows;
/// returns the lane's accumulators.
SmallVector<Value> MatVecBuilder::accumulate(Value slice, Value lane,
                                             ArrayRef<Value> rows) {
  int64_t R = p.rowsPerWarp, M = p.m;
  Value C = e.c32(p.chunksPerRow);
  Value S = e.c32(p.splitK);
  Value chunkBegin = e.divu(e.mul(slice, C), S);
  Value chunkEnd = e.divu(e.mul(e.add(slice, e.c32(1)), C), S);
  int64_t U = p.unroll;
  Value stride = e.c32(32 * U);
  Value mainEnd = e.add(
      chunkBegin, e.mul(e.divu(e.sub(chunkEnd, chunkBegin), stride), stride));

  SmallVector<Value> init(R * M, e.cf32(0.0));
  // Main loop: U full warp iterations per trip, no bounds checks.
  auto mainLoop = scf::ForOp::create(b, chunkBegin, mainEnd, stride, init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(mainLoop.getBody());
    SmallVector<Value> chunks;
    for (int64_t u = 0; u < U; ++u)
      chunks.push_back(
          e.add(mainLoop.getInductionVar(), e.add(lane, e.c32(32 * u))));
    scf::YieldOp::create(b, body(chunks, rows, mainLoop.getRegionIterArgs()));
  }
  // Remainder: one warp iteration per trip, lanes past the end idle.
  auto tail = scf::ForOp::create(b, mainEnd, chunkEnd, e.c32(32),
                                 mainLoop.getResults());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tail.getBody());
    Value c = e.add(tail.getInductionVar(), lane);
    auto guardIf =
        scf::IfOp::create(b, TypeRange(ValueRange(init)), e.ult(c, chunkEnd),
                          /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(guardIf.thenBlock());
      scf::YieldOp::create(b, body({c}, rows, tail.getRegionIterArgs()));
      b.setInsertionPointToStart(guardIf.elseBlock());
      scf::YieldOp::create(b, tail.getRegionIterArgs());
    }
    scf::YieldOp::create(b, guardIf.getResults());
  }
  return SmallVector<Value>(tail.getResults());
}

KernelLaunch MatVecBuilder::build() {
  SmallVector<int64_t> memberNs = {p.n};
  memberNs.append(spec.groupNs.begin(), spec.groupNs.end());
  SmallVector<std::string> names = parameterNames(memberNs);

  int64_t threads = p.warps * 32;
  KernelFunction kernel = createKernelFunction(b, module, name, names, threads);
  LLVM::LLVMFuncOp fn = kernel.fn;
  // Occupancy is what keeps loads in flight, so the register budget is set
  // from an estimate of what the kernel needs (codes in flight, decoded
  // pairs, activations, accumulators) with 50% headroom, through a minimum
  // of resident blocks: left alone, ptxas either spills the batch > 1
  // variants or spends registers that cost occupancy.
  fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
              b.getI32IntegerAttr(static_cast<int32_t>(
                  minBlocksPerSM(gridBlocks(memberNs)))));
  bindArguments(kernel, memberNs);
  prefetchWeights();
  // Everything below may read what the kernel ahead writes.
  markGridDependencyWait(b);
  setUpSharedMemory();

  Value tid = e.tidX();
  Value lane = e.band(tid, e.c32(31));
  Value warp = e.shru(tid, e.c32(5));
  Value slice = e.remu(warp, e.c32(p.splitK));
  Value rg = e.divu(warp, e.c32(p.splitK));
  int64_t R = p.rowsPerWarp, Ro = p.outRowsPerWarp;
  Value rowBase =
      e.add(e.mul(blockId, e.c32(p.outBlockN)), e.mul(rg, e.c32(Ro)));
  // Rows past N are clamped for loads (their results are never stored), so
  // every lane stays in the shuffles. Gated: slots r and r + Ro are the
  // gate and up rows of one output.
  SmallVector<Value> rows;
  for (int64_t r = 0; r < R; ++r)
    rows.push_back(
        e.minu(e.add(rowBase, e.c32(r % Ro)), e.sub(nRows, e.c32(1))));

  SmallVector<Value> sums = accumulate(slice, lane, rows);
  // The weights are read: the next kernel may start streaming its own.
  markGridDependencyTrigger(b);
  reduceAndStore(sums, tid, warp, lane);
  LLVM::ReturnOp::create(b, ValueRange{});

  launch.name = name;
  for (const std::string &n : names)
    launch.params.push_back({n, "ptr"});
  launch.gridX = gridBlocks(memberNs);
  launch.blockX = threads;
  launch.sharedBytes = p.sharedBytes;
  return launch;
}

FailureOr<KernelLaunch>
mlir::qf::emitMatVecKernel(gpu::GPUModuleOp module, StringRef name,
                           const MatmulSpec &spec,
                           function_ref<InFlightDiagnostic()> emitError) {
  FailureOr<Plan> plan = makePlan(spec, emitError);
  if (failed(plan))
    return failure();
  // Loads in flight live in registers: k_unroll x rows x chunk of codes.
  if (plan->unroll * plan->rowsPerWarp * plan->chunkBytes >
      kMaxCodeBytesInFlight)
    return emitError() << "k_unroll = " << plan->unroll << " x "
                       << plan->rowsPerWarp << " rows x " << plan->chunkBytes
                       << " bytes exceeds the " << kMaxCodeBytesInFlight
                       << " bytes of code loads in "
                          "flight a lane can hold",
           failure();
  ImplicitLocOpBuilder b(module.getLoc(), module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  MatVecBuilder builder(b, spec, *plan, module, name);
  return builder.build();
}
