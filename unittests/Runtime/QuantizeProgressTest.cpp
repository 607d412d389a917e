//===- QuantizeProgressTest.cpp - an interrupted quantize run, on disk ----===//
//
// What `qfuse-quantize --resume` relies on, without a GPU: each layer's
// record (packed modules, the report) reads back byte for byte; the manifest commits a layer only once its
// files are whole, so a run killed or failing mid-record resumes at the last
// layer committed; a resume whose inputs differ is refused, naming them.
// The GPU half (a run killed mid-way, resumed, compared byte for byte) is
// scripts/quantize-resume-check.sh.
//
//===----------------------------------------------------------------------===//

#include "ChildProcess.h"

#include "qfuse/format/Packing.h"
#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/gptq/QuantizeProgress.h"
#include "qfuse/runtime/gptq/RunIdentity.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

using namespace qfuse::runtime;
using qfuse::testing::ChildResult;
using qfuse::testing::runInChild;
namespace fmt = qfuse::format;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kLayers = 3;

std::string makeDir() {
  std::string pattern = ::testing::TempDir() + "qfuse-progress-XXXXXX";
  if (!mkdtemp(pattern.data()))
    throw qfuse::Error("mkdtemp failed");
  return pattern;
}

fmt::Encoding int4() {
  fmt::Encoding enc;
  std::string error;
  if (!fmt::encodingFromName("int4-g128", enc, error))
    throw qfuse::Error(error);
  return enc;
}

RunIdentity identity(const std::string &seed = "0") {
  RunIdentity id;
  id.add("model", "/models/tiny");
  id.add("encoding", fmt::printEncoding(int4()));
  id.add("seed", seed);
  return id;
}

/// Layer `layer`'s two modules, packed from seeded random weights.
std::vector<QuantizeProgress::Module> modules(int64_t layer) {
  std::vector<QuantizeProgress::Module> out;
  for (const char *name : {"self_attn.q_proj", "mlp.down_proj"}) {
    QuantizeProgress::Module m;
    m.name = "model.layers." + std::to_string(layer) + "." + name;
    m.n = 16;
    m.k = 256;
    std::mt19937 rng(uint32_t(layer * 10 + out.size()));
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> w(size_t(m.n * m.k));
    for (float &v : w)
      v = normal(rng);
    fmt::Unpacked u;
    auto components = std::make_shared<fmt::TensorMap>();
    std::string error;
    if (!fmt::quantizeRTN(int4(), w.data(), m.n, m.k, u, error) ||
        !fmt::pack(int4(), u, m.n, m.k, *components, error))
      throw qfuse::Error(error);
    m.packed = components;
    out.push_back(m);
  }
  return out;
}

std::string report(int64_t layer) {
  return "{\"layer\":" + std::to_string(layer) + ",\"groups\":[]}";
}

void record(QuantizeProgress &p, int64_t layer) {
  p.recordLayer(layer, modules(layer), report(layer));
}

std::vector<std::string> files(const std::string &dir) {
  std::vector<std::string> names;
  for (const auto &entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void expectError(const std::function<void()> &body,
                 const std::vector<std::string> &parts) {
  try {
    body();
    ADD_FAILURE() << "expected an error";
  } catch (const qfuse::Error &e) {
    for (const std::string &part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "expected '" << part << "' in: " << e.what();
  }
}

TEST(QuantizeProgress, RecordsReadBackExactly) {
  const std::string out = makeDir() + "/out";
  {
    QuantizeProgress p(out, identity(), kLayers, /*resume=*/false);
    EXPECT_EQ(p.layersDone(), 0);
    EXPECT_FALSE(fs::exists(p.directory())) << "nothing before a layer is done";
    record(p, 0);
    record(p, 1);
  }
  QuantizeProgress p(out, identity(), kLayers, /*resume=*/true);
  ASSERT_EQ(p.layersDone(), 2);
  EXPECT_EQ(p.layerReports(), (std::vector<std::string>{
                                  "{\"groups\":[],\"layer\":0}",
                                  "{\"groups\":[],\"layer\":1}"}));
  for (int64_t layer = 0; layer < 2; ++layer) {
    std::vector<QuantizedWeight> loaded = p.loadLayer(layer, int4());
    ASSERT_EQ(loaded.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      const QuantizeProgress::Module want = modules(layer)[i];
      const QuantizedWeight &got = loaded[i];
      EXPECT_EQ(got.name, want.name);
      EXPECT_EQ(got.n, want.n);
      EXPECT_EQ(got.k, want.k);
      EXPECT_TRUE(got.encoding == int4());
      ASSERT_TRUE(got.packed);
      ASSERT_EQ(got.packed->size(), want.packed->size());
      for (const auto &[name, tensor] : *want.packed) {
        EXPECT_EQ(got.packed->at(name).data, tensor.data) << name;
        EXPECT_EQ(got.packed->at(name).shape, tensor.shape) << name;
        EXPECT_EQ(got.packed->at(name).dtype, tensor.dtype) << name;
      }
    }
  }
  expectError([&] { p.loadLayer(2, int4()); },
              {"layer 2 of 2 recorded is not there"});
  // The layers' files and the manifest, nothing else: calibration inputs
  // an earlier version wrote go as stale.
  qfuse::writeFileAtomically(p.directory() + "/inputs-00002.safetensors", "x");
  record(p, 2);
  EXPECT_EQ(files(p.directory()),
            (std::vector<std::string>{"layer-00000.safetensors",
                                      "layer-00001.safetensors",
                                      "layer-00002.safetensors",
                                      "manifest.json"}));
  p.finish();
  EXPECT_FALSE(fs::exists(QuantizeProgress::directoryFor(out)));
  // Its files go in the background: within seconds nothing is left.
  auto leftovers = [&] {
    int count = 0;
    for (const auto &entry : fs::directory_iterator(out))
      count += entry.path().filename().string().rfind(".qfuse-progress", 0) == 0;
    return count;
  };
  for (int i = 0; i < 100 && leftovers(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(leftovers(), 0);
}

TEST(QuantizeProgress, ResumeNeedsTheSameInputs) {
  const std::string out = makeDir() + "/out";
  {
    QuantizeProgress p(out, identity(), kLayers, false);
    record(p, 0);
  }
  expectError([&] { QuantizeProgress(out, identity(), kLayers, false); },
              {"holds the progress of an interrupted run", "pass --resume",
               "remove '" + QuantizeProgress::directoryFor(out) + "'"});
  expectError([&] { QuantizeProgress(out, identity("7"), kLayers, true); },
              {"cannot resume", "seed: '0' in the progress, '7' now"});
  RunIdentity extra = identity();
  extra.add("damp", "0.01");
  expectError([&] { QuantizeProgress(out, extra, kLayers, true); },
              {"damp: not in the progress, '0.01' now"});
  expectError([&] { QuantizeProgress(out, identity(), kLayers + 1, true); },
              {"records 3 layers, the model has 4"});
  EXPECT_EQ(QuantizeProgress(out, identity(), kLayers, true).layersDone(), 1);
  // Nothing recorded: a resume starts at layer 0.
  EXPECT_EQ(QuantizeProgress(makeDir() + "/other", identity(), kLayers, true)
                .layersDone(),
            0);
}

// A run killed while recording layer 1 (its file written, the manifest not
// yet, a temporary left): the resume starts at layer 1 and clears the rest.
TEST(QuantizeProgress, KilledMidRecordResumesAtTheLastCommittedLayer) {
  const std::string out = makeDir() + "/out";
  std::string dir;
  {
    QuantizeProgress p(out, identity(), kLayers, false);
    record(p, 0);
    dir = p.directory();
  }
  ChildResult r = runInChild([&] {
    QuantizeProgress p(out, identity(), kLayers, true);
    // Layer 1's file cannot be written whole: the disk is full.
    qfuse::testing::limitFileSize(1000);
    record(p, 1);
  });
  ASSERT_EQ(r.status, ChildResult::Threw) << r.message;
  EXPECT_NE(r.message.find("layer-00001.safetensors"), std::string::npos)
      << r.message;
  qfuse::writeFileAtomically(dir + "/layer-00001.safetensors.partial-1-0", "x");
  QuantizeProgress p(out, identity(), kLayers, true);
  EXPECT_EQ(p.layersDone(), 1);
  EXPECT_EQ(files(dir), (std::vector<std::string>{"layer-00000.safetensors",
                                                  "manifest.json"}));
  record(p, 1); // and on from there
  EXPECT_EQ(p.layersDone(), 2);
}

TEST(QuantizeProgress, DamagedProgressSaysHowToStartOver) {
  const std::string out = makeDir() + "/out";
  std::string dir;
  {
    QuantizeProgress p(out, identity(), kLayers, false);
    record(p, 0);
    dir = p.directory();
  }
  fs::rename(dir + "/layer-00000.safetensors", dir + "/elsewhere");
  expectError([&] { QuantizeProgress(out, identity(), kLayers, true); },
              {"its layer file 'layer-00000.safetensors' is missing",
               "remove '" + dir + "'"});
  qfuse::writeFileAtomically(dir + "/manifest.json", "{\"format\": 1");
  expectError([&] { QuantizeProgress(out, identity(), kLayers, true); },
              {"not JSON", "to start over"});
  QuantizeProgress fresh(makeDir() + "/out", identity(), kLayers, false);
  expectError([&] { record(fresh, 1); },
              {"layer 1 recorded after 0 of 3 layers"});
}

TEST(RunIdentity, FilesAndDifferences) {
  const std::string dir = makeDir();
  qfuse::writeFileAtomically(dir + "/a.qfa", "kernels");
  RunIdentity one;
  one.add("seed", "0");
  one.addFile("artifact", dir + "/a.qfa");
  one.addLargeFile("shard", dir + "/a.qfa");
  EXPECT_EQ(differences(one, one), "");
  qfuse::writeFileAtomically(dir + "/a.qfa", "kernelz");
  RunIdentity two;
  two.add("seed", "0");
  two.addFile("artifact", dir + "/a.qfa");
  const std::string why = differences(one, two);
  EXPECT_NE(why.find("artifact: '7 bytes, fnv1a64 "), std::string::npos) << why;
  EXPECT_NE(why.find("shard: '7 bytes, modified"), std::string::npos) << why;
  EXPECT_NE(why.find("in the progress, not now"), std::string::npos) << why;
  EXPECT_THROW(two.add("seed", "1"), qfuse::Error);
  EXPECT_EQ(fileHash(dir + "/a.qfa").size(), 16u);
  EXPECT_NE(quantizerBuild().find("fnv1a64 "), std::string::npos);
}

} // namespace
