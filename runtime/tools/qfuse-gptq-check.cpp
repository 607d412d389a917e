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
// grid is the text after "w:" in the name of the buffer bound to `w`
// (test/Tools/qfuse-compile/Inputs/gptq-blocks.mlir names them so). In the
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

std::string encodingOf(const std::string &wBuffer) {
  size_t at = wBuffer.find("w:");
  if (at == std::string::npos)
    throw Error("buffer '" + wBuffer +
                "' does not name its grid (expected 'w:<encoding>')");
  // A trailing " (...)" only keeps buffer names unique.
  std::string text = wBuffer.substr(at + 2);
  size_t note = text.find(" (");
  return note == std::string::npos ? text : text.substr(0, note);
}

/// One launch: run on the GPU, run the reference, compare. Returns passed.
bool checkLaunch(Executor &executor, const Plan &plan, size_t stepIndex,
                 CUstream stream, std::mt19937_64 &rng) {
  const Artifact &artifact = executor.artifact();
  const Step &step = plan.steps[stepIndex];
  const Kernel &kernel = artifact.kernels[step.kernelIndex];
  std::map<std::string, std::string> buf;
  for (size_t i = 0; i < step.args.size(); ++i)
    buf[kernel.params[i].name] = step.args[i].name;
  const std::string wName = buf["w"];
  const std::string encText = encodingOf(wName);
  format::Encoding enc;
  std::string error;
  if (!format::parseEncoding(encText, enc, error))
    throw Error("grid of '" + wName + "': " + error);
  const BufferSpec *wSpec = nullptr;
  for (const BufferSpec &b : artifact.buffers)
    if (b.name == wName)
      wSpec = &b;
  if (!wSpec || wSpec->shape.size() != 2)
    throw Error("no [R, B] buffer '" + wName + "'");
  const int64_t rows = wSpec->extent(0, plan.batch);
  const int64_t cols = wSpec->extent(1, plan.batch);
  const bool dynamic = !buf.count("scales");
  const bool hasZeros = enc.zeroPoint != format::ZeroPointKind::None;

  // Inputs.
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> w(static_cast<size_t>(rows * cols));
  for (float &v : w)
    v = uniform(rng);

  // One grid per row: NVFP4's global scale is an operand with one value
  // per row (the runtime stacks modules with their own); here each row's is
  // what its own weights would give, scaled by a random power of two so
  // that rows differ. Every other grid is the same for all rows.
  const bool nvfp4 = enc.globalScale;
  std::vector<std::unique_ptr<gptq::Grid>> grids;
  std::vector<float> globals;
  for (int64_t r = 0; r < (nvfp4 ? rows : 1); ++r) {
    gptq::GridOptions gridOptions;
    if (nvfp4) {
      gridOptions.globalScale =
          gptq::nvfp4GlobalScale(w.data() + r * cols, cols) *
          float(1 << (rng() % 4));
      globals.push_back(gridOptions.globalScale);
    }
    grids.push_back(gptq::makeGrid(enc, gridOptions, error));
    if (!grids.back())
      throw Error("grid '" + encText + "': " + error);
  }
  auto gridOf = [&](int64_t r) -> const gptq::Grid & {
    return *grids[size_t(nvfp4 ? r : 0)];
  };
  std::vector<float> u = randomHinvChol(cols, rng);

  // Group parameters: static ones fitted up front on the original weights,
  // columns assigned to groups through a random permutation.
  const int64_t groupSize = enc.isPerChannel() ? cols : enc.groupSize;
  const int64_t groups = (cols + groupSize - 1) / groupSize;
  std::vector<gptq::GroupParams> params(static_cast<size_t>(rows * groups));
  std::vector<int32_t> groupOf(static_cast<size_t>(cols));
  std::vector<float> scales, zeros;
  if (!dynamic) {
    std::vector<int64_t> perm(static_cast<size_t>(cols));
    std::iota(perm.begin(), perm.end(), 0);
    if (!enc.isPerChannel())
      std::shuffle(perm.begin(), perm.end(), rng);
    for (int64_t c = 0; c < cols; ++c)
      groupOf[size_t(perm[size_t(c)])] = int32_t(c / groupSize);
    scales.resize(size_t(rows * cols));
    zeros.resize(size_t(rows * cols));
    std::vector<float> members;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t g = 0; g < groups; ++g) {
        members.clear();
        for (int64_t c = 0; c < cols; ++c)
          if (groupOf[size_t(c)] == g)
            members.push_back(w[size_t(r * cols + c)]);
        if (!gridOf(r).fit(members.data(), int64_t(members.size()),
                       params[size_t(r * groups + g)], error))
          throw Error("fitting static group " + std::to_string(g) + ": " +
                      error);
      }
      for (int64_t c = 0; c < cols; ++c) {
        const gptq::GroupParams &p =
            params[size_t(r * groups + groupOf[size_t(c)])];
        scales[size_t(r * cols + c)] = p.scale;
        zeros[size_t(r * cols + c)] = p.zero;
      }
    }
  }

  // GPU: upload, poison the outputs, run this launch's plan.
  executor.allocate(plan.batch);
  executor.buffer(plan.batch, wName).upload(w.data(), w.size() * 4);
  executor.buffer(plan.batch, buf["u"]).upload(u.data(), u.size() * 4);
  if (nvfp4) {
    if (!buf.count("global_scale"))
      throw Error("the NVFP4 launch has no 'global_scale' parameter");
    executor.buffer(plan.batch, buf["global_scale"])
        .upload(globals.data(), globals.size() * 4);
  }
  if (!dynamic) {
    executor.buffer(plan.batch, buf["scales"])
        .upload(scales.data(), scales.size() * 4);
    if (hasZeros)
      executor.buffer(plan.batch, buf["zeros"])
          .upload(zeros.data(), zeros.size() * 4);
  }
  std::vector<std::string> outs = {"codes", "err"};
  if (dynamic) {
    outs.push_back("scales_out");
    if (hasZeros)
      outs.push_back("zeros_out");
  }
  for (const std::string &o : outs)
    executor.buffer(plan.batch, buf[o]).fill(0xA5, stream);
  executor.run(plan.batch, stream);
  QFUSE_CU(cuStreamSynchronize(stream));
  std::vector<int8_t> gpuCodes(static_cast<size_t>(rows * cols));
  std::vector<float> gpuErr(static_cast<size_t>(rows * cols));
  executor.buffer(plan.batch, buf["codes"])
      .download(gpuCodes.data(), gpuCodes.size());
  executor.buffer(plan.batch, buf["err"])
      .download(gpuErr.data(), gpuErr.size() * 4);
  std::vector<float> gpuScales, gpuZeros;
  if (dynamic) {
    gpuScales.resize(size_t(rows * groups));
    executor.buffer(plan.batch, buf["scales_out"])
        .download(gpuScales.data(), gpuScales.size() * 4);
    if (hasZeros) {
      gpuZeros.resize(size_t(rows * groups));
      executor.buffer(plan.batch, buf["zeros_out"])
          .download(gpuZeros.data(), gpuZeros.size() * 4);
    }
  }

  // Reference.
  std::vector<float> wRef = w;
  std::vector<float> err(static_cast<size_t>(rows * cols));
  std::vector<int32_t> codes(static_cast<size_t>(rows * cols));
  gptq::BlockTile tile;
  tile.rows = rows;
  tile.cols = cols;
  tile.w = wRef.data();
  tile.ldw = cols;
  tile.u = u.data();
  tile.ldu = cols;
  tile.codes = codes.data();
  tile.ldc = cols;
  tile.err = err.data();
  tile.lde = cols;
  gptq::BlockGroups bg;
  bg.params = params.data();
  bg.ld = groups;
  bg.groupOfColumn = dynamic ? nullptr : groupOf.data();
  bg.groupSize = groupSize;
  // Rows are independent: NVFP4 runs them one at a time with their grids.
  for (int64_t r0 = 0; r0 < rows; r0 += nvfp4 ? 1 : rows) {
    const int64_t n = nvfp4 ? 1 : rows;
    gptq::BlockTile part = tile;
    part.rows = n;
    part.w = tile.w + r0 * tile.ldw;
    part.codes = tile.codes + r0 * tile.ldc;
    part.err = tile.err + r0 * tile.lde;
    gptq::BlockGroups partGroups = bg;
    partGroups.params = bg.params + r0 * bg.ld;
    if (!gptq::quantizeBlock(gridOf(r0), part, partGroups, error))
      throw Error("reference block: " + error);
  }

  int64_t badCodes = 0, badErr = 0, badParams = 0, first = -1;
  for (int64_t i = 0; i < rows * cols; ++i) {
    bool codeOk = gpuCodes[size_t(i)] == int8_t(codes[size_t(i)]);
    bool errOk = bitsOf(gpuErr[size_t(i)]) == bitsOf(err[size_t(i)]);
    badCodes += !codeOk;
    badErr += !errOk;
    if ((!codeOk || !errOk) && first < 0)
      first = i;
  }
  if (dynamic)
    for (int64_t i = 0; i < rows * groups; ++i) {
      badParams += bitsOf(gpuScales[size_t(i)]) !=
                   bitsOf(params[size_t(i)].scale);
      if (hasZeros)
        badParams +=
            bitsOf(gpuZeros[size_t(i)]) != bitsOf(params[size_t(i)].zero);
    }
  const bool passed = badCodes == 0 && badErr == 0 && badParams == 0;
  std::printf("gptq-check %-4s %-48s R=%lld B=%lld %s: codes %lld/%lld "
              "differ, error %lld differ, group params %lld differ",
              passed ? "PASS" : "FAIL", encText.c_str(), (long long)rows,
              (long long)cols, dynamic ? "dynamic" : "static",
              (long long)badCodes, (long long)(rows * cols),
              (long long)badErr, (long long)badParams);
  if (first >= 0)
    std::printf(" (first at row %lld col %lld: code %d vs %d, e %.9g vs "
                "%.9g)",
                (long long)(first / cols), (long long)(first % cols),
                int(gpuCodes[size_t(first)]), int(int8_t(codes[size_t(first)])),
                double(gpuErr[size_t(first)]), double(err[size_t(first)]));
  std::printf("\n");
  return passed;
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
    Artifact artifact = Artifact::load(artifactPath);
    Executor executor(artifact, context);
    std::mt19937_64 rng(seed);
    for (const Plan &plan : artifact.plans) {
      for (size_t s = 0; s < plan.steps.size(); ++s) {
        const Step &step = plan.steps[s];
        if (step.kind != Step::Kind::Launch ||
            artifact.kernels[step.kernelIndex].name.rfind("qf_gptq_block_",
                                                          0) != 0)
          continue;
        // Every launch of the plan runs; each check reads only its own
        // outputs, which no other launch writes.
        ++checked;
        if (!checkLaunch(executor, plan, s, stream.get(), rng))
          ++failed;
      }
    }
  } catch (const Error &e) {
    std::cerr << "qfuse-gptq-check: error: " << e.what() << "\n";
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
