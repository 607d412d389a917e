//===- WriteFaultTest.cpp - a quantized checkpoint written on a fault -----===//
//
// writeQuantizedCheckpoint over an earlier output, in a child process that
// runs out of disk (a file-size limit) or of host memory (an address-space
// limit): the error names what failed and where (the file and tensor, or the
// step), and the directory keeps the earlier checkpoint byte for byte, with
// no temporary left behind. A run without the fault then succeeds.
//
//===----------------------------------------------------------------------===//

#include "ChildProcess.h"
#include "TempFiles.h"

#include "qfuse/format/Packing.h"
#include "qfuse/reference/SyntheticModel.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/checkpoint/QuantizedCheckpoint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

using namespace qfuse::runtime;
using qfuse::testing::ChildResult;
using qfuse::testing::runInChild;
namespace fmt = qfuse::format;
namespace ref = qfuse::reference;
namespace fs = std::filesystem;

using qfuse::testing::filesOf;
using qfuse::testing::makeTempDir;

namespace {

/// A synthetic bf16 tiny Qwen2 (tied embeddings) of `vocab` tokens: the
/// embeddings are the big tensor, vocab x 256 x 2 bytes.
/// Written by a child process, so that this one's heap keeps no freed
/// memory from it (the out-of-memory test counts on the allocations it
/// makes needing new address space).
ModelCheckpoint synthetic(int64_t vocab = 1024) {
  ref::ModelConfig config = ref::syntheticPreset("tiny-qwen2");
  config.vocabSize = vocab;
  const std::string dir = makeTempDir("qfuse-fault") + "/source";
  ChildResult r = runInChild([&] {
    ref::writeSyntheticModel(config, dir, {/*seed=*/5, ref::StorageType::BF16});
  });
  if (r.status != ChildResult::Returned)
    throw qfuse::Error("writing the synthetic model: " + r.message);
  return ModelCheckpoint::open(dir);
}

/// q_proj of layer 0 as int4-g128, round-to-nearest from seeded values.
QuantizedWeight quantizedQ(const ModelCheckpoint &source, uint32_t seed) {
  QuantizedWeight w;
  w.name = "model.layers.0.self_attn.q_proj";
  std::string error;
  if (!fmt::encodingFromName("int4-g128", w.encoding, error))
    throw qfuse::Error(error);
  const TensorInfo *info = source.find(w.name + ".weight");
  w.n = info->shape[0];
  w.k = info->shape[1];
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> values(size_t(w.n * w.k));
  for (float &v : values)
    v = normal(rng);
  if (!fmt::quantizeRTN(w.encoding, values.data(), w.n, w.k, w.weight, error))
    throw qfuse::Error(error);
  return w;
}

void expectContains(const std::string &text, const std::string &part) {
  EXPECT_NE(text.find(part), std::string::npos)
      << "expected '" << part << "' in: " << text;
}

TEST(WriteFault, FullDiskKeepsTheEarlierCheckpoint) {
  ModelCheckpoint source = synthetic();
  const std::string outDir = makeTempDir("qfuse-fault") + "/out";
  writeQuantizedCheckpoint(source, {quantizedQ(source, 1)},
                           CheckpointFormat::CompressedTensors, outDir);
  const auto before = filesOf(outDir);
  ChildResult r = runInChild([&] {
    qfuse::testing::limitFileSize(256 << 10);
    writeQuantizedCheckpoint(source, {quantizedQ(source, 2)},
                             CheckpointFormat::AutoGptq, outDir, nullptr,
                             /*overwrite=*/true);
  });
  ASSERT_EQ(r.status, ChildResult::Threw) << r.message;
  expectContains(r.message, "writing '" + outDir + "/model.safetensors' failed");
  expectContains(r.message, "(tensor '");
  expectContains(r.message, "File too large");
  EXPECT_EQ(filesOf(outDir), before) << "the earlier checkpoint changed";
  // The same write without the limit.
  writeQuantizedCheckpoint(source, {quantizedQ(source, 2)},
                           CheckpointFormat::AutoGptq, outDir, nullptr, true);
  EXPECT_EQ(ModelCheckpoint::open(outDir).config().quantization,
            CheckpointQuantization::GPTQ);
}

// gcc says a sanitizer build by __SANITIZE_*__, clang by __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define QFUSE_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define QFUSE_TEST_SANITIZED 1
#endif
#endif
#ifndef QFUSE_TEST_SANITIZED
#define QFUSE_TEST_SANITIZED 0
#endif

TEST(WriteFault, HostOutOfMemoryNamesTheStep) {
#if QFUSE_TEST_SANITIZED
  GTEST_SKIP() << "the sanitizers' allocators abort instead of throwing "
                  "std::bad_alloc under an address-space limit";
#endif
  // 128 MB of embeddings, copied into the writer in one allocation: more
  // than the 4 MB the child may still map, and than the 64 MB a malloc
  // arena of another thread may hold in reserve.
  ModelCheckpoint source = synthetic(262144);
  const std::string outDir = makeTempDir("qfuse-fault") + "/out";
  ChildResult r = runInChild([&] {
    QuantizedWeight q = quantizedQ(source, 1);
    qfuse::testing::limitAddressSpace(4 << 20);
    writeQuantizedCheckpoint(source, {std::move(q)},
                             CheckpointFormat::CompressedTensors, outDir);
  });
  ASSERT_EQ(r.status, ChildResult::Threw) << r.message;
  expectContains(r.message, "out of host memory while copying tensor "
                            "'model.embed_tokens.weight' (134217728 bytes)");
  EXPECT_FALSE(fs::exists(outDir + "/model.safetensors"));
  if (fs::exists(outDir))
    EXPECT_TRUE(filesOf(outDir).empty()) << "a partial file was left";
}

} // namespace
