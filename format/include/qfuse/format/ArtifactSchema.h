//===- ArtifactSchema.h - the artifact, as plain C++ structs ----*- C++ -*-===//
//
// The one typed description of the artifact (docs/artifact.md): what the
// compiler's writer fills from the IR and what the runtime's reader parses
// into before it validates. Every JSON key of the format is spelled in one
// place, the serializer of ArtifactJson.h; printArtifact below is its
// writing half for callers that do not read JSON (the compiler).
//
// The structs say what a field holds, not whether it is valid: the reader
// checks each field's JSON type, range and version, the runtime's validator
// (runtime/src/artifact) how the fields refer to each other.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_ARTIFACTSCHEMA_H
#define QFUSE_FORMAT_ARTIFACTSCHEMA_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qfuse::format::artifact {

/// The value of an artifact's "format" field.
inline constexpr std::string_view kFormat = "qfuse-artifact";

/// Dynamic + static shared memory per block that a file may ask for (227 KiB,
/// sm_90's opt-in maximum).
inline constexpr int64_t kMaxSharedBytesPerBlock = 227 * 1024;

/// A kernel parameter's type: a 64-bit device pointer, or a scalar.
enum class ParamType { Ptr, I32, I64, F32 };
/// "ptr", "i32", "i64", "f32".
std::string_view paramTypeName(ParamType type);

struct KernelParam {
  std::string name;
  ParamType type = ParamType::Ptr;
};

/// One .entry of the PTX. `ptx` / `cubin` are the kernel's own code; both
/// empty in a written file means the artifact's module holds it.
struct Kernel {
  std::string name;
  std::string ptx;
  std::vector<uint8_t> cubin;
  std::vector<KernelParam> params; // in PTX .param order
  int64_t sharedBytes = 0;         // static shared memory
  int64_t maxThreads = 1024;
  // Starts with griddepcontrol.wait (qf-to-gpu's grid-dependency): the
  // runtime may launch it as a programmatic dependent of the kernel before.
  bool gridDependency = false;
};

/// A packed weight, in one layout ("source": one checkpoint tensor listed
/// once per layout, version 3).
struct Weight {
  std::string name;   // what launch arguments bind
  std::string source; // the checkpoint tensor; empty: `name` itself
  int64_t n = 0;      // shape [N, K] = [out, in]
  int64_t k = 0;
  std::string encoding; // body of #qf.enc<...>
  std::string layout;   // body of #qf.layout<...>

  const std::string &checkpointName() const {
    return source.empty() ? name : source;
  }
};

/// A dense tensor, loaded as stored.
struct Tensor {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype; // "f16", "bf16", "f32", "i32", ...
};

/// One extent of a buffer shape: a number, or the batch size "M".
struct Dim {
  int64_t value = 0;
  bool isBatch = false;
};

/// An activation, scratch, state (KV cache) or workspace buffer.
struct Buffer {
  std::string name;
  std::vector<Dim> shape;
  std::string dtype;
  bool state = false;     // one per executor, kept across runs
  bool workspace = false; // one per executor, never kept (version 5)
};

/// One launch argument: a buffer, a weight's component, a tensor, or an
/// immediate.
struct Arg {
  enum class Kind { Buffer, Weight, Tensor, I32, I64, F32 };
  Kind kind = Kind::Buffer;
  std::string name;      // buffer, weight or tensor name
  std::string component; // weight components only
  int64_t intValue = 0;  // i32 / i64
  float floatValue = 0;  // f32
};

/// y = x W^T (+ bias) (+ residual) through cuBLAS; W is `weight` (a named
/// dense weight) or `weightBuffer` (a buffer, version 5). Optional operands
/// are empty strings.
struct Gemm {
  std::string x, weight, weightBuffer, y, bias, residual;
};

/// When a step runs (version 7): always, or only when the act_order
/// weights `weights` have identical column permutations ("perm", weight
/// data the runtime compares when it binds them) or only when they do not.
/// A fused act_order group's launches run under PermsEqual; its fallback,
/// which reads every member's own perm, under PermsDiffer
/// (docs/act-order.md).
struct PermGuard {
  enum class When { Always, PermsEqual, PermsDiffer };
  When when = When::Always;
  std::vector<std::string> weights; // two or more; empty for Always
};

struct Step {
  enum class Kind { Launch, Memset, Gemm };
  Kind kind = Kind::Launch;
  std::string target; // launch: the kernel; memset: the buffer
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  int64_t sharedBytes = 0; // dynamic shared memory
  std::vector<Arg> args;
  /// Version 4: the op the launch runs and, for qf.gptq_block_update, the
  /// grid it quantizes to (body of #qf.enc<...>); empty when not stated.
  std::string op;
  std::string encoding;
  Gemm gemm; // gemm steps only
  PermGuard guard; // version 7, any kind of step
};

/// The steps of one compiled batch size.
struct Plan {
  int64_t batch = 0;
  std::vector<Step> steps;
};

struct RooflineEntry {
  std::string op;
  uint64_t bytes = 0;
  uint64_t flops = 0;
};

/// The compiler's qf.model dictionary. The object is open (any JSON values)
/// and travels as compact JSON text; the reader types the fields the
/// runtime reads (0 or "" when absent).
struct Model {
  bool present = false;
  std::string json;
  std::string architecture;
  int64_t vocabSize = 0;
  int64_t hiddenSize = 0;
  int64_t numLayers = 0;
  int64_t numHeads = 0;
  int64_t numKvHeads = 0;
  int64_t headDim = 0;
  int64_t maxSeq = 0;
};

struct Artifact {
  int64_t version = 0;
  std::string producer;
  std::string chip; // "sm_90", "sm_90a"
  std::string ptxFeatures;
  std::string modulePtx; // the code every kernel without its own shares
  std::vector<uint8_t> moduleCubin;
  std::vector<Kernel> kernels;
  std::vector<Weight> weights;
  std::vector<Tensor> tensors;
  std::vector<Buffer> buffers;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<Plan> plans;
  std::vector<RooflineEntry> roofline;
  Model model;
};

/// What one file holds: a plain artifact (one variant), or an artifact set
/// of one artifact per chip (docs/artifact.md, Artifact sets).
struct ArtifactFile {
  bool isSet = false;
  std::vector<Artifact> variants;
};

/// The artifact as the file holds it: JSON, two-space indent, keys sorted,
/// doubles with 17 significant digits, ending in a newline.
std::string printArtifact(const Artifact &artifact);

/// An artifact set (one artifact per chip) around `variants`, each the text
/// printArtifact gave (a trailing newline is dropped); ends in a newline.
std::string printArtifactSet(const std::vector<std::string> &variants);

/// Standard base64 with '=' padding (a cubin's "cubin_base64").
std::string encodeBase64(const std::vector<uint8_t> &bytes);
/// The bytes of standard base64 (whitespace ignored); nullopt when `text`
/// is not base64.
std::optional<std::vector<uint8_t>> decodeBase64(std::string_view text);

} // namespace qfuse::format::artifact

#endif // QFUSE_FORMAT_ARTIFACTSCHEMA_H
