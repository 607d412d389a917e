//===- TensorCoreKernel.cpp - fused dequant-GEMM on mma.sync --------------===//
//
// The kernel for batches past the matvec (M >= 9 up to prefill sizes, and
// every batch of bf16 activations, which the matvec does not read):
// mma.sync.m16n8k16 with f16 or bf16 activations and f32 accumulation, the
// 2- to 8-bit weights decoded in registers straight into B fragments of
// the activation type. 2:4 weights run mma.sp.m16n8k32 instead, the weight
// rows as its sparse A operand (TensorCoreSparse.cpp); the pipeline, the
// reductions and the epilogue are the same.
//
//   warp       = 32 output features (4 n tiles of 8) x block_m batch rows
//                (block_m / 16 m tiles), over a slice of K
//   block      = (block_n / 32) n warps x split_k k groups; the k groups of
//                a block cover disjoint K slices and are summed through
//                shared memory at the end (no atomics, no second kernel)
//   silu_mul   = each k group has two warps per n warp, one streaming the
//                gate weight (`up_*`-less parameters) and one the up weight
//                over the same rows and the same activations; the gate
//                warps hand their sums to the up warps through shared
//                memory, which store silu(gate) * up
//   qf.group   = members (q/k/v) share x: grid y covers every member's
//                N / block_n blocks in order, each block takes its member's
//                weight, epilogue operands and output (`.i` parameters)
//   grid       = (ceil(M / block_m), N / block_n, cluster_k), M fastest so
//                that the blocks reading one weight tile run together (L2
//                reuse); with cluster_k > 1 (sm_90) the z blocks form a
//                thread-block cluster, each a K slice, and rank 0 sums the
//                others' results through distributed shared memory
//
// Every block_k-wide step goes through a `stages`-deep cp.async pipeline in
// dynamic shared memory:
//   A   [block_m x block_k] f16 per k group, rows zero-filled past M, 16-byte
//       chunks XOR-swizzled by row so that ldmatrix.x4 is conflict-free;
//   B   per warp, block_k / 32 tiles in the fragment layout
//       (qfuse/format/MmaLayout.h): 4-bit codes, 512-byte tiles, lane L
//       copies and later reads back bytes [16 L, 16 L + 16) of each tile,
//       its own fragments (8-bit codes: 1024 bytes, [32 L, 32 L + 32)); 2-
//       and 3-bit codes (256 and 384 bytes) are copied as 16-byte chunks
//       spread over the lanes, each lane reading back its 8 (+ 4) bytes;
//   scales (and zero points) per warp: lane L copies the 32-bit word that
//       holds the scale of row 8 (L % 4) + L / 4, the row whose fragment
//       lane 4 (L / 4) + j reads for n tile j.
//
//===----------------------------------------------------------------------===//

#include "TensorCore/TensorCoreKernel.h"
#include "TensorCore/TensorCoreBuilder.h"

#include "Common/KernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "qfuse/Conversion/TensorCoreOccupancy.h"
#include "qfuse/format/MmaLayout.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::tensor_core;

/// The kernel's parameters, in the matvec's order; the runtime binds them by
/// name.
SmallVector<std::string> TensorCoreBuilder::parameterNames() {
  EncodingAttr enc = spec.encoding;
  SmallVector<std::string> names = {"x"};
  SmallVector<std::string> weightParams = {"codes"};
  if (enc.isQuantized())
    weightParams.push_back("scales");
  if (enc.isSparse24())
    weightParams.push_back("meta");
  if (p.intZeros || p.floatZeros)
    weightParams.push_back("zeros");
  if (enc.getGlobalScale())
    weightParams.push_back("global_scale");
  names.append(weightParams.begin(), weightParams.end());
  if (enc.getFormat() == ElementFormat::Codebook && enc.getTableName())
    names.push_back("table");
  if (spec.gated) // the up projection's components (silu_mul)
    for (const std::string &c : weightParams)
      names.push_back("up_" + c);
  if (spec.hasBias)
    names.push_back("bias");
  if (spec.hasResidual)
    names.push_back("residual");
  names.push_back("y");
  if (spec.scatterOutput)
    names.push_back("y_order");
  // qf.group members 1..: their own weight, epilogue operands and output.
  SmallVector<std::string> memberParams = weightParams;
  if (spec.hasBias)
    memberParams.push_back("bias");
  if (spec.hasResidual)
    memberParams.push_back("residual");
  memberParams.push_back("y");
  for (size_t i = 1; i < p.memberNs.size(); ++i)
    for (const std::string &c : memberParams)
      names.push_back(c + "." + std::to_string(i));
  return names;
}

/// Reads the kernel's arguments and the base of its dynamic shared memory.
void TensorCoreBuilder::bindArguments(KernelFunction &kernel) {
  auto arg = [&](StringRef n) { return kernel.arg(n); };
  x = arg("x");
  // Tables stay in registers here; in the matvec they cost speed at M = 1
  // (docs/tensor-core.md, "Constants in registers").
  e.pinConstantsWith(x); // f16 or bf16 activations
  codes = arg("codes");
  scales = arg("scales");
  meta = arg("meta");
  zeros = arg("zeros");
  globalScale = arg("global_scale");
  table = arg("table");
  bias = arg("bias");
  residual = arg("residual");
  y = arg("y");
  yOrder = arg("y_order");
  // Dynamic shared memory: an extern array sized at launch.
  smem = dynamicSharedBase(b, module, name + "_smem");
}

/// The thread's lane, warp, k group, column warp and fragment coordinates.
void TensorCoreBuilder::indexThreads() {
  tid = e.tidX();
  lane = e.band(tid, e.c32(31));
  warp = e.shru(tid, e.c32(5));
  kg = e.divu(warp, e.c32(p.groupWarps));
  columnWarp = e.remu(warp, e.c32(p.groupWarps));
  nw = e.remu(columnWarp, e.c32(p.nWarps));
  member = e.divu(columnWarp, e.c32(p.nWarps));
  g = e.shru(lane, e.c32(2));
  t4 = e.band(lane, e.c32(3));
  tgInGroup = e.sub(tid, e.mul(kg, e.c32(p.groupWarps * 32)));
  mBase = e.mul(e.ctaidX(), e.c32(p.blockM));
}

/// Points the up warps of silu_mul at the up weight and, under qf.group, the
/// block at its member's pointers and N; returns the block's index within
/// its member's blocks.
Value TensorCoreBuilder::selectMember(KernelFunction &kernel) {
  auto arg = [&](StringRef n) { return kernel.arg(n); };
  Value nBlock = NVVM::BlockIdYOp::create(b, e.i32());
  nOut = e.c32(p.n);
  gateWeights = currentWeights();
  if (spec.gated)
    upWeights = {arg("up_codes"), arg("up_scales"), arg("up_meta"),
                 arg("up_zeros")};
  // The up warps of silu_mul stream the up weight (warp-uniform select).
  if (spec.gated) {
    Value isUp =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, member, e.c32(1));
    auto pick = [&](Value &v, StringRef c) {
      if (v)
        v = LLVM::SelectOp::create(b, isUp, arg(("up_" + c).str()), v);
    };
    pick(codes, "codes");
    pick(scales, "scales");
    pick(meta, "meta");
    pick(zeros, "zeros");
    pick(globalScale, "global_scale");
  }
  // qf.group: the block's member, from blockIdx.y; its pointers and N
  // replace member 0's (uniform per block, so no divergence).
  if (p.memberNs.size() > 1) {
    Value start = e.c32(0);
    int64_t blocks = 0;
    Value ctaid = nBlock;
    for (size_t i = 1; i < p.memberNs.size(); ++i) {
      blocks += blocksOf(p.memberNs[i - 1], p.blockN);
      std::string suffix = "." + std::to_string(i);
      Value isMember = arith::CmpIOp::create(b, arith::CmpIPredicate::uge,
                                             ctaid, e.c32(blocks));
      auto pick = [&](Value &v, StringRef c) {
        if (v)
          v = LLVM::SelectOp::create(b, isMember, arg((c + suffix).str()), v);
      };
      pick(codes, "codes");
      pick(scales, "scales");
      pick(meta, "meta");
      pick(zeros, "zeros");
      pick(globalScale, "global_scale");
      pick(bias, "bias");
      pick(residual, "residual");
      pick(y, "y");
      nOut = arith::SelectOp::create(b, isMember, e.c32(p.memberNs[i]), nOut);
      start = arith::SelectOp::create(b, isMember, e.c32(blocks), start);
    }
    nBlock = e.sub(ctaid, start);
    gateWeights = currentWeights();
  }
  return nBlock;
}

/// The tile row of codes and the first column of n warp `nWarp` of the
/// block.
void TensorCoreBuilder::setTileRow(Value nWarp) {
  tileRow = e.add(e.mul(blockIndexN, e.c32(p.nWarps)), nWarp);
  nBase = e.mul(tileRow, e.c32(kTile));
  // A last block that reaches past the member's last tile row: its extra
  // warps stream (again) the last tile row, so that every copy stays in
  // the codes buffer, and store nothing (their columns are past N).
  if (p.blockTail)
    tileRow = e.minu(
        tileRow, e.sub(e.divu(e.add(nOut, e.c32(kTile - 1)), e.c32(kTile)),
                       e.c32(1)));
}

/// The warp's tile row of codes and its first column; builds the code table.
void TensorCoreBuilder::locateTileRow(Value nBlock) {
  blockIndexN = nBlock;
  setTileRow(nw);
  prefetchFirstSteps();
  if (p.lut) {
    lut.base = smem;
    lut.start = p.lutOff;
    buildLut();
    lut.laneBytes = e.mul(lane, e.c32(4));
  }
}

/// With --grid-dependency-prefetch (spec.prefetchBeforeWait), lane 0 of
/// each warp asks L2 for the code tiles of its first stages - 1 steps and
/// its rows' scales and zeros (contiguous: tile row, then k tile; [N,
/// groups]) before the kernel waits for the one ahead: weights no kernel
/// ahead writes, and an L2 prefetch reads nothing into the kernel. The
/// warp-specialized and 2:4 kernels (other code layouts) wait at the start.
void TensorCoreBuilder::prefetchFirstSteps() {
  if (!spec.prefetchBeforeWait || p.producer || p.sparse24)
    return;
  locateClusterRank();
  auto [stepBegin, count] = stepRange(kg);
  auto isLane0 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane,
                                       e.c32(0));
  {
    OpBuilder::InsertionGuard guard(b);
    auto ifOp = scf::IfOp::create(b, TypeRange(), isLane0, false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value rowTiles = e.mul(tileRow, e.c32(p.kTiles));
    Value firstTile = e.mul(stepBegin, e.c32(p.kTilesPerStep));
    Value endTile = e.minu(
        e.add(firstTile, e.c32((p.stages - 1) * p.kTilesPerStep)),
        e.mul(e.add(stepBegin, count), e.c32(p.kTilesPerStep)));
    endTile = e.minu(endTile, e.c32(p.kTiles));
    auto bytesAt = [&](Value tile) {
      return e.mul(e.zext64(e.add(rowTiles, tile)), e.c64(p.tileBytes));
    };
    prefetchL2BeforeWait(b, codes, bytesAt(firstTile), bytesAt(endTile));
    Value firstRow = e.mul(tileRow, e.c32(kTile));
    Value endRow = e.minu(e.add(firstRow, e.c32(kTile)), nOut);
    auto rows = [&](Value ptr, int64_t bytesPerRow) {
      if (ptr && bytesPerRow > 0)
        prefetchL2BeforeWait(b, ptr,
                             e.mul(e.zext64(firstRow), e.c64(bytesPerRow)),
                             e.mul(e.zext64(endRow), e.c64(bytesPerRow)));
    };
    int64_t groupBytes = (p.perChannel ? 1 : p.numGroups) * p.scaleBytes;
    if (spec.encoding.isQuantized())
      rows(scales, groupBytes);
    if (p.intZeros)
      rows(zeros, p.zeroRowBytes);
    else if (p.floatZeros)
      rows(zeros, groupBytes);
  }
  markGridDependencyWait(b);
}

/// The block's rank in its cluster (0 without one).
void TensorCoreBuilder::locateClusterRank() {
  rank = p.clusterK > 1 ? NVVM::BlockIdZOp::create(b, e.i32()).getResult()
                        : e.c32(0);
}

/// K group `group`'s steps [begin, begin + count): an even share of
/// K / block_k among the cluster_k x split_k slices (block rank, then k
/// group).
std::pair<Value, Value> TensorCoreBuilder::stepRange(Value group) {
  Value slice = e.add(e.mul(rank, e.c32(p.kGroups)), group);
  int64_t slices = p.kGroups * p.clusterK;
  Value stepBegin = e.divu(e.mul(slice, e.c32(p.steps)), e.c32(slices));
  Value stepEnd =
      e.divu(e.mul(e.add(slice, e.c32(1)), e.c32(p.steps)), e.c32(slices));
  return {stepBegin, e.sub(stepEnd, stepBegin)};
}

/// The cp.async pipeline over this k group's share of the block_k steps;
/// returns the accumulators once every copy has landed.
TensorCoreBuilder::Acc TensorCoreBuilder::accumulateSteps() {
  locateClusterRank();
  auto [stepBegin, count] = stepRange(kg);

  // Prologue: stages - 1 steps in flight (every group has at least one step;
  // commit groups are issued even when empty so the wait counts line up).
  for (int64_t s = 0; s + 1 < p.stages; ++s) {
    {
      OpBuilder::InsertionGuard guard(b);
      auto ifIssue = scf::IfOp::create(b, e.ult(e.c32(s), count), false);
      b.setInsertionPointToStart(ifIssue.thenBlock());
      issueStep(e.c32(s), e.add(stepBegin, e.c32(s)));
    }
    NVVM::CpAsyncCommitGroupOp::create(b);
  }

  SmallVector<Value> init(p.mTiles * 16, e.cf32(0.0));
  auto loop = scf::ForOp::create(b, e.c32(0), count, e.c32(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value it = loop.getInductionVar();
    NVVM::CpAsyncWaitGroupOp::create(b, b.getI32IntegerAttr(p.stages - 2));
    barrier();
    Value next = e.add(it, e.c32(p.stages - 1));
    {
      OpBuilder::InsertionGuard g2(b);
      auto ifIssue = scf::IfOp::create(b, e.ult(next, count), false);
      b.setInsertionPointToStart(ifIssue.thenBlock());
      issueStep(e.remu(next, e.c32(p.stages)), e.add(stepBegin, next));
    }
    NVVM::CpAsyncCommitGroupOp::create(b);
    // (The operands in argument position: their order of creation is the
    // dense kernel's as it was.)
    Acc acc = p.sparse24
                  ? computeSparseStep(e.remu(it, e.c32(p.stages)),
                                      e.add(stepBegin, it),
                                      loop.getRegionIterArgs())
                  : computeStep(e.remu(it, e.c32(p.stages)),
                                e.add(stepBegin, it), loop.getRegionIterArgs());
    scf::YieldOp::create(b, acc);
  }
  NVVM::CpAsyncWaitGroupOp::create(b, b.getI32IntegerAttr(0));
  Acc acc(loop.getResults().begin(), loop.getResults().end());
  return acc;
}

/// The k groups' and the cluster's sums, and the stores.
void TensorCoreBuilder::finishSteps(Acc acc) {
  if (p.sparse24)
    acc = sparseToDenseAcc(acc);
  reduceSplitK(acc);
  reduceCluster(acc);
  storeOutputs(acc);
}

KernelLaunch TensorCoreBuilder::build() {
  SmallVector<std::string> names = parameterNames();

  KernelFunction kernel =
      createKernelFunction(b, module, name, names, p.threads);
  LLVM::LLVMFuncOp fn = kernel.fn;
  if (p.clusterK > 1) // .reqnctapercluster: the launch needs no attribute
    fn->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                b.getDenseI32ArrayAttr(
                    {1, 1, static_cast<int32_t>(p.clusterK)}));
  // setmaxnreg moves registers within the block's launch allocation,
  // which .maxnreg pins at the limit of the block's threads.
  if (p.producer)
    fn->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                b.getI32IntegerAttr(p.launchRegisters));
  // Room for more blocks an SM than one wave of the grid needs is never
  // used: ask ptxas for that wave (TensorCoreOccupancy.h).
  else if (int64_t wave = getTensorCoreResidentBlocks(
               p.mBlocks * p.nBlocks * p.clusterK, spec.target.getSmCount(),
               p.threads, p.blockM))
    fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                b.getI32IntegerAttr(wave));
  bindArguments(kernel);

  indexThreads();
  locateTileRow(selectMember(kernel));
  loadStoredColumns();

  if (p.producer) {
    locateClusterRank();
    initSlotBarriers();
    Value isProducer = e.ult(e.c32(p.warps * 32 - 1), tid);
    auto role = scf::IfOp::create(b, isProducer, true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(role.thenBlock());
    produceSteps();
    // The producer takes part in the cluster's two barriers (reduceCluster),
    // with nothing of its own to publish.
    for (int64_t i = 0; p.clusterK > 1 && i < 2; ++i) {
      NVVM::ClusterArriveRelaxedOp::create(b, UnitAttr::get(b.getContext()));
      NVVM::ClusterWaitOp::create(b, UnitAttr::get(b.getContext()));
    }
    b.setInsertionPointToStart(role.elseBlock());
    finishSteps(consumeSteps());
  } else {
    finishSteps(accumulateSteps());
  }
  LLVM::ReturnOp::create(b, ValueRange{});

  KernelLaunch launch;
  launch.name = name;
  for (const std::string &n : names)
    launch.params.push_back({n, "ptr"});
  launch.gridX = p.mBlocks;
  launch.gridY = p.nBlocks;
  launch.gridZ = p.clusterK;
  launch.blockX = p.threads;
  launch.sharedBytes = 0;
  launch.dynamicSharedBytes = p.total;
  return launch;
}

FailureOr<KernelLaunch>
mlir::qf::emitTensorCoreKernel(gpu::GPUModuleOp module, StringRef name,
                               const MatmulSpec &spec,
                               function_ref<InFlightDiagnostic()> emitError) {
  FailureOr<Plan> plan = makePlan(spec, emitError);
  if (failed(plan))
    return failure();
  ImplicitLocOpBuilder b(module.getLoc(), module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  TensorCoreBuilder builder(b, spec, *plan, module, name);
  return builder.build();
}
