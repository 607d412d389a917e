//===- ArtifactTest.cpp - artifact parsing and validation -----------------===//
//
// One valid artifact, checked field by field, then one broken copy per rule
// of docs/artifact.md, each expected to fail with a message that names the
// JSON field and the problem.
//
//===----------------------------------------------------------------------===//

#include "ValidArtifact.h"

#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/Error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <initializer_list>
#include <string>

using namespace qfuse::runtime;
using nlohmann::json;
using qfuse::testing::kValidArtifact;

namespace {

json valid() { return json::parse(kValidArtifact); }

/// Parses `artifact` expecting a qfuse::Error whose message contains every
/// fragment (and the source name).
void expectInvalid(const std::string &text,
                   std::initializer_list<const char *> fragments) {
  try {
    Artifact::parse(text, "test.qfa");
    FAIL() << "accepted an invalid artifact";
  } catch (const qfuse::Error &e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("artifact 'test.qfa'"), std::string::npos)
        << message;
    for (const char *fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "'" << fragment << "' not in: " << message;
  }
}

/// The valid artifact with one edit.
void expectInvalid(const std::function<void(json &)> &edit,
                   std::initializer_list<const char *> fragments) {
  json artifact = valid();
  edit(artifact);
  expectInvalid(artifact.dump(), fragments);
}

json &launchStep(json &a) { return a["plans"][0]["steps"][2]; }

} // namespace

//===----------------------------------------------------------------------===//
// The valid artifact
//===----------------------------------------------------------------------===//

TEST(Artifact, ParsesTheValidArtifact) {
  Artifact a = Artifact::parse(kValidArtifact, "test.qfa");
  EXPECT_EQ(a.source, "test.qfa");
  EXPECT_EQ(a.version, 2);
  EXPECT_EQ(a.producer, "qfuse-compile test");
  EXPECT_EQ(a.chip, "sm_90");
  EXPECT_EQ(a.target.major, 9);
  EXPECT_EQ(a.target.minor, 0);
  EXPECT_FALSE(a.target.archSpecific);
  EXPECT_EQ(a.ptxFeatures, "+ptx80");

  ASSERT_EQ(a.kernels.size(), 3u);
  const Kernel &matvec = a.kernels[0];
  EXPECT_EQ(matvec.name, "qf_matvec_0");
  EXPECT_EQ(matvec.cubin, (std::vector<uint8_t>{0x7f, 'E', 'L', 'F', 2, 1}));
  ASSERT_EQ(matvec.params.size(), 7u);
  EXPECT_EQ(matvec.params[4].type, ParamType::I32);
  EXPECT_EQ(matvec.params[5].type, ParamType::F32);
  EXPECT_EQ(matvec.params[6].type, ParamType::I64);
  EXPECT_EQ(matvec.sharedBytes, 1024);
  EXPECT_EQ(matvec.maxThreads, 256);
  EXPECT_EQ(a.kernels[2].maxThreads, 1024); // the default

  ASSERT_EQ(a.weights.size(), 2u);
  const WeightSpec &q = a.weights[0];
  EXPECT_EQ(q.n, 256);
  EXPECT_EQ(q.k, 512);
  EXPECT_EQ(q.encodingAttr.format, qfuse::format::ElementFormat::Int4);
  EXPECT_EQ(q.encodingAttr.groupSize, 128);
  EXPECT_EQ(q.layoutAttr.kind, qfuse::format::LayoutKind::Tiled);
  EXPECT_EQ(q.layoutAttr.tileN, 4);
  EXPECT_EQ(q.layoutAttr.tileK, 256);
  EXPECT_EQ(q.layoutAttr.interleave, 2);
  ASSERT_NE(q.findComponent("scales"), nullptr);
  EXPECT_EQ(q.findComponent("scales")->shape, (std::vector<int64_t>{256, 4}));
  EXPECT_EQ(q.findComponent("zeros"), nullptr);
  EXPECT_NE(a.weights[1].findComponent("zeros"), nullptr);
  EXPECT_TRUE(a.weights[1].layoutAttr.isRowMajor());

  ASSERT_EQ(a.tensors.size(), 1u);
  EXPECT_EQ(a.tensors[0].numBytes(), 1024u);

  ASSERT_EQ(a.buffers.size(), 3u);
  EXPECT_EQ(a.findBuffer("x")->numBytes(16), 16u * 512 * 2);
  EXPECT_EQ(a.findBuffer("y_partial")->numBytes(4), 2u * 4 * 256 * 4);
  EXPECT_TRUE(a.findBuffer("x")->shape[0].isBatch);
  EXPECT_EQ(a.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(a.outputs, std::vector<std::string>{"y"});

  ASSERT_EQ(a.plans.size(), 2u);
  const Plan &plan = a.plan(1);
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[0].kind, Step::Kind::Memset);
  EXPECT_EQ(plan.steps[0].target, "y_partial");
  const Step &launch = plan.steps[2];
  EXPECT_EQ(launch.kind, Step::Kind::Launch);
  EXPECT_EQ(launch.kernelIndex, 0u);
  EXPECT_EQ(launch.grid, (std::array<uint32_t, 3>{64, 1, 1}));
  EXPECT_EQ(launch.block, (std::array<uint32_t, 3>{128, 1, 1}));
  EXPECT_EQ(launch.sharedBytes, 4096u);
  ASSERT_EQ(launch.args.size(), 7u);
  EXPECT_EQ(launch.args[1].kind, Arg::Kind::Weight);
  EXPECT_EQ(launch.args[1].component, "codes");
  EXPECT_EQ(launch.args[4].intValue, -7);
  EXPECT_EQ(launch.args[5].floatValue, 0.5f);
  EXPECT_EQ(launch.args[6].intValue, 8589934592);
  EXPECT_EQ(plan.steps[1].args[1].kind, Arg::Kind::Tensor);
  EXPECT_EQ(a.plan(16).steps[0].kernelIndex, 2u);

  ASSERT_EQ(a.roofline.size(), 1u);
  EXPECT_EQ(a.roofline[0].bytes, 69632u);
}

TEST(Artifact, OptionalSectionsMayBeAbsent) {
  json a = valid();
  a.erase("roofline");
  a.erase("producer");
  a["kernels"][0].erase("cubin_base64");
  a["kernels"][0].erase("shared_bytes");
  Artifact parsed = Artifact::parse(a.dump(), "test.qfa");
  EXPECT_TRUE(parsed.roofline.empty());
  EXPECT_TRUE(parsed.kernels[0].cubin.empty());
}

TEST(Artifact, UnknownPlanBatchListsTheCompiledOnes) {
  Artifact a = Artifact::parse(kValidArtifact, "test.qfa");
  EXPECT_EQ(a.findPlan(2), nullptr);
  try {
    a.plan(2);
    FAIL();
  } catch (const qfuse::Error &e) {
    EXPECT_NE(std::string(e.what()).find("no plan for batch 2 (compiled "
                                         "batch sizes: 1, 16)"),
              std::string::npos)
        << e.what();
  }
}

TEST(Artifact, LoadNamesAMissingFile) {
  try {
    Artifact::load("/nonexistent/model.qfa");
    FAIL();
  } catch (const qfuse::Error &e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.qfa"),
              std::string::npos);
  }
}

//===----------------------------------------------------------------------===//
// The file as a whole
//===----------------------------------------------------------------------===//

TEST(ArtifactInvalid, NotJson) {
  expectInvalid("{\"format\": ", {"is not valid JSON"});
}

TEST(ArtifactInvalid, NotAnObject) {
  expectInvalid("[1]", {"top level", "expected an object"});
}

TEST(ArtifactInvalid, DuplicateKey) {
  expectInvalid(R"({"format": "qfuse-artifact", "format": "x"})",
                {"duplicate key 'format'"});
}

TEST(ArtifactInvalid, WrongFormat) {
  expectInvalid([](json &a) { a["format"] = "onnx"; },
                {"format", "expected \"qfuse-artifact\"", "\"onnx\""});
}

TEST(ArtifactInvalid, MissingFormat) {
  expectInvalid([](json &a) { a.erase("format"); }, {"missing field 'format'"});
}

TEST(ArtifactInvalid, OtherVersion) {
  expectInvalid([](json &a) { a["version"] = 8; },
                {"version", "found 8", "supports 2 to 7"});
}

//===----------------------------------------------------------------------===//
// Launch steps that name their op (version 4)
//===----------------------------------------------------------------------===//

TEST(Artifact, LaunchNamesItsOpAndGrid) {
  json a = json::parse(kValidArtifact);
  a["version"] = 4;
  launchStep(a)["op"] = "qf.gptq_block_update";
  launchStep(a)["encoding"] = "int4, group = 32, scale = f16";
  Artifact parsed = Artifact::parse(a.dump(), "test.qfa");
  const Step &step = parsed.plans[0].steps[2];
  EXPECT_EQ(step.op, "qf.gptq_block_update");
  ASSERT_TRUE(step.hasEncoding);
  EXPECT_EQ(step.encoding.format, qfuse::format::ElementFormat::Int4);
  EXPECT_EQ(step.encoding.groupSize, 32);
  EXPECT_TRUE(parsed.plans[0].steps[1].op.empty());
}

TEST(ArtifactInvalid, LaunchOpNeedsVersion4) {
  expectInvalid([](json &a) { launchStep(a)["op"] = "qf.gptq_block_update"; },
                {"plans[0].steps[2]", "needs version 4", "says 2"});
}

TEST(ArtifactInvalid, LaunchEncodingMustParse) {
  expectInvalid(
      [](json &a) {
        a["version"] = 4;
        launchStep(a)["op"] = "qf.gptq_block_update";
        launchStep(a)["encoding"] = "int4, group = 0, scale = f16";
      },
      {"plans[0].steps[2].encoding", "'int4, group = 0, scale = f16' is not "
                                     "an encoding",
       "group size must be at least 2"});
}

TEST(ArtifactInvalid, BlockUpdateLaunchNamesItsGrid) {
  expectInvalid(
      [](json &a) {
        a["version"] = 4;
        launchStep(a)["op"] = "qf.gptq_block_update";
      },
      {"plans[0].steps[2]", "names its grid in \"encoding\""});
}

TEST(ArtifactInvalid, Version1IsRejected) {
  expectInvalid([](json &a) { a["version"] = 1; },
                {"version", "found 1", "supports 2",
                 "recompile the model with this qfuse-compile"});
}

TEST(ArtifactInvalid, BadChip) {
  expectInvalid([](json &a) { a["target"]["chip"] = "gfx90a"; },
                {"target.chip", "\"gfx90a\"", "sm_90"});
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

TEST(ArtifactInvalid, LaunchWithoutKernels) {
  // No kernels is valid (gemm-only artifacts), but then nothing launches.
  expectInvalid([](json &a) { a["kernels"] = json::array(); },
                {"plans[0].steps[1].launch", "kernel 'qf_rmsnorm_0' is not "
                                             "defined"});
}

TEST(ArtifactInvalid, KernelWithoutCode) {
  expectInvalid([](json &a) { a["kernels"][1].erase("ptx"); },
                {"kernels[1]", "neither ptx nor a cubin"});
}

TEST(ArtifactInvalid, PtxWithoutTheEntry) {
  expectInvalid(
      [](json &a) {
        a["kernels"][1]["ptx"] = ".visible .entry qf_rmsnorm_01(\n)\n{}\n";
      },
      {"kernels[1].ptx", "does not define '.entry qf_rmsnorm_0'"});
}

TEST(ArtifactInvalid, BadCubinBase64) {
  expectInvalid([](json &a) { a["kernels"][0]["cubin_base64"] = "f0V*"; },
                {"kernels[0].cubin_base64", "not valid base64"});
}

TEST(ArtifactInvalid, DuplicateKernel) {
  expectInvalid([](json &a) { a["kernels"][1]["name"] = "qf_matvec_0"; },
                {"kernels[1].name", "duplicate kernel 'qf_matvec_0'"});
}

TEST(ArtifactInvalid, UnknownParamType) {
  expectInvalid([](json &a) { a["kernels"][0]["params"][4]["type"] = "u8"; },
                {"kernels[0].params[4].type", "unknown type \"u8\""});
}

TEST(ArtifactInvalid, MaxThreadsOutOfRange) {
  expectInvalid([](json &a) { a["kernels"][0]["max_threads"] = 2048; },
                {"kernels[0].max_threads", "2048 is out of range [1, 1024]"});
}

//===----------------------------------------------------------------------===//
// Weights, tensors, buffers
//===----------------------------------------------------------------------===//

TEST(ArtifactInvalid, UnknownEncoding) {
  expectInvalid(
      [](json &a) {
        a["weights"][0]["encoding"] = "int5, group = 128, scale = f16";
      },
      {"weights[0].encoding", "int5"});
}

TEST(ArtifactInvalid, EncodingThatDoesNotFitTheShape) {
  expectInvalid(
      [](json &a) {
        a["weights"][0]["shape"] = {256, 500};
      },
      {"weights[0].encoding", "[256, 500]", "does not divide"});
}

TEST(ArtifactInvalid, EncodingMissingScales) {
  expectInvalid(
      [](json &a) { a["weights"][0]["encoding"] = "int4, group = 128"; },
      {"weights[0].encoding", "needs scales"});
}

TEST(ArtifactInvalid, UnknownLayout) {
  expectInvalid([](json &a) { a["weights"][0]["layout"] = "blocked"; },
                {"weights[0].layout", "unknown layout 'blocked'"});
}

TEST(ArtifactInvalid, TiledLayoutWithoutTileK) {
  expectInvalid(
      [](json &a) { a["weights"][0]["layout"] = "tiled, tile_n = 4"; },
      {"weights[0].layout", "\"tiled, tile_n = 4\"",
       "needs positive tile_n and tile_k"});
}

TEST(ArtifactInvalid, TiledLayoutWithBadNumber) {
  expectInvalid(
      [](json &a) {
        a["weights"][0]["layout"] = "tiled, tile_n = 0, tile_k = 64";
      },
      {"weights[0].layout", "needs positive tile_n and tile_k, got 0"});
}

TEST(ArtifactInvalid, WeightShapeNotTwoDimensional) {
  expectInvalid([](json &a) { a["weights"][0]["shape"] = {256}; },
                {"weights[0].shape", "expected [N, K]"});
}

TEST(ArtifactInvalid, DuplicateWeight) {
  expectInvalid(
      [](json &a) {
        a["weights"][1]["name"] = "model.layers.0.self_attn.q_proj";
      },
      {"weights[1].name", "duplicate weight"});
}

TEST(ArtifactInvalid, TensorWithUnknownDtype) {
  expectInvalid([](json &a) { a["tensors"][0]["dtype"] = "f17"; },
                {"tensors[0].dtype", "unknown dtype \"f17\""});
}

TEST(ArtifactInvalid, BufferWithUnknownSymbol) {
  expectInvalid([](json &a) { a["buffers"][0]["shape"][0] = "N"; },
                {"buffers[0].shape[0]", "\"M\" (the batch)", "\"N\""});
}

TEST(ArtifactInvalid, BufferWithZeroExtent) {
  expectInvalid([](json &a) { a["buffers"][0]["shape"][1] = 0; },
                {"buffers[0].shape[1]", "out of range"});
}

TEST(ArtifactInvalid, BufferWithUnknownDtype) {
  expectInvalid([](json &a) { a["buffers"][1]["dtype"] = "float"; },
                {"buffers[1].dtype", "unknown dtype \"float\""});
}

TEST(ArtifactInvalid, InputThatIsNotABuffer) {
  expectInvalid([](json &a) { a["inputs"][0] = "tokens"; },
                {"inputs[0]", "buffer 'tokens' is not declared in 'buffers'"});
}

TEST(ArtifactInvalid, OutputThatIsNotABuffer) {
  expectInvalid([](json &a) { a["outputs"] = {"logits"}; },
                {"outputs[0]", "buffer 'logits'"});
}

//===----------------------------------------------------------------------===//
// Plans and steps
//===----------------------------------------------------------------------===//

TEST(ArtifactInvalid, NoPlans) {
  expectInvalid([](json &a) { a["plans"] = json::array(); },
                {"plans", "no plans"});
}

TEST(ArtifactInvalid, MissingPlans) {
  expectInvalid([](json &a) { a.erase("plans"); }, {"missing field 'plans'"});
}

TEST(ArtifactInvalid, DuplicateBatch) {
  expectInvalid([](json &a) { a["plans"][1]["batch"] = 1; },
                {"plans[1].batch", "duplicate plan for batch 1"});
}

TEST(ArtifactInvalid, ZeroBatch) {
  expectInvalid([](json &a) { a["plans"][0]["batch"] = 0; },
                {"plans[0].batch", "out of range"});
}

TEST(ArtifactInvalid, StepThatIsBothGemmAndMemset) {
  expectInvalid(
      [](json &a) {
        a["plans"][0]["steps"][0]["gemm"] = {
            {"x", "x"}, {"weight", "model.layers.0.self_attn.q_proj"},
            {"y", "y"}};
      },
      {"plans[0].steps[0]", "exactly one of"});
}

TEST(ArtifactInvalid, StepThatIsBothLaunchAndMemset) {
  expectInvalid([](json &a) { launchStep(a)["memset"] = "y"; },
                {"plans[0].steps[2]", "exactly one of"});
}

TEST(ArtifactInvalid, StepThatIsNeither) {
  expectInvalid(
      [](json &a) {
        a["plans"][0]["steps"][0] = {{"sync", 1}};
      },
      {"plans[0].steps[0]", "exactly one of"});
}

TEST(ArtifactInvalid, MemsetOfUnknownBuffer) {
  expectInvalid(
      [](json &a) { a["plans"][0]["steps"][0]["memset"] = "scratch"; },
      {"plans[0].steps[0].memset", "buffer 'scratch' is not declared"});
}

TEST(ArtifactInvalid, LaunchOfUnknownKernel) {
  expectInvalid([](json &a) { launchStep(a)["launch"] = "qf_gemm_9"; },
                {"plans[0].steps[2].launch",
                 "kernel 'qf_gemm_9' is not defined in 'kernels'"});
}

TEST(ArtifactInvalid, UnknownStepField) {
  expectInvalid([](json &a) { launchStep(a)["stream"] = 1; },
                {"plans[0].steps[2]", "unknown field 'stream'"});
}

TEST(ArtifactInvalid, GridWithZero) {
  expectInvalid(
      [](json &a) {
        launchStep(a)["grid"] = {0, 1, 1};
      },
      {"plans[0].steps[2].grid[0]", "out of range"});
}

TEST(ArtifactInvalid, GridWithTwoDims) {
  expectInvalid(
      [](json &a) {
        launchStep(a)["grid"] = {64, 1};
      },
      {"plans[0].steps[2].grid", "expected [x, y, z]"});
}

TEST(ArtifactInvalid, GridYTooLarge) {
  expectInvalid(
      [](json &a) {
        launchStep(a)["grid"] = {1, 70000, 1};
      },
      {"plans[0].steps[2].grid[1]", "out of range [1, 65535]"});
}

TEST(ArtifactInvalid, BlockTooLarge) {
  expectInvalid(
      [](json &a) {
        launchStep(a)["block"] = {2048, 1, 1};
      },
      {"plans[0].steps[2].block[0]", "out of range [1, 1024]"});
}

TEST(ArtifactInvalid, BlockOverTheKernelsMaxThreads) {
  expectInvalid(
      [](json &a) {
        launchStep(a)["block"] = {128, 4, 1};
      },
      {"plans[0].steps[2].block", "512 threads", "max_threads 256"});
}

TEST(ArtifactInvalid, TooMuchSharedMemory) {
  expectInvalid(
      [](json &a) { launchStep(a)["shared_bytes"] = 232000; },
      {"plans[0].steps[2].shared_bytes", "static 1024", "dynamic 232000"});
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

TEST(ArtifactInvalid, TooFewArguments) {
  expectInvalid([](json &a) { launchStep(a)["args"].erase(6); },
                {"plans[0].steps[2].args", "6 arguments for kernel "
                                           "'qf_matvec_0', which takes 7"});
}

TEST(ArtifactInvalid, BufferForAnI32Parameter) {
  expectInvalid(
      [](json &a) {
        launchStep(a)["args"][4] = {{"buffer", "x"}};
      },
      {"plans[0].steps[2].args[4]", "parameter 'm' is i32"});
}

TEST(ArtifactInvalid, ImmediateOfTheWrongType) {
  expectInvalid(
      [](json &a) {
        launchStep(a)["args"][4] = {{"f32", 1.0}};
      },
      {"plans[0].steps[2].args[4]", "f32 immediate",
       "parameter 'm' of type i32"});
  expectInvalid(
      [](json &a) {
        launchStep(a)["args"][0] = {{"i64", 1}};
      },
      {"plans[0].steps[2].args[0]", "parameter 'x' of type ptr"});
}

TEST(ArtifactInvalid, I32OutOfRange) {
  expectInvalid(
      [](json &a) {
        launchStep(a)["args"][4] = {{"i32", 4294967296}};
      },
      {"plans[0].steps[2].args[4].i32", "out of range"});
}

TEST(ArtifactInvalid, FloatForAnIntegerImmediate) {
  expectInvalid(
      [](json &a) {
        launchStep(a)["args"][4] = {{"i32", 1.5}};
      },
      {"plans[0].steps[2].args[4].i32", "expected an integer"});
}

TEST(ArtifactInvalid, UnknownBuffer) {
  expectInvalid(
      [](json &a) {
        launchStep(a)["args"][3] = {{"buffer", "z"}};
      },
      {"plans[0].steps[2].args[3]", "buffer 'z' is not declared in 'buffers'"});
}

TEST(ArtifactInvalid, UnknownWeight) {
  expectInvalid(
      [](json &a) {
        launchStep(a)["args"][1] = {{"weight", "model.lm_head"},
                                    {"component", "codes"}};
      },
      {"plans[0].steps[2].args[1]",
       "weight 'model.lm_head' is not declared in 'weights'"});
}

TEST(ArtifactInvalid, ComponentTheEncodingLacks) {
  expectInvalid(
      [](json &a) { launchStep(a)["args"][2]["component"] = "zeros"; },
      {"plans[0].steps[2].args[2]", "has no component 'zeros'",
       "it has codes, scales"});
}

TEST(ArtifactInvalid, WeightWithoutComponent) {
  expectInvalid([](json &a) { launchStep(a)["args"][1].erase("component"); },
                {"plans[0].steps[2].args[1]", "missing field 'component'"});
}

TEST(ArtifactInvalid, UnknownTensor) {
  expectInvalid(
      [](json &a) {
        a["plans"][0]["steps"][1]["args"][1] = {{"tensor", "model.bias"}};
      },
      {"plans[0].steps[1].args[1]",
       "tensor 'model.bias' is not declared in 'tensors'"});
}

TEST(ArtifactInvalid, ArgumentWithTwoKinds) {
  expectInvalid(
      [](json &a) {
        launchStep(a)["args"][0] = {{"buffer", "x"}, {"i32", 1}};
      },
      {"plans[0].steps[2].args[0]", "unknown field 'i32'"});
}

TEST(ArtifactInvalid, ArgumentOfNoKind) {
  expectInvalid(
      [](json &a) {
        launchStep(a)["args"][0] = {{"ptr", 0}};
      },
      {"plans[0].steps[2].args[0]",
       "expected one of buffer, weight, tensor, i32, i64, f32"});
}

TEST(ArtifactInvalid, NegativeRooflineBytes) {
  expectInvalid([](json &a) { a["roofline"][0]["bytes"] = -1; },
                {"roofline[0].bytes", "out of range"});
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Version 2: state buffers, gemm steps, "model"
//===----------------------------------------------------------------------===//

namespace {

/// The valid artifact plus what version 2 adds: a dense f16 weight read by a
/// gemm step (bias and residual), a state buffer and the model object.
json validV2() {
  json a = valid();
  a["weights"].push_back({{"name", "model.layers.0.mlp.down_proj"},
                          {"shape", {256, 512}},
                          {"encoding", "f16"},
                          {"layout", "row_major"}});
  a["tensors"].push_back({{"name", "model.layers.0.mlp.down_proj.bias"},
                          {"shape", {256}},
                          {"dtype", "f16"}});
  a["buffers"].push_back({{"name", "h"}, {"shape", {"M", 256}},
                          {"dtype", "f16"}});
  a["buffers"].push_back({{"name", "model.layers.0.self_attn.key_cache"},
                          {"shape", {64, 512}},
                          {"dtype", "f16"},
                          {"state", true}});
  a["plans"][0]["steps"].push_back(
      {{"gemm",
        {{"x", "x"},
         {"weight", "model.layers.0.mlp.down_proj"},
         {"y", "y"},
         {"bias", "model.layers.0.mlp.down_proj.bias"},
         {"residual", "h"}}}});
  a["plans"][0]["steps"].push_back(
      {{"memset", "model.layers.0.self_attn.key_cache"}});
  a["model"] = {{"architecture", "llama"}, {"vocab_size", 1000},
                {"hidden_size", 512},      {"num_layers", 1},
                {"num_heads", 4},          {"num_kv_heads", 2},
                {"head_dim", 128},         {"max_seq", 64},
                {"encoding", {{"q_proj", "int4-g128"}}}};
  return a;
}

json &gemmOf(json &a) { return a["plans"][0]["steps"][3]["gemm"]; }

void expectInvalidV2(const std::function<void(json &)> &edit,
                     std::initializer_list<const char *> fragments) {
  json artifact = validV2();
  edit(artifact);
  expectInvalid(artifact.dump(), fragments);
}

} // namespace

TEST(ArtifactV2, ParsesStateGemmAndModel) {
  Artifact a = Artifact::parse(validV2().dump(), "test.qfa");
  const BufferSpec *cache =
      a.findBuffer("model.layers.0.self_attn.key_cache");
  ASSERT_NE(cache, nullptr);
  EXPECT_TRUE(cache->state);
  EXPECT_FALSE(a.findBuffer("x")->state);
  EXPECT_EQ(cache->numBytes(16), 64u * 512 * 2);

  const Step &gemm = a.plan(1).steps[3];
  EXPECT_EQ(gemm.kind, Step::Kind::Gemm);
  EXPECT_EQ(gemm.gemm.x, "x");
  EXPECT_EQ(gemm.gemm.weight, "model.layers.0.mlp.down_proj");
  EXPECT_EQ(gemm.gemm.y, "y");
  EXPECT_EQ(gemm.gemm.bias, "model.layers.0.mlp.down_proj.bias");
  EXPECT_EQ(gemm.gemm.residual, "h");
  EXPECT_EQ(gemm.target, "model.layers.0.mlp.down_proj");
  // The dense f16 weight is one component: its f16 values as bytes.
  const WeightSpec &w = *a.findWeight("model.layers.0.mlp.down_proj");
  ASSERT_EQ(w.components.size(), 1u);
  EXPECT_EQ(w.components[0].name, "codes");
  EXPECT_EQ(w.components[0].shape, (std::vector<int64_t>{256, 1024}));

  EXPECT_TRUE(a.model.present);
  EXPECT_EQ(a.model.architecture, "llama");
  EXPECT_EQ(a.model.vocabSize, 1000);
  EXPECT_EQ(a.model.maxSeq, 64);
  EXPECT_EQ(a.model.numKvHeads, 2);
  EXPECT_EQ(json::parse(a.model.json)["encoding"]["q_proj"], "int4-g128");

  // Optional operands may be left out; "model" too.
  json plain = validV2();
  gemmOf(plain).erase("bias");
  gemmOf(plain).erase("residual");
  plain.erase("model");
  Artifact b = Artifact::parse(plain.dump(), "test.qfa");
  EXPECT_TRUE(b.plan(1).steps[3].gemm.bias.empty());
  EXPECT_TRUE(b.plan(1).steps[3].gemm.residual.empty());
  EXPECT_FALSE(b.model.present);
}

TEST(ArtifactV2, StateBufferWithBatchDimension) {
  expectInvalidV2(
      [](json &a) { a["buffers"][4]["shape"] = {"M", 512}; },
      {"buffers[4].shape", "state buffer 'model.layers.0.self_attn.key_cache'",
       "static shape", "\"M\""});
}

TEST(ArtifactV2, StateThatIsNotABoolean) {
  expectInvalidV2([](json &a) { a["buffers"][4]["state"] = 1; },
                  {"buffers[4].state", "expected true or false"});
}

TEST(ArtifactV2, GemmOfUnknownBuffer) {
  expectInvalidV2([](json &a) { gemmOf(a)["x"] = "nope"; },
                  {"plans[0].steps[3].gemm.x", "buffer 'nope' is not "
                                               "declared"});
}

TEST(ArtifactV2, GemmOfUnknownWeight) {
  expectInvalidV2([](json &a) { gemmOf(a)["weight"] = "w"; },
                  {"plans[0].steps[3].gemm.weight", "weight 'w' is not "
                                                    "declared"});
}

TEST(ArtifactV2, GemmOfAQuantizedWeight) {
  expectInvalidV2(
      [](json &a) {
        gemmOf(a)["weight"] = "model.layers.0.self_attn.q_proj";
      },
      {"gemm.weight", "'model.layers.0.self_attn.q_proj'",
       "\"int4, group = 128, scale = f16\"", "dense \"f16\""});
}

TEST(ArtifactV2, GemmOfA24SparseWeight) {
  expectInvalidV2(
      [](json &a) { a["weights"][2]["encoding"] = "f16, sparse = 2:4"; },
      {"gemm.weight", "f16, sparse = 2:4", "dense \"f16\""});
}

TEST(ArtifactV2, GemmWithMismatchedK) {
  // h is [M, 256]; resizing x instead would trip the launch that reads it.
  expectInvalidV2([](json &a) { gemmOf(a)["x"] = "h"; },
                  {"gemm.x", "buffer 'h' must be [M, 512]",
                   "'model.layers.0.mlp.down_proj' [256, 512]"});
}

TEST(ArtifactV2, GemmWithMismatchedN) {
  expectInvalidV2([](json &a) { gemmOf(a)["y"] = "x"; },
                  {"gemm.y", "buffer 'x' must be [M, 256]"});
}

TEST(ArtifactV2, GemmWithRowsThatDiffer) {
  expectInvalidV2([](json &a) { a["buffers"][1]["shape"] = {4, 256}; },
                  {"gemm.y", "other rows than x 'x'"});
}

TEST(ArtifactV2, GemmOfF32Buffers) {
  expectInvalidV2([](json &a) { a["buffers"][3]["dtype"] = "f32"; },
                  {"gemm.residual", "buffer 'h' is f32", "f16"});
}

TEST(ArtifactV2, GemmWhoseResidualIsY) {
  expectInvalidV2([](json &a) { gemmOf(a)["residual"] = "y"; },
                  {"gemm.residual", "residual 'y' is also y"});
}

TEST(ArtifactV2, GemmWithABiasOfTheWrongShape) {
  expectInvalidV2([](json &a) { a["tensors"][1]["shape"] = {512}; },
                  {"gemm.bias",
                   "tensor 'model.layers.0.mlp.down_proj.bias' must be "
                   "f16 [256]"});
}

TEST(ArtifactV2, GemmWithAnUnknownBias) {
  expectInvalidV2([](json &a) { gemmOf(a)["bias"] = "b"; },
                  {"gemm.bias", "tensor 'b' is not declared"});
}

TEST(ArtifactV2, GemmWithAnUnknownField) {
  expectInvalidV2([](json &a) { gemmOf(a)["alpha"] = 2; },
                  {"gemm", "unknown field 'alpha'"});
}

TEST(ArtifactV2, ModelThatIsNotAnObject) {
  expectInvalidV2([](json &a) { a["model"] = json::array(); },
                  {"model", "expected an object"});
}

TEST(ArtifactV2, ModelWithANonPositiveMaxSeq) {
  expectInvalidV2([](json &a) { a["model"]["max_seq"] = 0; },
                  {"model.max_seq", "out of range"});
}

TEST(ArtifactV2, ImmediatesForI32AndF32Parameters) {
  // Kernels other than the matvec take their immediates as i32 / f32.
  Artifact a = Artifact::parse(validV2().dump(), "test.qfa");
  const Step &launch = a.plan(1).steps[2];
  EXPECT_EQ(launch.args[4].kind, Arg::Kind::I32);
  EXPECT_EQ(launch.args[5].kind, Arg::Kind::F32);
}

//===----------------------------------------------------------------------===//
// Version 5: the dequantize + cuBLAS fallback
//===----------------------------------------------------------------------===//

namespace {

json bufferJson(const char *name, json shape, const char *dtype) {
  return {{"name", name}, {"shape", std::move(shape)}, {"dtype", dtype}};
}

json workspaceJson(const char *name, json shape, const char *dtype) {
  json buffer = bufferJson(name, std::move(shape), dtype);
  buffer["workspace"] = true;
  return buffer;
}

/// validV2 at version 5 plus the fallback: a qf.dequantize launch writes
/// q_proj [256, 512] into the flat f16 workspace "ws" (buffers[5], room for
/// more than one shape), an f16 gemm multiplies by it (steps[6]), a second
/// f16 gemm reads the same buffer as a [256, 256] weight (steps[7]), and a
/// bf16 gemm with bias and residual multiplies by the bf16 workspace "wsb"
/// (buffers[6], steps[8]).
json validV5() {
  json a = validV2();
  a["version"] = 5;
  a["kernels"].push_back(
      {{"name", "qf_dequantize_0"},
       {"ptx", ".visible .entry qf_dequantize_0(\n)\n{\nret;\n}\n"},
       {"params",
        {{{"name", "w"}, {"type", "ptr"}},
         {{"name", "codes"}, {"type", "ptr"}},
         {{"name", "scales"}, {"type", "ptr"}}}}});
  a["buffers"].push_back(workspaceJson("ws", {256 * 512 + 64}, "f16"));
  a["buffers"].push_back(workspaceJson("wsb", {256, 512}, "bf16"));
  a["buffers"].push_back(bufferJson("xb", {"M", 512}, "bf16"));
  a["buffers"].push_back(bufferJson("yb", {"M", 256}, "bf16"));
  a["buffers"].push_back(bufferJson("rb", {"M", 256}, "bf16"));
  a["tensors"].push_back({{"name", "bb"}, {"shape", {256}}, {"dtype", "bf16"}});
  json &steps = a["plans"][0]["steps"];
  const char *q = "model.layers.0.self_attn.q_proj";
  steps.push_back({{"launch", "qf_dequantize_0"},
                   {"op", "qf.dequantize"},
                   {"grid", {128, 1, 1}},
                   {"block", {256, 1, 1}},
                   {"args",
                    {{{"buffer", "ws"}},
                     {{"weight", q}, {"component", "codes"}},
                     {{"weight", q}, {"component", "scales"}}}}});
  steps.push_back(
      {{"gemm", {{"x", "x"}, {"weight_buffer", "ws"}, {"y", "y"}}}});
  steps.push_back(
      {{"gemm", {{"x", "y"}, {"weight_buffer", "ws"}, {"y", "h"}}}});
  steps.push_back({{"gemm",
                    {{"x", "xb"},
                     {"weight_buffer", "wsb"},
                     {"y", "yb"},
                     {"bias", "bb"},
                     {"residual", "rb"}}}});
  return a;
}

json &dequantizeStep(json &a) { return a["plans"][0]["steps"][5]; }
json &bufferGemmOf(json &a) { return a["plans"][0]["steps"][6]["gemm"]; }
json &bf16GemmOf(json &a) { return a["plans"][0]["steps"][8]["gemm"]; }

void expectInvalidV5(const std::function<void(json &)> &edit,
                     std::initializer_list<const char *> fragments) {
  json artifact = validV5();
  edit(artifact);
  expectInvalid(artifact.dump(), fragments);
}

/// validV2 with `version` and one step appended (steps[5]).
json v2With(int version, json step) {
  json a = validV2();
  a["version"] = version;
  a["plans"][0]["steps"].push_back(std::move(step));
  return a;
}

} // namespace

TEST(ArtifactV5, ParsesWorkspacesAndGemmsOnWeightBuffers) {
  Artifact a = Artifact::parse(validV5().dump(), "test.qfa");
  EXPECT_EQ(a.version, 5);
  const BufferSpec &ws = *a.findBuffer("ws");
  EXPECT_TRUE(ws.workspace);
  EXPECT_FALSE(ws.state);
  EXPECT_TRUE(ws.sharedByPlans());
  EXPECT_EQ(ws.numBytes(16), (256u * 512 + 64) * 2);
  EXPECT_FALSE(a.findBuffer("x")->workspace);
  EXPECT_TRUE(a.findBuffer("model.layers.0.self_attn.key_cache")
                  ->sharedByPlans());

  const Plan &plan = a.plan(1);
  const Step &fill = plan.steps[5];
  EXPECT_EQ(fill.op, "qf.dequantize");
  EXPECT_FALSE(fill.hasEncoding); // a dequantize names no grid
  EXPECT_EQ(dequantizeTarget(a, fill), "ws");
  EXPECT_EQ(dequantizeSource(fill), "model.layers.0.self_attn.q_proj");
  EXPECT_EQ(dequantizeTarget(a, plan.steps[2]), ""); // no op
  EXPECT_EQ(dequantizeSource(plan.steps[6]), "");    // a gemm

  const GemmStep &f16 = plan.steps[6].gemm;
  EXPECT_EQ(f16.weightBuffer, "ws");
  EXPECT_TRUE(f16.weight.empty());
  EXPECT_EQ(f16.dtype, DType::F16);
  EXPECT_EQ(plan.steps[6].target, "ws");
  EXPECT_EQ(plan.steps[7].gemm.weightBuffer, "ws"); // another shape
  const GemmStep &bf16 = plan.steps[8].gemm;
  EXPECT_EQ(bf16.dtype, DType::BF16);
  EXPECT_EQ(bf16.bias, "bb");
  EXPECT_EQ(bf16.residual, "rb");
  EXPECT_EQ(plan.steps[3].gemm.dtype, DType::F16); // a named weight
}

TEST(ArtifactV5, WorkspaceNeedsVersion5) {
  json a = validV2();
  a["version"] = 4;
  a["buffers"].push_back(workspaceJson("ws", {64}, "f16"));
  expectInvalid(a.dump(), {"buffers[5].workspace", "\"workspace\"",
                           "needs version 5", "the file says 4"});
}

TEST(ArtifactV5, WeightBufferNeedsVersion5) {
  json a = v2With(4, {{"gemm", {{"x", "x"}, {"weight_buffer", "w"}, {"y", "y"}}}});
  a["buffers"].push_back(bufferJson("w", {256 * 512}, "f16"));
  expectInvalid(a.dump(), {"plans[0].steps[5].gemm.weight_buffer",
                           "needs version 5", "the file says 4"});
}

TEST(ArtifactV5, Bf16GemmNeedsVersion5) {
  json a = v2With(3, {{"gemm",
                       {{"x", "xb"},
                        {"weight", "model.layers.0.mlp.down_proj"},
                        {"y", "yb"}}}});
  a["buffers"].push_back(bufferJson("xb", {"M", 512}, "bf16"));
  a["buffers"].push_back(bufferJson("yb", {"M", 256}, "bf16"));
  expectInvalid(a.dump(), {"plans[0].steps[5].gemm.x", "buffer 'xb' is bf16",
                           "a bf16 gemm step needs version 5",
                           "the file says 3"});
}

TEST(ArtifactV5, DequantizeOpNeedsVersion5) {
  json a = validV5();
  a["version"] = 4;
  for (json &buffer : a["buffers"])
    buffer.erase("workspace");
  json &steps = a["plans"][0]["steps"];
  steps.erase(steps.begin() + 6, steps.end()); // the gemms on weight buffers
  expectInvalid(a.dump(), {"plans[0].steps[5].op", "\"qf.dequantize\"",
                           "needs version 5", "the file says 4"});
}

TEST(ArtifactV5, OtherVersionsNameTheFallback) {
  expectInvalidV5([](json &a) { a["version"] = 8; },
                  {"version", "found 8", "supports 2 to 7",
                   "version 5 the dequantize + cuBLAS fallback"});
}

TEST(ArtifactV5, WorkspaceWithBatchDimension) {
  expectInvalidV5([](json &a) { a["buffers"][5]["shape"] = {"M", 512}; },
                  {"buffers[5].shape", "workspace buffer 'ws'",
                   "static shape", "\"M\""});
}

TEST(ArtifactV5, WorkspaceThatIsAlsoState) {
  expectInvalidV5([](json &a) { a["buffers"][5]["state"] = true; },
                  {"buffers[5].workspace", "buffer 'ws'",
                   "both \"state\" and \"workspace\""});
}

TEST(ArtifactV5, WorkspaceThatIsNotABoolean) {
  expectInvalidV5([](json &a) { a["buffers"][5]["workspace"] = "yes"; },
                  {"buffers[5].workspace", "expected true or false"});
}

TEST(ArtifactV5, GemmWithBothWeights) {
  expectInvalidV5(
      [](json &a) {
        bufferGemmOf(a)["weight"] = "model.layers.0.mlp.down_proj";
      },
      {"plans[0].steps[6].gemm.weight_buffer",
       "found both \"weight\" and \"weight_buffer\"", "exactly one of"});
}

TEST(ArtifactV5, GemmWithNeitherWeight) {
  expectInvalidV5([](json &a) { bufferGemmOf(a).erase("weight_buffer"); },
                  {"plans[0].steps[6].gemm.weight", "missing field 'weight'",
                   "exactly one of"});
}

TEST(ArtifactV5, GemmOnAnUnknownWeightBuffer) {
  expectInvalidV5([](json &a) { bufferGemmOf(a)["weight_buffer"] = "nope"; },
                  {"plans[0].steps[6].gemm.weight_buffer",
                   "buffer 'nope' is not declared"});
}

TEST(ArtifactV5, WeightBufferOfAnotherDtype) {
  expectInvalidV5([](json &a) { a["buffers"][6]["dtype"] = "f16"; },
                  {"plans[0].steps[8].gemm.weight_buffer",
                   "buffer 'wsb' is f16", "reads and writes bf16"});
}

TEST(ArtifactV5, WeightBufferSmallerThanNTimesK) {
  expectInvalidV5([](json &a) { a["buffers"][5]["shape"] = {1000}; },
                  {"plans[0].steps[6].gemm.weight_buffer", "buffer 'ws' [1000]",
                   "holds 1000 elements", "fewer than N * K = 256 * 512",
                   "x 'x'", "y 'y'"});
}

TEST(ArtifactV5, WeightBufferWithABatchExtent) {
  // Not a workspace: a plan's own buffer, but its size depends on M.
  expectInvalidV5(
      [](json &a) {
        a["buffers"].push_back(bufferJson("wm", {"M", 256 * 512}, "f16"));
        bufferGemmOf(a)["weight_buffer"] = "wm";
      },
      {"plans[0].steps[6].gemm.weight_buffer", "buffer 'wm' [M, 131072]",
       "has \"M\"", "static shape"});
}

TEST(ArtifactV5, WeightBufferThatIsAlsoY) {
  expectInvalidV5(
      [](json &a) {
        a["buffers"].push_back(bufferJson("xs", {256, 256}, "f16"));
        a["buffers"].push_back(bufferJson("sq", {256, 256}, "f16"));
        a["plans"][0]["steps"].push_back(
            {{"gemm", {{"x", "xs"}, {"weight_buffer", "sq"}, {"y", "sq"}}}});
      },
      {"plans[0].steps[9].gemm.weight_buffer", "weight buffer 'sq' is also y"});
}

TEST(ArtifactV5, WeightBufferGemmNeedsAMatrixX) {
  expectInvalidV5([](json &a) { a["buffers"][7]["shape"] = {2, "M", 512}; },
                  {"plans[0].steps[8].gemm.x", "buffer 'xb' [2, M, 512]",
                   "must be [M, K] with a static last extent"});
}

TEST(ArtifactV5, Bf16GemmOnANamedWeight) {
  expectInvalidV5(
      [](json &a) {
        bf16GemmOf(a).erase("weight_buffer");
        bf16GemmOf(a)["weight"] = "model.layers.0.mlp.down_proj";
      },
      {"plans[0].steps[8].gemm.x", "buffer 'xb' is bf16",
       "a gemm step on a named weight reads and writes f16",
       "bf16 needs a \"weight_buffer\""});
}

TEST(ArtifactV5, Bf16GemmWithAnF16Y) {
  expectInvalidV5([](json &a) { a["buffers"][8]["dtype"] = "f16"; },
                  {"plans[0].steps[8].gemm.y", "buffer 'yb' is f16",
                   "reads and writes bf16, x's dtype"});
}

TEST(ArtifactV5, Bf16GemmWithAnF16Residual) {
  expectInvalidV5([](json &a) { a["buffers"][9]["dtype"] = "f16"; },
                  {"plans[0].steps[8].gemm.residual", "buffer 'rb' is f16",
                   "reads and writes bf16"});
}

TEST(ArtifactV5, Bf16GemmWithAnF16Bias) {
  expectInvalidV5([](json &a) { a["tensors"][2]["dtype"] = "f16"; },
                  {"plans[0].steps[8].gemm.bias",
                   "tensor 'bb' must be bf16 [256] (found f16 [256])"});
}

TEST(ArtifactV5, F16GemmWithABf16Bias) {
  expectInvalidV5([](json &a) { bufferGemmOf(a)["bias"] = "bb"; },
                  {"plans[0].steps[6].gemm.bias", "tensor 'bb' must be f16 "
                                                  "[256] (found bf16 [256])"});
}

TEST(ArtifactV5, GemmOfF32X) {
  expectInvalidV5([](json &a) { a["buffers"][7]["dtype"] = "f32"; },
                  {"plans[0].steps[8].gemm.x", "buffer 'xb' is f32",
                   "f16 (or, with a \"weight_buffer\", bf16)"});
}

TEST(ArtifactV5, DequantizeLaunchWithoutW) {
  expectInvalidV5(
      [](json &a) { a["kernels"][3]["params"][0]["name"] = "out"; },
      {"plans[0].steps[5].args", "qf.dequantize launch writes the weight "
                                 "through parameter \"w\"",
       "kernel 'qf_dequantize_0' has none"});
}

TEST(ArtifactV5, DequantizeLaunchOfTwoWeights) {
  expectInvalidV5(
      [](json &a) {
        dequantizeStep(a)["args"][2]["weight"] =
            "model.layers.0.self_attn.k_proj";
      },
      {"plans[0].steps[5].args[2]", "reads one weight",
       "found 'model.layers.0.self_attn.k_proj' besides "
       "'model.layers.0.self_attn.q_proj'"});
}

TEST(ArtifactV5, DequantizeLaunchOfNoWeight) {
  expectInvalidV5(
      [](json &a) {
        dequantizeStep(a)["args"][1] = {{"buffer", "x"}};
        dequantizeStep(a)["args"][2] = {{"buffer", "y"}};
      },
      {"plans[0].steps[5].args", "reads a weight; its arguments name none"});
}

//===----------------------------------------------------------------------===//
// Cross-checks: what one section says must agree with the others
//===----------------------------------------------------------------------===//

TEST(ArtifactInvalid, WeightKThatDisagreesWithX) {
  // The weight's K changed while the launch's x is still [M, 512].
  expectInvalid([](json &a) { a["weights"][0]["shape"][1] = 640; },
                {"plans[0].steps[2].args[1]",
                 "weight 'model.layers.0.self_attn.q_proj' [256, 640]",
                 "x 'x' [M, 512]", "K = 640"});
}

TEST(ArtifactInvalid, XThatDisagreesWithTheWeight) {
  expectInvalid([](json &a) { a["buffers"][0]["shape"][1] = 4096; },
                {"plans[0].steps[2].args[1]", "x 'x' [M, 4096]", "K = 512"});
}

TEST(ArtifactInvalid, YThatDisagreesWithTheWeight) {
  expectInvalid([](json &a) { a["buffers"][1]["shape"][1] = 320; },
                {"plans[0].steps[2].args[1]", "y 'y' [M, 320]", "N = 256"});
}

TEST(ArtifactInvalid, NumberedYThatDisagreesWithItsWeight) {
  // A fused launch names each weight's output after its codes: codes.1 -> y.1.
  expectInvalid(
      [](json &a) {
        a["kernels"][0]["params"][1]["name"] = "codes.1";
        a["kernels"][0]["params"][3]["name"] = "y.1";
        a["buffers"][1]["shape"][1] = 320;
      },
      {"plans[0].steps[2].args[1]", "y.1 'y' [M, 320]", "N = 256"});
}

TEST(Artifact, LaunchWithoutXOrYIsNotShapeChecked) {
  // qf_matvec_1 names its output "out": nothing says which extent is N.
  json artifact = valid();
  artifact["buffers"][2]["shape"] = {2, "M", 999};
  EXPECT_NO_THROW(Artifact::parse(artifact.dump(), "test.qfa"));
}

TEST(ArtifactInvalid, BufferWithTwoBatchExtents) {
  expectInvalid([](json &a) { a["buffers"][0]["shape"] = {"M", "M", 512}; },
                {"buffers[0].shape", "buffer 'x'", "more than one \"M\""});
}

TEST(ArtifactInvalid, DuplicateInput) {
  expectInvalid([](json &a) { a["inputs"] = {"x", "y", "x"}; },
                {"inputs[2]", "buffer 'x' is listed twice in 'inputs'"});
}

TEST(ArtifactInvalid, DuplicateOutput) {
  expectInvalid([](json &a) { a["outputs"] = {"y", "y"}; },
                {"outputs[1]", "buffer 'y' is listed twice in 'outputs'"});
}

TEST(ArtifactInvalid, NoOutputs) {
  expectInvalid([](json &a) { a["outputs"] = json::array(); },
                {"outputs", "no outputs"});
}

TEST(ArtifactInvalid, GarbagePtxFeatures) {
  for (const char *features :
       {"garbage", "+ptx80,garbage", "+ptx8", "ptx80", "+ptx80,", "+ptx800",
        "+ptx1x", "+ptx00", "+sm_90"}) {
    SCOPED_TRACE(features);
    const std::string quoted = "\"" + std::string(features) + "\"";
    expectInvalid(
        [&](json &a) { a["target"]["ptx_features"] = features; },
        {"target.ptx_features", quoted.c_str(), "not a PTX feature"});
  }
}

TEST(Artifact, PtxFeaturesListPtxVersions) {
  for (const char *features : {"+ptx80", "+ptx80,+ptx83", "+ptx60", ""}) {
    json artifact = valid();
    artifact["target"]["ptx_features"] = features;
    EXPECT_EQ(Artifact::parse(artifact.dump(), "test.qfa").ptxFeatures,
              features);
  }
}

TEST(ChipTarget, Parses) {
  std::optional<ChipTarget> t = ChipTarget::parse("sm_90a");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->major, 9);
  EXPECT_EQ(t->minor, 0);
  EXPECT_TRUE(t->archSpecific);
  EXPECT_EQ(t->str(), "sm_90a");
  ASSERT_TRUE(ChipTarget::parse("sm_120"));
  EXPECT_EQ(ChipTarget::parse("sm_120")->major, 12);
  EXPECT_EQ(ChipTarget::parse("sm_86")->minor, 6);
  EXPECT_FALSE(ChipTarget::parse("sm_9"));
  EXPECT_FALSE(ChipTarget::parse("sm_"));
  EXPECT_FALSE(ChipTarget::parse("compute_90"));
  EXPECT_FALSE(ChipTarget::parse("sm_9x"));
}

TEST(Base64, Decodes) {
  EXPECT_EQ(decodeBase64("aGVsbG8="),
            (std::vector<uint8_t>{'h', 'e', 'l', 'l', 'o'}));
  EXPECT_EQ(decodeBase64("aGVs\nbG8h"),
            (std::vector<uint8_t>{'h', 'e', 'l', 'l', 'o', '!'}));
  EXPECT_EQ(decodeBase64(""), std::vector<uint8_t>{});
  EXPECT_FALSE(decodeBase64("aGVsbG8"));  // not a multiple of 4
  EXPECT_FALSE(decodeBase64("aG=sbG8=")); // data after padding
  EXPECT_FALSE(decodeBase64("aGV$bG8=")); // not base64
}
