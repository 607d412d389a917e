//===- MatmulSpec.h - One fused matmul variant and its launch ---*- C++ -*-===//
//
// What both matmul kernel families (MatVec/, TensorCore/) generate from: the
// fused op at one batch size (MatmulSpec), and what the runtime needs to
// launch the kernel they emit (KernelLaunch, see docs/artifact.md).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_COMMON_MATMULSPEC_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_COMMON_MATMULSPEC_H

#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include <string>

namespace mlir {
namespace qf {

/// One kernel variant: a fused matmul at one batch size.
struct MatmulSpec {
  EncodingAttr encoding;
  LayoutAttr layout;
  TilingAttr tiling;
  int64_t m = 1; ///< batch rows this variant is compiled for
  int64_t n = 0; ///< weight rows (outputs)
  int64_t k = 0; ///< reduction length
  /// The GPU (KnownTargets.h): compute capability, wgmma (sm_90a), shared
  /// memory a block may use.
  TargetAttr target;
  /// x, bias, residual and y are bf16 instead of f16 (the tensor-core
  /// kernel's bf16 mma; the matvec's half2 arithmetic is f16 only).
  bool bf16 = false;
  /// --grid-dependency-prefetch on sm_90: the tensor-core kernel asks L2
  /// for its first steps' weights before it waits for the kernel ahead.
  bool prefetchBeforeWait = false;
  bool hasBias = false;
  bool hasResidual = false;
  /// RMSNorm prologue: x rows are normalized (and rounded to f16) as they
  /// are loaded; `norm` is the [K] gamma.
  bool hasNorm = false;
  float normEps = 0.0f;
  /// silu_mul: a second weight of the same type (the up projection, its
  /// components named `up_<component>`); y = silu(gate . x) * (up . x).
  bool gated = false;
  /// y's column n is stored at column y_order[n] (a `y_order` parameter):
  /// the inverse of the act_order perm of the matmul that reads y, which
  /// then reads its input in sorted column order with no permute launch
  /// (docs/act-order.md).
  bool scatterOutput = false;
  /// Horizontal fusion (a `qf.group`): N of members 1.. that read the same
  /// x with the same weight type and epilogue. Blocks are partitioned across
  /// the members in order; member i's parameters carry a `.i` suffix
  /// (`codes.1`, `y.1`, ...).
  SmallVector<int64_t> groupNs;
};

/// A kernel parameter: what the runtime binds to it (see docs/artifact.md).
struct KernelParam {
  std::string name; ///< x, norm, codes, scales, ..., up_codes, ..., bias, residual, y
  std::string type; ///< ptr (every parameter is a pointer today)
};

/// What the runtime needs to launch the kernel.
struct KernelLaunch {
  std::string name;
  SmallVector<KernelParam> params;
  int64_t gridX = 0;
  int64_t gridY = 1;
  int64_t gridZ = 1;
  int64_t blockX = 0;
  int64_t sharedBytes = 0; ///< static shared memory used (informational)
  int64_t dynamicSharedBytes = 0; ///< passed at launch (extern shared array)
};

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_COMMON_MATMULSPEC_H
