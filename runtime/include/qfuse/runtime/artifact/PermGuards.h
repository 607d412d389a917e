//===- PermGuards.h - which guarded steps of a plan run ---------*- C++ -*-===//
//
// An act_order qf.group (q/k/v) or gate/up pair runs one kernel on the
// input permuted once, by its first weight's column permutation ("perm"),
// under the contract that every weight of the group has the same perm, as
// GPTQ's desc_act gives modules that read one input. The perms are weight
// data, so the artifact guards those steps ({"when": {"perms_equal":
// [weights]}}) and carries the group's fallback, exact for any perms, under
// {"perms_differ": [...]} (docs/act-order.md). The executor keeps the perms
// it binds here and runs a guarded step only when its guard holds.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_ARTIFACT_PERMGUARDS_H
#define QFUSE_RUNTIME_ARTIFACT_PERMGUARDS_H

#include "qfuse/format/ArtifactSchema.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace qfuse::runtime {

using PermGuard = format::artifact::PermGuard;

/// The perms of act_order weights as bound, by artifact weight name.
class BoundPerms {
public:
  /// Records weight `weight`'s perm (int32 little-endian, `bytes` long;
  /// bytes past K, the executor's padding, are ignored by the comparison
  /// only if they are equal too, so callers pass exactly K entries).
  void set(const std::string &weight, const void *data, size_t bytes);
  void forget(const std::string &weight) { perms_.erase(weight); }
  const std::vector<int32_t> *find(const std::string &weight) const;

  /// Whether the perms of `weights` are all known and identical.
  bool allEqual(const std::vector<std::string> &weights) const;

  /// Whether a step under `guard` runs: always for an unguarded step; for
  /// "perms_equal" only when every weight's perm is known and all are
  /// identical; for "perms_differ" otherwise. An unknown perm counts as
  /// differing, so a step runs either way on the path that is exact for
  /// any perms.
  bool holds(const PermGuard &guard) const;

private:
  std::map<std::string, std::vector<int32_t>> perms_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_ARTIFACT_PERMGUARDS_H
