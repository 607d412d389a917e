//===- QuantizeGpuTest.cpp - the generated RTN kernels against quantizeRTN ===//
//
// Every qf.quantize kernel of the quantize test artifact (compiled from
// test/Tools/qfuse-cpu-check/Inputs/quantize-formats.mlir by
// bench/quantize-at-load/make-artifacts.sh; QFUSE_QUANTIZE_QFA overrides the
// path) runs on random weights (row counts it was not compiled for), with
// rows of exact ties, subnormals, equal values and signed zeros, into
// output buffers poisoned with 0xFF; every byte must equal
// format::quantizeRTN's. A NaN must set the status word. NVFP4 kernels get
// the tensor's largest magnitude from DeviceAmax (as quantize() does); its
// tests put that magnitude in different rows, and across DeviceAmax's
// slices.
//
//===----------------------------------------------------------------------===//

#include "QuantizeArtifactFixture.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/device/DeviceAmax.h"
#include "qfuse/runtime/device/DeviceQuantizer.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

namespace qfuse::testing {
namespace {

using runtime::DeviceQuantizer;
using runtime::DType;
namespace cuda = runtime::cuda;

float roundTo(float v, DType t) {
  if (t == DType::F16)
    return format::halfToFloat(format::floatToHalf(v));
  if (t == DType::BF16)
    return format::bfloat16ToFloat(format::floatToBFloat16(v));
  return v;
}

/// Random weights of mixed scale, with special rows: ties of rint on a
/// power-of-two scale, subnormals, one repeated value, signed zeros.
std::vector<float> makeWeights(int64_t n, int64_t k, DType t, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  double tiny = t == DType::F16    ? std::ldexp(1.0, -24)
                : t == DType::BF16 ? std::ldexp(1.0, -133)
                                   : std::ldexp(1.0, -149);
  std::vector<float> w(size_t(n * k));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < k; ++j) {
      double v;
      switch (r % 6) {
      case 0:
        v = j % 32 == 0 ? 7.0 / 32 : ((j % 14) - 7 + 0.5) / 32.0;
        break;
      case 1:
        v = double((j % 41) - 20) * tiny;
        break;
      case 2:
        v = 0.3;
        break;
      case 3:
        v = (j % 3) ? -0.0 : 0.0;
        break;
      default:
        v = normal(rng) * std::ldexp(0.02, int(j % 9) - 4);
      }
      w[size_t(r * k + j)] = roundTo(float(v), t);
    }
  return w;
}

std::vector<uint8_t> toBytes(const std::vector<float> &w, DType t) {
  size_t size = t == DType::F32 ? 4 : 2;
  std::vector<uint8_t> bytes(w.size() * size);
  for (size_t i = 0; i < w.size(); ++i) {
    if (t == DType::F32) {
      std::memcpy(&bytes[4 * i], &w[i], 4);
      continue;
    }
    uint16_t h = t == DType::BF16 ? format::floatToBFloat16(w[i])
                                  : format::floatToHalf(w[i]);
    std::memcpy(&bytes[2 * i], &h, 2);
  }
  return bytes;
}

class QuantizeGpuTest : public QuantizeArtifactFixture {
protected:
  void SetUp() override {
    QuantizeArtifactFixture::SetUp();
    if (IsSkipped())
      return;
    quantizer.emplace(*artifact, *context);
  }

  /// Runs the kernel of `key` on `w` ([n, K]) into poisoned buffers;
  /// returns the status and the downloaded components.
  int32_t run(const DeviceQuantizer::Key &key, const std::vector<float> &w,
              int64_t n, format::TensorMap &out) {
    std::vector<format::ComponentSpec> specs;
    std::string error;
    EXPECT_TRUE(format::componentSpecs(key.encoding, n, key.k, specs, error))
        << error;
    std::vector<uint8_t> bytes = toBytes(w, key.input);
    cuda::DeviceBuffer input(bytes.size(), "w");
    input.upload(bytes.data(), bytes.size());
    std::map<std::string, cuda::DeviceBuffer> buffers;
    std::map<std::string, CUdeviceptr> outputs;
    for (const format::ComponentSpec &spec : specs) {
      size_t size = size_t(format::numElements(spec.shape)) *
                    format::dtypeBytes(spec.dtype);
      cuda::DeviceBuffer buffer(size, spec.name);
      buffer.fill(0xFF, stream->get());
      outputs[spec.name] = buffer.ptr();
      buffers.emplace(spec.name, std::move(buffer));
    }
    cuda::DeviceBuffer status(4, "status"), amax(4, "amax");
    status.zero(stream->get());
    if (key.encoding.globalScale) {
      float value = amaxFinder().largestMagnitude(input.ptr(), n * key.k,
                                                  key.input, stream->get());
      amax.upload(&value, 4);
    }
    quantizer->enqueue(key.encoding, input.ptr(), n, key.k, key.input, outputs,
                       status.ptr(), stream->get(),
                       key.encoding.globalScale ? amax.ptr() : 0);
    stream->synchronize();
    for (const format::ComponentSpec &spec : specs) {
      format::Tensor &t = out[spec.name];
      t.dtype = spec.dtype;
      t.shape = spec.shape;
      t.data.resize(buffers.at(spec.name).size());
      buffers.at(spec.name).download(t.data.data(), t.data.size());
    }
    int32_t value = 0;
    status.download(&value, 4);
    return value;
  }

  runtime::DeviceAmax &amaxFinder() {
    if (!amax)
      amax.emplace();
    return *amax;
  }

  /// The NVFP4 kernels of the artifact (the test fails without one).
  std::vector<DeviceQuantizer::Key> nvfp4Keys() {
    std::vector<DeviceQuantizer::Key> keys;
    for (const DeviceQuantizer::Key &key : quantizer->keys())
      if (key.encoding.globalScale)
        keys.push_back(key);
    EXPECT_FALSE(keys.empty()) << artifactPath() << " has no NVFP4 kernel";
    return keys;
  }

  std::optional<DeviceQuantizer> quantizer;
  std::optional<runtime::DeviceAmax> amax;
};

/// Expects every component of `got` to equal `expected` byte for byte.
void expectSameBytes(const format::TensorMap &expected,
                     const format::TensorMap &got, const std::string &label) {
  for (const auto &[name, tensor] : expected) {
    ASSERT_EQ(got.count(name), 1u) << label << ": " << name;
    const std::vector<uint8_t> &a = got.at(name).data;
    ASSERT_EQ(a.size(), tensor.data.size()) << label << ": " << name;
    auto mismatch = std::mismatch(a.begin(), a.end(), tensor.data.begin());
    EXPECT_TRUE(mismatch.first == a.end())
        << label << ": " << name << " byte " << (mismatch.first - a.begin())
        << " is " << int(*mismatch.first) << ", quantizeRTN wrote "
        << int(*mismatch.second);
  }
}

TEST_F(QuantizeGpuTest, EveryKernelMatchesQuantizeRTNByteForByte) {
  ASSERT_FALSE(quantizer->keys().empty()) << artifactPath();
  for (const DeviceQuantizer::Key &key : quantizer->keys())
    for (int64_t n : {1, 37, 300})
      for (uint64_t seed : {1, 2}) {
        std::string label = format::printEncoding(key.encoding) +
                            " K=" + std::to_string(key.k) + " " +
                            std::string(runtime::safetensorsName(key.input)) +
                            " N=" + std::to_string(n) + " seed " +
                            std::to_string(seed);
        std::vector<float> w = makeWeights(n, key.k, key.input, seed * 31 + n);
        format::TensorMap expected, got;
        std::string error;
        bool hostOk = format::quantizeRTN(key.encoding, w.data(), n, key.k,
                                          expected, error);
        int32_t status = run(key, w, n, got);
        if (!hostOk) {
          EXPECT_EQ(status, 1) << label << ": the host refuses (" << error
                               << ") but the kernel reports success";
          continue;
        }
        ASSERT_EQ(status, 0) << label;
        expectSameBytes(expected, got, label);
      }
}

/// Random weights of one magnitude, |w| < 0.05, with a single largest
/// magnitude `peak` at (row, col): the global scale follows it.
std::vector<float> peakedWeights(int64_t n, int64_t k, DType t, int64_t row,
                                 int64_t col, float peak, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-0.05, 0.05);
  std::vector<float> w(size_t(n * k));
  for (float &v : w)
    v = roundTo(float(uniform(rng)), t);
  w[size_t(row * k + col)] = roundTo(peak, t);
  return w;
}

TEST_F(QuantizeGpuTest, Nvfp4GlobalScaleFollowsTheLargestMagnitudeInAnyRow) {
  for (const DeviceQuantizer::Key &key : nvfp4Keys())
    for (int64_t n : {1, 37, 300})
      for (int64_t row : {int64_t(0), n / 2, n - 1})
        for (float peak : {3.75f, -211.0f}) {
          std::string label = format::printEncoding(key.encoding) +
                              " K=" + std::to_string(key.k) + " " +
                              std::string(runtime::safetensorsName(key.input)) +
                              " N=" + std::to_string(n) + " peak " +
                              std::to_string(peak) + " in row " +
                              std::to_string(row);
          const int64_t col = (row * 7 + 3) % key.k;
          std::vector<float> w = peakedWeights(n, key.k, key.input, row, col,
                                               peak, uint64_t(n * 1000 + row));
          format::TensorMap expected, got;
          std::string error, why;
          ASSERT_TRUE(format::quantizeRTN(key.encoding, w.data(), n, key.k,
                                          expected, error))
              << label << ": " << error;
          ASSERT_EQ(run(key, w, n, got), 0) << label;
          expectSameBytes(expected, got, label + " (enqueue)");
          // The whole path: upload, DeviceAmax, launch, download.
          std::vector<uint8_t> bytes = toBytes(w, key.input);
          format::TensorMap whole;
          ASSERT_TRUE(quantizer->quantizeHost(key.encoding, bytes.data(), n,
                                              key.k, key.input, whole, why))
              << label << ": " << why;
          expectSameBytes(expected, whole, label + " (quantizeHost)");
        }
}

TEST_F(QuantizeGpuTest, Nvfp4KernelRefusesAnAmaxBelowAGroups) {
  // An amax below the tensor's (a wrong reduction) must not give bytes.
  for (const DeviceQuantizer::Key &key : nvfp4Keys()) {
    std::vector<float> w = peakedWeights(4, key.k, key.input, 2, 5, 1.5f, 3);
    std::vector<uint8_t> bytes = toBytes(w, key.input);
    cuda::DeviceBuffer input(bytes.size(), "w"), status(4, "status"),
        amax(4, "amax");
    input.upload(bytes.data(), bytes.size());
    const float tooSmall = 1.0f;
    amax.upload(&tooSmall, 4);
    std::vector<format::ComponentSpec> specs;
    std::string error;
    ASSERT_TRUE(format::componentSpecs(key.encoding, 4, key.k, specs, error));
    std::vector<cuda::DeviceBuffer> buffers;
    std::map<std::string, CUdeviceptr> outputs;
    for (const format::ComponentSpec &spec : specs) {
      buffers.emplace_back(size_t(format::numElements(spec.shape)) *
                               format::dtypeBytes(spec.dtype),
                           spec.name);
      outputs[spec.name] = buffers.back().ptr();
    }
    status.zero(stream->get());
    quantizer->enqueue(key.encoding, input.ptr(), 4, key.k, key.input, outputs,
                       status.ptr(), stream->get(), amax.ptr());
    stream->synchronize();
    int32_t value = 0;
    status.download(&value, 4);
    EXPECT_EQ(value, 1) << format::printEncoding(key.encoding);
  }
}

TEST_F(QuantizeGpuTest, DeviceAmaxIsTheLargestMagnitudeAcrossSlices) {
  // One slice and a bit: the largest sits in the second, then in the first.
  const int64_t count = runtime::DeviceAmax::kSliceElements + 1000;
  for (DType t : {DType::F16, DType::BF16, DType::F32})
    for (int64_t at : {runtime::DeviceAmax::kSliceElements + 500, int64_t(7)}) {
      std::vector<float> w =
          peakedWeights(1, count, t, 0, at, -19.5f, uint64_t(at));
      std::vector<uint8_t> bytes = toBytes(w, t);
      cuda::DeviceBuffer input(bytes.size(), "w");
      input.upload(bytes.data(), bytes.size());
      EXPECT_EQ(amaxFinder().largestMagnitude(input.ptr(), count, t,
                                              stream->get()),
                19.5f)
          << runtime::safetensorsName(t) << " peak at " << at;
    }
}

TEST_F(QuantizeGpuTest, NonFiniteWeightSetsTheStatus) {
  for (const DeviceQuantizer::Key &key : quantizer->keys()) {
    std::vector<float> w = makeWeights(5, key.k, key.input, 9);
    w[size_t(3 * key.k + key.k / 2)] = NAN;
    format::TensorMap got;
    EXPECT_EQ(run(key, w, 5, got), 1) << format::printEncoding(key.encoding);
  }
}

TEST_F(QuantizeGpuTest, QuantizeDownloadsTheComponents) {
  const DeviceQuantizer::Key key = quantizer->keys().front();
  std::vector<float> w = makeWeights(64, key.k, key.input, 5);
  std::vector<uint8_t> bytes = toBytes(w, key.input);
  format::TensorMap expected, got;
  std::string error, why;
  ASSERT_TRUE(
      format::quantizeRTN(key.encoding, w.data(), 64, key.k, expected, error));
  ASSERT_TRUE(quantizer->quantizeHost(key.encoding, bytes.data(), 64, key.k,
                                      key.input, got, why))
      << why;
  ASSERT_EQ(got.size(), expected.size());
  for (const auto &[name, tensor] : expected) {
    EXPECT_EQ(got.at(name).dtype, tensor.dtype) << name;
    EXPECT_EQ(got.at(name).shape, tensor.shape) << name;
    EXPECT_TRUE(got.at(name).data == tensor.data) << name;
  }
}

} // namespace
} // namespace qfuse::testing
