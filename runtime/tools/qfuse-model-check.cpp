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
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/device/Generator.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/device/ModelLoader.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
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

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"qfuse-model-check: a compiled model's logits against the C++ "
               "reference decoder (docs/reference-decoder.md)"};
  std::string modelDir, artifactPath, jsonPath;
  std::vector<int32_t> prompt;
  int64_t steps = 32;
  double tolerance = 1e-2;
  bool identicalTokens = false, denseReference = false;
  std::string gpuWeightsDir;
  int device = 0;
  app.add_option("--model", modelDir, "Hugging Face checkpoint directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--artifact", artifactPath, "the model artifact (.qfa)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--prompt-ids", prompt, "prompt token ids, e.g. 1,2,3")
      ->required()
      ->delimiter(',');
  app.add_option("--steps", steps, "generated tokens to compare")
      ->default_val(32)
      ->check(CLI::PositiveNumber);
  app.add_option("--tolerance", tolerance,
                 "largest relative L2 error of a step's logits")
      ->default_val(1e-2);
  app.add_flag("--identical-tokens", identicalTokens,
               "also require the reference's greedy token at every step");
  app.add_option("--gpu-weights", gpuWeightsDir,
                 "load the compiled model's weights from this checkpoint "
                 "instead (e.g. a qfuse-quantize output)")
      ->check(CLI::ExistingDirectory);
  app.add_flag("--dense-reference", denseReference,
               "the reference keeps the dense weights (measures the "
               "quantization error)");
  app.add_option("--json", jsonPath, "write the per-step errors here");
  app.add_option("--device", device, "CUDA device ordinal")->default_val(0);
  CLI11_PARSE(app, argc, argv);

  try {
    runtime::Artifact artifact = runtime::Artifact::load(artifactPath);
    runtime::ModelCheckpoint checkpoint =
        runtime::ModelCheckpoint::open(modelDir);
    runtime::checkModelAgainstConfig(artifact, checkpoint);

    // The compiled model.
    runtime::cuda::Context context(device);
    runtime::cuda::Stream stream;
    runtime::Executor executor(artifact, context);
    runtime::Generator generator(executor, stream.get());
    if (gpuWeightsDir.empty()) {
      runtime::loadCheckpoint(executor, checkpoint, /*threads=*/0);
    } else {
      runtime::ModelCheckpoint gpuCheckpoint =
          runtime::ModelCheckpoint::open(gpuWeightsDir);
      runtime::checkModelAgainstConfig(artifact, gpuCheckpoint);
      runtime::loadCheckpoint(executor, gpuCheckpoint, /*threads=*/0);
    }
    runtime::Generation gpu =
        generator.generate(prompt, steps, {/*keepLogits=*/true});

    // The reference, on the same weights through the same rounding rules.
    reference::ModelConfig config = reference::ModelConfig::load(modelDir);
    reference::ModelWeights weights =
        reference::loadCheckpointWeights(config, modelDir);
    reference::EncodingPlan plan = planFromArtifact(artifact);
    if (!denseReference)
      reference::applyEncodingPlan(weights, plan);
    reference::ReferenceDecoder decoder(config, std::move(weights));

    json perStep = json::array();
    double worst = 0, sum = 0;
    int64_t failures = 0, tokenMismatches = 0;
    std::vector<double> ref = decoder.prefill(prompt);
    for (int64_t i = 0; i < steps; ++i) {
      if (i > 0)
        ref = decoder.step(gpu.tokens[i - 1]);
      double err = relativeError(gpu.logits[i], ref);
      int64_t refToken = reference::argmax(ref);
      bool tokenOk = refToken == gpu.tokens[i];
      bool ok = err <= tolerance && (!identicalTokens || tokenOk);
      worst = std::max(worst, err);
      sum += err;
      failures += !ok;
      tokenMismatches += !tokenOk;
      std::printf("step %2lld: token %6d (reference %6lld)  logits rel. err "
                  "%.3e%s\n",
                  (long long)i, gpu.tokens[i], (long long)refToken, err,
                  ok ? "" : "  FAIL");
      perStep.push_back({{"step", i},
                         {"token", gpu.tokens[i]},
                         {"reference_token", refToken},
                         {"relative_error", err}});
    }
    std::printf("%s: %lld steps, worst logits relative error %.3e, mean "
                "%.3e (tolerance %.1e), %lld token differences%s: %s\n",
                artifactPath.c_str(), (long long)steps, worst,
                sum / double(steps), tolerance,
                (long long)tokenMismatches,
                identicalTokens ? " (must be 0)" : "",
                failures ? "FAIL" : "PASS");
    if (!jsonPath.empty()) {
      std::ofstream(jsonPath)
          << json{{"artifact", artifactPath},
                  {"model", modelDir},
                  {"gpu", context.name()},
                  {"steps", steps},
                  {"tolerance", tolerance},
                  {"identical_tokens_required", identicalTokens},
                  {"worst_relative_error", worst},
                  {"mean_relative_error", sum / double(steps)},
                  {"gpu_weights", gpuWeightsDir.empty() ? modelDir
                                                        : gpuWeightsDir},
                  {"dense_reference", denseReference},
                  {"token_differences", tokenMismatches},
                  {"pass", failures == 0},
                  {"per_step", perStep}}
                 .dump(1)
          << "\n";
    }
    return failures ? 1 : 0;
  } catch (const std::exception &e) {
    std::cerr << "qfuse-model-check: " << e.what() << "\n";
    return 1;
  }
}
