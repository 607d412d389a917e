//===- GptqSolveFits.cpp - static groups' and per-channel parameters ------===//
//
// The parameters GptqSolver::solve fits up front (static groups, per
// channel; GptqSolveRun.h), in the original column order on the
// dead-channel-zeroed weights, as [rows, groups] staticParams.
//
// On the device, where the modules are there: each group's [rows, group]
// columns copied into a tile (one pitched copy) and fitted by the
// artifact's dynamic block kernel of the group's width with U = I, the
// same launch that fits the eager path's groups. That kernel fits a group
// at its first column, before any update, as Grid::fit does on the host
// (bit for bit, GPTQBlockKernel.cpp), and stores the parameters as
// [rows] per group: the [groups, rows] tables expandStaticParams expands,
// so only the small tables come back (for the results and the check of
// the scales).
//
// Per channel, a group is the whole row, wider than any kernel tile. Every
// Grid::fit reads its group only through statsOf's min, max and amax, and
// amax is the larger magnitude of min and max; so fitting the two values
// {min, max} gives the row's parameters bit for bit (GridRangeFitTest),
// and the device computes only each row's min and max (the artifact's
// qf.row_min_max kernel, which selects the same element as statsOf, sign
// of zero included): rows x 2 floats come back, and the host runs the same
// Grid::fit on them.
//
// On the host otherwise: host inputs, GptqSolveOptions::hostPrepare (the
// reference the GPU tests compare with), artifacts without the kernel, and
// per channel fewer rows than the kernel's row tile (GptqSolveReport::
// fitOnDevice says which ran).
//
//===----------------------------------------------------------------------===//

#include "GptqSolveRun.h"

#include "ParallelRows.h"

#include "qfuse/gptq/Grid.h"
#include "qfuse/runtime/Error.h"

#include <cmath>
#include <limits>

namespace qfuse::runtime {
using namespace detail;

bool SolveRun::canFitOnDevice() const {
  if (!onDevice || dynamic || options.hostPrepare)
    return false;
  if (perChannel) {
    auto it = im.rowMinMax.find(k);
    return it != im.rowMinMax.end() && rows >= it->second.rows;
  }
  return k % group == 0 &&
         im.kernels.count(KernelKey{rows, group, false}) != 0;
}

void SolveRun::prepareGroupFit() {
  buffer("group fit tile", size_t(rows * group) * 4);
  buffer("group fit codes", size_t(rows * group));
  buffer("group fit errors", size_t(rows * group) * 4);
  std::vector<float> eye(static_cast<size_t>(group * group), 0.0f);
  for (int64_t i = 0; i < group; ++i)
    eye[size_t(i * group + i)] = 1.0f;
  buffer("group identity", eye.size() * 4).upload(eye.data(), eye.size() * 4);
  if (enc.globalScale)
    buffer("global scales", rowGlobal.size() * 4)
        .upload(rowGlobal.data(), rowGlobal.size() * 4);
}

/// The dynamic kernel of width `group` on the [rows, group] columns at
/// `from` (row pitch K): it fits the group at its first column, before any
/// update, and stores the parameters as [rows] at `scalesOut` (and
/// `zerosOut`); its codes and errors go to scratch.
void SolveRun::fitGroup(CUdeviceptr from, CUdeviceptr scalesOut,
                        CUdeviceptr zerosOut) {
  const CUdeviceptr tile = buffer("group fit tile").ptr();
  copy2D(tile, size_t(group) * 4, from, size_t(k) * 4, size_t(group) * 4,
         size_t(rows), stream, "group fit tile");
  std::map<std::string, CUdeviceptr> fit = {
      {"w", tile},
      {"u", buffer("group identity").ptr()},
      {"codes", buffer("group fit codes").ptr()},
      {"err", buffer("group fit errors").ptr()},
      {"scales_out", scalesOut}};
  if (hasZeros)
    fit["zeros_out"] = zerosOut;
  if (enc.globalScale)
    fit["global_scale"] = buffer("global scales").ptr();
  im.launch(rows, group, false, fit, stream);
}

/// Every group's parameters into the [groups, rows] tables "static scales"
/// and "static zeros" on the device, then into staticParams.
void SolveRun::fitStaticOnDevice() {
  prepareGroupFit();
  const size_t tableBytes = size_t(groups * rows) * 4;
  const CUdeviceptr scales = buffer("static scales", tableBytes).ptr();
  const CUdeviceptr zeros =
      hasZeros ? buffer("static zeros", tableBytes).ptr() : 0;
  const CUdeviceptr w = buffer("weights").ptr();
  for (int64_t g = 0; g < groups; ++g)
    fitGroup(offset(w, g * group * 4), offset(scales, g * rows * 4),
             hasZeros ? offset(zeros, g * rows * 4) : 0);
  std::vector<float> s(static_cast<size_t>(groups * rows)),
      z(hasZeros ? s.size() : 0);
  QFUSE_CU(cuStreamSynchronize(stream));
  buffer("static scales").download(s.data(), s.size() * 4);
  if (hasZeros)
    buffer("static zeros").download(z.data(), z.size() * 4);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      gptq::GroupParams &p = staticParams[size_t(r * groups + g)];
      p.scale = s[size_t(g * rows + r)];
      p.zero = hasZeros ? z[size_t(g * rows + r)] : 0.0f;
    }
  report.fitOnDevice = true;
  tablesOnDevice = true;
}

/// Per channel: each row's [min, max] on the device, then Grid::fit over
/// those two values (the row's parameters exactly: see the top).
void SolveRun::fitPerChannelOnDevice() {
  cuda::DeviceBuffer &range = buffer("row min max", size_t(rows) * 8);
  im.launchRowMinMax(rows, k, buffer("weights").ptr(), range.ptr(), stream);
  std::vector<float> minMax(static_cast<size_t>(rows) * 2);
  QFUSE_CU(cuStreamSynchronize(stream));
  range.download(minMax.data(), minMax.size() * 4);
  for (int64_t r = 0; r < rows; ++r) {
    const gptq::Grid &grid = *grids[size_t(moduleOfRow[size_t(r)])];
    std::string error;
    // As fitStaticOnHost: checkStaticScales names the row.
    if (!grid.fit(minMax.data() + 2 * r, 2, staticParams[size_t(r)], error))
      staticParams[size_t(r)].scale = std::numeric_limits<float>::quiet_NaN();
  }
  report.fitOnDevice = true;
}

/// Grid::fit per (row, group) on `original`, one range of rows per thread.
void SolveRun::fitStaticOnHost() {
  detail::parallelRows(rows, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      const gptq::Grid &grid = *grids[size_t(moduleOfRow[size_t(r)])];
      for (int64_t g = 0; g < groups; ++g) {
        std::string error;
        const int64_t count = std::min(group, k - g * group);
        // A scale that does not fit its type is caught by
        // checkStaticScales: fit leaves a non-finite scale there (threads
        // cannot throw).
        if (!grid.fit(original.data() + r * k + g * group, count,
                      staticParams[size_t(r * groups + g)], error))
          staticParams[size_t(r * groups + g)].scale =
              std::numeric_limits<float>::quiet_NaN();
      }
    }
  });
}

/// Grid::fit's rule for a stored scale (finishScale in Grid.cpp): finite,
/// and positive unless NVFP4 (whose zero group keeps 0). The device's fit
/// stores what the host's would, so one check serves both.
void SolveRun::checkStaticScales() const {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      const float s = staticParams[size_t(r * groups + g)].scale;
      if (!std::isfinite(s) || (!enc.globalScale && !(s > 0)))
        throw Error("GPTQ: row " + std::to_string(r) + ", group " +
                    std::to_string(g) +
                    ": the group's scale does not fit the scale type");
    }
}

void SolveRun::fitStaticParams() {
  staticParams.resize(static_cast<size_t>(rows * groups));
  if (fitOnDevice && perChannel)
    fitPerChannelOnDevice();
  else if (fitOnDevice)
    fitStaticOnDevice();
  else
    fitStaticOnHost();
  checkStaticScales();
}

} // namespace qfuse::runtime
