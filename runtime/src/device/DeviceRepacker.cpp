//===- DeviceRepacker.cpp - the kernel layouts made on the GPU ------------===//

#include "qfuse/runtime/device/DeviceRepacker.h"

#include "qfuse/format/FieldGather.h"
#include "qfuse/format/SparseMmaLayout.h"
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
  format::TensorMap out;
  std::string why;
  // Only the 2:4 fragment layout moves the metadata; the matvec's tiled
  // layout of a 2:4 weight permutes its kept codes like dense codes.
  const bool ok = weight.encodingAttr.isSparse24() &&
                          format::isSparseMmaLayout(weight.layoutAttr)
                      ? gatherSparse(weight, rowMajor, out, why)
                      : gatherCodes(weight, rowMajor, out, why);
  if (!ok)
    return toHost(why);
  if (check_)
    checkAgainstHost(weight, rowMajor, out);
  packed = std::move(out);
  ++device_;
  return true;
}

bool DeviceRepacker::gatherCodes(const WeightSpec &weight,
                                 const format::TensorMap &rowMajor,
                                 format::TensorMap &out, std::string &why) {
  const format::Encoding &enc = weight.encodingAttr;
  const format::Layout &layout = weight.layoutAttr;
  std::vector<int32_t> gIdx;
  if (enc.actOrder) {
    auto it = rowMajor.find(format::kGIdx);
    if (it == rowMajor.end()) {
      why = "an act_order weight without g_idx";
      return false;
    }
    gIdx = format::int32Values(it->second);
  }
  format::FieldGather g;
  if (!format::repackGather(enc, layout, weight.n, weight.k,
                            enc.actOrder ? gIdx.data() : nullptr, g, why)) {
    why = "\"" + weight.encoding + "\" into <" + weight.layout + ">: " + why;
    return false;
  }
  if (!gather_->has(g.dstBits)) {
    why = "no qf_gather_fields_b" + std::to_string(g.dstBits) +
          " kernel in the quantize artifact";
    return false;
  }
  const format::Tensor &codes = rowMajor.at(format::kCodes);
  std::vector<uint8_t> bytes;
  if (!gather_->runHost(g, codes.data.data(), codes.data.size(), bytes, why))
    return false;
  out = rowMajor;
  format::Tensor &laid = out[format::kCodes];
  laid.data = std::move(bytes);
  laid.shape = format::layoutComponentShape(
      enc, layout, {format::kCodes, codes.dtype, codes.shape}, weight.n,
      weight.k);
  // The components are the sorted order of the codes (repack's "perm" and
  // "inv_perm"), which the gather's perm widens to bits for 3-bit codes' mma
  // planes.
  if (!g.perm.empty()) {
    std::vector<int32_t> perm;
    if (!format::actOrderPermutation(gIdx.data(), weight.k,
                                     enc.groupSize, perm, why))
      return false;
    format::putSortedOrder(out, perm);
  }
  return true;
}

bool DeviceRepacker::gatherSparse(const WeightSpec &weight,
                                  const format::TensorMap &rowMajor,
                                  format::TensorMap &out, std::string &why) {
  const format::Encoding &enc = weight.encodingAttr;
  const format::Layout &layout = weight.layoutAttr;
  format::FieldGather codesGather, metaGather;
  if (!format::sparseRepackGathers(enc, layout, weight.n, weight.k,
                                   codesGather, metaGather, why)) {
    why = "\"" + weight.encoding + "\" into <" + weight.layout + ">: " + why;
    return false;
  }
  for (unsigned bits : {codesGather.dstBits, metaGather.dstBits})
    if (!gather_->has(bits)) {
      why = "no qf_gather_fields_b" + std::to_string(bits) +
            " kernel in the quantize artifact";
      return false;
    }
  if (!gather_->hasPadParity(metaGather.dstBits)) {
    why = "the quantize artifact's qf_gather_fields_b2 predates 2:4 "
          "metadata (no padParity): recompile it";
    return false;
  }
  auto codes = rowMajor.find(format::kCodes);
  auto meta = rowMajor.find(format::kMetadata);
  if (codes == rowMajor.end() || meta == rowMajor.end()) {
    why = "a 2:4 weight without codes or meta";
    return false;
  }
  out = rowMajor;
  for (auto [gather, in] : {std::pair{&codesGather, codes},
                            std::pair{&metaGather, meta}}) {
    std::vector<uint8_t> bytes;
    if (!gather_->runHost(*gather, in->second.data.data(),
                          in->second.data.size(), bytes, why))
      return false;
    format::Tensor &laid = out[in->first];
    laid.data = std::move(bytes);
    laid.shape = format::layoutComponentShape(
        enc, layout, {in->first, in->second.dtype, in->second.shape}, weight.n,
        weight.k);
  }
  return true;
}

void DeviceRepacker::checkAgainstHost(const WeightSpec &weight,
                                      const format::TensorMap &rowMajor,
                                      const format::TensorMap &out) const {
  format::TensorMap host;
  std::string error;
  if (!format::repack(weight.encodingAttr, weight.layoutAttr, rowMajor,
                      weight.n, weight.k, host, error))
    throw Error("--rtn check: format::repack refuses what the GPU "
                "repacked ('" + weight.name + "'): " + error);
  if (host.size() != out.size())
    throw Error("--rtn check: the GPU's layout of '" + weight.name +
                "' has other components than format::repack's");
  for (const auto &[name, tensor] : host) {
    auto it = out.find(name);
    if (it == out.end() || it->second.data != tensor.data ||
        it->second.shape != tensor.shape || it->second.dtype != tensor.dtype)
      throw Error("--rtn check: the GPU's '" + name + "' of '" + weight.name +
                  "' in <" + weight.layout +
                  "> differs from format::repack's");
  }
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
