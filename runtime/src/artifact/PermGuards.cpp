//===- PermGuards.cpp - which guarded steps of a plan run -----------------===//

#include "qfuse/runtime/artifact/PermGuards.h"

#include <cstring>

namespace qfuse::runtime {

void BoundPerms::set(const std::string &weight, const void *data,
                     size_t bytes) {
  std::vector<int32_t> perm(bytes / sizeof(int32_t));
  std::memcpy(perm.data(), data, perm.size() * sizeof(int32_t));
  perms_[weight] = std::move(perm);
}

const std::vector<int32_t> *BoundPerms::find(const std::string &weight) const {
  auto it = perms_.find(weight);
  return it == perms_.end() ? nullptr : &it->second;
}

bool BoundPerms::allEqual(const std::vector<std::string> &weights) const {
  const std::vector<int32_t> *first = nullptr;
  for (const std::string &weight : weights) {
    const std::vector<int32_t> *perm = find(weight);
    if (!perm)
      return false;
    if (!first)
      first = perm;
    else if (*perm != *first)
      return false;
  }
  return true;
}

bool BoundPerms::holds(const PermGuard &guard) const {
  switch (guard.when) {
  case PermGuard::When::Always:
    return true;
  case PermGuard::When::PermsEqual:
    return allEqual(guard.weights);
  case PermGuard::When::PermsDiffer:
    return !allEqual(guard.weights);
  }
  return true;
}

} // namespace qfuse::runtime
