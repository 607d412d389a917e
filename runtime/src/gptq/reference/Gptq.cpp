//===- Gptq.cpp - the GPTQ driver: prepare, blocks, lazy updates ----------===//

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

  // Fallback: round to nearest on the weights as given.
  if (!prep.ok) {
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
    report.fellBackToRTN = true;
    report.warnings.push_back("GPTQ: " + why +
                              "; fell back to round-to-nearest");
    out.loss = std::numeric_limits<double>::quiet_NaN();
    out.rowLoss.assign(size_t(n), out.loss);
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

  // Group parameters [n, groups]; the group of each (permuted) position.
  const std::vector<int64_t> &perm = prep.permutation;
  const int64_t groups = format::numGroups(enc, k);
  const bool perChannel = enc.isPerChannel();
  const int64_t group = perChannel ? k : enc.groupSize;
  const bool dynamic = !perChannel && !options.staticGroups;
  std::vector<GroupParams> params(size_t(n * groups));
  std::vector<int32_t> groupOfPosition(static_cast<size_t>(k));
  for (int64_t c = 0; c < k; ++c)
    groupOfPosition[size_t(c)] =
        perChannel ? 0 : int32_t((dynamic ? c : perm[size_t(c)]) / group);
  if (!dynamic)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t g = 0; g < groups; ++g)
        if (!grid->fit(original.data() + r * k + g * group, group,
                       params[size_t(r * groups + g)], error))
          return fail(error, "row " + std::to_string(r) + ", group " +
                                 std::to_string(g) + ": " + error);

  // The working weights in processing order, and U in f32.
  std::vector<float> work(size_t(n * k));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c)
      work[size_t(r * k + c)] = original[size_t(r * k + perm[size_t(c)])];
  std::vector<float> u(prep.hinvChol.size());
  for (size_t i = 0; i < u.size(); ++i)
    u[i] = float(prep.hinvChol[i]);

  const int64_t block = options.blockSize;
  std::vector<int32_t> codes(size_t(n * k));
  std::vector<float> err(size_t(n * std::min(block, k)));
  out.rowLoss.assign(size_t(n), 0.0);
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
    tile.rowLoss = out.rowLoss.data();

    BlockGroups blockGroups;
    blockGroups.params = params.data();
    blockGroups.ld = groups;
    if (dynamic && block % group == 0) {
      blockGroups.groupSize = group;
      blockGroups.columnOffset = i1;
    } else {
      // Static parameters, or dynamic groups spanning several blocks: a
      // group starting here is fitted now, on weights that every earlier
      // block has updated (the GPTQ repo fits them at the same point).
      if (dynamic && i1 % group == 0)
        for (int64_t r = 0; r < n; ++r)
          if (!grid->fit(work.data() + r * k + i1, group,
                         params[size_t(r * groups + i1 / group)], error))
            return fail(error, "row " + std::to_string(r) + ", column " +
                                   std::to_string(i1) + ": " + error);
      blockGroups.groupOfColumn = groupOfPosition.data() + i1;
    }
    if (!quantizeBlock(*grid, tile, blockGroups, error))
      return false;
    lazyUpdate(n, cols, k - i2, err.data(), cols, u.data() + i1 * k + i2, k,
               work.data() + i2, k);
  }

  // Back to the original column order, in quantizeRTN's representation.
  format::Unpacked &q = out.weight;
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
    q.globalScale = grid->globalScale();
  if (enc.actOrder) {
    q.gIdx.resize(size_t(k));
    for (int64_t c = 0; c < k; ++c)
      q.gIdx[size_t(perm[size_t(c)])] = groupOfPosition[size_t(c)];
  }
  if (enc.hasNamedTable())
    q.table = grid->table();

  out.loss = 0;
  for (double l : out.rowLoss)
    out.loss += l;
  result = std::move(out);
  return true;
}

} // namespace qfuse::gptq
