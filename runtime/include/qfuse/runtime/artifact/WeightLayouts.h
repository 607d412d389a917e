//===- WeightLayouts.h - a checkpoint tensor in each layout -----*- C++ -*-===//
//
// An artifact may list one checkpoint tensor several times, once per packed
// layout its kernels read (docs/artifact.md, version 3: the matvec's tiled
// layout for batches <= 8, the tensor-core fragment layout past 8). Every
// loader (safetensors, RTN from fp16 checkpoints, converted checkpoints,
// random weights for benchmarks) produces the tensor's row-major components
// once; these functions check them against each entry and repack them into
// that entry's layout, on the CPU or, given a LayoutRepacker, wherever it
// repacks (the GPU's qf_gather_fields kernels: DeviceRepacker.h).
// Executor::bindWeight uploads the result.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_ARTIFACT_WEIGHTLAYOUTS_H
#define QFUSE_RUNTIME_ARTIFACT_WEIGHTLAYOUTS_H

#include "qfuse/runtime/artifact/Artifact.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace qfuse::runtime {

/// Row-major bytes of one component, wherever they live (a safetensors
/// mapping, a TensorMap).
struct RowMajorView {
  std::string dtype; // safetensors spelling ("U8", "F16", ...)
  std::vector<int64_t> shape;
  const uint8_t *data = nullptr;
  size_t size = 0;
};
using RowMajorViews = std::map<std::string, RowMajorView>;

/// Views of a TensorMap's components (which must outlive them).
RowMajorViews viewsOf(const format::TensorMap &components);

/// Checks that `raw` has every row-major component of `weight`'s encoding
/// with its dtype, shape and size; throws naming `origin`, the weight entry
/// and, when it differs, the checkpoint tensor it is packed from.
void checkRowMajorComponents(const WeightSpec &weight, const RowMajorViews &raw,
                             const std::string &origin);

/// True when `weight`'s layout is the checkpoint's order (row_major, columns
/// not sorted by group): its components are `raw` as they are.
bool needsNoRepack(const WeightSpec &weight);

/// Repacks the row-major components of `weight` into its layout as
/// format::repack would (same bytes); returns false to leave it to
/// format::repack on the host.
using LayoutRepacker =
    std::function<bool(const WeightSpec &weight,
                       const format::TensorMap &rowMajor,
                       format::TensorMap &packed)>;

/// The components of `weight` in its layout, repacked from `raw` (checked
/// first) by `device` where given and it takes them, else by qfuse_format
/// on the host: the row-major components it keeps and those the layout
/// adds ("perm" and "inv_perm" under act_order).
format::TensorMap packForLayout(const WeightSpec &weight,
                                const RowMajorViews &raw,
                                const std::string &origin,
                                const LayoutRepacker *device = nullptr);

/// The artifact entries `name` binds: every entry packed from checkpoint
/// tensor `name`, else the entry named `name` alone; throws naming `origin`
/// when there is none.
std::vector<const WeightSpec *> weightEntriesFor(const Artifact &artifact,
                                                 const std::string &name,
                                                 const std::string &origin);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_ARTIFACT_WEIGHTLAYOUTS_H
