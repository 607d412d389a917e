//===- DeviceRepacker.h - the kernel layouts made on the GPU ----*- C++ -*-===//
//
// The LayoutRepacker (WeightLayouts.h) that makes a weight's kernel layout
// with the generated qf_gather_fields kernels (DeviceGather.h) instead of
// format::repack: the row-major codes go up, the layout's codes come back,
// the other components are kept as repack keeps them, and act_order's
// "perm" and "inv_perm" are made from g_idx (a 2:4 weight's kept codes in
// the matvec's tiled layout too: its metadata stays row-major); a 2:4
// weight's codes and metadata go up and come back in the 2:4 fragment
// layout (two gathers), and 3-bit codes into the mma fragment layout's bit
// planes as 1-bit fields (format::repackGather). What no gather covers (a
// kernel width the artifact lacks, as in one compiled before the odd
// widths) stays with format::repack, and summary() says how many went where
// and why.
//
//   DeviceRepacker layouts(&gather, /*check=*/false, "");
//   loadCheckpoint(executor, checkpoint, threads, rtn, layouts.hook());
//
// `check` also runs format::repack on every weight the GPU repacked and
// throws where a component's bytes differ (qfuse-run --rtn check).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_DEVICEREPACKER_H
#define QFUSE_RUNTIME_DEVICE_DEVICEREPACKER_H

#include "qfuse/runtime/artifact/WeightLayouts.h"
#include "qfuse/runtime/device/DeviceGather.h"

#include <atomic>
#include <mutex>
#include <string>

namespace qfuse::runtime {

class DeviceRepacker {
public:
  /// `gather` (which must outlive this object) may be null: then every
  /// layout is made on the host, and `whyNone` says why.
  DeviceRepacker(DeviceGather *gather, bool check, std::string whyNone);

  const LayoutRepacker *hook() const { return &hook_; }
  size_t deviceRepacks() const { return device_; }
  size_t hostRepacks() const { return host_; }
  /// "layouts: 448 repacked on the GPU (qf_gather_fields), 0 on the host
  /// (format::repack)", with the first reason a layout went to the host.
  std::string summary() const;

  /// The repack itself (hook() calls it).
  bool repack(const WeightSpec &weight, const format::TensorMap &rowMajor,
              format::TensorMap &packed);

private:
  /// The layout's components from the gathers, or false with `why`:
  /// one gather of the codes (format::repackGather), or the 2:4 fragment
  /// layout's two (format::sparseRepackGathers).
  bool gatherCodes(const WeightSpec &weight, const format::TensorMap &rowMajor,
                   format::TensorMap &out, std::string &why);
  bool gatherSparse(const WeightSpec &weight,
                    const format::TensorMap &rowMajor, format::TensorMap &out,
                    std::string &why);
  /// --rtn check: throws where format::repack's components differ.
  void checkAgainstHost(const WeightSpec &weight,
                        const format::TensorMap &rowMajor,
                        const format::TensorMap &out) const;

  DeviceGather *gather_;
  bool check_;
  LayoutRepacker hook_;
  std::atomic<size_t> device_{0}, host_{0};
  mutable std::mutex mutex_; // guards why_
  std::string why_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_DEVICEREPACKER_H
