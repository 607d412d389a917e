//===- qfuse-gptq-check.cpp - GPTQ block kernels against the CPU reference --===//
//
// Runs every qf.gptq_block_update launch of an artifact on the GPU and
// compares it with the C++ reference's column loop (gptq::quantizeBlock),
// BIT FOR BIT: codes exactly, the error block E and the group parameters by
// their f32 bits.
//
//   qfuse-gptq-check --artifact gptq-blocks.qfa [--seed S]
//
// Inputs per launch: w uniform in [-1, 1); U the block's upper Cholesky
// factor of H^-1 for a random SPD H (gptq::HessianAccumulator over 4B
// correlated rows, then gptq::prepareHessian, rounded to f32 as the driver
// does). The launch's kernel parameters say what it is: `w`, `u`, then
// `scales`/`zeros` (static mode) or `scales_out`/`zeros_out` (dynamic); the
// launch step names its op and grid (artifact version 4). In the
// static mode the tool fits each group up front on the original weights and
// assigns columns to groups through a random permutation (act-order's
// scattered g_idx), and gathers one scale (and zero) per column.
//
// NVFP4 launches also take `global_scale`, one per row: each row's is what
// its own weights give (nvfp4GlobalScale) times a random power of two.
//
// Prints one PASS/FAIL line per launch and exits 1 on any failure.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Encoding.h"
#include "qfuse/gptq/Block.h"
#include "qfuse/gptq/Grid.h"
#include "qfuse/gptq/Hessian.h"
#include "qfuse/gptq/Prepare.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/DeviceArtifact.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/device/Executor.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <random>

using namespace qfuse;
using namespace qfuse::runtime;

namespace {

uint32_t bitsOf(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

/// U [B, B] (f32) for a random SPD Hessian: x = z A (A Gaussian mixing, so
/// the inputs are correlated) over 4B rows, prepared as GPTQ prepares it.
std::vector<float> randomHinvChol(int64_t b, std::mt19937_64 &rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> mix(static_cast<size_t>(b * b));
  std::vector<float> z(static_cast<size_t>(b));
  std::vector<float> x(static_cast<size_t>(4 * b * b));
  for (float &v : mix)
    v = normal(rng) / float(std::sqrt(double(b)));
  for (int64_t r = 0; r < 4 * b; ++r) {
    for (float &v : z)
      v = normal(rng);
    for (int64_t c = 0; c < b; ++c) {
      float acc = 0;
      for (int64_t i = 0; i < b; ++i)
        acc += z[size_t(i)] * mix[size_t(i * b + c)];
      x[size_t(r * b + c)] = acc;
    }
  }
  gptq::HessianAccumulator acc(b);
  acc.add(x.data(), 4 * b);
  gptq::Preparation prep = gptq::prepareHessian(acc.matrix().data(), b);
  if (!prep.ok)
    throw Error("preparing a random Hessian failed: " + prep.message);
  std::vector<float> u(static_cast<size_t>(b * b));
  for (size_t i = 0; i < u.size(); ++i)
    u[i] = float(prep.hinvChol[i]);
  return u;
}

struct LaunchBuffers {
  std::map<std::string, std::string> byParam; // kernel param -> buffer
};

/// One launch's inputs and what the reference needs to reproduce it.
struct LaunchProblem {
  std::map<std::string, std::string> buf; // kernel param -> buffer
  std::string wName, encText;
  format::Encoding enc;
  int64_t rows = 0, cols = 0;
  bool dynamic = false, hasZeros = false, nvfp4 = false;
  std::vector<float> w, u;
  /// One grid per row with NVFP4 (its global scale is per row), else one.
  std::vector<std::unique_ptr<gptq::Grid>> grids;
  std::vector<float> globals;
  int64_t groupSize = 0, groups = 0;
  /// [rows, groups]: fitted up front (static) or by the reference (dynamic).
  std::vector<gptq::GroupParams> params;
  std::vector<int32_t> groupOf;
  /// Static mode: each column's scale and zero, as the kernel reads them.
  std::vector<float> scales, zeros;

  const gptq::Grid &gridOf(int64_t r) const {
    return *grids[size_t(nvfp4 ? r : 0)];
  }
};

/// What the launch reads: its buffers by parameter, the grid its `w`
/// buffer names, the block's shape and mode.
LaunchProblem describeLaunch(const Artifact &artifact, const Plan &plan,
                             size_t stepIndex) {
  LaunchProblem p;
  const Step &step = plan.steps[stepIndex];
  const Kernel &kernel = artifact.kernels[step.kernelIndex];
  for (size_t i = 0; i < step.args.size(); ++i)
    p.buf[kernel.params[i].name] = step.args[i].name;
  p.wName = p.buf["w"];
  p.enc = step.encoding;
  p.encText = format::printEncoding(p.enc);
  const BufferSpec *wSpec = nullptr;
  for (const BufferSpec &b : artifact.buffers)
    if (b.name == p.wName)
      wSpec = &b;
  if (!wSpec || wSpec->shape.size() != 2)
    throw Error("no [R, B] buffer '" + p.wName + "'");
  p.rows = wSpec->extent(0, plan.batch);
  p.cols = wSpec->extent(1, plan.batch);
  p.dynamic = !p.buf.count("scales");
  p.hasZeros = p.enc.zeroPoint != format::ZeroPointKind::None;
  p.nvfp4 = p.enc.globalScale;
  return p;
}

/// Random weights, grids and U.
void drawInputs(LaunchProblem &p, std::mt19937_64 &rng) {
  const int64_t rows = p.rows, cols = p.cols;
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  p.w.resize(static_cast<size_t>(rows * cols));
  for (float &v : p.w)
    v = uniform(rng);

  // One grid per row: NVFP4's global scale is an operand with one value
  // per row (the runtime stacks modules with their own); here each row's is
  // what its own weights would give, scaled by a random power of two so
  // that rows differ. Every other grid is the same for all rows.
  std::string error;
  for (int64_t r = 0; r < (p.nvfp4 ? rows : 1); ++r) {
    gptq::GridOptions gridOptions;
    if (p.nvfp4) {
      gridOptions.globalScale =
          gptq::nvfp4GlobalScale(p.w.data() + r * cols, cols) *
          float(1 << (rng() % 4));
      p.globals.push_back(gridOptions.globalScale);
    }
    p.grids.push_back(gptq::makeGrid(p.enc, gridOptions, error));
    if (!p.grids.back())
      throw Error("grid '" + p.encText + "': " + error);
  }
  p.u = randomHinvChol(cols, rng);
}

/// Group parameters: static ones fitted up front on the original weights,
/// columns assigned to groups through a random permutation.
void planGroups(LaunchProblem &p, std::mt19937_64 &rng) {
  const int64_t rows = p.rows, cols = p.cols;
  p.groupSize = p.enc.isPerChannel() ? cols : p.enc.groupSize;
  p.groups = (cols + p.groupSize - 1) / p.groupSize;
  const int64_t groups = p.groups;
  p.params.resize(static_cast<size_t>(rows * groups));
  p.groupOf.resize(static_cast<size_t>(cols));
  if (p.dynamic)
    return;
  std::vector<int64_t> perm(static_cast<size_t>(cols));
  std::iota(perm.begin(), perm.end(), 0);
  if (!p.enc.isPerChannel())
    std::shuffle(perm.begin(), perm.end(), rng);
  for (int64_t c = 0; c < cols; ++c)
    p.groupOf[size_t(perm[size_t(c)])] = int32_t(c / p.groupSize);
  p.scales.resize(size_t(rows * cols));
  p.zeros.resize(size_t(rows * cols));
  std::vector<float> members;
  std::string error;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g = 0; g < groups; ++g) {
      members.clear();
      for (int64_t c = 0; c < cols; ++c)
        if (p.groupOf[size_t(c)] == g)
          members.push_back(p.w[size_t(r * cols + c)]);
      if (!p.gridOf(r).fit(members.data(), int64_t(members.size()),
                           p.params[size_t(r * groups + g)], error))
        throw Error("fitting static group " + std::to_string(g) + ": " +
                    error);
    }
    for (int64_t c = 0; c < cols; ++c) {
      const gptq::GroupParams &gp =
          p.params[size_t(r * groups + p.groupOf[size_t(c)])];
      p.scales[size_t(r * cols + c)] = gp.scale;
      p.zeros[size_t(r * cols + c)] = gp.zero;
    }
  }
}

/// What a launch wrote: codes, the error block and (dynamic) group params.
struct BlockOutputs {
  std::vector<int8_t> codes;
  std::vector<float> err, scales, zeros;
};

/// GPU: upload, poison the outputs, run this launch, download.
BlockOutputs runOnDevice(Executor &executor, const Plan &plan,
                         size_t stepIndex, LaunchProblem &p, CUstream stream) {
  std::map<std::string, std::string> &buf = p.buf;
  const int64_t rows = p.rows, cols = p.cols;
  executor.allocate(plan.batch);
  executor.buffer(plan.batch, p.wName).upload(p.w.data(), p.w.size() * 4);
  executor.buffer(plan.batch, buf["u"]).upload(p.u.data(), p.u.size() * 4);
  if (p.nvfp4) {
    if (!buf.count("global_scale"))
      throw Error("the NVFP4 launch has no 'global_scale' parameter");
    executor.buffer(plan.batch, buf["global_scale"])
        .upload(p.globals.data(), p.globals.size() * 4);
  }
  if (!p.dynamic) {
    executor.buffer(plan.batch, buf["scales"])
        .upload(p.scales.data(), p.scales.size() * 4);
    if (p.hasZeros)
      executor.buffer(plan.batch, buf["zeros"])
          .upload(p.zeros.data(), p.zeros.size() * 4);
  }
  std::vector<std::string> outs = {"codes", "err"};
  if (p.dynamic) {
    outs.push_back("scales_out");
    if (p.hasZeros)
      outs.push_back("zeros_out");
  }
  for (const std::string &o : outs)
    executor.buffer(plan.batch, buf[o]).fill(0xA5, stream);
  // This launch alone: the plan's other launches would read inputs this
  // check never uploads (compute-sanitizer's initcheck reports them).
  executor.runSteps(plan.batch, stepIndex, stepIndex + 1, stream);
  QFUSE_CU(cuStreamSynchronize(stream));
  BlockOutputs gpu;
  gpu.codes.resize(static_cast<size_t>(rows * cols));
  gpu.err.resize(static_cast<size_t>(rows * cols));
  executor.buffer(plan.batch, buf["codes"])
      .download(gpu.codes.data(), gpu.codes.size());
  executor.buffer(plan.batch, buf["err"])
      .download(gpu.err.data(), gpu.err.size() * 4);
  if (p.dynamic) {
    gpu.scales.resize(size_t(rows * p.groups));
    executor.buffer(plan.batch, buf["scales_out"])
        .download(gpu.scales.data(), gpu.scales.size() * 4);
    if (p.hasZeros) {
      gpu.zeros.resize(size_t(rows * p.groups));
      executor.buffer(plan.batch, buf["zeros_out"])
          .download(gpu.zeros.data(), gpu.zeros.size() * 4);
    }
  }
  return gpu;
}

/// The C++ reference's column loop on the same block: its codes and error
/// block; dynamic group parameters land in p.params.
void runReference(LaunchProblem &p, std::vector<int32_t> &codes,
                  std::vector<float> &err) {
  const int64_t rows = p.rows, cols = p.cols;
  std::vector<float> wRef = p.w;
  err.assign(static_cast<size_t>(rows * cols), 0.0f);
  codes.assign(static_cast<size_t>(rows * cols), 0);
  gptq::BlockTile tile;
  tile.rows = rows;
  tile.cols = cols;
  tile.w = wRef.data();
  tile.ldw = cols;
  tile.u = p.u.data();
  tile.ldu = cols;
  tile.codes = codes.data();
  tile.ldc = cols;
  tile.err = err.data();
  tile.lde = cols;
  gptq::BlockGroups bg;
  bg.params = p.params.data();
  bg.ld = p.groups;
  bg.groupOfColumn = p.dynamic ? nullptr : p.groupOf.data();
  bg.groupSize = p.groupSize;
  std::string error;
  // Rows are independent: NVFP4 runs them one at a time with their grids.
  for (int64_t r0 = 0; r0 < rows; r0 += p.nvfp4 ? 1 : rows) {
    const int64_t n = p.nvfp4 ? 1 : rows;
    gptq::BlockTile part = tile;
    part.rows = n;
    part.w = tile.w + r0 * tile.ldw;
    part.codes = tile.codes + r0 * tile.ldc;
    part.err = tile.err + r0 * tile.lde;
    gptq::BlockGroups partGroups = bg;
    partGroups.params = bg.params + r0 * bg.ld;
    if (!gptq::quantizeBlock(p.gridOf(r0), part, partGroups, error))
      throw Error("reference block: " + error);
  }
}

/// Compares bit for bit and prints the PASS/FAIL line. Returns passed.
bool compareAndReport(const LaunchProblem &p, const BlockOutputs &gpu,
                      const std::vector<int32_t> &codes,
                      const std::vector<float> &err) {
  const int64_t rows = p.rows, cols = p.cols;
  int64_t badCodes = 0, badErr = 0, badParams = 0, first = -1;
  for (int64_t i = 0; i < rows * cols; ++i) {
    bool codeOk = gpu.codes[size_t(i)] == int8_t(codes[size_t(i)]);
    bool errOk = bitsOf(gpu.err[size_t(i)]) == bitsOf(err[size_t(i)]);
    badCodes += !codeOk;
    badErr += !errOk;
    if ((!codeOk || !errOk) && first < 0)
      first = i;
  }
  if (p.dynamic)
    for (int64_t i = 0; i < rows * p.groups; ++i) {
      badParams += bitsOf(gpu.scales[size_t(i)]) !=
                   bitsOf(p.params[size_t(i)].scale);
      if (p.hasZeros)
        badParams +=
            bitsOf(gpu.zeros[size_t(i)]) != bitsOf(p.params[size_t(i)].zero);
    }
  const bool passed = badCodes == 0 && badErr == 0 && badParams == 0;
  std::printf("gptq-check %-4s %-48s R=%lld B=%lld %s: codes %lld/%lld "
              "differ, error %lld differ, group params %lld differ",
              passed ? "PASS" : "FAIL", p.encText.c_str(), (long long)rows,
              (long long)cols, p.dynamic ? "dynamic" : "static",
              (long long)badCodes, (long long)(rows * cols),
              (long long)badErr, (long long)badParams);
  if (first >= 0)
    std::printf(" (first at row %lld col %lld: code %d vs %d, e %.9g vs "
                "%.9g)",
                (long long)(first / cols), (long long)(first % cols),
                int(gpu.codes[size_t(first)]),
                int(int8_t(codes[size_t(first)])),
                double(gpu.err[size_t(first)]), double(err[size_t(first)]));
  std::printf("\n");
  return passed;
}

/// One launch: run on the GPU, run the reference, compare. Returns passed.
bool checkLaunch(Executor &executor, const Plan &plan, size_t stepIndex,
                 CUstream stream, std::mt19937_64 &rng) {
  LaunchProblem p = describeLaunch(executor.artifact(), plan, stepIndex);
  drawInputs(p, rng);
  planGroups(p, rng);
  const BlockOutputs gpu = runOnDevice(executor, plan, stepIndex, p, stream);
  std::vector<int32_t> codes;
  std::vector<float> err;
  runReference(p, codes, err);
  return compareAndReport(p, gpu, codes, err);
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"qfuse-gptq-check: qf.gptq_block_update kernels against the "
               "C++ GPTQ reference, bit for bit"};
  std::string artifactPath;
  int device = 0;
  uint64_t seed = 20261129;
  app.add_option("--artifact", artifactPath, "the compiled artifact")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--device", device, "CUDA device ordinal")->default_val(0);
  app.add_option("--seed", seed, "seed of the weights and Hessians")
      ->default_val(seed);
  CLI11_PARSE(app, argc, argv);

  int failed = 0, checked = 0;
  try {
    cuda::Context context(device);
    cuda::Stream stream;
    Artifact artifact = loadArtifactForDevice(artifactPath, context);
    std::printf("%s: runs %s on %s\n", artifactPath.c_str(),
                artifact.describeTarget().c_str(), context.describe().c_str());
    Executor executor(artifact, context);
    std::mt19937_64 rng(seed);
    for (const Plan &plan : artifact.plans) {
      for (size_t s = 0; s < plan.steps.size(); ++s) {
        const Step &step = plan.steps[s];
        if (step.op != "qf.gptq_block_update")
          continue;
        ++checked;
        if (!checkLaunch(executor, plan, s, stream.get(), rng))
          ++failed;
      }
    }
  } catch (const std::exception &e) {
    std::cerr << "qfuse-gptq-check: error: " << errorText(e) << "\n";
    return 1;
  }
  if (checked == 0) {
    std::cerr << "qfuse-gptq-check: no qf.gptq_block_update launch in '"
              << artifactPath << "'\n";
    return 1;
  }
  std::printf("gptq-check: %d of %d launches passed\n", checked - failed,
              checked);
  return failed ? 1 : 0;
}
