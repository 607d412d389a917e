//===- qfuse-bench.cpp - Device copy, cuBLAS and compiled-plan timings ----===//
//
// Measures, in one process on one GPU, what qfuse's numbers are compared
// against and the compiled plans themselves:
//
//   qfuse-bench --json out.json                      # copy + default GEMVs
//   qfuse-bench --gemm 1x4096x4096 --gemm 16x14336x4096
//   qfuse-bench --model llama3-8b --batch 1,16,128   # whole decode step
//   qfuse-bench --artifact m.qfa --weights m.safetensors --batch 1
//   qfuse-bench --artifact m.qfa --check             # random RTN weights
//   qfuse-bench --artifact m.qfa --check-only        # checks, no timing
//
// --check-only runs each plan's launches once (the checks) and nothing else:
// no copy, cuBLAS or plan timing. The GPU sanitizer round
// (bench/sanitize/run-sanitize.py) runs it under compute-sanitizer. Matmul
// launches the check cannot compare are printed with the reason (JSON:
// "checks_skipped"); a plan with no launch checked is an error.
//
// Prints a table and writes JSON with the exact command, GPU, date and git
// commit (--git-commit or $QFUSE_GIT_COMMIT) beside every result.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/device/DeviceArtifact.h"
#include "qfuse/runtime/tooling/Bench.h"
#include "qfuse/runtime/tooling/Check.h"
#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/Error.h"

#include "ToolCommon.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <map>
#include <optional>

using namespace qfuse::runtime;
using nlohmann::json;

namespace {

json statsJson(const bench::Stats &stats) {
  return {{"median_ms", stats.medianMs},
          {"min_ms", stats.minMs},
          {"max_ms", stats.maxMs},
          {"samples_ms", stats.samplesMs}};
}

void printRow(const std::string &what, const std::string &m,
              const std::string &count, int copies, const bench::Stats &stats,
              double gbPerSecond, double copyGbPerSecond, double tflops) {
  char tflopsText[32] = "-";
  if (tflops > 0)
    std::snprintf(tflopsText, sizeof(tflopsText), "%.2f", tflops);
  std::printf("%-34s %6s %7s %6d %10.4f %10.4f %9.1f %7.1f%% %8s\n",
              what.c_str(), m.c_str(), count.c_str(), copies, stats.medianMs,
              stats.minMs, gbPerSecond,
              copyGbPerSecond > 0 ? 100.0 * gbPerSecond / copyGbPerSecond : 0.0,
              tflopsText);
}

/// Everything the command line sets.
struct BenchOptions {
  int device = 0;
  bench::Config config;
  uint64_t copyBytes = 1ull << 30;
  std::vector<std::string> gemms;
  std::string model;
  std::vector<int64_t> batches;
  std::vector<std::string> artifactPaths;
  std::string weightsPath, jsonPath;
  std::string gitCommit;
  bool checkOutputs = false, checkOnly = false, placeholderWeights = false;
  bool distinctPerms = false;
  uint64_t seed = 20261129;
};

void addOptions(CLI::App &app, BenchOptions &o) {
  app.add_option("--device", o.device, "CUDA device ordinal")->default_val(0);
  app.add_option("--iterations", o.config.iterations,
                 "timed iterations per result (median, >= 10)")
      ->default_val(20)
      ->check(CLI::Range(bench::kMinIterations, 100000));
  app.add_option("--warmup", o.config.warmup, "untimed iterations first")
      ->default_val(3)
      ->check(CLI::NonNegativeNumber);
  app.add_option("--copy-bytes", o.copyBytes,
                 "bytes of the device-to-device copy")
      ->default_val(1ull << 30);
  app.add_option("--gemm", o.gemms,
                 "cuBLAS fp16 GEMM MxNxK: y[M,N] = x[M,K] * W[N,K]^T "
                 "(repeatable; default 1x151936x1536 and 1x256x1536)");
  app.add_option("--model", o.model,
                 "time cuBLAS over a whole decode step's linear layers")
      ->check(CLI::IsMember(bench::knownModels()));
  app.add_option("--batch", o.batches,
                 "batch sizes (M) for --model, and the plans of --artifact "
                 "(default: 1 for --model, every compiled plan for "
                 "--artifact)")
      ->delimiter(',');
  app.add_option("--artifact", o.artifactPaths,
                 "qfuse artifacts to time (repeatable)")
      ->check(CLI::ExistingFile);
  app.add_option("--weights", o.weightsPath,
                 "qfuse-packed safetensors for --artifact (default: "
                 "placeholder weights)")
      ->check(CLI::ExistingFile);
  app.add_option("--json", o.jsonPath, "write the results as JSON here");
  app.add_flag("--check", o.checkOutputs,
               "before timing, run each plan once on random activations and "
               "compare every launch it can with the C++ reference, listing "
               "the matmuls it skips (exit 1 on a mismatch, or when no "
               "launch of a plan was checked)");
  app.add_flag("--check-only", o.checkOnly,
               "--check, and no timing: each plan's launches run once "
               "(for compute-sanitizer; no copy, cuBLAS or plan timings)");
  app.add_flag("--placeholder-weights", o.placeholderWeights,
               "bind constant placeholder weights instead of random "
               "round-to-nearest ones (faster set-up; no --check)");
  app.add_flag("--graph-per-copy", o.config.graphPerCopy,
               "time each weight copy's launches as a graph of their own, "
               "one graph launch after another (the timing before session "
               "35; default: every copy in one graph, as cuBLAS is timed)");
  app.add_flag("--distinct-perms", o.distinctPerms,
               "random act_order weights each get a column order of their "
               "own (default: one per K, as GPTQ desc_act gives the weights "
               "that read one input), so act_order groups run the fallback "
               "their artifact carries for perms that differ");
  app.add_option("--seed", o.seed, "seed of the random weights and inputs")
      ->default_val(o.seed);
  app.add_option("--git-commit", o.gitCommit,
                 "the commit measured (default: $QFUSE_GIT_COMMIT)");
}

/// cuBLAS fp16 over every --gemm shape and --model's decode step; the
/// handle is made on first use and kept by the caller.
json timeCublas(const BenchOptions &o, const cuda::Context &context,
                const cuda::Stream &stream, const bench::CopyResult &copy,
                std::optional<cuda::Cublas> &cublas) {
  json cublasResults = json::array();
  auto runGemm = [&](const std::string &label, int64_t m,
                     const std::vector<bench::Matmul> &matmuls) {
    if (!cublas)
      cublas.emplace();
    bench::GemmResult r = bench::cublasGemm(context, *cublas, stream.get(),
                                            label, m, matmuls, o.config);
    cublasResults.push_back(
        {{"label", r.label},
         {"m", r.m},
         {"matmuls", r.matmuls},
         {"copies", r.copies},
         {"l2_flushed", r.l2Flushed},
         {"bytes_per_pass", r.bytesPerPass},
         {"flops_per_pass", r.flopsPerPass},
         {"gb_per_s", r.gbPerSecond},
         {"fraction_of_copy", r.gbPerSecond / copy.gbPerSecond},
         {"tflops", r.tflops},
         {"stats", statsJson(r.stats)}});
    printRow("cublas " + r.label, std::to_string(r.m),
             std::to_string(r.matmuls), r.copies, r.stats, r.gbPerSecond,
             copy.gbPerSecond, r.tflops);
  };
  for (const std::string &text : o.gemms) {
    bench::GemmShape shape = bench::parseGemmShape(text);
    runGemm(text, shape.m, {shape.matmul});
  }
  if (!o.model.empty()) {
    std::vector<bench::Matmul> step = bench::decodeStepMatmuls(o.model);
    for (int64_t m : o.batches.empty() ? std::vector<int64_t>{1} : o.batches)
      runGemm(o.model + " decode step", m, step);
  }
  return cublasResults;
}

/// Prints one launch's check and records it in `checks`.
void recordCheck(const check::LaunchCheck &c, json &checks) {
  const std::string mismatches =
      c.mismatches ? " (" + std::to_string(c.mismatches) +
                         " elements differ from format::dequantize)"
                   : "";
  std::printf("check %-28s M=%-3lld N=%-6lld K=%-6lld rel err %.2e "
              "%s%s%s\n",
              c.weight.c_str(), (long long)c.m, (long long)c.n, (long long)c.k,
              c.relativeError, c.passed ? "ok" : "FAIL",
              c.unwritten ? " (unwritten outputs)" : "", mismatches.c_str());
  json entry = {{"kernel", c.kernel},
                {"weight", c.weight},
                {"m", c.m},
                {"n", c.n},
                {"k", c.k},
                {"relative_error", c.relativeError},
                {"tolerance", check::kRelativeTolerance},
                {"unwritten", c.unwritten},
                {"passed", c.passed}};
  if (c.dequantize) { // exact: the tolerance does not apply
    entry["dequantize"] = true;
    entry["mismatches"] = c.mismatches;
    entry["tolerance"] = 0;
  }
  checks.push_back(std::move(entry));
}

/// Prints a launch the check skipped and records it in `skipped`: a list
/// of its own, so that readers of "checks" see only launches compared.
void recordSkipped(const check::SkippedLaunch &s, json &skipped) {
  const std::string &what = s.weights.empty() ? s.kernel : s.weights;
  std::printf("check %-28s M=%-3lld skipped: %s\n", what.c_str(),
              (long long)s.m, s.reason.c_str());
  skipped.push_back({{"kernel", s.kernel},
                     {"weight", s.weights},
                     {"m", s.m},
                     {"step", s.step},
                     {"skipped", s.reason}});
}

/// Why a plan had no launch checked: the first skipped launches and their
/// reasons (all of them are printed above), or that it has no matmul.
std::string whyNoneChecked(const check::PlanCheck &result) {
  constexpr size_t kNamed = 3;
  if (result.skipped.empty())
    return "the plan has no matmul or qf.dequantize launch";
  std::string why = std::to_string(result.skipped.size()) + " skipped: ";
  for (size_t i = 0; i < result.skipped.size() && i < kNamed; ++i) {
    const check::SkippedLaunch &s = result.skipped[i];
    why += (i ? "; " : "") +
           (s.weights.empty() ? s.kernel : s.weights + " (" + s.kernel + ")") +
           ": " + s.reason;
  }
  if (result.skipped.size() > kNamed)
    why += "; and " + std::to_string(result.skipped.size() - kNamed) +
           " more, listed above";
  return why;
}

/// Every launch of each plan against the C++ reference, on random
/// activations; prints each result and records it in `checks`, and the
/// matmuls the check cannot take in `skipped`. Returns whether all passed
/// and each plan had a launch checked: a plan checked by none passing
/// would say nothing.
bool checkPlans(
    const BenchOptions &o, const std::string &artifactPath, Executor &executor,
    const cuda::Stream &stream, const std::vector<int64_t> &planBatches,
    const std::map<std::string, qfuse::format::TensorMap> &hostWeights,
    json &checks, json &skipped) {
  bool allPassed = true;
  if (!o.weightsPath.empty() || o.placeholderWeights)
    throw qfuse::Error("--check needs the random weights (no --weights, "
                       "no --placeholder-weights)");
  for (int64_t batch : planBatches) {
    const check::PlanCheck result = check::checkPlan(
        executor, batch, stream.get(), hostWeights, o.seed + batch);
    for (const check::LaunchCheck &c : result.launches) {
      allPassed &= c.passed;
      recordCheck(c, checks);
    }
    for (const check::SkippedLaunch &s : result.skipped)
      recordSkipped(s, skipped);
    if (!result.launches.empty())
      continue;
    allPassed = false;
    std::fflush(stdout); // the error after the skipped lines it sums up
    std::cerr << "qfuse-bench: error: " << artifactPath << " at batch " << batch
              << ": no launch could be checked (" << whyNoneChecked(result)
              << ")\n";
  }
  return allPassed;
}

/// Times each plan of one artifact and records it in `plans`.
void timePlans(const BenchOptions &o, const std::string &artifactPath,
               const Artifact &artifact, Executor &executor,
               const cuda::Context &context, const cuda::Stream &stream,
               const std::vector<int64_t> &planBatches,
               const bench::CopyResult &copy, json &plans) {
  for (int64_t batch : planBatches) {
    bench::PlanResult r =
        bench::artifactPlan(context, executor, stream.get(), batch, o.config);
    json shapes = json::array();
    // One per checkpoint tensor: a weight packed in a second layout
    // (docs/artifact.md, version 3) is the same matmul shape.
    for (const WeightSpec &w : artifact.weights)
      if (w.checkpointName() == w.name)
        shapes.push_back({{"weight", w.name},
                          {"n", w.n},
                          {"k", w.k},
                          {"encoding", w.encoding}});
    plans.push_back(
        {{"artifact", r.artifact},
         {"weight_shapes", shapes},
         {"producer", artifact.producer},
         {"chip", artifact.chip},
         {"batch", r.batch},
         {"steps", r.steps},
         {"copies", r.copies},
         {"l2_flushed", r.l2Flushed},
         {"weights", !o.weightsPath.empty() ? o.weightsPath
                     : o.placeholderWeights ? "placeholder"
                                            : "random round-to-nearest"},
         {"weight_bytes", r.weightBytes},
         {"bytes_per_run", r.bytesPerRun},
         {"bytes_source",
          artifact.roofline.empty() ? "weights + buffers" : "roofline"},
         {"gb_per_s", r.gbPerSecond},
         {"fraction_of_copy", r.gbPerSecond / copy.gbPerSecond},
         {"stats", statsJson(r.stats)}});
    printRow("plan " + artifactPath.substr(artifactPath.rfind('/') + 1),
             std::to_string(r.batch), std::to_string(r.steps), r.copies,
             r.stats, r.gbPerSecond, copy.gbPerSecond, 0);
  }
}

/// Which side of the act_order groups' perm guards runs (PermGuards.h):
/// the fused kernels (perms equal) or the fallback (perms differ).
void printPermGuards(const std::string &artifactPath,
                     const Executor &executor) {
  size_t equal = 0, differ = 0;
  for (const Plan &plan : executor.artifact().plans)
    for (const Step &step : plan.steps)
      if (step.guard.when != PermGuard::When::Always && executor.runsStep(step))
        ++(step.guard.when == PermGuard::When::PermsEqual ? equal : differ);
  if (equal + differ > 0)
    std::printf("%s: perm guards: %zu steps run on equal perms (fused "
                "act_order groups), %zu on the fallback for perms that "
                "differ\n",
                artifactPath.c_str(), equal, differ);
}

/// One --artifact: weights bound, plans checked (with --check) and timed.
/// Returns whether every check passed and every plan had one.
bool benchArtifact(const BenchOptions &o, const std::string &artifactPath,
                   const cuda::Context &context, const cuda::Stream &stream,
                   const bench::CopyResult &copy, json &plans, json &checks,
                   json &skipped) {
  Artifact artifact = loadArtifactForDevice(artifactPath, context);
  std::printf("%s: runs %s\n", artifactPath.c_str(),
              artifact.describeTarget().c_str());
  Executor executor(artifact, context);
  std::optional<SafetensorsFile> weights;
  if (!o.weightsPath.empty()) {
    weights.emplace(SafetensorsFile::open(o.weightsPath));
    executor.loadWeights(*weights);
  }
  // Real data, never zeros: random weights quantized into each
  // encoding, unless a checkpoint or placeholders were asked for.
  std::map<std::string, qfuse::format::TensorMap> hostWeights;
  if (o.weightsPath.empty() && !o.placeholderWeights)
    hostWeights = check::bindRandomWeights(
        executor, o.seed,
        o.distinctPerms ? RandomPerms::PerWeight : RandomPerms::PerInput);
  bench::bindPlaceholderWeights(executor, stream.get());
  printPermGuards(artifactPath, executor);
  std::vector<int64_t> planBatches = o.batches;
  if (planBatches.empty())
    for (const Plan &plan : artifact.plans)
      planBatches.push_back(plan.batch);
  bool allPassed = true;
  if (o.checkOutputs)
    allPassed = checkPlans(o, artifactPath, executor, stream, planBatches,
                           hostWeights, checks, skipped);
  if (!o.checkOnly)
    timePlans(o, artifactPath, artifact, executor, context, stream,
              planBatches, copy, plans);
  return allPassed;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"qfuse-bench: device copy bandwidth, cuBLAS fp16 and compiled "
               "qfuse plans, timed with CUDA events over graph replays"};
  BenchOptions o;
  addOptions(app, o);
  CLI11_PARSE(app, argc, argv);
  int exitCode = 0;

  if (o.gitCommit.empty()) {
    const char *env = std::getenv("QFUSE_GIT_COMMIT");
    o.gitCommit = env && *env ? env : "unknown";
  }
  if (!o.weightsPath.empty() && o.artifactPaths.size() != 1) {
    std::cerr << "qfuse-bench: --weights needs exactly one --artifact\n";
    return 2;
  }
  if (o.checkOnly) {
    if (o.artifactPaths.empty() || !o.gemms.empty() || !o.model.empty() ||
        o.placeholderWeights || !o.weightsPath.empty()) {
      std::cerr << "qfuse-bench: --check-only takes --artifact (one or more) "
                   "and no --gemm, --model, --weights or "
                   "--placeholder-weights\n";
      return 2;
    }
    o.checkOutputs = true;
  }
  if (o.gemms.empty() && o.model.empty() && o.artifactPaths.empty())
    o.gemms = {"1x151936x1536", "1x256x1536"};

  try {
    cuda::Context context(o.device);
    cuda::Stream stream;
    const uint64_t l2 = bench::l2Bytes(context);
    json out = {{"command", qfuse::tools::commandLine(argc, argv)},
                {"gpu", context.name()},
                {"chip", context.chip()},
                {"date", qfuse::tools::utcNow()},
                {"git_commit", o.gitCommit},
                {"config",
                 {{"warmup", o.config.warmup},
                  {"iterations", o.config.iterations},
                  {"l2_bytes_rotated_past", l2},
                  {"max_copies", bench::kMaxCopies},
                  {"plan_graphs", o.config.graphPerCopy ? "one per weight copy"
                                                        : "one for all copies"},
                  {"rotation", "weights rotate until all copies exceed 3x "
                               "L2; past max_copies, the L2 is flushed "
                               "before each timed iteration"}}}};

    std::printf("qfuse-bench on %s (%s), %s, commit %s\n",
                context.describe().c_str(), context.chip().c_str(),
                qfuse::tools::utcNow().c_str(), o.gitCommit.c_str());
    std::printf("%-34s %6s %7s %6s %10s %10s %9s %8s %8s\n", "what", "M",
                "kernels", "copies", "median ms", "min ms", "GB/s", "of copy",
                "TFLOP/s");

    bench::CopyResult copy;
    if (!o.checkOnly) {
      copy = bench::copyBandwidth(stream.get(), o.copyBytes, o.config);
      out["copy"] = {{"bytes", copy.bytes},
                     {"bytes_moved", 2 * copy.bytes},
                     {"gb_per_s", copy.gbPerSecond},
                     {"stats", statsJson(copy.stats)}};
      printRow("device copy (read + write)", "-", "1", 1, copy.stats,
               copy.gbPerSecond, copy.gbPerSecond, 0);
    }

    std::optional<cuda::Cublas> cublas;
    out["cublas"] = timeCublas(o, context, stream, copy, cublas);

    json plans = json::array();
    json checks = json::array(), skipped = json::array();
    for (const std::string &artifactPath : o.artifactPaths)
      if (!benchArtifact(o, artifactPath, context, stream, copy, plans, checks,
                         skipped))
        exitCode = 1;
    if (!o.artifactPaths.empty()) {
      out["artifact_plans"] = plans;
      out["checks"] = checks;
      out["checks_skipped"] = skipped;
    }

    if (!o.jsonPath.empty()) {
      qfuse::writeFileAtomically(o.jsonPath, out.dump(2) + "\n");
      std::printf("wrote %s\n", o.jsonPath.c_str());
    }
  } catch (const std::exception &e) {
    std::cerr << "qfuse-bench: error: " << qfuse::errorText(e) << "\n";
    return 1;
  }
  if (exitCode != 0)
    std::cerr << "qfuse-bench: some checks FAILED, or a plan had none\n";
  return exitCode;
}
