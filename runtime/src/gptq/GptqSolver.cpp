//===- GptqSolver.cpp - GPTQ of one Hessian's modules on the GPU ----------===//
//
// Memory layouts (R = the modules' rows stacked, K columns, blocks of width
// w_b starting at column i1; "blocked" = block after block, each [R, w_b]
// row-major, so block b starts at element R * i1):
//
//   W        [R, K] f32 row-major, processing (act-order) column order;
//            each block receives the earlier blocks' feedback in place
//   Ut       [K, K] f32 in the Hessian's buffer: read row-major, the upper
//            factor with H = Ut Ut^T (U = Ut^-1 is the reference's factor)
//   Z        [R, K] f32 row-major, Z = E U block by block (left-looking)
//   codes    fused: blocked i8;  eager: column-major [K, R] i8
//   params   fused dynamic: blocked [R, w_b / G];  eager dynamic: [groups, R];
//            static (per column, gathered on the host): fused blocked
//            [R, w_b], eager column-major [K, R]
//   E        [R, w_b] row-major, the block's scaled errors (the eager path
//            writes it column by column and transposes it with cublasSgeam),
//            so the updates and the loss are the same code for both
//
// cuBLAS is column-major: every row-major [R, c] matrix with row stride ld
// is a column-major [c, R] matrix with leading dimension ld, which is how
// the calls below read W, Z, E and Ut.
//
//===----------------------------------------------------------------------===//

#include "GptqSolverImpl.h"

#include "qfuse/runtime/Error.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace qfuse::runtime {
using namespace detail;
namespace {

/// The GPTQ block-update launches are the steps that say so (artifact
/// version 4: "op" and the grid in "encoding").
bool isBlockUpdate(const Step &step) {
  return step.kind == Step::Kind::Launch &&
         step.op == "qf.gptq_block_update" && step.hasEncoding;
}

/// Per-channel fits' rows' min/max (GptqSolveFits.cpp).
bool isRowMinMax(const Step &step) {
  return step.kind == Step::Kind::Launch && step.op == "qf.row_min_max";
}

/// Step `s` of `plan`, a qf.row_min_max launch, by its K.
std::pair<int64_t, RowMinMaxKernel>
rowMinMaxKernel(const Artifact &blocks, const Plan &plan, size_t s) {
  const Step &step = plan.steps[s];
  const Kernel &kernel = blocks.kernels[step.kernelIndex];
  RowMinMaxKernel k;
  k.batch = plan.batch;
  k.step = s;
  for (size_t a = 0; a < step.args.size() && a < kernel.params.size(); ++a) {
    if (kernel.params[a].name == "w")
      k.w = step.args[a].name;
    if (kernel.params[a].name == "min_max")
      k.minMax = step.args[a].name;
  }
  const BufferSpec *w = blocks.findBuffer(k.w);
  if (k.minMax.empty() || !w || w->shape.size() != 2)
    throw Error("GPTQ artifact: qf.row_min_max launch '" + kernel.name +
                "' has no [rows, K] 'w' or no 'min_max' parameter");
  k.rows = w->extent(0, plan.batch);
  return {w->extent(1, plan.batch), k};
}

} // namespace

void detail::copy2D(CUdeviceptr dst, size_t dstPitch, CUdeviceptr src,
                    size_t srcPitch, size_t widthBytes, size_t height,
                    CUstream stream, const char *what) {
  CUDA_MEMCPY2D copy;
  std::memset(&copy, 0, sizeof(copy));
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = src;
  copy.srcPitch = srcPitch;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = dst;
  copy.dstPitch = dstPitch;
  copy.WidthInBytes = widthBytes;
  copy.Height = height;
  QFUSE_CU_CTX(cuMemcpy2DAsync(&copy, stream), std::string("GPTQ: ") + what);
}

std::string GptqSolveReport::summary() const {
  std::ostringstream os;
  os.precision(4);
  if (fellBackToRTN)
    os << "fell back to RTN after " << attempts << " attempt(s)";
  else
    os << attempts << " attempt(s), damping " << dampFraction
       << " x mean(diag(H))";
  os << ", " << deadChannels.size() << " dead channel(s)";
  if (actOrder)
    os << ", act-order";
  os << "; solve " << solveSeconds * 1e3 << " ms on the device (factor "
     << factorSeconds * 1e3 << ", blocks " << blockSeconds * 1e3
     << ", updates " << updateSeconds * 1e3 << "), " << totalSeconds * 1e3
     << " ms in all (prepare " << prepareSeconds * 1e3 << ", finish "
     << finishSeconds * 1e3 << ")";
  return os.str();
}

format::Encoding gptqArtifactEncoding(const Artifact &blocks) {
  for (const Plan &plan : blocks.plans)
    for (const Step &step : plan.steps)
      if (isBlockUpdate(step))
        return step.encoding;
  throw Error("GPTQ artifact: no qf.gptq_block_update launch (an artifact "
              "of version 4 or later names its launches' op; recompile it "
              "with python3 -m qfuse compile-gptq)");
}

GptqSolver::GptqSolver(const Artifact &blocks, const cuda::Context &context,
                       const format::Encoding &encoding)
    : encoding_(encoding) {
  if (!encoding.isQuantized() || encoding.isSparse24())
    throw Error("GPTQ needs a dense quantized encoding, got '" +
                format::printEncoding(encoding) + "'");
  if (encoding.hasNamedTable())
    throw Error("GPTQ on the GPU does not support the named codebook table '" +
                encoding.tableName + "': inline its values");
  impl_ = std::make_unique<Impl>(blocks, context);
  const std::string wanted = format::printEncoding(encoding);
  for (const Plan &plan : blocks.plans) {
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      const Step &step = plan.steps[s];
      if (isRowMinMax(step))
        impl_->rowMinMax.insert(rowMinMaxKernel(blocks, plan, s));
      if (!isBlockUpdate(step))
        continue;
      const Kernel &kernel = blocks.kernels[step.kernelIndex];
      BlockKernel k;
      k.step = s;
      for (size_t a = 0; a < step.args.size() && a < kernel.params.size(); ++a)
        k.buffers[kernel.params[a].name] = step.args[a].name;
      if (!k.buffers.count("w") || !k.buffers.count("u"))
        throw Error("GPTQ artifact: launch '" + kernel.name +
                    "' has no 'w' or 'u' parameter");
      const format::Encoding &grid = step.encoding;
      if (format::printEncoding(grid) != wanted)
        throw Error("GPTQ artifact: kernel '" + kernel.name + "' is for '" +
                    format::printEncoding(grid) + "', not '" + wanted + "'");
      const BufferSpec *u = blocks.findBuffer(k.buffers["u"]);
      if (!u || u->shape.size() != 2)
        throw Error("GPTQ artifact: no [B, B] buffer '" + k.buffers["u"] + "'");
      const int64_t width = u->extent(0, plan.batch);
      const bool isStatic = k.buffers.count("scales") != 0;
      impl_->kernels[{plan.batch, width, isStatic}] = k;
    }
  }
  if (impl_->kernels.empty())
    throw Error("GPTQ artifact: no qf.gptq_block_update launch");
}

GptqSolver::~GptqSolver() = default;

std::vector<int64_t> GptqSolver::rowCounts() const {
  std::vector<int64_t> rows;
  for (const auto &entry : impl_->kernels)
    if (std::find(rows.begin(), rows.end(), std::get<0>(entry.first)) ==
        rows.end())
      rows.push_back(std::get<0>(entry.first));
  return rows;
}

} // namespace qfuse::runtime
