//===- QuantizeAtLoad.cpp - the GPU or the host rounds each dense weight
//---===//

#include "qfuse/runtime/device/QuantizeAtLoad.h"

#include "qfuse/format/Packing.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/device/DeviceArtifact.h"

#include <cstring>

#include <fstream>
#include <vector>

namespace qfuse::runtime {

std::optional<RtnMode> parseRtnMode(const std::string &text) {
  if (text == "device")
    return RtnMode::Device;
  if (text == "host")
    return RtnMode::Host;
  if (text == "check")
    return RtnMode::Check;
  return std::nullopt;
}

std::string quantizeArtifactPath(const std::string &artifactPath) {
  std::string base = artifactPath;
  const std::string ext = ".qfa";
  if (base.size() > ext.size() &&
      base.compare(base.size() - ext.size(), ext.size(), ext) == 0)
    base.resize(base.size() - ext.size());
  return base + ".quantize.qfa";
}

QuantizeAtLoad::QuantizeAtLoad(const std::string &artifactPath, RtnMode mode,
                               const cuda::Context &context, std::FILE *log)
    : mode_(mode), path_(quantizeArtifactPath(artifactPath)) {
  // The hook counts the weights the host rounds too.
  hook_ = [this](const format::Encoding &enc, DType dtype, const uint8_t *data,
                 int64_t n, int64_t k, format::TensorMap &components) {
    return quantize(enc, dtype, data, n, k, components);
  };
  if (mode == RtnMode::Host) {
    why_ = "--rtn host";
    layouts_ = std::make_unique<DeviceRepacker>(nullptr, false, why_);
    return;
  }
  if (!std::ifstream(path_).good()) {
    why_ = "no quantize artifact " + path_;
    layouts_ = std::make_unique<DeviceRepacker>(nullptr, false, why_);
    if (log)
      std::fprintf(log,
                 "quantize-at-load: %s; weights are rounded on the host "
                 "(python3 -m qfuse compile writes it beside the model "
                 "artifact)\n",
                 why_.c_str());
    return;
  }
  try {
    const Artifact artifact = loadArtifactForDevice(path_, context);
    quantizer_ = std::make_unique<DeviceQuantizer>(artifact, context);
    gather_ = std::make_unique<DeviceGather>(artifact, context);
    layouts_ = std::make_unique<DeviceRepacker>(
        gather_.get(), mode == RtnMode::Check,
        gather_->any() ? "" : "no qf_gather_fields kernel in " + path_);
  } catch (const std::exception &e) {
    quantizer_.reset();
    gather_.reset();
    why_ = std::string("the quantize artifact does not load: ") + e.what();
    layouts_ = std::make_unique<DeviceRepacker>(nullptr, false, why_);
    if (log)
      std::fprintf(log, "quantize-at-load: %s; weights are rounded on the host\n",
                 why_.c_str());
  }
}

bool QuantizeAtLoad::quantize(const format::Encoding &enc, DType dtype,
                              const uint8_t *data, int64_t n, int64_t k,
                              format::TensorMap &components) {
  auto toHost = [&](const std::string &why) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (why_.empty())
      why_ = why;
    ++host_;
    return false;
  };
  if (!quantizer_)
    return toHost(why_);
  if (!quantizer_->has(enc, k, dtype))
    return toHost("no kernel for \"" + format::printEncoding(enc) +
                  "\" over K = " + std::to_string(k) + " " +
                  std::string(safetensorsName(dtype)));
  std::string why;
  if (!quantizer_->quantizeHost(enc, data, n, k, dtype, components, why))
    return toHost(why); // the host names the bad element
  if (mode_ == RtnMode::Check) {
    // The host's bytes from the same weights, compared component by
    // component (format::quantizeRTN takes f32; every input is exact).
    std::vector<float> w(size_t(n * k));
    const size_t size = dtype == DType::F32 ? 4 : 2;
    for (size_t i = 0; i < w.size(); ++i) {
      uint16_t h = 0;
      if (dtype == DType::F32) {
        std::memcpy(&w[i], data + 4 * i, 4);
        continue;
      }
      std::memcpy(&h, data + size * i, 2);
      w[i] = dtype == DType::BF16 ? format::bfloat16ToFloat(h)
                                  : format::halfToFloat(h);
    }
    format::TensorMap host;
    std::string error;
    if (!format::quantizeRTN(enc, w.data(), n, k, host, error))
      throw Error("--rtn check: the host refuses what the GPU quantized: " +
                  error);
    for (const auto &[name, tensor] : host)
      if (components.at(name).data != tensor.data)
        throw Error("--rtn check: the GPU's '" + name + "' of a [" +
                    std::to_string(n) + ", " + std::to_string(k) +
                    "] weight into \"" + format::printEncoding(enc) +
                    "\" differs from format::quantizeRTN's");
  }
  ++device_;
  return true;
}

std::string QuantizeAtLoad::summary() const {
  std::string s = "quantize-at-load: " + std::to_string(device_) +
                  " weights rounded on the GPU";
  if (quantizer_)
    s += " (qf.quantize kernels of " + path_ + ")";
  if (mode_ == RtnMode::Check)
    s += ", every one byte-identical to format::quantizeRTN";
  s += ", " + std::to_string(host_.load()) +
       " on the host (format::quantizeRTN)";
  if (host_ > 0 && !why_.empty())
    s += ": " + why_;
  return s + "; " + layouts_->summary();
}

} // namespace qfuse::runtime
