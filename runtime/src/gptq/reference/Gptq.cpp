//===- Gptq.cpp - the GPTQ driver: prepare, blocks, lazy updates ----------===//
//
// Quantizes one weight with GPTQ on the CPU: zeroes dead channels, fits the
// group parameters, quantizes block by block with lazy updates, and returns
// the result in the original column order (or rounds to nearest when the
// Hessian has no positive definite factor).
//
//===----------------------------------------------------------------------===//

#include "qfuse/gptq/Gptq.h"

#include "qfuse/gptq/Block.h"
#include "qfuse/gptq/Grid.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace qfuse::gptq {

using format::Encoding;

namespace {

bool fail(std::string &error, const std::string &message) {
  error = message;
  return false;
}

/// Checks what the options can do with this encoding.
bool checkOptions(const Encoding &enc, int64_t k, const GptqOptions &options,
                  std::string &error) {
  if (!enc.isQuantized() || enc.isSparse24())
    return fail(error, "GPTQ needs a dense quantized encoding, got '" +
                           format::printEncoding(enc) + "'");
  if (options.blockSize <= 0)
    return fail(error, "block size must be positive, got " +
                           std::to_string(options.blockSize));
  if (enc.isPerChannel() || options.staticGroups)
    return true;
  const int64_t group = enc.groupSize, block = options.blockSize;
  if (block % group != 0 && group % block != 0)
    return fail(error, "groups computed during the column loop must divide "
                       "or be a multiple of the block size: group " +
                           std::to_string(group) + ", block " +
                           std::to_string(block) +
                           " (change the block size or use static groups)");
  if (options.actOrder && !enc.actOrder && group < k)
    return fail(error, "act-order without static groups permutes the groups: "
                       "the encoding needs act_order to store g_idx (or set "
                       "GptqOptions::staticGroups)");
  return true;
}

/// The weights as given, rounded to nearest: what a preparation that found
/// no positive definite factor falls back to.
bool fallBackToRTN(const float *w, int64_t n, int64_t k,
                   const Preparation &prep, const Encoding &enc,
                   const GptqOptions &options, GptqResult &out,
                   std::string &error) {
  std::string why =
      prep.attempts == 0
          ? "the Hessian cannot be damped (" + prep.message + ")"
          : "the Hessian is not positive definite even with more damping (" +
                prep.message + ")";
  if (!options.fallbackToRTN)
    return fail(error, "GPTQ: " + why);
  format::QuantizeOptions rtnOptions;
  rtnOptions.table = options.table;
  if (!format::quantizeRTN(enc, w, n, k, out.weight, error, rtnOptions))
    return false;
  out.report.fellBackToRTN = true;
  out.report.warnings.push_back("GPTQ: " + why +
                                "; fell back to round-to-nearest");
  out.loss = std::numeric_limits<double>::quiet_NaN();
  out.rowLoss.assign(size_t(n), out.loss);
  return true;
}

/// How columns fall into groups, and each (row, group)'s parameters.
struct GroupPlan {
  int64_t groups = 0;
  /// Columns per group (k when per-channel).
  int64_t group = 0;
  bool perChannel = false;
  /// Groups fitted during the column loop, on updated weights, instead of
  /// once up front on the original ones.
  bool dynamic = false;
  /// [n, groups].
  std::vector<GroupParams> params;
  /// The group of each (permuted) position.
  std::vector<int32_t> groupOfPosition;
};

/// The group plan; static groups are fitted here on the original weights.
bool planGroups(const std::vector<float> &original, int64_t n, int64_t k,
                const std::vector<int64_t> &perm, const Encoding &enc,
                const GptqOptions &options, Grid &grid, GroupPlan &plan,
                std::string &error) {
  plan.groups = format::numGroups(enc, k);
  plan.perChannel = enc.isPerChannel();
  plan.group = plan.perChannel ? k : enc.groupSize;
  plan.dynamic = !plan.perChannel && !options.staticGroups;
  plan.params.resize(size_t(n * plan.groups));
  plan.groupOfPosition.resize(static_cast<size_t>(k));
  for (int64_t c = 0; c < k; ++c)
    plan.groupOfPosition[size_t(c)] =
        plan.perChannel
            ? 0
            : int32_t((plan.dynamic ? c : perm[size_t(c)]) / plan.group);
  if (!plan.dynamic)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t g = 0; g < plan.groups; ++g)
        if (!grid.fit(original.data() + r * k + g * plan.group, plan.group,
                      plan.params[size_t(r * plan.groups + g)], error))
          return fail(error, "row " + std::to_string(r) + ", group " +
                                 std::to_string(g) + ": " + error);
  return true;
}

/// The column loop: each block of `work` (weights in processing order) is
/// quantized into `codes`, and its error is spread over the later columns.
bool quantizeBlocks(int64_t n, int64_t k, const GptqOptions &options,
                    Grid &grid, GroupPlan &plan, std::vector<float> &work,
                    std::vector<float> &u, std::vector<int32_t> &codes,
                    std::vector<double> &rowLoss, std::string &error) {
  const int64_t block = options.blockSize;
  const int64_t group = plan.group;
  std::vector<float> err(size_t(n * std::min(block, k)));
  for (int64_t i1 = 0; i1 < k; i1 += block) {
    const int64_t i2 = std::min(i1 + block, k);
    const int64_t cols = i2 - i1;
    BlockTile tile;
    tile.rows = n;
    tile.cols = cols;
    tile.w = work.data() + i1;
    tile.ldw = k;
    tile.u = u.data() + i1 * k + i1;
    tile.ldu = k;
    tile.codes = codes.data() + i1;
    tile.ldc = k;
    tile.err = err.data();
    tile.lde = cols;
    tile.rowLoss = rowLoss.data();

    BlockGroups blockGroups;
    blockGroups.params = plan.params.data();
    blockGroups.ld = plan.groups;
    if (plan.dynamic && block % group == 0) {
      blockGroups.groupSize = group;
      blockGroups.columnOffset = i1;
    } else {
      // Static parameters, or dynamic groups spanning several blocks: a
      // group starting here is fitted now, on weights that every earlier
      // block has updated (the GPTQ repo fits them at the same point).
      if (plan.dynamic && i1 % group == 0)
        for (int64_t r = 0; r < n; ++r)
          if (!grid.fit(work.data() + r * k + i1, group,
                        plan.params[size_t(r * plan.groups + i1 / group)],
                        error))
            return fail(error, "row " + std::to_string(r) + ", column " +
                                   std::to_string(i1) + ": " + error);
      blockGroups.groupOfColumn = plan.groupOfPosition.data() + i1;
    }
    if (!quantizeBlock(grid, tile, blockGroups, error))
      return false;
    lazyUpdate(n, cols, k - i2, err.data(), cols, u.data() + i1 * k + i2, k,
               work.data() + i2, k);
  }
  return true;
}

/// Back to the original column order, in quantizeRTN's representation.
void unpermute(int64_t n, int64_t k, const std::vector<int64_t> &perm,
               const Encoding &enc, const Grid &grid, const GroupPlan &plan,
               const std::vector<int32_t> &codes, format::Unpacked &q) {
  const std::vector<GroupParams> &params = plan.params;
  q.codes.resize(size_t(n * k));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c)
      q.codes[size_t(r * k + perm[size_t(c)])] = codes[size_t(r * k + c)];
  q.scales.resize(params.size());
  for (size_t i = 0; i < params.size(); ++i)
    q.scales[i] = params[i].scale;
  if (enc.isUnsigned()) {
    q.zeros.resize(params.size());
    for (size_t i = 0; i < params.size(); ++i)
      q.zeros[i] = params[i].zero;
  }
  if (enc.globalScale)
    q.globalScale = grid.globalScale();
  if (enc.actOrder) {
    q.gIdx.resize(size_t(k));
    for (int64_t c = 0; c < k; ++c)
      q.gIdx[size_t(perm[size_t(c)])] = plan.groupOfPosition[size_t(c)];
  }
  if (enc.hasNamedTable())
    q.table = grid.table();
}

} // namespace

std::string GptqReport::summary() const {
  std::ostringstream os;
  os << "gptq: ";
  if (fellBackToRTN)
    os << "fell back to RTN after " << attempts << " attempt"
       << (attempts == 1 ? "" : "s") << " (last damping " << dampFraction
       << " x mean(diag(H)))";
  else
    os << attempts << " attempt" << (attempts == 1 ? "" : "s") << ", damping "
       << dampFraction << " x mean(diag(H)) = " << damp;
  os << ", " << deadChannels.size() << " dead channel"
     << (deadChannels.size() == 1 ? "" : "s");
  if (actOrder)
    os << ", act-order";
  if (staticGroups)
    os << ", static groups";
  os << ", block " << blockSize;
  return os.str();
}

bool quantizeGPTQ(const float *w, int64_t n, int64_t k, const double *hessian,
                  const Encoding &enc, const GptqOptions &options,
                  GptqResult &result, std::string &error) {
  if (!format::validate(enc, n, k, error) ||
      !checkOptions(enc, k, options, error))
    return false;
  PrepareOptions prepareOptions = options.prepare;
  prepareOptions.actOrder = options.actOrder;
  return quantizeGPTQ(w, n, k, prepareHessian(hessian, k, prepareOptions), enc,
                      options, result, error);
}

bool quantizeGPTQ(const float *w, int64_t n, int64_t k, const Preparation &prep,
                  const Encoding &enc, const GptqOptions &options,
                  GptqResult &result, std::string &error) {
  // The preparation's permutation decides whether this is act-order.
  GptqOptions effective = options;
  for (size_t c = 0; c < prep.permutation.size(); ++c)
    effective.actOrder |= prep.permutation[c] != int64_t(c);
  if (!format::validate(enc, n, k, error) ||
      !checkOptions(enc, k, effective, error))
    return false;
  if (int64_t(prep.permutation.size()) != k ||
      (prep.ok && (int64_t(prep.hinvChol.size()) != k * k)))
    return fail(error, "the preparation is for " +
                           std::to_string(prep.permutation.size()) +
                           " columns, the weight has " + std::to_string(k));

  GptqResult out;
  GptqReport &report = out.report;
  report.actOrder = effective.actOrder;
  report.staticGroups = options.staticGroups;
  report.blockSize = options.blockSize;
  report.deadChannels = prep.deadChannels;
  report.dampFraction = prep.dampFraction;
  report.damp = prep.damp;
  report.attempts = prep.attempts;
  report.permutation = prep.permutation;

  if (!prep.ok) {
    if (!fallBackToRTN(w, n, k, prep, enc, options, out, error))
      return false;
    result = std::move(out);
    return true;
  }

  // Dead channels zeroed, in the original column order.
  if (!prep.deadChannels.empty())
    report.warnings.push_back(
        std::to_string(prep.deadChannels.size()) +
        " dead channel(s) (H[i][i] = 0): their weights are set to 0");
  std::vector<float> original(w, w + n * k);
  for (int64_t col : prep.deadChannels)
    for (int64_t r = 0; r < n; ++r)
      original[size_t(r * k + col)] = 0.0f;

  GridOptions gridOptions;
  gridOptions.table = options.table;
  if (enc.globalScale)
    gridOptions.globalScale = nvfp4GlobalScale(original.data(), n * k);
  std::unique_ptr<Grid> grid = makeGrid(enc, gridOptions, error);
  if (!grid)
    return false;

  const std::vector<int64_t> &perm = prep.permutation;
  GroupPlan plan;
  if (!planGroups(original, n, k, perm, enc, options, *grid, plan, error))
    return false;

  // The working weights in processing order, and U in f32.
  std::vector<float> work(size_t(n * k));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c)
      work[size_t(r * k + c)] = original[size_t(r * k + perm[size_t(c)])];
  std::vector<float> u(prep.hinvChol.size());
  for (size_t i = 0; i < u.size(); ++i)
    u[i] = float(prep.hinvChol[i]);

  std::vector<int32_t> codes(size_t(n * k));
  out.rowLoss.assign(size_t(n), 0.0);
  if (!quantizeBlocks(n, k, options, *grid, plan, work, u, codes, out.rowLoss,
                      error))
    return false;
  unpermute(n, k, perm, enc, *grid, plan, codes, out.weight);

  out.loss = 0;
  for (double l : out.rowLoss)
    out.loss += l;
  result = std::move(out);
  return true;
}

} // namespace qfuse::gptq
