//===- qfuse-gptq-layer.cpp - GPTQ of whole layers on the GPU, checked ----===//
//
// Runs the GPU GPTQ solver (GptqSolver) on groups of modules that share a
// Hessian, with Hessians "given": inputs X [T, K] drawn with correlated
// channels (X = Z D + Y B: per-channel scales D with a few outlier channels,
// plus a rank-16 shared component Y B), H = 2/T X^T X by cublasSgemm.
//
//   qfuse-gptq-layer --artifact gptq.qfa --encoding "int4, group = 128, ..."
//       (--group qkv:4096,1024,1024:4096 ... | --llama3-8b)
//       [--eager] [--reference] [--heldout] [--act-order] [--static-groups]
//       [--tokens 2048] [--json out.json]
//
// Per group it prints the fused solve's time and, with:
//   --eager      the eager per-column path on the same H and weights, its
//                time, the speedup, and the fraction of identical codes
//   --reference  the C++ reference (runtime/src/gptq/reference) on the same H (in double):
//                identical codes >= 99.9% and loss within 1e-3 relative,
//                for the fused and eager results (FAIL otherwise)
//   --concurrent every group solved at once (a thread and a stream each,
//                device phases started together): the layer's wall time
//   --heldout    output error ||X' (W - Q)^T|| on fresh inputs X' from the
//                same distribution, GPTQ against round-to-nearest: GPTQ must
//                be lower (FAIL otherwise)
// Exit status 1 on any FAIL.
//
//===----------------------------------------------------------------------===//

#include "ToolCommon.h"

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Packing.h"
#include "qfuse/gptq/Gptq.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/gptq/GptqSolver.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

using namespace qfuse;
using namespace qfuse::runtime;
using nlohmann::json;

namespace {

struct GroupSpec {
  std::string name;
  std::vector<int64_t> rows;
  int64_t k = 0;
};

GroupSpec parseGroup(const std::string &text) {
  // name:n1,n2,...:K
  size_t a = text.find(':'), b = text.rfind(':');
  if (a == std::string::npos || a == b)
    throw Error("--group '" + text + "': expected NAME:N1,N2,...:K");
  GroupSpec g;
  g.name = text.substr(0, a);
  std::stringstream rows(text.substr(a + 1, b - a - 1));
  std::string item;
  try {
    while (std::getline(rows, item, ','))
      g.rows.push_back(std::stoll(item));
    g.k = std::stoll(text.substr(b + 1));
  } catch (const std::exception &) {
    throw Error("--group '" + text + "': rows and K must be integers");
  }
  if (g.rows.empty() || g.k <= 0)
    throw Error("--group '" + text + "': no rows or no K");
  for (int64_t n : g.rows)
    if (n <= 0)
      throw Error("--group '" + text + "': a row count is not positive");
  return g;
}

/// The correlated-input distribution of one K: fixed channel scales and
/// mixing, fresh samples per call.
struct InputModel {
  int64_t k = 0;
  static constexpr int64_t kRank = 16;
  std::vector<float> scale; // [K]
  std::vector<float> mix;   // [kRank, K]

  InputModel(int64_t k, uint64_t seed) : k(k) {
    std::mt19937_64 rng(seed);
    std::lognormal_distribution<float> spread(0.0f, 0.5f);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    scale.resize(size_t(k));
    for (float &s : scale)
      s = spread(rng) * (uniform(rng) < 0.01f ? 8.0f : 1.0f); // outliers
    mix.resize(size_t(kRank * k));
    for (float &m : mix)
      m = normal(rng);
  }

  /// X [t, K] row-major: z * scale + y * mix, on all cores.
  std::vector<float> sample(int64_t t, uint64_t seed) const {
    std::vector<float> x(size_t(t * k));
    const unsigned threads =
        std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (unsigned p = 0; p < threads; ++p)
      pool.emplace_back([&, p] {
        std::mt19937_64 rng(seed * 7919 + p);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        float y[kRank];
        for (int64_t r = p; r < t; r += threads) {
          for (float &v : y)
            v = normal(rng);
          float *row = x.data() + r * k;
          for (int64_t c = 0; c < k; ++c) {
            float acc = normal(rng) * scale[size_t(c)];
            for (int64_t i = 0; i < kRank; ++i)
              acc += y[i] * mix[size_t(i * k + c)];
            row[c] = acc;
          }
        }
      });
    for (std::thread &th : pool)
      th.join();
    return x;
  }
};

/// H = 2/t X^T X on the device (f32, cublasSgemm).
cuda::DeviceBuffer hessianOf(const std::vector<float> &x, int64_t t, int64_t k,
                             cuda::Cublas &blas, CUstream stream) {
  cuda::DeviceBuffer dx(x.size() * 4, "calibration inputs");
  dx.upload(x.data(), x.size() * 4);
  cuda::DeviceBuffer h(size_t(k * k) * 4, "Hessian");
  const float alpha = 2.0f / float(t), beta = 0.0f;
  blas.setStream(stream);
  // Column-major: X is [K, t]; H = alpha X X^T.
  QFUSE_CUBLAS(cublasSgemm(blas.get(), CUBLAS_OP_N, CUBLAS_OP_T, int(k), int(k),
                           int(t), &alpha,
                           reinterpret_cast<const float *>(dx.ptr()), int(k),
                           reinterpret_cast<const float *>(dx.ptr()), int(k),
                           &beta, reinterpret_cast<float *>(h.ptr()), int(k)));
  QFUSE_CU(cuStreamSynchronize(stream));
  return h;
}

std::vector<float> randomWeight(int64_t n, int64_t k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> w(size_t(n * k));
  for (float &v : w)
    v = normal(rng);
  return w;
}

/// One group's inputs: its input distribution, Hessian (and a working copy,
/// since the solver overwrites it) and random weights, made from the seed
/// and the group's index so that every pass sees the same problem.
struct GroupProblem {
  InputModel model;
  cuda::DeviceBuffer h, work;
  std::vector<std::vector<float>> weights;
  std::vector<GptqModuleInput> inputs;

  GroupProblem(const GroupSpec &g, size_t gi, uint64_t seed, int64_t tokens,
               int64_t dead, cuda::Cublas &blas, CUstream stream)
      : model(g.k, seed + gi) {
    std::vector<float> x = model.sample(tokens, seed + 100 + gi);
    // Dead channels: inputs that are always 0 (H[i][i] = 0).
    for (int64_t d = 0; d < dead; ++d)
      for (int64_t r = 0; r < tokens; ++r)
        x[size_t(r * g.k + (d * 97 + 5) % g.k)] = 0.0f;
    h = hessianOf(x, tokens, g.k, blas, stream);
    work = cuda::DeviceBuffer(h.size(), "Hessian (working copy)");
    for (size_t m = 0; m < g.rows.size(); ++m)
      weights.push_back(randomWeight(g.rows[m], g.k, seed + 1000 * gi + m));
    for (size_t m = 0; m < g.rows.size(); ++m)
      inputs.push_back(
          {g.name + "." + std::to_string(m), weights[m].data(), g.rows[m]});
  }

  /// The solver's Hessian argument, restored from h before each solve.
  CUdeviceptr freshHessian() {
    QFUSE_CU(cuMemcpyDtoD(work.ptr(), h.ptr(), h.size()));
    return work.ptr();
  }
};

double identicalFraction(const format::Unpacked &a, const format::Unpacked &b) {
  if (a.codes.size() != b.codes.size() || a.codes.empty())
    return 0;
  size_t same = 0;
  for (size_t i = 0; i < a.codes.size(); ++i)
    same += a.codes[i] == b.codes[i];
  return double(same) / double(a.codes.size());
}

/// ||X (W - Q)^T||_F^2 / ||X W^T||_F^2 over the held-out rows.
double outputError(const format::Encoding &enc, const format::Unpacked &q,
                   const std::vector<float> &w, int64_t n, int64_t k,
                   const std::vector<float> &x, int64_t t) {
  std::vector<float> deq;
  std::string error;
  if (!format::dequantize(enc, q, n, k, deq, error))
    throw Error("dequantizing: " + error);
  double num = 0, den = 0;
  std::vector<double> diff(static_cast<size_t>(k));
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < k; ++c)
      diff[size_t(c)] = double(w[size_t(r * k + c)]) - deq[size_t(r * k + c)];
    for (int64_t i = 0; i < t; ++i) {
      const float *xi = x.data() + i * k;
      double e = 0, y = 0;
      for (int64_t c = 0; c < k; ++c) {
        e += diff[size_t(c)] * xi[c];
        y += double(w[size_t(r * k + c)]) * xi[c];
      }
      num += e * e;
      den += y * y;
    }
  }
  return num / den;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"qfuse-gptq-layer: GPTQ of whole layers on the GPU (fused "
               "block kernels), against the eager path and the C++ "
               "reference"};
  std::string artifactPath, encodingText, jsonPath;
  std::vector<std::string> groupTexts;
  bool llama = false, eager = false, reference = false, heldout = false;
  bool actOrder = false, staticGroups = false, bf16x9 = false,
       concurrent = false, profile = false;
  int64_t tokens = 2048, heldoutTokens = 256, dead = 0;
  double damp = 0.01, minIdentical = 0.999, maxLossRel = 1e-3;
  int retries = 2;
  int warmups = 1;
  uint64_t seed = 20261129;
  app.add_option("--artifact", artifactPath, "the GPTQ block-kernel artifact")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--encoding", encodingText,
                 "the grid, as the text of #qf.enc<...>")
      ->required();
  app.add_option("--group", groupTexts,
                 "NAME:N1,N2,...:K, modules sharing one Hessian (repeatable)");
  app.add_flag("--llama3-8b", llama,
               "the Llama-3-8B layer: qkv 4096,1024,1024 and o 4096 at K "
               "4096, gate/up 14336,14336 at 4096, down 4096 at 14336");
  app.add_flag("--eager", eager, "also run the eager per-column path");
  app.add_flag("--reference", reference, "check against the C++ reference");
  app.add_flag("--heldout", heldout, "GPTQ against RTN on held-out inputs");
  app.add_flag("--act-order", actOrder, "descending diag(H) column order");
  app.add_flag("--static-groups", staticGroups, "groups fitted up front");
  app.add_flag("--bf16x9", bf16x9,
               "FP32 emulated with BF16x9 tensor-core math in cuSOLVER and "
               "the lazy-update GEMMs");
  app.add_flag("--concurrent", concurrent,
               "also solve every group at once, one thread and stream "
               "each, and time the layer");
  app.add_option("--dead", dead,
                 "input channels that are always 0 (dead channels)")
      ->default_val(dead);
  app.add_option("--min-identical", minIdentical,
                 "--reference: the fraction of codes that must equal the "
                 "reference's")
      ->default_val(minIdentical);
  app.add_option("--max-loss-rel", maxLossRel,
                 "--reference: the largest relative loss difference")
      ->default_val(maxLossRel);
  app.add_option("--damp", damp, "dampening, fraction of mean(diag(H))")
      ->default_val(damp);
  app.add_option("--retries", retries, "factorization retries")
      ->default_val(retries);
  app.add_flag("--profile", profile,
               "time every step of the block loop (fused solves)");
  app.add_option("--warmups", warmups,
                 "untimed solves of each group before the timed one")
      ->default_val(warmups);
  app.add_option("--tokens", tokens, "calibration rows per Hessian")
      ->default_val(tokens);
  app.add_option("--seed", seed, "seed")->default_val(seed);
  app.add_option("--json", jsonPath, "write the results as JSON");
  CLI11_PARSE(app, argc, argv);

  int failures = 0;
  json results = json::array();
  try {
    std::vector<GroupSpec> groups;
    if (llama) {
      groups.push_back({"qkv", {4096, 1024, 1024}, 4096});
      groups.push_back({"o", {4096}, 4096});
      groups.push_back({"gate_up", {14336, 14336}, 4096});
      groups.push_back({"down", {4096}, 14336});
    }
    for (const std::string &t : groupTexts)
      groups.push_back(parseGroup(t));
    if (groups.empty())
      throw Error("no --group and no --llama3-8b: nothing to quantize");
    format::Encoding enc;
    std::string error;
    if (!format::parseEncoding(encodingText, enc, error))
      throw Error("--encoding '" + encodingText + "': " + error);

    cuda::Context context(0);
    cuda::Stream stream;
    cuda::Cublas blas;
    Artifact artifact = Artifact::load(artifactPath);
    GptqSolver solver(artifact, context, enc);
    GptqSolveOptions options;
    options.actOrder = actOrder;
    options.staticGroups = staticGroups;
    options.bf16x9 = bf16x9;
    options.dampFraction = damp;
    options.profile = profile;
    options.maxRetries = retries;

    double fusedTotal = 0, eagerTotal = 0;
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      const GroupSpec &g = groups[gi];
      GroupProblem problem(g, gi, seed, tokens, dead, blas, stream.get());
      InputModel &model = problem.model;
      std::vector<std::vector<float>> &weights = problem.weights;
      std::vector<GptqModuleInput> &inputs = problem.inputs;
      cuda::DeviceBuffer &h = problem.h;

      auto run = [&](bool useEager, GptqSolveReport &report) {
        GptqSolveOptions o = options;
        o.eager = useEager;
        return solver.solve(inputs, problem.freshHessian(), g.k, o,
                            stream.get(), report);
      };
      // Untimed warm-ups: module loads, cuSOLVER/cuBLAS initialization and
      // the first use of each GEMM shape's kernels.
      for (int i = 0; i < warmups; ++i) {
        GptqSolveReport warm;
        run(false, warm);
        if (eager && i == 0)
          run(true, warm);
      }
      GptqSolveReport fusedReport;
      std::vector<GptqModuleResult> fused = run(false, fusedReport);
      fusedTotal += fusedReport.solveSeconds;
      json entry = {{"group", g.name},
                    {"rows", g.rows},
                    {"k", g.k},
                    {"fused", {{"solve_ms", fusedReport.solveSeconds * 1e3},
                               {"factor_ms", fusedReport.factorSeconds * 1e3},
                               {"blocks_ms", fusedReport.blockSeconds * 1e3},
                               {"updates_ms", fusedReport.updateSeconds * 1e3},
                               {"prepare_ms", fusedReport.prepareSeconds * 1e3},
                               {"finish_ms", fusedReport.finishSeconds * 1e3},
                               {"total_ms", fusedReport.totalSeconds * 1e3},
                               {"attempts", fusedReport.attempts},
                               {"bf16x9", fusedReport.bf16x9},
                               {"fell_back", fusedReport.fellBackToRTN},
                               {"dead_channels",
                                fusedReport.deadChannels.size()}}}};
      std::printf("gptq-layer %-8s K=%-6lld rows=%-6lld fused: %s\n",
                  g.name.c_str(), (long long)g.k,
                  (long long)std::accumulate(g.rows.begin(), g.rows.end(),
                                             int64_t(0)),
                  fusedReport.summary().c_str());
      for (const std::string &warning : fusedReport.warnings)
        std::printf("  warning: %s\n", warning.c_str());
      if (profile) {
        std::printf("  profile:");
        for (const auto &[step, ms] : fusedReport.profileMs)
          std::printf(" %s %.2f ms;", step.c_str(), ms);
        std::printf("\n");
        entry["fused"]["profile_ms"] = fusedReport.profileMs;
      }

      std::vector<GptqModuleResult> eagerResults;
      if (eager) {
        GptqSolveReport eagerReport;
        eagerResults = run(true, eagerReport);
        eagerTotal += eagerReport.solveSeconds;
        double same = 0, count = 0;
        for (size_t m = 0; m < fused.size(); ++m) {
          double f = identicalFraction(fused[m].weight, eagerResults[m].weight);
          same += f * double(fused[m].weight.codes.size());
          count += double(fused[m].weight.codes.size());
        }
        const double speedup =
            eagerReport.solveSeconds / fusedReport.solveSeconds;
        entry["eager"] = {{"solve_ms", eagerReport.solveSeconds * 1e3},
                          {"blocks_ms", eagerReport.blockSeconds * 1e3},
                          {"updates_ms", eagerReport.updateSeconds * 1e3},
                          {"identical_codes_vs_fused", same / count}};
        entry["speedup_vs_eager"] = speedup;
        entry["block_speedup_vs_eager"] =
            eagerReport.blockSeconds / fusedReport.blockSeconds;
        std::printf("  eager: %s\n  fused vs eager: %.1fx solve, %.1fx "
                    "column loop; identical codes %.5f\n",
                    eagerReport.summary().c_str(), speedup,
                    eagerReport.blockSeconds / fusedReport.blockSeconds,
                    same / count);
      }

      if (reference) {
        std::vector<double> hd(size_t(g.k * g.k));
        {
          std::vector<float> hf(hd.size());
          QFUSE_CU(cuMemcpyDtoH(hf.data(), h.ptr(), hf.size() * 4));
          for (size_t i = 0; i < hd.size(); ++i)
            hd[i] = hf[i];
        }
        gptq::GptqOptions ro;
        ro.actOrder = actOrder;
        ro.staticGroups = staticGroups;
        ro.prepare.dampFraction = damp;
        ro.prepare.maxRetries = retries;
        json refs = json::array();
        for (size_t m = 0; m < g.rows.size(); ++m) {
          gptq::GptqResult ref;
          if (!gptq::quantizeGPTQ(weights[m].data(), g.rows[m], g.k, hd.data(),
                                  enc, ro, ref, error))
            throw Error("reference GPTQ of " + inputs[m].name + ": " + error);
          auto compare = [&](const char *path, const GptqModuleResult &r) {
            const double same = identicalFraction(r.weight, ref.weight);
            // Both fell back to round-to-nearest: the codes must be RTN's
            // exactly, and the losses are NaN.
            const bool bothFellBack =
                ref.report.fellBackToRTN && std::isnan(r.loss);
            const double lossRel =
                bothFellBack ? 0.0 : std::fabs(r.loss - ref.loss) / ref.loss;
            const bool ok = bothFellBack
                                ? same == 1.0
                                : same >= minIdentical && lossRel <= maxLossRel;
            failures += !ok;
            std::printf("  %s %-10s %-5s vs reference: identical codes %.5f "
                        "(>= %g), loss %.6g vs %.6g (rel %.2e <= %g)\n",
                        ok ? "PASS" : "FAIL", inputs[m].name.c_str(), path,
                        same, minIdentical, r.loss, ref.loss, lossRel,
                        maxLossRel);
            refs.push_back({{"module", inputs[m].name},
                            {"path", path},
                            {"identical_codes", same},
                            {"loss", r.loss},
                            {"reference_loss", ref.loss},
                            {"loss_rel", lossRel},
                            {"pass", ok}});
          };
          compare("fused", fused[m]);
          if (eager)
            compare("eager", eagerResults[m]);
        }
        entry["reference"] = refs;
      }

      if (heldout) {
        std::vector<float> xt = model.sample(heldoutTokens, seed + 200 + gi);
        json held = json::array();
        for (size_t m = 0; m < g.rows.size(); ++m) {
          format::Unpacked rtn;
          if (!format::quantizeRTN(enc, weights[m].data(), g.rows[m], g.k, rtn,
                                   error))
            throw Error("RTN of " + inputs[m].name + ": " + error);
          const double eg = outputError(enc, fused[m].weight, weights[m],
                                        g.rows[m], g.k, xt, heldoutTokens);
          const double er = outputError(enc, rtn, weights[m], g.rows[m], g.k,
                                        xt, heldoutTokens);
          const bool ok = eg < er;
          failures += !ok;
          std::printf("  %s %-10s held-out relative output error: GPTQ %.4e, "
                      "RTN %.4e (%.2fx lower)\n",
                      ok ? "PASS" : "FAIL", inputs[m].name.c_str(), eg, er,
                      er / eg);
          held.push_back({{"module", inputs[m].name},
                          {"gptq", eg},
                          {"rtn", er},
                          {"pass", ok}});
        }
        entry["heldout"] = held;
      }
      results.push_back(entry);
    }
    // The layer's groups are independent once their Hessians exist: solve
    // them at once, one thread and stream each, device phases started
    // together (after every group's weights are on the device).
    double concurrentMs = 0;
    if (concurrent) {
      struct Job {
        std::unique_ptr<GroupProblem> problem;
        std::unique_ptr<GptqSolver> solver;
        std::unique_ptr<cuda::Stream> stream;
        GptqSolveReport report;
        std::chrono::steady_clock::time_point done;
        std::string error;
      };
      std::vector<Job> jobs(groups.size());
      for (size_t gi = 0; gi < groups.size(); ++gi) {
        const GroupSpec &g = groups[gi];
        Job &job = jobs[gi];
        job.problem = std::make_unique<GroupProblem>(g, gi, seed, tokens, dead,
                                                     blas, stream.get());
        job.solver = std::make_unique<GptqSolver>(artifact, context, enc);
        job.stream = std::make_unique<cuda::Stream>();
        // Warm this solver's handles and kernels.
        GptqSolveReport warm;
        job.solver->solve(job.problem->inputs, job.problem->freshHessian(),
                          g.k, options, job.stream->get(), warm);
      }
      std::mutex mutex;
      std::condition_variable allPrepared;
      size_t prepared = 0;
      std::chrono::steady_clock::time_point released;
      std::vector<std::thread> threads;
      for (size_t gi = 0; gi < jobs.size(); ++gi)
        threads.emplace_back([&, gi] {
          Job &job = jobs[gi];
          try {
            context.makeCurrent();
            const CUdeviceptr hessian = job.problem->freshHessian();
            GptqSolveOptions o = options;
            o.onPrepared = [&] {
              std::unique_lock<std::mutex> lock(mutex);
              if (++prepared == jobs.size()) {
                released = std::chrono::steady_clock::now();
                allPrepared.notify_all();
              } else {
                allPrepared.wait(lock, [&] { return prepared == jobs.size(); });
              }
            };
            o.onDeviceDone = [&] { job.done = std::chrono::steady_clock::now(); };
            job.solver->solve(job.problem->inputs, hessian, groups[gi].k, o,
                              job.stream->get(), job.report);
          } catch (const std::exception &e) {
            job.error = e.what();
            std::unique_lock<std::mutex> lock(mutex);
            prepared = jobs.size(); // release the others
            allPrepared.notify_all();
          }
        });
      for (std::thread &t : threads)
        t.join();
      for (Job &job : jobs)
        if (!job.error.empty())
          throw Error("concurrent solve: " + job.error);
      for (Job &job : jobs)
        concurrentMs = std::max(
            concurrentMs,
            std::chrono::duration<double, std::milli>(job.done - released)
                .count());
      std::printf("gptq-layer: all groups at once (a thread and a stream "
                  "each): %.1f ms from the common start to the last "
                  "group's device work done\n",
                  concurrentMs);
    }
    std::printf("gptq-layer: fused solve %.1f ms in all", fusedTotal * 1e3);
    if (eager)
      std::printf(", eager %.1f ms: %.1fx", eagerTotal * 1e3,
                  eagerTotal / fusedTotal);
    std::printf("\n");
    if (!jsonPath.empty()) {
      json doc = {{"tool", "qfuse-gptq-layer"},
                  {"command", tools::commandLine(argc, argv)},
                  {"date", tools::utcNow()},
                  {"device", context.describe()},
                  {"encoding", format::printEncoding(enc)},
                  {"tokens", tokens},
                  {"act_order", actOrder},
                  {"static_groups", staticGroups},
                  {"bf16x9", bf16x9},
                  {"dead_channels", dead},
                  {"damp", damp},
                  {"retries", retries},
                  {"min_identical", minIdentical},
                  {"max_loss_rel", maxLossRel},
                  {"warmups", warmups},
                  {"fused_solve_ms", fusedTotal * 1e3},
                  {"groups", results}};
      if (eager)
        doc["eager_solve_ms"] = eagerTotal * 1e3;
      if (concurrent)
        doc["concurrent_layer_ms"] = concurrentMs;
      std::ofstream(jsonPath) << doc.dump(2) << "\n";
    }
  } catch (const Error &e) {
    std::cerr << "qfuse-gptq-layer: error: " << e.what() << "\n";
    return 1;
  }
  if (failures)
    std::printf("gptq-layer: %d check(s) FAILED\n", failures);
  return failures ? 1 : 0;
}
