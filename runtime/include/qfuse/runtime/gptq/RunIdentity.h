//===- RunIdentity.h - what decides a quantize run's results ----*- C++ -*-===//
//
// `qfuse-quantize --resume` continues an interrupted run only when it would
// give the results the whole run would have: the same model, encoding,
// calibration, options, artifacts, device and quantizer build. RunIdentity
// lists them as (name, value) text pairs, recorded in the progress manifest
// (QuantizeProgress.h) and compared field by field.
//
//   RunIdentity id;
//   id.add("seed", "0");
//   id.addFile("fp16_artifact", "DIR/qfuse-fp16-calib.qfa");   // content hash
//   id.addLargeFile("model.safetensors", "DIR/model.safetensors"); // size, mtime
//   id.add("quantizer", quantizerBuild());
//   std::string why = differences(recorded, id);   // "" when they match
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_RUNIDENTITY_H
#define QFUSE_RUNTIME_GPTQ_RUNIDENTITY_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace qfuse::runtime {

struct RunIdentity {
  /// In the order added; names are unique.
  std::vector<std::pair<std::string, std::string>> fields;

  void add(const std::string &name, const std::string &value);
  /// "<bytes> bytes, fnv1a64 <hex>" of the file's contents.
  void addFile(const std::string &name, const std::string &path);
  /// "<bytes> bytes, modified <ns>": for files too large to hash on every
  /// run (checkpoint shards).
  void addLargeFile(const std::string &name, const std::string &path);
};

/// FNV-1a 64 of a file's bytes, as 16 hex digits; throws naming the path.
std::string fileHash(const std::string &path);

/// The quantizer's own build: the path and content hash of the executable
/// or shared library this code is linked into.
std::string quantizerBuild();

/// One line per field that differs, is missing or is new ("seed: 0 in the
/// progress, 1 now"); empty when `recorded` and `now` match.
std::string differences(const RunIdentity &recorded, const RunIdentity &now);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_GPTQ_RUNIDENTITY_H
