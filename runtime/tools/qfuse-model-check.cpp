//===- qfuse-model-check.cpp - a compiled model against the reference -----===//
//
// The end-to-end correctness check: runs a whole-model artifact on
// a checkpoint with the Generator (prefill chunks, then graph-replayed
// decode steps) and compares, step by step, its logits with the plain C++
// reference decoder (runtime/reference, double accumulation) over the same
// weights quantized and dequantized with the same round-to-nearest rules:
//
//   qfuse-model-check --model DIR --artifact tiny-int4.qfa --prompt-ids 1,2,3
//                     --steps 32 [--tolerance 1e-2] [--identical-tokens]
//                     [--gpu-weights DIR2] [--dense-reference]
//                     [--poison-outputs]
//
// --dense-reference keeps the checkpoint's dense weights in the reference,
// so the error measured is the quantization's own; with --gpu-weights the
// compiled model loads another checkpoint of the same model (a GPTQ output
// of qfuse-quantize, in any format the runtime reads). Together they compare
// quantizers: the same prompt, RTN at load (no --gpu-weights) against GPTQ.
//
// The reference is fed the compiled model's own tokens (teacher forcing), so
// one near-tie cannot make every later step differ; with --identical-tokens
// (the fp16 build) each step's reference argmax must also be the token the
// compiled model chose. Relative error of a step: ||gpu - ref||_2 /
// ||ref||_2 over the vocabulary. Exit status 1 when any step fails.
//
//===----------------------------------------------------------------------===//

#include "qfuse/reference/ModelConfig.h"
#include "qfuse/reference/ModelWeights.h"
#include "qfuse/reference/Ops.h"
#include "qfuse/reference/ReferenceDecoder.h"
#include "qfuse/reference/WeightEncoding.h"
#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/device/DeviceArtifact.h"
#include "qfuse/runtime/device/Generator.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/device/ModelLoader.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>

using namespace qfuse;
using nlohmann::json;

namespace {

/// The reference's encoding plan, read off the artifact: every projection
/// kind (the weight name's last component) with one encoding across layers.
reference::EncodingPlan planFromArtifact(const runtime::Artifact &artifact) {
  reference::EncodingPlan plan;
  for (const runtime::WeightSpec &weight : artifact.weights) {
    std::string kind = weight.checkpointName().substr(
        weight.checkpointName().rfind('.') + 1);
    std::string encoding = weight.encoding == "f16" ? "fp16" : weight.encoding;
    auto [it, inserted] = plan.overrides.emplace(kind, encoding);
    if (!inserted && it->second != encoding)
      throw Error("artifact '" + artifact.source + "': the " + kind +
                  " weights use two encodings (\"" + it->second + "\" and \"" +
                  encoding + "\" on '" + weight.name +
                  "'); the reference takes one per projection kind");
  }
  return plan;
}

double relativeError(const std::vector<float> &gpu,
                     const std::vector<double> &ref) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double d = static_cast<double>(gpu[i]) - ref[i];
    diff += d * d;
    norm += ref[i] * ref[i];
  }
  return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-30);
}

/// Everything the command line sets.
struct CheckOptions {
  std::string modelDir, artifactPath, jsonPath;
  std::vector<int32_t> prompt;
  int64_t steps = 32;
  double tolerance = 1e-2;
  bool identicalTokens = false, denseReference = false, poisonOutputs = false;
  std::string gpuWeightsDir;
  int device = 0;
};

void addOptions(CLI::App &app, CheckOptions &o) {
  app.add_option("--model", o.modelDir, "Hugging Face checkpoint directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--artifact", o.artifactPath, "the model artifact (.qfa)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--prompt-ids", o.prompt, "prompt token ids, e.g. 1,2,3")
      ->required()
      ->delimiter(',');
  app.add_option("--steps", o.steps, "generated tokens to compare")
      ->default_val(32)
      ->check(CLI::PositiveNumber);
  app.add_option("--tolerance", o.tolerance,
                 "largest relative L2 error of a step's logits")
      ->default_val(1e-2);
  app.add_flag("--identical-tokens", o.identicalTokens,
               "also require the reference's greedy token at every step");
  app.add_option("--gpu-weights", o.gpuWeightsDir,
                 "load the compiled model's weights from this checkpoint "
                 "instead (e.g. a qfuse-quantize output)")
      ->check(CLI::ExistingDirectory);
  app.add_flag("--dense-reference", o.denseReference,
               "the reference keeps the dense weights (measures the "
               "quantization error)");
  app.add_flag("--poison-outputs", o.poisonOutputs,
               "fill every launch and gemm output with NaN before the run, "
               "so that an output a kernel leaves unwritten shows");
  app.add_option("--json", o.jsonPath, "write the per-step errors here");
  app.add_option("--device", o.device, "CUDA device ordinal")->default_val(0);
}

/// NaN (0xFF bytes, an f16 NaN) in every buffer a plan's launches (their
/// `y` and `out` parameters) and gemms write, state buffers aside: the
/// first run of each plan then reads no stale values, so a row a kernel
/// leaves unwritten reaches the logits as NaN.
void poisonOutputs(runtime::Executor &executor, CUstream stream) {
  const runtime::Artifact &artifact = executor.artifact();
  for (const runtime::Plan &plan : artifact.plans)
    for (const runtime::Step &step : plan.steps) {
      std::vector<std::string> outputs;
      if (step.kind == runtime::Step::Kind::Gemm)
        outputs.push_back(step.gemm.y);
      if (step.kind == runtime::Step::Kind::Launch) {
        const runtime::Kernel &kernel = artifact.kernels[step.kernelIndex];
        for (size_t i = 0; i < step.args.size(); ++i) {
          const std::string &param = kernel.params[i].name;
          std::string base = param.substr(0, param.find('.'));
          if (step.args[i].kind == runtime::Arg::Kind::Buffer &&
              (base == "y" || base == "out"))
            outputs.push_back(step.args[i].name);
        }
      }
      for (const std::string &name : outputs)
        if (!artifact.findBuffer(name)->state)
          executor.buffer(plan.batch, name).fill(0xFF, stream);
    }
}

/// The compiled model's greedy generation, keeping every step's logits.
runtime::Generation runCompiled(const CheckOptions &o,
                                const runtime::Artifact &artifact,
                                const runtime::ModelCheckpoint &checkpoint,
                                const runtime::cuda::Context &context,
                                const runtime::cuda::Stream &stream) {
  runtime::Executor executor(artifact, context);
  runtime::Generator generator(executor, stream.get());
  if (o.gpuWeightsDir.empty()) {
    runtime::loadCheckpoint(executor, checkpoint, /*threads=*/0);
  } else {
    runtime::ModelCheckpoint gpuCheckpoint =
        runtime::ModelCheckpoint::open(o.gpuWeightsDir);
    runtime::checkModelAgainstConfig(artifact, gpuCheckpoint);
    runtime::loadCheckpoint(executor, gpuCheckpoint, /*threads=*/0);
  }
  if (o.poisonOutputs)
    poisonOutputs(executor, stream.get());
  return generator.generate(o.prompt, o.steps, {/*keepLogits=*/true});
}

/// Every step's logits against the reference decoder's.
struct Comparison {
  json perStep = json::array();
  double worst = 0, sum = 0;
  int64_t failures = 0, tokenMismatches = 0;
};

/// The reference, on the same weights through the same rounding rules, fed
/// the compiled model's tokens; prints one line per step.
Comparison compareWithReference(const CheckOptions &o,
                                const runtime::Artifact &artifact,
                                const runtime::Generation &gpu) {
  reference::ModelConfig config = reference::ModelConfig::load(o.modelDir);
  reference::ModelWeights weights =
      reference::loadCheckpointWeights(config, o.modelDir);
  reference::EncodingPlan plan = planFromArtifact(artifact);
  if (!o.denseReference)
    reference::applyEncodingPlan(weights, plan);
  reference::ReferenceDecoder decoder(config, std::move(weights));

  Comparison c;
  std::vector<double> ref = decoder.prefill(o.prompt);
  for (int64_t i = 0; i < o.steps; ++i) {
    if (i > 0)
      ref = decoder.step(gpu.tokens[i - 1]);
    double err = relativeError(gpu.logits[i], ref);
    int64_t refToken = reference::argmax(ref);
    bool tokenOk = refToken == gpu.tokens[i];
    bool ok = err <= o.tolerance && (!o.identicalTokens || tokenOk);
    c.worst = std::max(c.worst, err);
    c.sum += err;
    c.failures += !ok;
    c.tokenMismatches += !tokenOk;
    std::printf("step %2lld: token %6d (reference %6lld)  logits rel. err "
                "%.3e%s\n",
                (long long)i, gpu.tokens[i], (long long)refToken, err,
                ok ? "" : "  FAIL");
    c.perStep.push_back({{"step", i},
                         {"token", gpu.tokens[i]},
                         {"reference_token", refToken},
                         {"relative_error", err}});
  }
  return c;
}

void writeJson(const CheckOptions &o, const runtime::cuda::Context &context,
               const Comparison &c) {
  writeFileAtomically(
      o.jsonPath,
      json{{"artifact", o.artifactPath},
              {"model", o.modelDir},
              {"gpu", context.name()},
              {"steps", o.steps},
              {"tolerance", o.tolerance},
              {"identical_tokens_required", o.identicalTokens},
              {"worst_relative_error", c.worst},
              {"mean_relative_error", c.sum / double(o.steps)},
              {"gpu_weights",
               o.gpuWeightsDir.empty() ? o.modelDir : o.gpuWeightsDir},
              {"dense_reference", o.denseReference},
              {"token_differences", c.tokenMismatches},
              {"pass", c.failures == 0},
              {"per_step", c.perStep}}
              .dump(1) +
          "\n");
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"qfuse-model-check: a compiled model's logits against the C++ "
               "reference decoder (docs/reference-decoder.md)"};
  CheckOptions o;
  addOptions(app, o);
  CLI11_PARSE(app, argc, argv);

  try {
    runtime::cuda::Context context(o.device);
    runtime::Artifact artifact =
        runtime::loadArtifactForDevice(o.artifactPath, context);
    std::printf("%s: runs %s on %s\n", o.artifactPath.c_str(),
                artifact.describeTarget().c_str(), context.describe().c_str());
    runtime::ModelCheckpoint checkpoint =
        runtime::ModelCheckpoint::open(o.modelDir);
    runtime::checkModelAgainstConfig(artifact, checkpoint);

    runtime::cuda::Stream stream;
    runtime::Generation gpu =
        runCompiled(o, artifact, checkpoint, context, stream);
    const Comparison c = compareWithReference(o, artifact, gpu);
    std::printf(
        "%s: %lld steps, worst logits relative error %.3e, mean "
        "%.3e (tolerance %.1e), %lld token differences%s: %s\n",
        o.artifactPath.c_str(), (long long)o.steps, c.worst,
        c.sum / double(o.steps), o.tolerance, (long long)c.tokenMismatches,
        o.identicalTokens ? " (must be 0)" : "", c.failures ? "FAIL" : "PASS");
    if (!o.jsonPath.empty())
      writeJson(o, context, c);
    return c.failures ? 1 : 0;
  } catch (const std::exception &e) {
    std::cerr << "qfuse-model-check: " << errorText(e) << "\n";
    return 1;
  }
}
