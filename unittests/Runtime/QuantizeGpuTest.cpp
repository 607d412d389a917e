//===- QuantizeGpuTest.cpp - the generated RTN kernels against quantizeRTN ===//
//
// Every qf.quantize kernel of the quantize test artifact (compiled from
// test/Tools/qfuse-cpu-check/Inputs/quantize-formats.mlir by
// bench/quantize-at-load/make-artifacts.sh; QFUSE_QUANTIZE_QFA overrides the
// path) runs on random weights (row counts it was not compiled for), with
// rows of exact ties, subnormals, equal values and signed zeros, into
// output buffers poisoned with 0xFF; every byte must equal
// format::quantizeRTN's. A NaN must set the status word (not under
// unquantized 2:4, which keeps it: KeptValuesGpuTest). NVFP4 kernels get
// the tensor's largest magnitude from DeviceAmax (as quantize() does); its
// tests put that magnitude in different rows, and across DeviceAmax's
// slices. act_order kernels write g_idx (k / group: no g_idx at load) and
// their layouts repack on the device with the identity perm; 2:4 kernels
// keep select24's two of each quad (rows of every tie pattern) and write
// meta, and quantize a NaN that select24 drops as the host does.
//
//===----------------------------------------------------------------------===//

#include "GatherCases.h"
#include "QuantizeArtifactFixture.h"

#include "qfuse/format/Layout.h"
#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/device/DeviceAmax.h"
#include "qfuse/runtime/device/DeviceGather.h"
#include "qfuse/runtime/device/DeviceQuantizer.h"
#include "qfuse/runtime/device/DeviceRepacker.h"

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
/// power-of-two scale, subnormals, one repeated value, signed zeros, quads
/// of equal magnitudes in every pattern (select24's ties).
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
      switch (r % 7) {
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
      case 4: { // quad q's magnitudes: the base-3 digits of q, either sign
        int64_t digits = (j / 4) % 81;
        for (int64_t p = 0; p < j % 4; ++p)
          digits /= 3;
        v = ((j * 7 + r) % 3 == 0 ? -1.0 : 1.0) * double(digits % 3 + 1) / 8;
        break;
      }
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

  /// The kernels of the artifact whose encoding has `what` (the test fails
  /// without one).
  std::vector<DeviceQuantizer::Key>
  keysWith(bool (*has)(const format::Encoding &), const char *what) {
    std::vector<DeviceQuantizer::Key> keys;
    for (const DeviceQuantizer::Key &key : quantizer->keys())
      if (has(key.encoding))
        keys.push_back(key);
    EXPECT_FALSE(keys.empty())
        << artifactPath() << " has no " << what << " kernel";
    return keys;
  }
  std::vector<DeviceQuantizer::Key> nvfp4Keys() {
    return keysWith([](const format::Encoding &e) { return e.globalScale; },
                    "NVFP4");
  }
  std::vector<DeviceQuantizer::Key> actOrderKeys() {
    return keysWith([](const format::Encoding &e) { return e.actOrder; },
                    "act_order");
  }
  std::vector<DeviceQuantizer::Key> sparseKeys() {
    return keysWith([](const format::Encoding &e) { return e.isSparse24(); },
                    "2:4");
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

// Units of several groups (codes, zero points or 2:4 positions of one group
// do not fill whole bytes: 2:4 and 3-bit codes in groups of 4, 2:4 in
// groups of 2 or 6 that split quads): every such
// kernel of the artifact on fresh weights (the seed is printed on failure)
// at row counts it was not compiled for, against quantizeRTN; a NaN in the
// last group of a row sets the status.
TEST_F(QuantizeGpuTest, MultiGroupUnitsMatchQuantizeRTN) {
  const uint64_t fresh = std::random_device{}();
  // Groups of 4, and 2:4 groups that split quads (units of 4 groups of 2
  // or 6, each kept value in its own column's group).
  auto keys = keysWith(
      [](const format::Encoding &e) {
        return e.groupSize == 4 ||
               (e.isSparse24() && e.isQuantized() && !e.isPerChannel() &&
                e.groupSize % 4 != 0);
      },
      "groups-of-4");
  for (const DeviceQuantizer::Key &key : keys)
    for (int64_t n : {3, 64, 129}) {
      std::string label = format::printEncoding(key.encoding) +
                          " K=" + std::to_string(key.k) + " N=" +
                          std::to_string(n) + " seed " + std::to_string(fresh);
      std::vector<float> w = makeWeights(n, key.k, key.input, fresh + n);
      format::TensorMap expected, got;
      std::string error;
      bool hostOk = format::quantizeRTN(key.encoding, w.data(), n, key.k,
                                        expected, error);
      int32_t status = run(key, w, n, got);
      if (!hostOk) {
        EXPECT_EQ(status, 1) << label << ": the host refuses (" << error << ")";
        continue;
      }
      ASSERT_EQ(status, 0) << label;
      expectSameBytes(expected, got, label);
      // Every value of a quad counts for select24's first scan only where
      // it starts; a dense NaN always reaches the statistics.
      if (!key.encoding.isSparse24()) {
        w[size_t((n - 1) * key.k + key.k - 1)] = std::nanf("");
        EXPECT_EQ(run(key, w, n, got), 1) << label << " with a NaN";
      }
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
    if (!key.encoding.isQuantized())
      continue; // unquantized 2:4 keeps a NaN, as the host does
    std::vector<float> w = makeWeights(5, key.k, key.input, 9);
    // First in its quad: the column 2:4 keeps whatever the others hold.
    w[size_t(3 * key.k + key.k / 8 * 4)] = NAN;
    format::TensorMap got;
    EXPECT_EQ(run(key, w, 5, got), 1) << format::printEncoding(key.encoding);
  }
}

std::string labelOf(const DeviceQuantizer::Key &key, int64_t n) {
  return format::printEncoding(key.encoding) + " K=" + std::to_string(key.k) +
         " " + std::string(runtime::safetensorsName(key.input)) +
         " N=" + std::to_string(n);
}

TEST_F(QuantizeGpuTest, ActOrderAnd2of4WriteGIdxAndMetaLikeQuantizeRTN) {
  std::vector<DeviceQuantizer::Key> keys = actOrderKeys();
  for (const DeviceQuantizer::Key &key : sparseKeys())
    keys.push_back(key);
  for (const DeviceQuantizer::Key &key : keys)
    for (int64_t n : {1, 7, 300}) {
      const std::string label = labelOf(key, n);
      std::vector<float> w = makeWeights(n, key.k, key.input, 11 * n + 5);
      format::TensorMap expected, got;
      std::string error, why;
      ASSERT_TRUE(format::quantizeRTN(key.encoding, w.data(), n, key.k,
                                      expected, error))
          << label << ": " << error;
      ASSERT_EQ(expected.count(key.encoding.actOrder ? format::kGIdx
                                                     : format::kMetadata),
                1u)
          << label;
      // The whole path: upload, launch, download of every component.
      std::vector<uint8_t> bytes = toBytes(w, key.input);
      ASSERT_TRUE(quantizer->quantizeHost(key.encoding, bytes.data(), n, key.k,
                                          key.input, got, why))
          << label << ": " << why;
      ASSERT_EQ(got.size(), expected.size()) << label;
      expectSameBytes(expected, got, label);
    }
}

TEST_F(QuantizeGpuTest, SparseKernelsKeepOrRefuseANaNAsQuantizeRTNDoes) {
  for (const DeviceQuantizer::Key &key : sparseKeys())
    for (int64_t at : {int64_t(3), int64_t(0)}) {
      // Row 5 is random: a NaN last in its quad is dropped (the host
      // quantizes the rest); first in its quad it is kept (refused, but
      // stored as a NaN by unquantized 2:4).
      std::vector<float> w = makeWeights(8, key.k, key.input, 17);
      w[size_t(5 * key.k + 4 * 3 + at)] = NAN;
      const std::string label =
          labelOf(key, 8) + " NaN at quad position " + std::to_string(at);
      format::TensorMap expected, got;
      std::string error;
      const bool hostOk = format::quantizeRTN(key.encoding, w.data(), 8, key.k,
                                              expected, error);
      ASSERT_EQ(hostOk, at == 3 || !key.encoding.isQuantized())
          << label << ": " << error;
      int32_t status = run(key, w, 8, got);
      ASSERT_EQ(status, hostOk ? 0 : 1) << label;
      if (hostOk)
        expectSameBytes(expected, got, label);
    }
}

TEST_F(QuantizeGpuTest, ActOrderLayoutsRepackOnTheDeviceWithTheIdentityPerm) {
  // What quantize-at-load does with an act_order weight: the kernel's
  // components, then DeviceRepacker (--rtn check's comparison with
  // format::repack on) for each kernel layout.
  runtime::DeviceGather gather(*artifact, *context);
  runtime::DeviceRepacker repacker(&gather, /*check=*/true, "");
  for (const DeviceQuantizer::Key &key : actOrderKeys()) {
    if (key.encoding.isSparse24())
      continue; // 2:4 repacks on the host (codes and meta move together)
    const int64_t n = 45;
    std::vector<float> w = makeWeights(n, key.k, key.input, 23);
    std::vector<uint8_t> bytes = toBytes(w, key.input);
    format::TensorMap components;
    std::string why, error;
    ASSERT_TRUE(quantizer->quantizeHost(key.encoding, bytes.data(), n, key.k,
                                        key.input, components, why))
        << why;
    std::vector<int32_t> identity(static_cast<size_t>(key.k));
    for (int64_t c = 0; c < key.k; ++c)
      identity[size_t(c)] = int32_t(c);
    for (const std::string &layoutText : format::test::gatherLayouts()) {
      const std::string label = labelOf(key, n) + " <" + layoutText + ">";
      runtime::WeightSpec weight;
      weight.name = "w";
      weight.encoding = format::printEncoding(key.encoding);
      weight.layout = layoutText;
      weight.n = n;
      weight.k = key.k;
      weight.encodingAttr = key.encoding;
      ASSERT_TRUE(format::parseLayout(layoutText, weight.layoutAttr, error));
      format::TensorMap host, packed;
      if (!format::repack(key.encoding, weight.layoutAttr, components, n, key.k,
                          host, error))
        continue; // a layout of other weights
      ASSERT_TRUE(repacker.repack(weight, components, packed))
          << label << ": " << repacker.summary();
      ASSERT_EQ(packed.size(), host.size()) << label;
      for (const auto &[name, tensor] : host)
        EXPECT_EQ(packed.at(name).data, tensor.data) << label << " " << name;
      if (packed.count(format::kPerm)) {
        EXPECT_EQ(format::int32Values(packed.at(format::kPerm)), identity)
            << label;
        EXPECT_EQ(format::int32Values(packed.at(format::kInvPerm)), identity)
            << label;
      }
    }
  }
  EXPECT_GE(repacker.deviceRepacks(), 2u);
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
