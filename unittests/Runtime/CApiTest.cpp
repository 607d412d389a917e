//===- CApiTest.cpp - the C API's contract, without a GPU -------------------===//
//
// What bindings rely on: return codes, NULL handles, and messages that name
// the problem. GPU execution through the same library is exercised by
// scripts/gpu-round.sh (qfuse-bench shares every call path below qfuse_run).
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/qfuse.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace {

std::string writeTemp(const std::string &name, const std::string &text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(CApi, Version) { EXPECT_EQ(qfuse_artifact_version(), 7); }

TEST(CApi, CanonicalEncodingFromNamesAndText) {
  char out[256];
  ASSERT_EQ(qfuse_canonical_encoding("int4-g128", out, sizeof(out)), 0);
  EXPECT_STREQ(out, "int4, group = 128, scale = f16");
  ASSERT_EQ(qfuse_canonical_encoding("uint4, zero = int, scale = f16, group = 64",
                                     out, sizeof(out)),
            0);
  EXPECT_STREQ(out, "uint4, group = 64, scale = f16, zero = int");
  ASSERT_EQ(qfuse_canonical_encoding("nvfp4", out, sizeof(out)), 0);
  EXPECT_STREQ(out, "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale");
}

TEST(CApi, CanonicalEncodingErrors) {
  char out[8];
  EXPECT_EQ(qfuse_canonical_encoding("int5", out, sizeof(out)), -1);
  EXPECT_NE(std::string(qfuse_last_error()).find("int5"), std::string::npos);
  EXPECT_EQ(qfuse_canonical_encoding("int4-g128", out, sizeof(out)), -1);
  EXPECT_NE(std::string(qfuse_last_error()).find("needs"), std::string::npos)
      << qfuse_last_error();
  EXPECT_EQ(qfuse_canonical_encoding("int4, group = 128, scale = f16", nullptr, 0),
            -1);
}

TEST(CApi, ValidateNamesTheFileAndField) {
  EXPECT_EQ(qfuse_validate_artifact("/nonexistent/model.qfa"), -1);
  EXPECT_NE(std::string(qfuse_last_error()).find("/nonexistent/model.qfa"),
            std::string::npos)
      << qfuse_last_error();
  std::string bad = writeTemp("bad.qfa", R"({"format": "qfuse-artifact", "version": 8})");
  EXPECT_EQ(qfuse_validate_artifact(bad.c_str()), -1);
  EXPECT_NE(std::string(qfuse_last_error()).find("version"), std::string::npos)
      << qfuse_last_error();
  std::string garbage = writeTemp("garbage.qfa", "{not json");
  EXPECT_EQ(qfuse_validate_artifact(garbage.c_str()), -1);
  EXPECT_STRNE(qfuse_last_error(), "");
}

// An artifact set is validated variant by variant, without a device.
TEST(CApi, ValidateChecksEveryVariantOfASet) {
  const std::string variant = R"({"format": "qfuse-artifact", "version": 2,
    "target": {"chip": "CHIP"}, "kernels": [], "weights": [], "tensors": [],
    "buffers": [{"name": "y", "shape": ["M", 8], "dtype": "f16"}],
    "inputs": [], "outputs": ["y"],
    "plans": [{"batch": 1, "steps": [{"memset": "y"}]}]})";
  auto withChip = [&](const std::string &chip) {
    std::string text = variant;
    return text.replace(text.find("CHIP"), 4, chip);
  };
  std::string good = writeTemp(
      "set.qfa", R"({"format": "qfuse-artifact-set", "version": 1, "variants": [)" +
                     withChip("sm_80") + "," + withChip("sm_90a") + "]}");
  EXPECT_EQ(qfuse_validate_artifact(good.c_str()), 0) << qfuse_last_error();
  std::string bad = writeTemp(
      "bad-set.qfa", R"({"format": "qfuse-artifact-set", "version": 1, "variants": [)" +
                         withChip("sm_80") + "," + withChip("sm_9x") + "]}");
  EXPECT_EQ(qfuse_validate_artifact(bad.c_str()), -1);
  EXPECT_NE(std::string(qfuse_last_error()).find("variants[1].target.chip"),
            std::string::npos)
      << qfuse_last_error();
}

TEST(CApi, OpenFailsCleanly) {
  EXPECT_EQ(qfuse_open("/nonexistent/model.qfa", 0), nullptr);
  EXPECT_NE(std::string(qfuse_last_error()).find("qfuse_open"),
            std::string::npos);
  // Handle-taking calls reject NULL instead of crashing.
  EXPECT_EQ(qfuse_run(nullptr, 1), -1);
  EXPECT_NE(std::string(qfuse_last_error()).find("NULL"), std::string::npos);
  EXPECT_EQ(qfuse_bind_random_weights(nullptr, 1), -1);
  char chip[16];
  EXPECT_EQ(qfuse_target_chip(nullptr, chip, sizeof chip), -1);
  EXPECT_EQ(qfuse_buffer_bytes(nullptr, 1, "x"), -1);
  qfuse_close(nullptr);
}

TEST(CApi, ModelCallsRejectANullHandle) {
  EXPECT_EQ(qfuse_load_checkpoint(nullptr, "/nonexistent", 0), -1);
  EXPECT_NE(std::string(qfuse_last_error()).find("qfuse_load_checkpoint"),
            std::string::npos);
  const int32_t prompt[] = {1, 2};
  int32_t out[4];
  qfuse_generate_stats stats;
  EXPECT_EQ(qfuse_generate(nullptr, prompt, 2, 4, out, &stats), -1);
  EXPECT_NE(std::string(qfuse_last_error()).find("qfuse_generate: the "
                                                 "runtime handle is NULL"),
            std::string::npos)
      << qfuse_last_error();
}

TEST(CApi, DeviceCountIsNotAnError) { EXPECT_GE(qfuse_device_count(), 0); }

// qfuse_quantize's options are checked before anything runs: bad JSON, a
// misspelt key, a wrong type, missing required fields, a model directory
// that does not exist. Each is -1 and a message naming the problem.
TEST(CApi, QuantizeRejectsBadOptions) {
  char report[256] = "untouched";
  auto expectError = [&](const char *options, const std::string &fragment) {
    EXPECT_EQ(qfuse_quantize(options, report, sizeof report), -1) << options;
    const std::string message = qfuse_last_error();
    EXPECT_NE(message.find("qfuse_quantize"), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos)
        << options << " -> " << message;
  };
  expectError(nullptr, "NULL");
  expectError("{not json", "not JSON");
  expectError("[1, 2]", "JSON object");
  expectError("{\"modle\": \"x\"}", "unknown option 'modle'");
  expectError("{\"model\": 3}", "option 'model' must be a string");
  expectError("{\"act_order\": 1}", "'act_order' must be true or false");
  expectError("{\"seed\": -1}", "'seed' must be a non-negative integer");
  expectError("{\"seq_len\": 1.5}", "'seq_len' must be an integer");
  expectError("{\"model\": \"m\"}", "are all required");
  expectError("{\"model\": \"/nonexistent/model\", \"encoding\": "
              "\"int4-g128\", \"calibration\": \"random:4\", \"out\": "
              "\"/tmp/qfuse-capi-quantize-out\", \"seq_len\": 0}",
              "sequence length must be positive");
  expectError("{\"model\": \"/nonexistent/model\", \"encoding\": "
              "\"int4-g128\", \"calibration\": \"random:4\", \"out\": "
              "\"/tmp/qfuse-capi-quantize-out\"}",
              "/nonexistent/model");
  EXPECT_STREQ(report, "untouched");
}

} // namespace
