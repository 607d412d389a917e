//===- QuantizeGpuTest.cpp - the generated RTN kernels against quantizeRTN ===//
//
// Every qf.quantize kernel of the quantize test artifact (compiled from
// test/Tools/qfuse-cpu-check/Inputs/quantize-formats.mlir by
// bench/quantize-at-load/make-artifacts.sh; QFUSE_QUANTIZE_QFA overrides the
// path) runs on random weights (row counts it was not compiled for), with
// rows of exact ties, subnormals, equal values and signed zeros, into
// output buffers poisoned with 0xFF; every byte must equal
// format::quantizeRTN's. A NaN must set the status word.
//
//===----------------------------------------------------------------------===//

#include "QuantizeArtifactFixture.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
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
    cuda::DeviceBuffer status(4, "status");
    status.zero(stream->get());
    quantizer->enqueue(key.encoding, input.ptr(), n, key.k, key.input, outputs,
                       status.ptr(), stream->get());
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

  std::optional<DeviceQuantizer> quantizer;
};

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
        for (const auto &[name, tensor] : expected) {
          ASSERT_EQ(got.count(name), 1u) << label << ": " << name;
          const std::vector<uint8_t> &a = got.at(name).data;
          ASSERT_EQ(a.size(), tensor.data.size()) << label << ": " << name;
          auto mismatch =
              std::mismatch(a.begin(), a.end(), tensor.data.begin());
          EXPECT_TRUE(mismatch.first == a.end())
              << label << ": " << name << " byte "
              << (mismatch.first - a.begin()) << " is " << int(*mismatch.first)
              << ", quantizeRTN wrote " << int(*mismatch.second);
        }
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
