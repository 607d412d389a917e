//===- TuningDatabase.h - measured tilings per shape ------------*- C++ -*-===//
//
// The tuning database qf-select-tiling reads: tilings measured on the GPU
// that override the cost model for specific (M, N, K, encoding) shapes.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_DIALECT_QF_TRANSFORMS_TUNINGDATABASE_H
#define QFUSE_DIALECT_QF_TRANSFORMS_TUNINGDATABASE_H

#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include "llvm/ADT/DenseMap.h"

#include <string>
#include <tuple>

namespace mlir {
namespace qf {

/// Tilings keyed by (M, N, K, encoding).
class TuningDatabase {
public:
  using Key = std::tuple<int64_t, int64_t, int64_t, Attribute>;

  /// Reads a JSON array of entries
  ///   {"m": 1, "n": 4096, "k": 4096,
  ///    "encoding": "int4, group = 128, scale = f16",
  ///    "tiling": "matvec, block_n = 4, split_k = 2"}
  /// where "encoding" and "tiling" are the bodies of #qf.enc<...> and
  /// #qf.tiling<...>; an entry with "chip": "sm_90a" holds a tiling for
  /// that target only (the wgmma kernel's need it), next to the entry for
  /// every target. On failure, returns failure and sets `error` to a
  /// message naming the file and the entry ($[i].field).
  static FailureOr<TuningDatabase> load(StringRef path, MLIRContext *context,
                                        std::string &error);

  /// The measured tiling for a shape, or null: on sm_90a
  /// (`archSpecific`) its sm_90a entry when there is one.
  TilingAttr lookup(int64_t m, int64_t n, int64_t k, EncodingAttr encoding,
                    bool archSpecific = false) const;

  size_t size() const { return entries.size() + archEntries.size(); }

private:
  llvm::DenseMap<Key, TilingAttr> entries;
  llvm::DenseMap<Key, TilingAttr> archEntries; // the "chip": "sm_90a" ones
};

} // namespace qf
} // namespace mlir

#endif // QFUSE_DIALECT_QF_TRANSFORMS_TUNINGDATABASE_H
