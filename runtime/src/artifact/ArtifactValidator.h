//===- ArtifactValidator.h - the artifact checked whole -------*- C++ -*-===//
//
// Private to runtime/src/artifact. The schema's reader (qfuse/format/
// ArtifactJson.h) has checked each field on its own; the validator checks
// that they agree (names declared and unique, every launch against its
// kernel, encodings and layouts through qfuse_format, gemm operands) and
// builds the runtime's Artifact. Split by job: ArtifactValidator.cpp checks
// the top level, kernels, weights, tensors, buffers and the model;
// ArtifactSteps.cpp the plans, each step against what it launches or
// multiplies.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_ARTIFACT_ARTIFACTVALIDATOR_H
#define QFUSE_RUNTIME_ARTIFACT_ARTIFACTVALIDATOR_H

#include "qfuse/runtime/artifact/Artifact.h"

#include "qfuse/format/ArtifactJson.h"
#include "qfuse/runtime/Error.h"

#include <set>
#include <string>
#include <vector>

namespace qfuse::runtime::detail {

namespace schema = format::artifact;

/// `range`'s items separated by ", ".
template <typename Range> std::string joined(const Range &range) {
  std::string out;
  for (const auto &item : range) {
    if (!out.empty())
      out += ", ";
    out += std::string(item);
  }
  return out;
}

/// The contents of the artifact file `path`; throws naming it when it
/// cannot be read.
std::string readArtifactText(const std::string &path);

/// The qfuse::Error for a read that failed, naming `source`.
Error readError(const std::string &source, const schema::ReadError &error);

/// The matrix a gemm step multiplies by: its [N, K] and how errors name it
/// ("weight 'w' [256, 512]").
struct GemmShape {
  int64_t n = 0, k = 0;
  std::string text;
};

/// Validates one artifact as read; every error names the source and the
/// JSON path. A variant of an artifact set is checked with `prefix`
/// "variants[i]", which starts every path its errors name.
class ArtifactValidator {
public:
  explicit ArtifactValidator(std::string source, std::string prefix = "")
      : prefix_(std::move(prefix)) {
    artifact_.source = std::move(source);
  }

  Artifact run(schema::Artifact read);

private:
  [[noreturn]] void fail(const std::string &where,
                         const std::string &what) const {
    throw Error("artifact '" + artifact_.source + "': " + located(where) +
                ": " + what);
  }
  /// `where` under the prefix: "top level.format" -> "variants[1].format".
  std::string located(const std::string &where) const;

  void uniqueName(const std::string &name, const std::string &where,
                  std::set<std::string> &seen, const char *what) const;
  DType dtype(const std::string &name, const std::string &where) const;
  /// Fails at `where` unless the file's version is at least `introduced`.
  void requireVersion(int64_t introduced, const std::string &where,
                      const std::string &feature) const;

  void checkTarget(const schema::Artifact &read);
  void checkPtxFeatures(const std::string &features) const;
  void checkKernels(schema::Artifact &read);
  void checkWeights(std::vector<schema::Weight> &weights);
  void checkTensors(std::vector<schema::Tensor> &tensors);
  void checkBuffers(std::vector<schema::Buffer> &buffers);
  void checkBufferRole(const std::string &where, BufferSpec &buffer) const;
  void checkIo(const std::vector<std::string> &names, const char *key,
               std::vector<std::string> &out);
  void checkPlans(std::vector<schema::Plan> &plans);
  Step checkStep(schema::Step &read, const std::string &where);
  /// A step's "when" (version 7): declared act_order weights of one K.
  void checkGuard(const schema::PermGuard &guard,
                  const std::string &where) const;
  void checkArg(const Arg &arg, const KernelParam &param,
                const std::string &where) const;
  void checkLaunchOp(const std::string &encoding, const std::string &where,
                     Step &step);
  void checkDequantizeLaunch(const Step &step, const std::string &where) const;
  void checkLaunchShapes(const Step &step, const Kernel &kernel,
                         const std::string &where) const;
  Step checkGemm(const schema::Gemm &read, const std::string &where);
  DType gemmDType(const GemmStep &gemm, const std::string &where) const;
  GemmShape namedWeightShape(const GemmStep &gemm,
                             const std::string &where) const;
  GemmShape weightBufferShape(const GemmStep &gemm,
                              const std::string &where) const;
  const BufferSpec &gemmBuffer(const std::string &name,
                               const std::string &where) const;
  void checkGemmOperands(const GemmStep &gemm, const GemmShape &shape,
                         const std::string &where) const;
  void checkGemmBias(const GemmStep &gemm, const GemmShape &shape,
                     const std::string &where) const;
  void parseEncoding(WeightSpec &weight, const std::string &where);
  void parseLayout(WeightSpec &weight, const std::string &where);

  std::string prefix_;
  Artifact artifact_;
};

} // namespace qfuse::runtime::detail

#endif // QFUSE_RUNTIME_ARTIFACT_ARTIFACTVALIDATOR_H
