//===- ArtifactReader.h - the JSON reader of the artifact schema -*- C++
//-*-===//
//
// The class behind fromJson (ArtifactJson.h), private to qfuse_format: the
// top-level tables are read in ArtifactFromJson.cpp, the plans and their
// steps in PlansFromJson.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_SRC_ARTIFACTREADER_H
#define QFUSE_FORMAT_SRC_ARTIFACTREADER_H

#include "qfuse/format/ArtifactJson.h"
#include "qfuse/format/ArtifactVersion.h"

#include <algorithm>
#include <initializer_list>
#include <limits>

namespace qfuse::format::artifact::detail {

using nlohmann::json;

constexpr int64_t kMaxExtent = int64_t(1) << 40;

class Reader {
public:
  Reader(Artifact &out, std::string prefix)
      : out_(out), prefix_(std::move(prefix)) {}

  void read(const json &root);

private:
  [[noreturn]] void fail(const std::string &where,
                         const std::string &what) const {
    throw ReadError{located(where), what};
  }
  std::string located(const std::string &where) const {
    return locatedUnder(prefix_, where);
  }

  const json &member(const json &object, const std::string &where,
                     const char *key) const {
    auto it = object.find(key);
    if (it == object.end())
      fail(where, std::string("missing field '") + key + "'");
    return *it;
  }
  static const json *optional(const json &object, const char *key) {
    auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }
  std::string string(const json &object, const std::string &where,
                     const char *key) const {
    const json &value = member(object, where, key);
    if (!value.is_string())
      fail(where + "." + key,
           "expected a string, found " + std::string(value.type_name()));
    return value.get<std::string>();
  }
  int64_t integer(const json &value, const std::string &where, int64_t lo,
                  int64_t hi) const {
    if (!value.is_number_integer())
      fail(where, "expected an integer, found " + value.dump());
    if ((value.is_number_unsigned() &&
         value.get<uint64_t>() >
             uint64_t(std::numeric_limits<int64_t>::max())) ||
        value.get<int64_t>() < lo || value.get<int64_t>() > hi)
      fail(where, value.dump() + " is out of range [" + std::to_string(lo) +
                      ", " + std::to_string(hi) + "]");
    return value.get<int64_t>();
  }
  const json &array(const json &object, const std::string &where,
                    const char *key) const {
    const json &value = member(object, where, key);
    if (!value.is_array())
      fail(where + "." + key,
           "expected an array, found " + std::string(value.type_name()));
    return value;
  }
  /// An optional array: absent reads as empty.
  const json *optionalArray(const json &object, const char *key) const {
    const json *value = optional(object, key);
    if (value && !value->is_array())
      fail(key, "expected an array");
    return value;
  }
  void requireObject(const json &value, const std::string &where) const {
    if (!value.is_object())
      fail(where,
           "expected an object, found " + std::string(value.type_name()));
  }
  void rejectUnknownKeys(const json &object, const std::string &where,
                         std::initializer_list<std::string_view> known) const;
  /// Fails at `where` unless the file's version is at least `introduced`.
  void requireVersion(int64_t introduced, const std::string &where,
                      const std::string &feature) const {
    if (out_.version < introduced)
      fail(where, feature + " needs version " + std::to_string(introduced) +
                      ", the file says " + std::to_string(out_.version));
  }
  bool flag(const json &object, const std::string &where,
            const char *key) const {
    const json *value = optional(object, key);
    if (!value)
      return false;
    if (!value->is_boolean())
      fail(where + "." + key, "expected true or false, found " + value->dump());
    return value->get<bool>();
  }

  void readVersion(const json &root);
  void readTarget(const json &root);
  void readCode(const json &object, const std::string &where, std::string &ptx,
                std::vector<uint8_t> &cubin) const;
  void readKernels(const json &root);
  void readWeights(const json &root);
  void readTensors(const json &root);
  void readBuffers(const json &root);
  void readNames(const json &root, const char *key,
                 std::vector<std::string> &names) const;
  void readPlans(const json &root);
  Step readStep(const json &value, const std::string &where) const;
  PermGuard readGuard(const json &value, const std::string &where) const;
  void readLaunch(const json &value, const std::string &where,
                  Step &step) const;
  Gemm readGemm(const json &value, const std::string &where) const;
  Arg readArg(const json &value, const std::string &where) const;
  std::array<int64_t, 3> readDims(const json &step, const std::string &where,
                                  const char *key,
                                  const std::array<int64_t, 3> &limits) const;
  void readRoofline(const json &root);
  void readModel(const json &root);

  Artifact &out_;
  std::string prefix_;
};

} // namespace qfuse::format::artifact::detail

#endif // QFUSE_FORMAT_SRC_ARTIFACTREADER_H
