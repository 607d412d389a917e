//===- ArtifactBuilder.h - the artifact's tables, op by op ---- -*- C++ -*-===//
//
// buildArtifact walks each plan function once and fills the artifact's
// tables (kernels, weights, tensors, buffers, steps by batch) here: the
// walk and the decode ops in ArtifactWriter.cpp, the fused matmuls (their
// launches, cuBLAS gemms and fallback records) in ArtifactMatmul.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_TARGET_ARTIFACTBUILDER_H
#define QFUSE_LIB_TARGET_ARTIFACTBUILDER_H

#include "ArtifactVocabulary.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
namespace qf {
namespace artifact {

namespace schema = ::qfuse::format::artifact;

constexpr schema::ParamType kPtr = schema::ParamType::Ptr;

/// A launch argument and the type of the kernel parameter it binds.
using BoundArg = std::pair<schema::Arg, schema::ParamType>;

/// Collects the artifact's tables while the plan is walked.
class ArtifactBuilder {
public:
  std::vector<schema::Kernel> kernels;
  std::vector<schema::Weight> weights;
  std::vector<schema::Tensor> tensors;
  std::vector<schema::Buffer> buffers;
  std::vector<std::string> inputs, outputs;
  std::map<int64_t, std::vector<schema::Step>> stepsByBatch;
  BufferNames bufferNames;
  /// Buffers the kernels keep across runs (KV caches).
  std::set<std::string> stateBuffers;
  bool failedAny = false;

  void addFunction(func::FuncOp func);
  void addBuffers();

  /// True once a checkpoint tensor is listed in two layouts: the artifact
  /// then needs version 3 ("source").
  bool anyPackedTwice = false;
  /// A launch step names the op it runs (version 4).
  bool anyLaunchOp = false;
  /// A launch step runs qf.quantize (version 6).
  bool anyQuantizeOp = false;
  /// Whether a step is guarded by equal or differing perms (version 7).
  bool anyPermGuard = false;
  /// The fallback's workspaces (version 5): the most elements a dequantize
  /// writes, by dtype ("f16", "bf16"); one buffer each, shared by every
  /// fallback step of every plan.
  std::map<std::string, int64_t> workspaceElements;
  /// The fallback's scratch activations: name -> (shape, dtype).
  std::map<std::string, std::pair<std::vector<schema::Dim>, std::string>>
      scratchBuffers;

private:
  std::set<std::string> seenKernels, seenTensors;
  /// (checkpoint tensor, layout body) -> the `weights` entry packed so.
  std::map<std::pair<std::string, std::string>, std::string> weightEntries;
  std::set<std::string> weightSources;

  /// The `weights` entry of `ref`'s checkpoint tensor in `layout` (default:
  /// the type's), added on first use; returns its name. The first layout of
  /// a checkpoint tensor keeps the tensor's name; each further layout is an
  /// entry `<tensor>@<layout>` with "source": <tensor> (docs/artifact.md):
  ///
  ///   {"name": "w", ..., "layout": "tiled, tile_n = 1, tile_k = 32"},
  ///   {"name": "w@tiled_n32_k32", "source": "w", ...,
  ///    "layout": "tiled, tile_n = 32, tile_k = 32"}
  std::string addWeight(WeightRefOp ref, LayoutAttr layout = {}) {
    WeightType wt = ref.getType();
    if (!layout)
      layout = wt.getLayout();
    std::string source = ref.getName().str();
    std::string body = attrBody(layout);
    auto [it, inserted] = weightEntries.try_emplace({source, body});
    if (!inserted)
      return it->second;
    bool first = weightSources.insert(source).second;
    it->second = first ? source : source + "@" + layoutTag(layout);
    schema::Weight entry;
    entry.name = it->second;
    if (!first) {
      entry.source = source;
      anyPackedTwice = true;
    }
    entry.n = wt.getN();
    entry.k = wt.getK();
    entry.encoding = attrBody(wt.getEncoding());
    entry.layout = body;
    weights.push_back(std::move(entry));
    return it->second;
  }
  /// A short name for a layout: `row_major`, `tiled_n32_k32`.
  static std::string layoutTag(LayoutAttr layout) {
    if (layout.isRowMajor())
      return "row_major";
    std::string tag = "tiled_n" + std::to_string(layout.getTileN()) + "_k" +
                      std::to_string(layout.getTileK());
    if (layout.getInterleave() != 1)
      tag += "_i" + std::to_string(layout.getInterleave());
    return tag;
  }
  void addTensor(TensorRefOp ref) {
    if (!seenTensors.insert(ref.getName().str()).second)
      return;
    schema::Tensor tensor;
    tensor.name = ref.getName().str();
    llvm::append_range(tensor.shape, ref.getType().getShape());
    tensor.dtype = dtypeOf(ref.getType().getElementType());
    tensors.push_back(std::move(tensor));
  }
  /// A buffer, or the tensor a qf.tensor_ref names.
  schema::Arg valueArg(Value v) {
    if (auto ref = v.getDefiningOp<TensorRefOp>()) {
      addTensor(ref);
      schema::Arg arg;
      arg.kind = schema::Arg::Kind::Tensor;
      arg.name = ref.getName().str();
      return arg;
    }
    return bufferArg(bufferNames.nameOf(v));
  }
  void addKernel(StringRef name, std::vector<schema::KernelParam> params,
                 int64_t shared, int64_t threads) {
    if (!seenKernels.insert(name.str()).second)
      return;
    schema::Kernel kernel;
    kernel.name = name.str();
    kernel.params = std::move(params);
    kernel.sharedBytes = shared;
    kernel.maxThreads = threads;
    kernels.push_back(std::move(kernel));
  }
  /// One launch step from a `qf.launches` record; `bind` gives each
  /// parameter's argument and type.
  void addLaunch(LaunchAttr record,
                 function_ref<BoundArg(size_t, StringRef)> bind);
  void addFusedMatmul(FusedMatmulOp fused);
  /// The argument of parameter `n` = `<name>.<index>` of a qf.group's
  /// kernel (qf-fuse-shared-input): the output, epilogue operand or weight
  /// component (read in `layout`) of member `index`, the index-th fused
  /// matmul of the group in the block.
  BoundArg bindGroupParam(FusedMatmulOp fused, StringRef n, unsigned index,
                          LayoutAttr layout);
  /// One record of the dequantize + cuBLAS fallback (qf-to-gpu's
  /// lowerFallback, docs/fallback.md): a #qf.fallback_gemm, or a #qf.launch
  /// with a `step`; `members` are the fused matmuls its `member` indexes
  /// (the op alone, or its qf.group).
  void addFallbackRecord(FusedMatmulOp fused, ArrayRef<FusedMatmulOp> members,
                         Attribute record);
  /// The argument `arg` of a fallback record's launch (permute, rms_norm,
  /// silu_mul, add) for `member` of `fused`'s group: a component of its
  /// weight read in `layout`, its activations, output, residual or operand,
  /// a component of its reader's weight (batch `batch`), or the scratch
  /// buffer `scratch` names.
  BoundArg bindFallbackArg(FusedMatmulOp fused, FusedMatmulOp member,
                           LaunchArgAttr arg, LayoutAttr layout, int64_t batch,
                           function_ref<std::string(StringRef)> scratch);
  /// Component `component` of `fused`'s up projection (silu_mul), read in
  /// `layout`.
  BoundArg bindUpComponent(FusedMatmulOp fused, StringRef component,
                           LayoutAttr layout);
  /// Component `component` of the weight of the act_order matmul that
  /// reads `writer`'s result (result 0), which `writer` writes in that
  /// weight's sorted column order (qf-to-gpu, docs/act-order.md); the
  /// weight is read in the layout of that matmul's kernel at `batch`.
  schema::Arg readerComponent(Operation *writer, int64_t batch,
                              StringRef component);
  /// Guards `step` by a `qf.launch_guards` entry (1: runs when the perms
  /// of `members`' weights, read in `layout`, are equal; 2: when they
  /// differ), docs/act-order.md.
  void setPermGuard(schema::Step &step, int32_t guard,
                    ArrayRef<FusedMatmulOp> members, LayoutAttr layout);
  void addDecodeOp(Operation *op, ArrayAttr launches);
  /// A qf.quantize's launch (ArtifactQuantize.cpp): op "qf.quantize", its
  /// encoding, w bound to the input buffer, the components and the status
  /// word to scratch buffers named after the kernel.
  void addQuantizeOp(QuantizeOp op, ArrayAttr launches);
  static std::string workspaceName(StringRef dtype) {
    return "qf.workspace." + dtype.str();
  }
  /// The scratch buffer of the activations permuted for the act_order
  /// weight of the matmul whose output is `output`.
  static std::string permutedInputName(StringRef output) {
    return output.str() + ".permuted_input";
  }
};

} // namespace artifact
} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_TARGET_ARTIFACTBUILDER_H
