//===- qfuse-run.cpp - Generate tokens with a compiled model --------------===//
//
// Runs a whole-model artifact (docs/decode-model.md) on a Hugging Face
// checkpoint and reports what a user of the model sees:
//
//   qfuse-run --model DIR --encoding int4-g128 --prompt-ids 1,2,3
//             --max-new-tokens 64 [--fp16] [--json out.json]
//   qfuse-run --model DIR --artifact llama-int4.qfa --prompt-ids 1,2,3
//             [--fp16-artifact llama-fp16.qfa]
//   qfuse-run --artifact llama-int4.qfa --random-weights 7 --prompt-ids 1,2,3
//   qfuse-run --model DIR --encoding int4-g128 --prompt "The capital of"
//   qfuse-run --model DIR --encoding int4-g128 --chat --prompt "Hi"
//             [--system "Be brief."] [--temperature 0.7 --top-p 0.9 --seed 1]
//
// --prompt tokenizes the text with DIR's tokenizer.json (BOS as its
// tokenizer_config.json says), streams the generated text to stdout as the
// tokens arrive, and stops at the model's stop tokens (eos_token_id of
// generation_config.json or config.json, the tokenizer's eos_token); the
// statistics then go to stderr. --chat applies the model's chat format
// (docs/text-generation.md). Sampling (temperature, top-k, top-p, min-p,
// repetition penalty, seed) chooses on the host over each step's logits;
// greedy is the default and runs on the device.
//
// Without --artifact the model directory holds the artifacts, one per
// encoding, DIR/qfuse-<encoding>.qfa (`python3 -m qfuse compile` writes them;
// the runtime machine has no compiler), and --fp16 runs DIR/qfuse-fp16.qfa as
// the baseline. --save-packed OUT writes the checkpoint as quantized for the
// artifact (qfuse-packed), once.
//
// prints the generated token ids, the time to first token and the decode
// tokens/s (CUDA events), after one untimed warm-up generation. With
// --fp16-artifact the same prompt runs on that artifact too (the cuBLAS fp16
// baseline compiled from the same config with --encoding fp16) and the
// speedups are printed. The JSON records the exact command beside results.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Encoding.h"
#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/artifact/ArtifactSet.h"
#include "qfuse/runtime/device/DeviceArtifact.h"
#include "qfuse/runtime/device/Generator.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/device/ModelLoader.h"
#include "qfuse/runtime/device/QuantizeAtLoad.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"
#include "qfuse/text/ChatFormat.h"
#include "qfuse/text/StopTokens.h"
#include "qfuse/text/Tokenizer.h"

#include "ToolCommon.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

using namespace qfuse::runtime;
using nlohmann::json;

namespace {

/// Where the tool's reports go: stdout, or stderr when stdout carries the
/// generated text.
FILE *info = stdout;

/// --encoding: a name ("int4-g128", "fp16") or an #qf.enc body.
qfuse::format::Encoding parseEncodingOption(const std::string &text) {
  qfuse::format::Encoding enc;
  std::string nameError, parseError;
  const std::string input = text == "fp16" ? "f16" : text;
  if (qfuse::format::encodingFromName(input, enc, nameError) ||
      qfuse::format::parseEncoding(input, enc, parseError))
    return enc;
  throw qfuse::Error("--encoding '" + text + "' is neither a known name (" +
                     nameError + ") nor an encoding (" + parseError + ")");
}

/// Every weight must have `expected`, except an lm_head kept dense f16
/// (quantized checkpoints usually leave it unquantized).
void checkEncoding(const Artifact &artifact,
                   const qfuse::format::Encoding &expected,
                   const std::string &option) {
  for (const WeightSpec &weight : artifact.weights) {
    if (weight.encodingAttr == expected)
      continue;
    if (weight.name == "lm_head" &&
        weight.encodingAttr.format == qfuse::format::ElementFormat::F16 &&
        !weight.encodingAttr.isSparse24())
      continue;
    throw qfuse::Error("artifact '" + artifact.source + "': weight '" +
                       weight.name + "' has encoding \"" + weight.encoding +
                       "\", not --encoding " + option + " (\"" +
                       qfuse::format::printEncoding(expected) + "\")");
  }
}

struct RunResult {
  std::string artifact, chip; // chip: that of the variant that ran
  Generation generation;
  LoadStats load;
  size_t weightBytes = 0;
  QuantizeAtLoadCounts rtn; // weights rounded, layouts made on the GPU / host
  json breakdown; // --profile: a plan (the decode step's) by part
};

/// What part of a decode step a plan step is, from what the artifact says
/// it binds (not from kernel names): a gemm or a launch on a weight is a
/// linear layer (fused matvec/matmul kernels, the fallback's dequantize),
/// a launch on a state buffer is attention (cache writes and attention
/// kernels: the KV caches are the state buffers), anything else is the
/// rest (norms, rotary, residual adds, ...).
const char *partOf(const Artifact &artifact, const Step &step) {
  if (step.kind == Step::Kind::Gemm)
    return "linear";
  bool onState = false;
  for (const Arg &arg : step.args) {
    if (arg.kind == Arg::Kind::Weight)
      return "linear";
    if (arg.kind == Arg::Kind::Buffer) {
      const BufferSpec *buffer = artifact.findBuffer(arg.name);
      onState = onState || (buffer && buffer->state);
    }
  }
  return onState ? "attention" : "rest";
}

/// Mean replay time of `graph` in milliseconds over `replays` replays.
double replayMs(const cuda::Graph &graph, CUstream stream, int replays) {
  graph.launch(stream); // warm
  cuda::Event start, end;
  start.record(stream);
  for (int i = 0; i < replays; ++i)
    graph.launch(stream);
  end.record(stream);
  end.synchronize();
  return cuda::Event::elapsedMs(start, end) / replays;
}

/// A plan's time by part. What a part costs is what the graph of the plan
/// of `batch` rows saves without its launches (kernel time and the launch
/// gaps between them); what no part explains is reported as "other".
/// Timing each launch alone instead over-counts small kernels, whose
/// back-to-back launches are bound by launch rate, not by their work. The
/// graphs read the buffers as the generation left them: batch 1 is a
/// decode step; a batch of N profiles a prefill chunk when the prompt had
/// at least N tokens.
json stepBreakdown(Executor &executor, const Artifact &artifact,
                   int64_t batch, CUstream stream) {
  const Plan &plan = artifact.plan(batch);
  constexpr int kReplays = 50;
  const double full = replayMs(
      executor.makePartialGraph(batch, stream, [](size_t) { return true; }),
      stream, kReplays);
  json out = {{"method", "graph replay without each part's launches, mean "
                         "of 50 replays"},
              {"batch", batch},
              {"step_ms", full},
              {"launches", plan.steps.size()}};
  std::fprintf(info, "plan of batch %lld by part (%.3f ms, %zu launches; "
              "each part = what the graph saves without it):",
              (long long)batch, full, plan.steps.size());
  double explained = 0;
  for (const char *part : {"linear", "attention", "rest"}) {
    int count = 0;
    for (const Step &step : plan.steps)
      count += std::string(partOf(artifact, step)) == part;
    if (!count)
      continue;
    const double without = replayMs(
        executor.makePartialGraph(
            batch, stream,
            [&](size_t i) {
              return std::string(partOf(artifact, plan.steps[i])) != part;
            }),
        stream, kReplays);
    const double cost = full - without;
    explained += cost;
    out[part] = {{"ms", cost}, {"launches", count}};
    std::fprintf(info, " %s %.3f ms (%d launches),", part, cost, count);
  }
  out["other_ms"] = full - explained;
  std::fprintf(info, " other %.3f ms\n", full - explained);
  return out;
}

RunResult runArtifact(const std::string &path, const cuda::Context &context,
                      const cuda::Stream &stream,
                      const ModelCheckpoint *checkpoint,
                      std::optional<uint64_t> randomSeed, unsigned threads,
                      const std::vector<int32_t> &prompt, int64_t maxNew,
                      int warmup, const GenerateOptions &options,
                      const qfuse::text::Tokenizer *tokenizer,
                      const std::optional<qfuse::format::Encoding> &encoding,
                      const std::string &encodingText,
                      int64_t profileBatch, RtnMode rtn) {
  Artifact artifact = loadArtifactForDevice(path, context);
  if (encoding)
    checkEncoding(artifact, *encoding, encodingText);
  Executor executor(artifact, context);
  Generator generator(executor, stream.get());
  RunResult result;
  result.artifact = path;
  result.chip = artifact.chip;
  if (checkpoint) {
    checkModelAgainstConfig(artifact, *checkpoint);
    QuantizeAtLoad rounding(path, rtn, context, info);
    result.load = rounding.load(executor, *checkpoint, threads);
    std::fprintf(info, "%s\n", rounding.summary().c_str());
    result.rtn = rounding.counts();
  } else {
    result.load = bindRandomModel(executor, *randomSeed, threads);
  }
  for (const auto &[weight, component] : executor.usedWeightComponents())
    result.weightBytes += executor.componentBytes(weight, component);
  std::fprintf(info, "%s (%s): %zu weights, %zu tensors bound in %.1f s "
              "(%u threads), %.1f MB of weights, %.1f MB of state\n",
              path.c_str(), artifact.describeTarget().c_str(),
              result.load.weights, result.load.tensors,
              result.load.seconds, result.load.threads,
              result.weightBytes / 1e6, executor.stateBytes() / 1e6);
  // The first generation pays for graph instantiation and cuBLAS's
  // heuristics; the reported one runs warm.
  for (int i = 0; i < warmup; ++i)
    generator.generate(prompt, maxNew, options);
  GenerateOptions streamed = options;
  std::optional<qfuse::text::TextStreamer> text;
  if (tokenizer) {
    // The text as the tokens arrive; the stop tokens end it unprinted.
    text.emplace(*tokenizer, options.stopTokens);
    streamed.onToken = [&](int32_t id) {
      std::string piece;
      if (text->push(id, piece))
        std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
      return true;
    };
  }
  result.generation = generator.generate(prompt, maxNew, streamed);
  if (text) {
    const std::string rest = text->finish();
    std::fwrite(rest.data(), 1, rest.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  const Generation &g = result.generation;
  std::fprintf(info, "tokens:");
  for (int32_t token : g.tokens)
    std::fprintf(info, " %d", token);
  std::fprintf(info, "\nprompt %lld tokens (prefill plan batch %lld): time to first "
              "token %.3f ms; decode %lld tokens in %.3f ms = %.1f tokens/s\n",
              (long long)g.promptTokens, (long long)generator.prefillBatch(),
              g.ttftMs, (long long)(g.tokens.size() - 1), g.decodeMs,
              g.decodeTokensPerSecond);
  if (profileBatch > 1 || (profileBatch == 1 && g.tokens.size() > 1))
    result.breakdown =
        stepBreakdown(executor, artifact, profileBatch, stream.get());
  return result;
}

json resultJson(const RunResult &r) {
  return {{"artifact", r.artifact},
          {"chip", r.chip},
          {"tokens", r.generation.tokens},
          {"prompt_tokens", r.generation.promptTokens},
          {"ttft_ms", r.generation.ttftMs},
          {"decode_ms", r.generation.decodeMs},
          {"decode_tokens_per_s", r.generation.decodeTokensPerSecond},
          {"weight_bytes", r.weightBytes},
          {"load_seconds", r.load.seconds},
          {"load_threads", r.load.threads},
          {"rtn_device_weights", r.rtn.rtnDevice},
          {"rtn_host_weights", r.rtn.rtnHost},
          {"layouts_device", r.rtn.layoutsDevice},
          {"layouts_host", r.rtn.layoutsHost},
          {"decode_breakdown", r.breakdown}};
}

/// Everything the command line sets.
struct RunOptions {
  std::string modelDir, artifactPath, fp16ArtifactPath, jsonPath, encodingText;
  std::vector<int32_t> prompt;
  int64_t maxNew = 64;
  std::optional<uint64_t> randomSeed;
  int device = 0, warmup = 1;
  bool profile = false;
  int64_t profileBatch = 0; // 0: no profile
  unsigned threads = 0;
  std::string promptText, systemText, tokenizerDir;
  bool chat = false;
  SamplingOptions sampling;
  bool hostSampling = false;
  bool fp16 = false;
  std::string savePacked;
  std::string rtn = "device";
};

void addOptions(CLI::App &app, RunOptions &o) {
  app.add_option("--model", o.modelDir,
                 "Hugging Face checkpoint directory (config.json, "
                 "model.safetensors or its index and shards)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--artifact", o.artifactPath,
                 "the model artifact (.qfa); default with --model and "
                 "--encoding E: DIR/qfuse-E.qfa")
      ->check(CLI::ExistingFile);
  app.add_option("--prompt-ids", o.prompt, "prompt token ids, e.g. 1,2,3")
      ->delimiter(',');
  app.add_option("--prompt", o.promptText,
                 "the prompt as text, tokenized with the model's "
                 "tokenizer.json; the answer streams to stdout as text");
  app.add_flag("--chat", o.chat,
               "apply the model's chat format (tokenizer_config.json's "
               "chat_template: Llama-3, ChatML/Qwen2, Mistral instruct) to "
               "--prompt");
  app.add_option("--system", o.systemText, "with --chat: a system message");
  app.add_option("--tokenizer", o.tokenizerDir,
                 "directory of tokenizer.json (default: --model DIR)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--temperature", o.sampling.temperature,
                 "sampling temperature; 0 (default) is greedy");
  app.add_option("--top-k", o.sampling.topK,
                 "keep the k likeliest tokens (0: off)");
  app.add_option("--top-p", o.sampling.topP,
                 "keep the likeliest tokens up to this mass (1: off)");
  app.add_option("--min-p", o.sampling.minP,
                 "drop tokens below this fraction of the likeliest (0: off)");
  app.add_option("--repetition-penalty", o.sampling.repetitionPenalty,
                 "divide the logits of tokens seen so far (1: off)");
  app.add_flag("--host-sampling", o.hostSampling,
               "sample on the host even when the artifact samples on the "
               "device (qfuse emit --sampling)");
  app.add_option("--seed", o.sampling.seed, "seed of the sampler")
      ->default_val(0);
  app.add_option("--max-new-tokens", o.maxNew, "tokens to generate")
      ->default_val(64)
      ->check(CLI::PositiveNumber);
  app.add_option("--fp16-artifact", o.fp16ArtifactPath,
                 "the same model compiled with --encoding fp16: run it too "
                 "and print the speedup")
      ->check(CLI::ExistingFile);
  app.add_option("--save-packed", o.savePacked,
                 "first write the checkpoint quantized for --artifact (row-"
                 "major packed components and config.json) into this "
                 "directory; --model on it later skips quantization");
  app.add_flag("--fp16", o.fp16,
               "also run the fp16 cuBLAS build, DIR/qfuse-fp16.qfa (as "
               "--fp16-artifact)");
  app.add_option("--random-weights", o.randomSeed,
                 "random weights from this seed instead of --model "
                 "(benchmarks)");
  app.add_option("--encoding", o.encodingText,
                 "check that --artifact's weights have this encoding "
                 "(int4-g128, nvfp4, fp16, or an #qf.enc body)");
  app.add_option("--json", o.jsonPath, "write the results as JSON here");
  app.add_option("--device", o.device, "CUDA device ordinal")->default_val(0);
  app.add_option("--rtn", o.rtn, "round a dense checkpoint on the device "
                 "(default; weights without a kernel go to the host), the "
                 "host, or both and check (docs/quantize-at-load.md)")
      ->check(CLI::IsMember({"device", "host", "check"}));
  app.add_option("--threads", o.threads,
                 "threads quantizing the weights (default: every core)");
  app.add_option("--warmup", o.warmup, "untimed generations first")
      ->default_val(1)
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--profile", o.profile,
               "print the decode step by part (linear layers, attention, "
               "the rest), each measured as what the step's graph saves "
               "without that part's launches");
  app.add_option("--profile-batch", o.profileBatch,
                 "profile the plan of this batch instead of the decode "
                 "step (a prefill chunk, with a prompt of at least that "
                 "many tokens); implies --profile")
      ->check(CLI::PositiveNumber);
}

/// Rejects options that do not go together and fills in the default
/// artifact paths; false (after saying why on stderr) when it cannot run.
bool resolveOptions(RunOptions &o) {
  if (o.profile && o.profileBatch == 0)
    o.profileBatch = 1;
  if (o.promptText.empty() == o.prompt.empty()) {
    std::cerr << "qfuse-run: give exactly one of --prompt TEXT and "
                 "--prompt-ids ID,ID,...\n";
    return false;
  }
  if ((o.chat || !o.systemText.empty()) && o.promptText.empty()) {
    std::cerr << "qfuse-run: --chat and --system apply to --prompt TEXT\n";
    return false;
  }
  if (!o.systemText.empty() && !o.chat) {
    std::cerr << "qfuse-run: --system needs --chat\n";
    return false;
  }
  if (std::string why = o.sampling.check(); !why.empty()) {
    std::cerr << "qfuse-run: " << why << "\n";
    return false;
  }
  if (o.modelDir.empty() == !o.randomSeed) {
    std::cerr << "qfuse-run: give exactly one of --model DIR and "
                 "--random-weights SEED\n";
    return false;
  }
  // The runtime does not compile (the compiler stays on the build machine):
  // without --artifact, the model directory holds one artifact per
  // encoding, named as `python3 -m qfuse compile` is told below.
  auto defaultArtifact = [&](const std::string &enc) -> std::string {
    std::string path = o.modelDir + "/qfuse-" + enc + ".qfa";
    if (std::ifstream(path).good())
      return path;
    std::cerr << "qfuse-run: no artifact for --encoding " << enc << ": " << path
              << " does not exist. Compile it on a machine with "
              << "the compiler:\n  PYTHONPATH=python-frontend python3 -m "
              << "qfuse compile --config " << o.modelDir
              << "/config.json --encoding " << enc << " --batch-sizes 1,8 -o "
              << path << "\nor pass --artifact FILE\n";
    return "";
  };
  if (o.artifactPath.empty()) {
    if (o.modelDir.empty() || o.encodingText.empty()) {
      std::cerr << "qfuse-run: give --artifact FILE, or --model DIR with "
                   "--encoding E (reads DIR/qfuse-E.qfa)\n";
      return false;
    }
    o.artifactPath = defaultArtifact(o.encodingText);
    if (o.artifactPath.empty())
      return false;
  }
  if (o.fp16 && o.fp16ArtifactPath.empty()) {
    if (o.modelDir.empty()) {
      std::cerr << "qfuse-run: --fp16 needs --model DIR (or give "
                   "--fp16-artifact FILE)\n";
      return false;
    }
    o.fp16ArtifactPath = defaultArtifact("fp16");
    if (o.fp16ArtifactPath.empty())
      return false;
  }
  return true;
}

/// --prompt TEXT: the tokenizer, the prompt's ids (in the chat format with
/// --chat) and the stop tokens; the reports then go to stderr. Nothing
/// without --prompt.
std::optional<qfuse::text::Tokenizer> tokenizePrompt(RunOptions &o,
                                                     GenerateOptions &options) {
  std::optional<qfuse::text::Tokenizer> tokenizer;
  if (!o.promptText.empty()) {
    if (o.tokenizerDir.empty())
      o.tokenizerDir = o.modelDir;
    if (o.tokenizerDir.empty())
      throw qfuse::Error("--prompt needs a tokenizer: --model DIR or "
                         "--tokenizer DIR (with tokenizer.json)");
    try {
      tokenizer = qfuse::text::Tokenizer::fromDirectory(o.tokenizerDir);
      std::string text = o.promptText, endOfTurn;
      if (o.chat) {
        auto format = qfuse::text::ChatFormat::fromDirectory(o.tokenizerDir);
        std::vector<qfuse::text::ChatMessage> messages;
        if (!o.systemText.empty())
          messages.push_back({"system", o.systemText});
        messages.push_back({"user", o.promptText});
        text = format.apply(messages);
        endOfTurn = format.endOfTurn();
      }
      // A chat prompt holds its special tokens' text (BOS included).
      o.prompt = tokenizer->encode(text, /*addSpecialTokens=*/!o.chat);
      options.stopTokens =
          qfuse::text::stopTokenIds(o.tokenizerDir, *tokenizer, endOfTurn);
    } catch (const qfuse::text::TokenizerError &e) {
      throw qfuse::Error(std::string("--prompt: ") + e.what());
    }
    info = stderr;
  }
  return tokenizer;
}

/// The JSON record's header: the command, the device and the request.
json runRecord(const RunOptions &o, int argc, char **argv,
               const cuda::Context &context,
               const std::optional<ModelCheckpoint> &checkpoint,
               const GenerateOptions &options) {
  return {{"command", qfuse::tools::commandLine(argc, argv)},
          {"gpu", context.name()},
          {"chip", context.chip()},
          {"date", qfuse::tools::utcNow()},
          {"weights", checkpoint
                          ? o.modelDir
                          : "random, seed " + std::to_string(*o.randomSeed)},
          {"max_new_tokens", o.maxNew},
          {"prompt_ids", o.prompt},
          {"sampling",
           {{"temperature", o.sampling.temperature},
            {"top_k", o.sampling.topK},
            {"top_p", o.sampling.topP},
            {"min_p", o.sampling.minP},
            {"repetition_penalty", o.sampling.repetitionPenalty},
            {"seed", o.sampling.seed},
            {"host_sampling", o.hostSampling}}},
          {"stop_tokens", options.stopTokens}};
}

/// Prints and records the quantized run against the fp16 one: speedups and
/// how many leading tokens agree.
void compareWithFp16(const RunResult &quantized, const RunResult &fp16,
                     json &out) {
  const Generation &q = quantized.generation, &f = fp16.generation;
  size_t agree = 0;
  while (agree < q.tokens.size() && agree < f.tokens.size() &&
         q.tokens[agree] == f.tokens[agree])
    ++agree;
  const double decodeSpeedup =
      f.decodeTokensPerSecond > 0
          ? q.decodeTokensPerSecond / f.decodeTokensPerSecond
          : 0.0;
  const double ttftSpeedup = q.ttftMs > 0 ? f.ttftMs / q.ttftMs : 0.0;
  std::fprintf(info,
               "speedup over fp16: decode %.2fx (%.1f vs %.1f tokens/s), "
               "time to first token %.2fx (%.3f vs %.3f ms); the first "
               "%zu of %zu tokens agree\n",
               decodeSpeedup, q.decodeTokensPerSecond, f.decodeTokensPerSecond,
               ttftSpeedup, q.ttftMs, f.ttftMs, agree, q.tokens.size());
  out["fp16_run"] = resultJson(fp16);
  out["speedup"] = {{"decode", decodeSpeedup},
                    {"ttft", ttftSpeedup},
                    {"tokens_agreeing", agree}};
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"qfuse-run: generate tokens with a compiled model artifact "
               "(docs/decode-model.md)"};
  RunOptions o;
  addOptions(app, o);
  CLI11_PARSE(app, argc, argv);
  if (!resolveOptions(o))
    return 2;
  try {
    std::optional<qfuse::format::Encoding> encoding;
    if (!o.encodingText.empty())
      encoding = parseEncodingOption(o.encodingText);
    GenerateOptions options;
    options.sampling = o.sampling;
    options.hostSampling = o.hostSampling;
    std::optional<qfuse::text::Tokenizer> tokenizer =
        tokenizePrompt(o, options);
    std::optional<ModelCheckpoint> checkpoint;
    if (!o.modelDir.empty())
      checkpoint.emplace(ModelCheckpoint::open(o.modelDir));
    if (!o.savePacked.empty()) {
      if (!checkpoint)
        throw qfuse::Error("--save-packed needs --model DIR");
      // Every variant of a set packs the same checkpoint tensors in the
      // same encodings (row_major): any one describes the file.
      writePackedCheckpoint(ArtifactSet::load(o.artifactPath).variants()[0],
                            *checkpoint, o.savePacked);
      std::fprintf(info, "wrote the packed checkpoint for %s to %s\n",
                   o.artifactPath.c_str(), o.savePacked.c_str());
    }
    cuda::Context context(o.device);
    cuda::Stream stream;
    std::fprintf(info, "qfuse-run on %s, %s\n", context.describe().c_str(),
                qfuse::tools::utcNow().c_str());
    json out = runRecord(o, argc, argv, context, checkpoint, options);

    RunResult quantized = runArtifact(
        o.artifactPath, context, stream, checkpoint ? &*checkpoint : nullptr,
        o.randomSeed, o.threads, o.prompt, o.maxNew, o.warmup, options,
        tokenizer ? &*tokenizer : nullptr, encoding, o.encodingText, o.profileBatch,
        *parseRtnMode(o.rtn));
    out["run"] = resultJson(quantized);
    if (!o.fp16ArtifactPath.empty()) {
      RunResult fp16 =
          runArtifact(o.fp16ArtifactPath, context, stream,
                      checkpoint ? &*checkpoint : nullptr, o.randomSeed,
                      o.threads, o.prompt, o.maxNew, o.warmup, options,
                      tokenizer ? &*tokenizer : nullptr,
                      parseEncodingOption("fp16"), "fp16", o.profileBatch,
                      *parseRtnMode(o.rtn));
      compareWithFp16(quantized, fp16, out);
    }
    if (!o.jsonPath.empty()) {
      qfuse::writeFileAtomically(o.jsonPath, out.dump(2) + "\n");
      std::fprintf(info, "wrote %s\n", o.jsonPath.c_str());
    }
  } catch (const std::exception &e) {
    std::cerr << "qfuse-run: error: " << qfuse::errorText(e) << "\n";
    return 1;
  }
  return 0;
}
