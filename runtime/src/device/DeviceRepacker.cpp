//===- DeviceRepacker.cpp - the kernel layouts made on the GPU ------------===//

#include "qfuse/runtime/device/DeviceRepacker.h"

#include "qfuse/format/FieldGather.h"
#include "qfuse/runtime/Error.h"

namespace qfuse::runtime {
DeviceRepacker::DeviceRepacker(DeviceGather *gather, bool check,
                               std::string whyNone)
    : gather_(gather), check_(check), why_(std::move(whyNone)) {
  hook_ = [this](const WeightSpec &weight, const format::TensorMap &rowMajor,
                 format::TensorMap &packed) {
    return repack(weight, rowMajor, packed);
  };
}

bool DeviceRepacker::repack(const WeightSpec &weight,
                            const format::TensorMap &rowMajor,
                            format::TensorMap &packed) {
  auto toHost = [&](const std::string &why) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (why_.empty())
      why_ = why;
    ++host_;
    return false;
  };
  if (!gather_ || !gather_->any())
    return toHost("no qf_gather_fields kernel"); // keeps whyNone
  const format::Encoding &enc = weight.encodingAttr;
  const format::Layout &layout = weight.layoutAttr;
  std::vector<int32_t> gIdx;
  if (enc.actOrder) {
    auto it = rowMajor.find(format::kGIdx);
    if (it == rowMajor.end())
      return toHost("an act_order weight without g_idx");
    gIdx = format::int32Values(it->second);
  }
  format::FieldGather g;
  std::string why;
  if (!format::repackGather(enc, layout, weight.n, weight.k,
                            enc.actOrder ? gIdx.data() : nullptr, g, why))
    return toHost("\"" + weight.encoding + "\" into <" + weight.layout +
                  ">: " + why);
  if (!gather_->has(g.dstBits))
    return toHost("no qf_gather_fields_b" + std::to_string(g.dstBits) +
                  " kernel in the quantize artifact");
  const format::Tensor &codes = rowMajor.at(format::kCodes);
  std::vector<uint8_t> bytes;
  if (!gather_->runHost(g, codes.data.data(), codes.data.size(), bytes, why))
    return toHost(why);
  format::TensorMap out = rowMajor;
  format::Tensor &laid = out[format::kCodes];
  laid.data = std::move(bytes);
  laid.shape = format::layoutComponentShape(
      enc, layout, {format::kCodes, codes.dtype, codes.shape}, weight.n,
      weight.k);
  if (!g.perm.empty())
    out[format::kPerm] = format::int32Tensor(g.perm);
  if (check_) {
    format::TensorMap host;
    std::string error;
    if (!format::repack(enc, layout, rowMajor, weight.n, weight.k, host,
                        error))
      throw Error("--rtn check: format::repack refuses what the GPU "
                  "repacked ('" + weight.name + "'): " + error);
    if (host.size() != out.size())
      throw Error("--rtn check: the GPU's layout of '" + weight.name +
                  "' has other components than format::repack's");
    for (const auto &[name, tensor] : host) {
      auto it = out.find(name);
      if (it == out.end() || it->second.data != tensor.data ||
          it->second.shape != tensor.shape || it->second.dtype != tensor.dtype)
        throw Error("--rtn check: the GPU's '" + name + "' of '" +
                    weight.name + "' in <" + weight.layout +
                    "> differs from format::repack's");
    }
  }
  packed = std::move(out);
  ++device_;
  return true;
}

std::string DeviceRepacker::summary() const {
  std::string s = "layouts: " + std::to_string(device_.load()) +
                  " repacked on the GPU (qf_gather_fields kernels)";
  if (check_)
    s += ", every one byte-identical to format::repack";
  s += ", " + std::to_string(host_.load()) + " on the host (format::repack)";
  std::lock_guard<std::mutex> lock(mutex_);
  if (host_ > 0 && !why_.empty())
    s += ": " + why_;
  return s;
}

} // namespace qfuse::runtime
