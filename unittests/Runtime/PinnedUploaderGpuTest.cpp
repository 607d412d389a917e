//===- PinnedUploaderGpuTest.cpp - uploads through pinned staging ---------===//
//
// PinnedUploader on a GPU, byte for byte: random uploads larger than two
// staging buffers (split, the ring wrapping) and smaller than one (sharing
// a buffer) into device buffers poisoned with 0xFF, their host sources
// scrambled as soon as upload() returns; the fallback to synchronous
// uploads when pinned memory cannot be had; and loadCheckpoint binding an
// f16 checkpoint straight from the mapped file, its components downloaded
// and compared with the file's bytes. Every test skips with
// "qfuse-gpu-skip:" and the reason where no device is usable.
//
//===----------------------------------------------------------------------===//

#include "GpuFixture.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"
#include "qfuse/runtime/device/Executor.h"
#include "qfuse/runtime/device/ModelLoader.h"
#include "qfuse/runtime/device/PinnedUploader.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

using namespace qfuse::runtime;
using nlohmann::json;

namespace {

class PinnedUploaderGpu : public qfuse::testing::GpuFixture {
protected:
  /// A device buffer of `size` bytes, all 0xFF, so that a missed copy shows.
  cuda::DeviceBuffer poisoned(size_t size, const std::string &label) {
    cuda::DeviceBuffer buffer(size, label);
    buffer.fill(0xFF, stream->get());
    stream->synchronize();
    return buffer;
  }
};

/// Random bytes (xorshift64).
std::vector<uint8_t> randomBytes(size_t size, uint64_t seed) {
  std::vector<uint8_t> bytes(size);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < size; i += 8) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    std::memcpy(&bytes[i], &state, std::min<size_t>(8, size - i));
  }
  return bytes;
}

/// The first byte where the device's `size` bytes at `ptr` differ from
/// `want`, or -1.
int64_t firstDifference(CUdeviceptr ptr, const std::vector<uint8_t> &want) {
  std::vector<uint8_t> got(want.size());
  EXPECT_EQ(cuMemcpyDtoH(got.data(), ptr, got.size()), CUDA_SUCCESS);
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      return int64_t(i);
  return -1;
}

} // namespace

TEST_F(PinnedUploaderGpu, LargeAndSmallUploadsArriveByteForByte) {
  const size_t b = PinnedUploader::kBufferBytes;
  // Small ones share buffers; the large ones split, the second wrapping
  // the ring (4 buffers) back into buffers that must wait first.
  const std::vector<size_t> sizes = {1000, 2 * b + 12345, 777, b + 5, 3};
  PinnedUploader uploader;
  std::vector<cuda::DeviceBuffer> buffers;
  std::vector<std::vector<uint8_t>> want;
  for (size_t i = 0; i < sizes.size(); ++i) {
    buffers.push_back(poisoned(sizes[i], "upload " + std::to_string(i)));
    want.push_back(randomBytes(sizes[i], i + 1));
    std::vector<uint8_t> source = want.back();
    uploader.upload(buffers.back(), source.data(), source.size());
    // Read on return: the source may change at once.
    std::memset(source.data(), 0xFF, source.size());
  }
  uploader.finish();
  EXPECT_TRUE(uploader.pinned());
  for (size_t i = 0; i < sizes.size(); ++i)
    EXPECT_EQ(firstDifference(buffers[i].ptr(), want[i]), -1)
        << "upload " << i << " of " << sizes[i] << " bytes";
}

TEST_F(PinnedUploaderGpu, FallsBackToSynchronousUploadsWithoutPinnedMemory) {
  // No host can pin a petabyte: the first upload falls back.
  PinnedUploader uploader(size_t(1) << 50, 2);
  std::vector<uint8_t> want = randomBytes(3 << 20, 9);
  cuda::DeviceBuffer buffer = poisoned(want.size(), "fallback");
  uploader.upload(buffer, want.data(), want.size());
  EXPECT_FALSE(uploader.pinned());
  uploader.finish();
  EXPECT_EQ(firstDifference(buffer.ptr(), want), -1);
}

// An f16 checkpoint into f16 row_major weights: the loader uploads the
// mapped file's bytes through the pinned ring; `w` is larger than two
// staging buffers, `v` smaller than one.
TEST_F(PinnedUploaderGpu, LoaderBindsAnF16CheckpointFromTheMappedFile) {
  constexpr int64_t kN = 8448, kK = 8192, kSmallN = 16, kSmallK = 32;
  static_assert(size_t(kN * kK * 2) > 2 * PinnedUploader::kBufferBytes);
  json a = {{"format", "qfuse-artifact"},
            {"version", kArtifactVersion},
            {"producer", "PinnedUploaderGpuTest"},
            {"target", {{"chip", context->chip()}}},
            {"kernels", json::array()},
            {"inputs", json::array()}};
  a["weights"] = {{{"name", "w"},
                   {"shape", {kN, kK}},
                   {"encoding", "f16"},
                   {"layout", "row_major"}},
                  {{"name", "v"},
                   {"shape", {kSmallN, kSmallK}},
                   {"encoding", "f16"},
                   {"layout", "row_major"}}};
  a["tensors"] = {{{"name", "b"}, {"shape", {kN}}, {"dtype", "f16"}}};
  a["buffers"] = {
      {{"name", "x"}, {"shape", {"M", kK}}, {"dtype", "f16"}},
      {{"name", "y"}, {"shape", {"M", kN}}, {"dtype", "f16"}},
      {{"name", "x2"}, {"shape", {"M", kSmallK}}, {"dtype", "f16"}},
      {{"name", "y2"}, {"shape", {"M", kSmallN}}, {"dtype", "f16"}}};
  a["outputs"] = {"y", "y2"};
  a["plans"] = {
      {{"batch", 1},
       {"steps",
        {{{"gemm", {{"x", "x"}, {"weight", "w"}, {"y", "y"}, {"bias", "b"}}}},
         {{"gemm", {{"x", "x2"}, {"weight", "v"}, {"y", "y2"}}}}}}}};
  Artifact artifact = Artifact::parse(a.dump(), "pinned-upload.qfa");

  // Random f16 bit patterns without NaN (a NaN is converted, not copied).
  auto halves = [](size_t count, uint64_t seed) {
    std::vector<uint8_t> bytes = randomBytes(count * 2, seed);
    for (size_t i = 0; i < count; ++i)
      if ((bytes[2 * i + 1] & 0x7C) == 0x7C)
        bytes[2 * i + 1] &= 0x3F; // finite
    return bytes;
  };
  const std::vector<uint8_t> w = halves(size_t(kN * kK), 1);
  const std::vector<uint8_t> v = halves(size_t(kSmallN * kSmallK), 2);
  const std::vector<uint8_t> bias = halves(size_t(kN), 3);
  std::string dir = ::testing::TempDir() + "qfuse-pinned-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  std::ofstream(dir + "/config.json") << "{\"model_type\": \"test\"}";
  {
    SafetensorsWriter writer;
    writer.add("w.weight", DType::F16, {kN, kK}, w.data(), w.size());
    writer.add("v.weight", DType::F16, {kSmallN, kSmallK}, v.data(), v.size());
    writer.add("b", DType::F16, {kN}, bias.data(), bias.size());
    writer.write(dir + "/model.safetensors");
  }
  ModelCheckpoint checkpoint = ModelCheckpoint::open(dir);

  // Freed poisoned memory, which the loader's allocations most likely reuse.
  poisoned(w.size() + v.size() + bias.size() + (1 << 20), "poison");
  Executor executor(artifact, *context);
  LoadStats stats = loadCheckpoint(executor, checkpoint, 4);
  EXPECT_EQ(stats.weights, 2u);
  EXPECT_EQ(stats.tensors, 1u);
  EXPECT_TRUE(executor.unboundArguments().empty());
  std::printf("bound %.1f MB in %.3f s\n",
              (w.size() + v.size() + bias.size()) / 1e6, stats.seconds);
  ASSERT_EQ(executor.componentBytes("w", "codes"), w.size());
  ASSERT_EQ(executor.componentBytes("v", "codes"), v.size());
  EXPECT_EQ(firstDifference(executor.componentPointer("w", "codes"), w), -1);
  EXPECT_EQ(firstDifference(executor.componentPointer("v", "codes"), v), -1);
  std::filesystem::remove_all(dir);
}
