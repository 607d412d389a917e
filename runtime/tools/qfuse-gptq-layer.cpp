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
//   --reference  the C++ reference (runtime/src/gptq/reference) on the same
//                H (in double): identical codes >= 99.9% and loss within
//                1e-3 relative, for the fused and eager results (FAIL
//                otherwise)
//   --concurrent every group solved at once (a thread and a stream each,
//                device phases started together): the layer's wall time
//   --heldout    output error ||X' (W - Q)^T|| on fresh inputs X' from the
//                same distribution, GPTQ against round-to-nearest: GPTQ must
//                be lower (FAIL otherwise)
// Exit status 1 on any FAIL.
//
//===----------------------------------------------------------------------===//

#include "GptqLayerProblem.h"
#include "ToolCommon.h"

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Packing.h"
#include "qfuse/gptq/Gptq.h"
#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/DeviceArtifact.h"
#include "qfuse/runtime/gptq/GptqSolver.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <numeric>
#include <sstream>
#include <thread>

using namespace qfuse;
using namespace qfuse::runtime;
using namespace qfuse::tools;
using nlohmann::json;

namespace {

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

/// Everything the command line sets.
struct LayerOptions {
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
};

void addOptions(CLI::App &app, LayerOptions &o) {
  app.add_option("--artifact", o.artifactPath, "the GPTQ block-kernel artifact")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--encoding", o.encodingText,
                 "the grid, as the text of #qf.enc<...>")
      ->required();
  app.add_option("--group", o.groupTexts,
                 "NAME:N1,N2,...:K, modules sharing one Hessian (repeatable)");
  app.add_flag("--llama3-8b", o.llama,
               "the Llama-3-8B layer: qkv 4096,1024,1024 and o 4096 at K "
               "4096, gate/up 14336,14336 at 4096, down 4096 at 14336");
  app.add_flag("--eager", o.eager, "also run the eager per-column path");
  app.add_flag("--reference", o.reference, "check against the C++ reference");
  app.add_flag("--heldout", o.heldout, "GPTQ against RTN on held-out inputs");
  app.add_flag("--act-order", o.actOrder, "descending diag(H) column order");
  app.add_flag("--static-groups", o.staticGroups, "groups fitted up front");
  app.add_flag("--bf16x9", o.bf16x9,
               "FP32 emulated with BF16x9 tensor-core math in cuSOLVER and "
               "the lazy-update GEMMs");
  app.add_flag("--concurrent", o.concurrent,
               "also solve every group at once, one thread and stream "
               "each, and time the layer");
  app.add_option("--dead", o.dead,
                 "input channels that are always 0 (dead channels)")
      ->default_val(o.dead);
  app.add_option("--min-identical", o.minIdentical,
                 "--reference: the fraction of codes that must equal the "
                 "reference's")
      ->default_val(o.minIdentical);
  app.add_option("--max-loss-rel", o.maxLossRel,
                 "--reference: the largest relative loss difference")
      ->default_val(o.maxLossRel);
  app.add_option("--damp", o.damp, "dampening, fraction of mean(diag(H))")
      ->default_val(o.damp);
  app.add_option("--retries", o.retries, "factorization retries")
      ->default_val(o.retries);
  app.add_flag("--profile", o.profile,
               "time every step of the block loop (fused solves)");
  app.add_option("--warmups", o.warmups,
                 "untimed solves of each group before the timed one")
      ->default_val(o.warmups);
  app.add_option("--tokens", o.tokens, "calibration rows per Hessian")
      ->default_val(o.tokens);
  app.add_option("--seed", o.seed, "seed")->default_val(o.seed);
  app.add_option("--json", o.jsonPath, "write the results as JSON");
}

/// The groups to quantize: the Llama-3-8B layer's and every --group.
std::vector<GroupSpec> groupsToQuantize(const LayerOptions &o) {
  std::vector<GroupSpec> groups;
  if (o.llama) {
    groups.push_back({"qkv", {4096, 1024, 1024}, 4096});
    groups.push_back({"o", {4096}, 4096});
    groups.push_back({"gate_up", {14336, 14336}, 4096});
    groups.push_back({"down", {4096}, 14336});
  }
  for (const std::string &t : o.groupTexts)
    groups.push_back(parseGroup(t));
  if (groups.empty())
    throw Error("no --group and no --llama3-8b: nothing to quantize");
  return groups;
}

GptqSolveOptions solveOptions(const LayerOptions &o) {
  GptqSolveOptions options;
  options.actOrder = o.actOrder;
  options.staticGroups = o.staticGroups;
  options.bf16x9 = o.bf16x9;
  options.dampFraction = o.damp;
  options.profile = o.profile;
  options.maxRetries = o.retries;
  return options;
}

/// Prints the fused solve's summary (and profile) and returns its JSON.
json reportFused(const GroupSpec &g, const GptqSolveReport &fusedReport,
                 bool profile) {
  json entry = {{"group", g.name},
                {"rows", g.rows},
                {"k", g.k},
                {"fused",
                 {{"solve_ms", fusedReport.solveSeconds * 1e3},
                  {"factor_ms", fusedReport.factorSeconds * 1e3},
                  {"blocks_ms", fusedReport.blockSeconds * 1e3},
                  {"updates_ms", fusedReport.updateSeconds * 1e3},
                  {"prepare_ms", fusedReport.prepareSeconds * 1e3},
                  {"finish_ms", fusedReport.finishSeconds * 1e3},
                  {"total_ms", fusedReport.totalSeconds * 1e3},
                  {"attempts", fusedReport.attempts},
                  {"bf16x9", fusedReport.bf16x9},
                  {"fell_back", fusedReport.fellBackToRTN},
                  {"dead_channels", fusedReport.deadChannels.size()}}}};
  std::printf(
      "gptq-layer %-8s K=%-6lld rows=%-6lld fused: %s\n", g.name.c_str(),
      (long long)g.k,
      (long long)std::accumulate(g.rows.begin(), g.rows.end(), int64_t(0)),
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
  return entry;
}

/// Prints and records the eager path against the fused one: times and the
/// fraction of identical codes.
void compareEager(const std::vector<GptqModuleResult> &fused,
                  const std::vector<GptqModuleResult> &eagerResults,
                  const GptqSolveReport &fusedReport,
                  const GptqSolveReport &eagerReport, json &entry) {
  double same = 0, count = 0;
  for (size_t m = 0; m < fused.size(); ++m) {
    double f = identicalFraction(fused[m].weight, eagerResults[m].weight);
    same += f * double(fused[m].weight.codes.size());
    count += double(fused[m].weight.codes.size());
  }
  const double speedup = eagerReport.solveSeconds / fusedReport.solveSeconds;
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

/// A whole layer, group by group, and what every group shares.
struct LayerRun {
  const LayerOptions &opts;
  const format::Encoding &enc;
  const Artifact &artifact;
  cuda::Context &context;
  cuda::Stream &stream;
  cuda::Cublas &blas;
  GptqSolver &solver;
  GptqSolveOptions options;
  int failures = 0;
  double fusedTotal = 0, eagerTotal = 0;

  /// Solves group `gi` (fused, and with the options eager), checks it and
  /// returns its JSON entry.
  json solveGroup(const GroupSpec &g, size_t gi);
  /// The fused (and eager) codes and losses against the C++ reference.
  json checkReference(const GroupSpec &g, GroupProblem &problem,
                      const std::vector<GptqModuleResult> &fused,
                      const std::vector<GptqModuleResult> &eagerResults);
  /// GPTQ against round-to-nearest on fresh inputs.
  json checkHeldout(const GroupSpec &g, size_t gi, GroupProblem &problem,
                    const std::vector<GptqModuleResult> &fused);
  /// Every group solved at once; the layer's wall time in milliseconds.
  double solveConcurrently(const std::vector<GroupSpec> &groups);
};

json LayerRun::solveGroup(const GroupSpec &g, size_t gi) {
  GroupProblem problem(g, gi, opts.seed, opts.tokens, opts.dead, blas,
                       stream.get());
  auto run = [&](bool useEager, GptqSolveReport &report) {
    GptqSolveOptions o = options;
    o.eager = useEager;
    return solver.solve(problem.inputs, problem.freshHessian(), g.k, o,
                        stream.get(), report);
  };
  // Untimed warm-ups: module loads, cuSOLVER/cuBLAS initialization and
  // the first use of each GEMM shape's kernels.
  for (int i = 0; i < opts.warmups; ++i) {
    GptqSolveReport warm;
    run(false, warm);
    if (opts.eager && i == 0)
      run(true, warm);
  }
  GptqSolveReport fusedReport;
  std::vector<GptqModuleResult> fused = run(false, fusedReport);
  fusedTotal += fusedReport.solveSeconds;
  json entry = reportFused(g, fusedReport, opts.profile);

  std::vector<GptqModuleResult> eagerResults;
  if (opts.eager) {
    GptqSolveReport eagerReport;
    eagerResults = run(true, eagerReport);
    eagerTotal += eagerReport.solveSeconds;
    compareEager(fused, eagerResults, fusedReport, eagerReport, entry);
  }
  if (opts.reference)
    entry["reference"] = checkReference(g, problem, fused, eagerResults);
  if (opts.heldout)
    entry["heldout"] = checkHeldout(g, gi, problem, fused);
  return entry;
}

json LayerRun::checkReference(
    const GroupSpec &g, GroupProblem &problem,
    const std::vector<GptqModuleResult> &fused,
    const std::vector<GptqModuleResult> &eagerResults) {
  const std::vector<GptqModuleInput> &inputs = problem.inputs;
  std::vector<double> hd(size_t(g.k * g.k));
  {
    std::vector<float> hf(hd.size());
    QFUSE_CU(cuMemcpyDtoH(hf.data(), problem.h.ptr(), hf.size() * 4));
    for (size_t i = 0; i < hd.size(); ++i)
      hd[i] = hf[i];
  }
  gptq::GptqOptions ro;
  ro.actOrder = opts.actOrder;
  ro.staticGroups = opts.staticGroups;
  ro.prepare.dampFraction = opts.damp;
  ro.prepare.maxRetries = opts.retries;
  const double minIdentical = opts.minIdentical, maxLossRel = opts.maxLossRel;
  json refs = json::array();
  for (size_t m = 0; m < g.rows.size(); ++m) {
    gptq::GptqResult ref;
    std::string error;
    if (!gptq::quantizeGPTQ(problem.weights[m].data(), g.rows[m], g.k,
                            hd.data(), enc, ro, ref, error))
      throw Error("reference GPTQ of " + inputs[m].name + ": " + error);
    auto compare = [&](const char *path, const GptqModuleResult &r) {
      const double same = identicalFraction(r.weight, ref.weight);
      // Both fell back to round-to-nearest: the codes must be RTN's
      // exactly, and the losses are NaN.
      const bool bothFellBack = ref.report.fellBackToRTN && std::isnan(r.loss);
      const double lossRel =
          bothFellBack ? 0.0 : std::fabs(r.loss - ref.loss) / ref.loss;
      const bool ok = bothFellBack
                          ? same == 1.0
                          : same >= minIdentical && lossRel <= maxLossRel;
      failures += !ok;
      std::printf("  %s %-10s %-5s vs reference: identical codes %.5f "
                  "(>= %g), loss %.6g vs %.6g (rel %.2e <= %g)\n",
                  ok ? "PASS" : "FAIL", inputs[m].name.c_str(), path, same,
                  minIdentical, r.loss, ref.loss, lossRel, maxLossRel);
      refs.push_back({{"module", inputs[m].name},
                      {"path", path},
                      {"identical_codes", same},
                      {"loss", r.loss},
                      {"reference_loss", ref.loss},
                      {"loss_rel", lossRel},
                      {"pass", ok}});
    };
    compare("fused", fused[m]);
    if (opts.eager)
      compare("eager", eagerResults[m]);
  }
  return refs;
}

json LayerRun::checkHeldout(const GroupSpec &g, size_t gi,
                            GroupProblem &problem,
                            const std::vector<GptqModuleResult> &fused) {
  const int64_t heldoutTokens = opts.heldoutTokens;
  std::vector<float> xt =
      problem.model.sample(heldoutTokens, opts.seed + 200 + gi);
  const std::vector<std::vector<float>> &weights = problem.weights;
  const std::vector<GptqModuleInput> &inputs = problem.inputs;
  json held = json::array();
  for (size_t m = 0; m < g.rows.size(); ++m) {
    format::Unpacked rtn;
    std::string error;
    if (!format::quantizeRTN(enc, weights[m].data(), g.rows[m], g.k, rtn,
                             error))
      throw Error("RTN of " + inputs[m].name + ": " + error);
    const double eg = outputError(enc, fused[m].weight, weights[m], g.rows[m],
                                  g.k, xt, heldoutTokens);
    const double er =
        outputError(enc, rtn, weights[m], g.rows[m], g.k, xt, heldoutTokens);
    const bool ok = eg < er;
    failures += !ok;
    std::printf("  %s %-10s held-out relative output error: GPTQ %.4e, "
                "RTN %.4e (%.2fx lower)\n",
                ok ? "PASS" : "FAIL", inputs[m].name.c_str(), eg, er, er / eg);
    held.push_back(
        {{"module", inputs[m].name}, {"gptq", eg}, {"rtn", er}, {"pass", ok}});
  }
  return held;
}

// The layer's groups are independent once their Hessians exist: solve them
// at once, one thread and stream each, device phases started together
// (after every group's weights are on the device).
double LayerRun::solveConcurrently(const std::vector<GroupSpec> &groups) {
  const uint64_t seed = opts.seed;
  const int64_t tokens = opts.tokens, dead = opts.dead;
  double concurrentMs = 0;
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
    job.solver->solve(job.problem->inputs, job.problem->freshHessian(), g.k,
                      options, job.stream->get(), warm);
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
        std::chrono::duration<double, std::milli>(job.done - released).count());
  std::printf("gptq-layer: all groups at once (a thread and a stream "
              "each): %.1f ms from the common start to the last "
              "group's device work done\n",
              concurrentMs);
  return concurrentMs;
}

void writeJson(const LayerOptions &o, int argc, char **argv,
               const cuda::Context &context, const format::Encoding &enc,
               const LayerRun &layer, double concurrentMs,
               const json &results) {
  json doc = {{"tool", "qfuse-gptq-layer"},
              {"command", tools::commandLine(argc, argv)},
              {"date", tools::utcNow()},
              {"device", context.describe()},
              {"encoding", format::printEncoding(enc)},
              {"tokens", o.tokens},
              {"act_order", o.actOrder},
              {"static_groups", o.staticGroups},
              {"bf16x9", o.bf16x9},
              {"dead_channels", o.dead},
              {"damp", o.damp},
              {"retries", o.retries},
              {"min_identical", o.minIdentical},
              {"max_loss_rel", o.maxLossRel},
              {"warmups", o.warmups},
              {"fused_solve_ms", layer.fusedTotal * 1e3},
              {"groups", results}};
  if (o.eager)
    doc["eager_solve_ms"] = layer.eagerTotal * 1e3;
  if (o.concurrent)
    doc["concurrent_layer_ms"] = concurrentMs;
  writeFileAtomically(o.jsonPath, doc.dump(2) + "\n");
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"qfuse-gptq-layer: GPTQ of whole layers on the GPU (fused "
               "block kernels), against the eager path and the C++ "
               "reference"};
  LayerOptions opts;
  addOptions(app, opts);
  CLI11_PARSE(app, argc, argv);

  int failures = 0;
  try {
    const std::vector<GroupSpec> groups = groupsToQuantize(opts);
    format::Encoding enc;
    std::string error;
    if (!format::parseEncoding(opts.encodingText, enc, error))
      throw Error("--encoding '" + opts.encodingText + "': " + error);

    cuda::Context context(0);
    cuda::Stream stream;
    cuda::Cublas blas;
    Artifact artifact = loadArtifactForDevice(opts.artifactPath, context);
    GptqSolver solver(artifact, context, enc);
    LayerRun layer{opts,   enc,  artifact, context,
                   stream, blas, solver,   solveOptions(opts)};

    json results = json::array();
    for (size_t gi = 0; gi < groups.size(); ++gi)
      results.push_back(layer.solveGroup(groups[gi], gi));
    failures = layer.failures;
    const double concurrentMs =
        opts.concurrent ? layer.solveConcurrently(groups) : 0;
    std::printf("gptq-layer: fused solve %.1f ms in all",
                layer.fusedTotal * 1e3);
    if (opts.eager)
      std::printf(", eager %.1f ms: %.1fx", layer.eagerTotal * 1e3,
                  layer.eagerTotal / layer.fusedTotal);
    std::printf("\n");
    if (!opts.jsonPath.empty())
      writeJson(opts, argc, argv, context, enc, layer, concurrentMs, results);
  } catch (const std::exception &e) {
    std::cerr << "qfuse-gptq-layer: error: " << errorText(e) << "\n";
    return 1;
  }
  if (failures)
    std::printf("gptq-layer: %d check(s) FAILED\n", failures);
  return failures ? 1 : 0;
}
