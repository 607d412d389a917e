//===- StreamingSafetensorsWriterTest.cpp - tensors written as they come --===//
//
// Random files streamed in shuffled order from several threads (one with
// its writeback started every 4 KB) must hold
// SafetensorsWriter::serialize()'s bytes for the same tensors; every misuse
// (an unknown tensor, one written twice or with the wrong size, one never
// written) is an error naming the tensor, and a failed or abandoned stream
// leaves nothing at the path and an earlier file unchanged.
//
//===----------------------------------------------------------------------===//

#include "ChildProcess.h"
#include "TempFiles.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"
#include "qfuse/runtime/checkpoint/StreamingSafetensorsWriter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
#include <sstream>
#include <thread>

using namespace qfuse::runtime;
using qfuse::testing::ChildResult;
using qfuse::testing::runInChild;
namespace fs = std::filesystem;

using qfuse::testing::makeTempDir;
using qfuse::testing::readFileBytes;
using qfuse::testing::listDir;
using qfuse::testing::expectError;

namespace {

/// Random tensors: names in no particular order (the header sorts them, the
/// data keeps this order), dtypes of 1, 2, 4 and 8 bytes and F4, shapes of
/// rank 0 to 3 with empty ones among them, random bytes.
struct RandomTensors {
  std::vector<TensorInfo> infos;
  std::vector<std::vector<uint8_t>> bytes;
};

RandomTensors randomTensors(uint32_t seed, int count) {
  std::mt19937 rng(seed);
  const DType types[] = {DType::U8,  DType::F16, DType::BF16, DType::I32,
                         DType::F32, DType::F64, DType::F4,   DType::F8E4M3};
  RandomTensors out;
  for (int t = 0; t < count; ++t) {
    TensorInfo info;
    info.name = "model.t" + std::to_string(rng() % 100000) + "." +
                std::to_string(t);
    info.dtype = types[rng() % std::size(types)];
    const int rank = int(rng() % 4);
    for (int d = 0; d < rank; ++d)
      info.shape.push_back(int64_t(rng() % (t % 9 == 0 ? 3 : 40)));
    if (info.dtype == DType::F4 && info.numElements() % 2)
      info.shape.push_back(2);
    std::vector<uint8_t> bytes(
        *dtypeStorageBytes(info.dtype, info.numElements()));
    for (uint8_t &b : bytes)
      b = uint8_t(rng());
    out.infos.push_back(std::move(info));
    out.bytes.push_back(std::move(bytes));
  }
  return out;
}

const std::map<std::string, std::string> kMetadata = {
    {"format", "pt"}, {"qfuse.encoding.w", "int4, group = 128"}};

/// Two tensors: "a" F32 [2, 2] and "b" I32 [3].
std::vector<TensorInfo> twoTensors() {
  return {{"a", DType::F32, {2, 2}}, {"b", DType::I32, {3}}};
}

} // namespace

// Seed 3 with the writeback started every 4 KB (AtomicFile's step), which
// its 60 tensors cross many times.
TEST(StreamingSafetensorsWriter, ManyThreadsInAnyOrderWriteSerializesBytes) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    const uint64_t step = seed == 3 ? 4096 : qfuse::AtomicFile::kWritebackStep;
    RandomTensors random = randomTensors(seed, 60);
    SafetensorsWriter reference;
    for (const auto &[key, value] : kMetadata)
      reference.setMetadata(key, value);
    for (size_t i = 0; i < random.infos.size(); ++i)
      reference.add(random.infos[i].name, random.infos[i].dtype,
                    random.infos[i].shape, random.bytes[i].data(),
                    random.bytes[i].size());

    const std::string path = makeTempDir("qfuse-stream") + "/model.safetensors";
    StreamingSafetensorsWriter out(path, random.infos, kMetadata, step);
    std::vector<size_t> order(random.infos.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937(seed));
    std::atomic<size_t> next{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        for (size_t i = next++; i < order.size(); i = next++)
          out.write(random.infos[order[i]].name, random.bytes[order[i]].data(),
                    random.bytes[order[i]].size());
      });
    for (std::thread &t : threads)
      t.join();
    EXPECT_TRUE(out.unwritten().empty());
    EXPECT_FALSE(fs::exists(path)) << "in place before commit()";
#ifdef __linux__
    if (step < out.size())
      EXPECT_GT(out.writebackStarted(), out.size() - step) << "seed " << seed;
#endif
    out.commit();
    const std::vector<uint8_t> file = readFileBytes(path);
    EXPECT_EQ(file.size(), out.size());
    EXPECT_TRUE(file == reference.serialize()) << "seed " << seed;
    EXPECT_EQ(listDir(fs::path(path).parent_path()),
              std::vector<std::string>{"model.safetensors"});
  }
}

TEST(StreamingSafetensorsWriter, ErrorsNameTheTensor) {
  const std::string path = makeTempDir("qfuse-stream") + "/model.safetensors";
  StreamingSafetensorsWriter out(path, twoTensors(), {});
  uint8_t data[16] = {};
  expectError([&] { out.write("c", data, 12); },
              {"safetensors '" + path + "'", "tensor 'c'", "is not in the file"});
  expectError([&] { out.write("a", data, 12); },
              {"tensor 'a'", "given 12 bytes", "need 16"});
  out.write("a", data, 16);
  expectError([&] { out.write("a", data, 16); },
              {"tensor 'a'", "written twice"});
  EXPECT_EQ(out.unwritten(), std::vector<std::string>{"b"});
  expectError([&] { out.commit(); },
              {"1 of 2 tensors were never written: 'b'",
               "nothing was written to '" + path + "'"});
  EXPECT_FALSE(fs::exists(path));
  // The tensor left out, then the commit.
  out.write("b", data, 12);
  out.commit();
  EXPECT_EQ(SafetensorsFile::open(path).tensors().size(), 2u);
}

TEST(StreamingSafetensorsWriter, CommitNamesEveryTensorNeverWritten) {
  const std::string dir = makeTempDir("qfuse-stream"), path = dir + "/model.safetensors";
  {
    StreamingSafetensorsWriter out(
        path, {{"x", DType::U8, {1}}, {"y", DType::U8, {2}}, {"z", DType::U8, {3}}},
        {});
    uint8_t data[2] = {};
    out.write("y", data, 2);
    expectError([&] { out.commit(); },
                {"2 of 3 tensors were never written: 'x', 'z'"});
  }
  EXPECT_TRUE(listDir(dir).empty()) << "the temporary was left behind";
}

TEST(StreamingSafetensorsWriter, RefusesWhatTheHeaderCannotHold) {
  const std::string dir = makeTempDir("qfuse-stream"), path = dir + "/model.safetensors";
  expectError(
      [&] {
        StreamingSafetensorsWriter(path,
                                   {{"a", DType::U8, {1}}, {"a", DType::U8, {2}}},
                                   {});
      },
      {"tensor 'a'", "listed twice"});
  expectError(
      [&] {
        StreamingSafetensorsWriter(path, {{"odd", DType::F4, {3}}}, {});
      },
      {"tensor 'odd'", "not a whole number of bytes"});
  expectError(
      [&] {
        StreamingSafetensorsWriter(path, {{"__metadata__", DType::U8, {1}}},
                                   {});
      },
      {"'__metadata__' is a reserved name"});
  EXPECT_TRUE(listDir(dir).empty());
}

// An abandoned stream (an exception elsewhere before commit) and a disk too
// small for the reservation: nothing at the path but the earlier file, and
// no temporary.
TEST(StreamingSafetensorsWriter, FailureLeavesTheEarlierFile) {
  const std::string dir = makeTempDir("qfuse-stream"), path = dir + "/model.safetensors";
  qfuse::writeFileAtomically(path, "an earlier, complete file");
  const std::vector<uint8_t> earlier = readFileBytes(path);
  {
    StreamingSafetensorsWriter out(path, twoTensors(), {});
    uint8_t data[16] = {};
    out.write("a", data, 16);
  }
  EXPECT_EQ(readFileBytes(path), earlier);
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"model.safetensors"});

  ChildResult r = runInChild([&] {
    qfuse::testing::limitFileSize(64 << 10);
    StreamingSafetensorsWriter(path, {{"big", DType::U8, {1 << 20}}}, {});
  });
  ASSERT_EQ(r.status, ChildResult::Threw) << r.message;
  EXPECT_NE(r.message.find("writing '" + path + "' failed (reserving its "),
            std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("File too large"), std::string::npos) << r.message;
  EXPECT_EQ(readFileBytes(path), earlier);
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"model.safetensors"});
}
