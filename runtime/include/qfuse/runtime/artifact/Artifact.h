//===- Artifact.h - The qfuse artifact, parsed and validated ----*- C++ -*-===//
//
// An artifact (docs/artifact.md) is one JSON object: the kernels (PTX and an
// optional cubin), the weights and dense tensors they read, the activation
// buffers, and one execution plan per compiled batch size. Artifact::parse
// checks all of it on the CPU, before anything touches a GPU: the format and
// version, the target chip's spelling, every kernel's parameter list, every
// weight's encoding and layout, every buffer shape, and in every plan step
// the kernel it launches, its grid and block, and each argument against the
// kernel's parameter (count, kind, and that the buffer/weight/tensor exists),
// and where the kernel's parameters name the activations (`x`, `y`), their
// last extents against the weights' K and N. Inputs and outputs are unique
// and outputs non-empty, a buffer has at most one "M", and PTX features are
// `+ptxNN` (docs/artifact.md, Validation).
// Version 2 adds state buffers, cuBLAS `gemm` steps (their operands' shapes,
// dtypes and the weight's dense f16 encoding are checked here too) and the
// "model" object. Version 3 lets a weight appear once per packed layout: an
// entry with "source" is the checkpoint tensor `source` packed in its own
// layout (all entries of one source must agree in shape and encoding, and
// differ in layout). Version 4 lets a launch name its op. Version 5 adds
// the dequantize + cuBLAS fallback: workspace buffers, gemm steps that
// multiply by a weight held in a buffer ("weight_buffer", f16 or bf16) and
// "qf.dequantize" launches that fill it. Version 2 files are still read.
// A file holding one artifact per chip (an artifact set) is read by
// ArtifactSet (ArtifactSet.h), which parses each variant with this parser;
// Artifact::parse refuses it. Errors are qfuse::Error naming the file and the
// JSON field:
//
//   artifact 'm.qfa': plans[0].steps[1].args[2]: weight 'w' is not declared
//   in 'weights'
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_ARTIFACT_ARTIFACT_H
#define QFUSE_RUNTIME_ARTIFACT_ARTIFACT_H

#include "qfuse/format/ArtifactSchema.h"
#include "qfuse/format/ArtifactVersion.h"
#include "qfuse/format/Encoding.h"
#include "qfuse/format/Layout.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/checkpoint/DType.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qfuse::runtime {

/// The artifact version this runtime reads.
using qfuse::format::kArtifactVersion;
/// The value of the "format" field.
constexpr std::string_view kArtifactFormat = format::artifact::kFormat;
/// The op of a launch that dequantizes a packed weight into a dense [N, K]
/// buffer (its kernel parameter "w") for a gemm step on "weight_buffer".
constexpr std::string_view kDequantizeOp = "qf.dequantize";
/// A launch that quantizes a dense [N, K] buffer bound to "w" into the
/// row-major components of its step's encoding (version 6; one block per
/// row, so any N: runtime/include/qfuse/runtime/device/DeviceQuantizer.h).
constexpr std::string_view kQuantizeOp = "qf.quantize";
/// The op of the launch that permutes activations into an act_order
/// weight's sorted column order before the matmul that reads them (kernel
/// parameters x -> xp).
constexpr std::string_view kPermuteColumnsOp = "qf.permute_columns";
/// The op of an act_order matmul's RMSNorm launch (kernel parameters x,
/// gamma[, perm] -> y): y is the normalized x, in the weight's sorted column
/// order when it binds a perm (docs/act-order.md).
constexpr std::string_view kRMSNormOp = "qf.rms_norm";
/// The op of an act_order matmul's silu_mul prologue launch (kernel
/// parameters gate, up[, perm] -> xp or y): silu(gate) * up, in the weight's
/// sorted column order when it binds a perm (docs/act-order.md).
constexpr std::string_view kSiluMulOp = "qf.silu_mul";
/// The kernel parameter a qf.dequantize launch writes the weight to.
constexpr std::string_view kDequantizeOutputParam = "w";
/// The kernel parameter of a gated gate/up matmul whose output feeds an
/// act_order matmul: that matmul's weight component "inv_perm". The kernel
/// stores its output column n at y_order[n], in the reader's sorted column
/// order, so no permute launch runs between them. Its weight is the
/// reader's, not the launch's: its K is y's last extent, not x's.
constexpr std::string_view kYOrderParam = "y_order";

/// "sm_90" -> {9, 0, false}; "sm_90a" -> {9, 0, true}.
struct ChipTarget {
  int major = 0;
  int minor = 0;
  bool archSpecific = false; // the 'a' suffix: runs on exactly this chip

  static std::optional<ChipTarget> parse(std::string_view chip);
  std::string str() const;
};

// The parts of the schema (qfuse/format/ArtifactSchema.h) the runtime uses
// as they are read. A validated artifact's kernels hold their code: the
// module's, where the file gives a kernel none of its own.
using format::artifact::Arg;
using format::artifact::decodeBase64;
using format::artifact::Dim;
using format::artifact::Kernel;
using format::artifact::KernelParam;
using format::artifact::ParamType;
using format::artifact::paramTypeName;
using format::artifact::RooflineEntry;

/// A weight entry (name, source, [N, K], encoding and layout text) with its
/// encoding and layout parsed.
struct WeightSpec : format::artifact::Weight {
  format::Encoding encodingAttr; // both parsed and verified by qfuse_format
  format::Layout layoutAttr;
  /// The packed components (qfuse_format's componentSpecs), in row_major.
  std::vector<format::ComponentSpec> components;
  /// Components the kernel's layout adds (qfuse_format's
  /// layoutComponentSpecs: "perm" and "inv_perm" under act_order), made by
  /// the repack.
  std::vector<format::ComponentSpec> layoutComponents;

  /// A row-major or layout component by name.
  const format::ComponentSpec *findComponent(std::string_view name) const;
};

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::F16;
  uint64_t numBytes() const;
};

struct BufferSpec {
  std::string name;
  std::vector<Dim> shape;
  DType dtype = DType::F16;
  /// A state buffer (KV caches): one allocation per executor, shared by
  /// every plan, zeroed once and kept across runs. Its shape has no "M".
  bool state = false;
  /// A workspace (version 5): one allocation per executor, shared by every
  /// plan like a state buffer, but never zeroed and not kept: what it holds
  /// matters within one plan run only (the weight a qf.dequantize launch
  /// writes for the gemm after it). Its shape has no "M".
  bool workspace = false;
  /// State buffers and workspaces: one allocation serves every plan.
  bool sharedByPlans() const { return state || workspace; }
  /// Bytes for batch size `batch` (every "M" replaced by it).
  uint64_t numBytes(int64_t batch) const;
  /// Extent `dim` for batch size `batch`.
  int64_t extent(size_t dim, int64_t batch) const;
};

/// A `gemm` step: y[M, N] = x[M, K] * W[N, K]^T (+ bias[N]) (+ residual[M,
/// N]) through cuBLAS, with f32 accumulation. W is exactly one of `weight`, a
/// weight with the dense `f16` encoding in row_major, or (version 5)
/// `weightBuffer`, a buffer holding W row-major in its first N * K elements.
/// x, y and residual are buffers [M, K], [M, N], [M, N] whose first extent
/// is the rows M ("M" or a number, the same for all three); bias a tensor
/// [N]. Everything is f16, or, with a weight buffer, everything bf16
/// (`dtype`). Optional operands are empty strings.
struct GemmStep : format::artifact::Gemm {
  DType dtype = DType::F16;
};

struct Step {
  enum class Kind { Launch, Memset, Gemm };
  Kind kind = Kind::Launch;
  std::string target;     // the kernel launched, the buffer zeroed, or the
                          // gemm's weight (or weight buffer)
  size_t kernelIndex = 0; // launch: index into Artifact::kernels
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> block = {1, 1, 1};
  uint32_t sharedBytes = 0; // dynamic shared memory
  std::vector<Arg> args;
  GemmStep gemm; // gemm steps only
  /// Launch steps of version 4: the op the launch runs ("qf.gptq_block_update",
  /// "qf.dequantize") and, for a GPTQ block update, the grid it quantizes
  /// to; empty otherwise.
  std::string op;
  bool hasEncoding = false;
  format::Encoding encoding;
  /// Version 7: runs only when the perms of act_order weights are equal (or
  /// only when they differ); Always otherwise (PermGuards.h).
  format::artifact::PermGuard guard;
};

struct Plan {
  int64_t batch = 0;
  std::vector<Step> steps;
};

/// The top-level "model" object (docs/decode-model.md): the compiler's
/// qf.model dictionary. The runtime reads the integers where present (each
/// must be a positive integer) and keeps the whole object as JSON text for
/// tools; `present` is false when the artifact has none.
using ModelInfo = format::artifact::Model;

/// Upper bound on dynamic + static shared memory per block accepted by the
/// validator; the device's own limit is checked again when the kernel is
/// loaded.
using format::artifact::kMaxSharedBytesPerBlock;

struct Artifact {
  std::string source; // the path (or name) it was parsed from
  int64_t version = 0;
  std::string producer;
  std::string chip; // "sm_90"
  ChipTarget target;
  std::string ptxFeatures;
  std::vector<Kernel> kernels;
  std::vector<WeightSpec> weights;
  std::vector<TensorSpec> tensors;
  std::vector<BufferSpec> buffers;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<Plan> plans;
  std::vector<RooflineEntry> roofline;
  ModelInfo model;
  /// For a variant of an artifact set (ArtifactSet.h): its index in the
  /// set's "variants" and every variant's chip in file order. `setChips` is
  /// empty for a plain artifact file.
  size_t variantIndex = 0;
  std::vector<std::string> setChips;
  /// The chip, and for a set's variant which one it is:
  /// "sm_90a (variant 3 of the set sm_80, sm_90, sm_90a)".
  std::string describeTarget() const;

  /// Parses and fully validates `json`; `source` names it in errors.
  static Artifact parse(std::string_view json, std::string source);
  /// Reads `path` and parses it.
  static Artifact load(const std::string &path);

  const Kernel *findKernel(std::string_view name) const;
  const WeightSpec *findWeight(std::string_view name) const;
  /// The entries packed from checkpoint tensor `source`, one per layout, in
  /// file order (empty when no entry names it).
  std::vector<const WeightSpec *>
  weightsPackedFrom(std::string_view source) const;
  const TensorSpec *findTensor(std::string_view name) const;
  const BufferSpec *findBuffer(std::string_view name) const;
  /// The plan compiled for `batch`, or nullptr.
  const Plan *findPlan(int64_t batch) const;
  /// The plan for `batch`; throws listing the compiled batch sizes.
  const Plan &plan(int64_t batch) const;
};

/// For a qf.dequantize launch: the buffer bound to its parameter "w", which
/// it fills with the dense [N, K] weight; empty for every other step.
std::string dequantizeTarget(const Artifact &artifact, const Step &step);
/// For a qf.dequantize launch: the weight its arguments name (the validator
/// checks there is exactly one); empty for every other step.
std::string dequantizeSource(const Step &step);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_ARTIFACT_ARTIFACT_H
