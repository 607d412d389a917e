//===- JsonInteger.h - A JSON value as a bounded count or id -----*- C++ -*-===//
//
// tokenizer.json and config files give ids and counts as JSON numbers; a
// float or an out-of-range integer has no such value, and converting it to
// one is undefined, so every reader checks with this first.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_TEXT_SRC_JSONINTEGER_H
#define QFUSE_RUNTIME_TEXT_SRC_JSONINTEGER_H

#include <nlohmann/json.hpp>

#include <cstdint>

namespace qfuse::text {

/// Whether `v` is a JSON integer from 0 to `max` (a float or a string is
/// not, whatever its value).
inline bool isIntegerUpTo(const nlohmann::json &v, int64_t max) {
  return v.is_number_unsigned()
             ? v.get<uint64_t>() <= uint64_t(max)
             : v.is_number_integer() && v.get<int64_t>() >= 0 &&
                   v.get<int64_t>() <= max;
}

} // namespace qfuse::text

#endif // QFUSE_RUNTIME_TEXT_SRC_JSONINTEGER_H
