//===- Executor.h - Runs an artifact's plans on one GPU ---------*- C++ -*-===//
//
// The executor owns everything an artifact needs on the device:
//
//   Executor exec(artifact, context);          // target check, kernels loaded
//   exec.loadWeights(safetensors);             // or bindWeightComponent(...)
//   exec.allocate(16);                         // activations for batch 16
//   exec.buffer(16, "x").upload(...);
//   exec.run(16, stream);                      // the plan's steps, in order
//   exec.capture(16, stream);                  // once: a CUDA graph
//   exec.replay(16, stream);                   // every decode step
//
// Buffers marked "state" (KV caches) are allocated once, zeroed, and shared
// by every plan; resetState zeroes them again for a new sequence. Buffers
// marked "workspace" (the dequantized weight of the cuBLAS fallback) are
// allocated once too (once a step that runs reads them) and shared by every
// plan, but never zeroed: a plan writes one before it reads it. `gemm` steps
// run cuBLAS on the plan's stream with the executor's own handle and workspace,
// so they are captured into graphs like kernel launches.
//
// Weight components are bound by name and component ("codes", "scales",
// ...) in the packed layout the artifact asks for; loadWeights reads them
// from a qfuse-packed safetensors file (`<weight>.<component>`, row_major)
// and repacks through qfuse_format where the layout is tiled. Before a plan
// runs, every argument it uses must be bound, or the error lists what is
// missing.
//
// Steps guarded by perms (version 7, PermGuards.h: an act_order group's
// kernel on its first weight's perm, or the group's fallback) run by the
// perms bound: the executor keeps a host copy of the "perm" of every weight
// a guard names (binding it is required) and skips the steps whose guard
// does not hold, in run, runSteps and every graph it captures.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_EXECUTOR_H
#define QFUSE_RUNTIME_DEVICE_EXECUTOR_H

#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/artifact/PermGuards.h"
#include "qfuse/runtime/artifact/WeightLayouts.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"
#include "qfuse/runtime/device/Cuda.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace qfuse::runtime {

class PinnedUploader;

class Executor {
public:
  /// Checks the artifact's chip against the device of `context` (which must
  /// outlive the executor), loads every kernel (cubin first, else PTX) and
  /// checks each launch's block and shared memory against the device.
  Executor(const Artifact &artifact, const cuda::Context &context);
  ~Executor();
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  const Artifact &artifact() const { return artifact_; }
  /// Whether kernel `name` was loaded from its cubin (else from PTX).
  bool loadedFromCubin(const std::string &name) const;
  /// Modules loaded: kernels with identical code share one.
  size_t numModules() const;

  //===--------------------------------------------------------------------===//
  // Weights and dense tensors
  //===--------------------------------------------------------------------===//

  /// The (weight, component) pairs and tensors the plans read.
  const std::set<std::pair<std::string, std::string>> &
  usedWeightComponents() const {
    return usedComponents_;
  }
  const std::set<std::string> &usedTensors() const { return usedTensors_; }

  /// Uploads one packed component of `weight`, already in the layout the
  /// artifact gives for it. Rebinding drops captured graphs. With an
  /// `uploader` (loaders binding many), the copy is queued on its stream:
  /// `data` may be freed on return either way, but the bytes are on the
  /// device once `uploader->finish()` returns.
  void bindWeightComponent(const std::string &weight,
                           const std::string &component, const void *data,
                           size_t size, PinnedUploader *uploader = nullptr);
  /// Binds a component to a device buffer the executor takes over.
  void bindWeightComponent(const std::string &weight,
                           const std::string &component,
                           cuda::DeviceBuffer buffer);
  /// The device copy of a component's bytes that bindWeightComponent makes
  /// from host data (whole 16-byte units, zero past the data), for loaders
  /// that upload on a thread of their own and bind the buffer later.
  /// `uploader` as for bindWeightComponent.
  static cuda::DeviceBuffer componentBuffer(const std::string &label,
                                            const void *data, size_t size,
                                            PinnedUploader *uploader);
  /// Points a component at device memory the caller owns and keeps alive
  /// (benchmarks rotate weight copies this way). Data the executor holds
  /// for the component stays, so binding its componentPointer again
  /// restores it.
  void bindWeightComponent(const std::string &weight,
                           const std::string &component, CUdeviceptr ptr);
  /// Uploads a dense tensor; `size` must match its shape and dtype.
  /// `uploader` as for bindWeightComponent.
  void bindTensor(const std::string &name, const void *data, size_t size,
                  PinnedUploader *uploader = nullptr);
  /// Binds a dense tensor to a device buffer the executor takes over
  /// (exactly its shape and dtype's bytes).
  void bindTensor(const std::string &name, cuda::DeviceBuffer buffer);

  /// Binds the components of `weight` from qfuse_format's packed form
  /// (row_major, as pack/quantizeRTN produce it): checks every component's
  /// dtype and shape against the weight's encoding, repacks to the
  /// artifact's layout and uploads the components the plans read. `weight`
  /// is a checkpoint tensor: every artifact entry packed from it (one per
  /// layout, docs/artifact.md) is filled from these components; the name
  /// of an entry packed from another tensor binds that entry alone.
  void bindWeight(const std::string &weight,
                  const format::TensorMap &components);

  /// bindWeight in two halves, so that loaders repack on many threads and
  /// upload on one: the checks and the repacking into every layout (no
  /// device work; safe on any thread), then the uploads.
  struct LaidOutWeight {
    format::TensorMap source;              // the row-major components
    std::vector<format::TensorMap> packed; // repacked layouts
    struct Upload {
      std::string weight, component;
      const uint8_t *data; // into `source`, `packed` or layOutViews' views
      size_t size;
    };
    std::vector<Upload> uploads; // the components the plans read
  };
  /// `repacker`: where the kernel layouts are made (packForLayout).
  LaidOutWeight layOutWeight(const std::string &weight,
                             format::TensorMap components,
                             const LayoutRepacker *repacker = nullptr) const;
  /// layOutWeight from components the caller keeps alive until they are
  /// bound (a mapped checkpoint's bytes): row_major layouts upload straight
  /// from them, without a copy.
  LaidOutWeight layOutViews(const std::string &weight,
                            const RowMajorViews &components,
                            const LayoutRepacker *repacker = nullptr) const;
  /// `uploader` as for bindWeightComponent.
  void bindLaidOut(const LaidOutWeight &weight,
                   PinnedUploader *uploader = nullptr);

  /// The checkpoint tensors (WeightSpec::source) of the weights the plans
  /// read, each once however many layouts it is packed in: what loaders
  /// make and pass to bindWeight.
  std::set<std::string> usedWeightSources() const;

  /// Binds every component and tensor the plans read from `file`: tensors
  /// by name (dtype and shape must match), weight components from
  /// `<source>.<component>` (qfuse-packed, row_major; `source` is the
  /// checkpoint tensor of each weight entry), checked and repacked like
  /// bindWeight.
  void loadWeights(const SafetensorsFile &file);

  /// The device pointer a bound component resolves to (0 when unbound) and,
  /// for components the executor uploaded, their size (0 otherwise).
  CUdeviceptr componentPointer(const std::string &weight,
                               const std::string &component) const;
  size_t componentBytes(const std::string &weight,
                        const std::string &component) const;

  /// "weight 'w' component 'codes'", ... for every unbound argument.
  std::vector<std::string> unboundArguments() const;

  /// Whether `step` runs with the perms bound now (PermGuards.h): true for
  /// unguarded steps.
  bool runsStep(const Step &step) const { return perms_.holds(step.guard); }
  /// The plan for `batch` with only the steps that run (runsStep): what
  /// run() enqueues, for tools that walk the steps (qfuse-bench --check).
  Plan runningPlan(int64_t batch) const;
  /// The (weight, component) pairs that runningPlan(batch) reads: one of a
  /// weight's layouts where the artifact stores several (version 3).
  std::set<std::pair<std::string, std::string>>
  runningWeightComponents(int64_t batch) const;
  /// The perms bound for the weights that guards name.
  const BoundPerms &boundPerms() const { return perms_; }

  //===--------------------------------------------------------------------===//
  // Buffers and plans
  //===--------------------------------------------------------------------===//

  /// Allocates every buffer for the plan of `batch` (a no-op when done),
  /// and the state buffers and workspaces the first time.
  void allocate(int64_t batch);
  /// A buffer allocated for `batch` (for a state buffer or workspace: the
  /// one shared by every batch).
  cuda::DeviceBuffer &buffer(int64_t batch, const std::string &name);
  /// Device bytes held by the buffers of `batch` (state buffers and
  /// workspaces, which every batch shares, excluded).
  size_t bufferBytes(int64_t batch) const;
  /// Device bytes of all workspaces (0 before the first allocate).
  size_t workspaceBytes() const;
  /// Whether workspace `name` is allocated: only those of steps that run
  /// are (an act_order group's fallback has none while its perms are equal).
  bool hasWorkspace(const std::string &name) const {
    return workspaces_.count(name) != 0;
  }

  /// A state buffer (allocated and zeroed on first use).
  cuda::DeviceBuffer &stateBuffer(const std::string &name);
  /// Device bytes of all state buffers (0 before they are allocated).
  size_t stateBytes() const;
  /// Enqueues a zero fill of every state buffer on `stream` (a new
  /// sequence); allocates them first if needed.
  void resetState(CUstream stream);

  /// Enqueues the steps of the plan for `batch` on `stream` (allocating its
  /// buffers first if needed).
  void run(int64_t batch, CUstream stream);
  /// Enqueues steps [first, last) of the plan for `batch` alone (allocating
  /// its buffers first if needed). Only what these steps read must be
  /// bound: a model loading in the background runs its first layers while
  /// the later ones are still uploading. Buffer arguments of launch steps named in
  /// `overrides` resolve to the given device pointers instead of the
  /// executor's buffers: GPTQ drives its block kernel over tiles of its own
  /// memory this way, and calibration runs a model one layer at a time.
  void runSteps(int64_t batch, size_t first, size_t last, CUstream stream,
                const std::map<std::string, CUdeviceptr> &overrides = {});
  /// Captures the plan for `batch` as a CUDA graph (replacing any earlier
  /// capture). `stream` must not be the legacy default stream.
  void capture(int64_t batch, CUstream stream);
  bool hasGraph(int64_t batch) const;
  /// Captures the plan for `batch` with the current bindings into a graph
  /// the caller owns (benchmarks keep one per rotated weight copy).
  cuda::Graph makeGraph(int64_t batch, CUstream stream);
  /// Enqueues one replay of the captured graph.
  void replay(int64_t batch, CUstream stream);

  /// A graph of the plan for `batch` with only the steps `keep` accepts
  /// (by index in the plan). For the per-part breakdown of a decode step:
  /// what a part costs is the replay time it adds to the graph. The
  /// results of such a graph are meaningless.
  cuda::Graph makePartialGraph(int64_t batch, CUstream stream,
                               const std::function<bool(size_t)> &keep);

private:
  struct LoadedKernel {
    // Kernels whose code (PTX and cubin) is identical share one module.
    std::shared_ptr<cuda::Module> module;
    CUfunction function = nullptr;
    // Launched as a programmatic dependent of the kernel before it in the
    // stream: it waits for that grid itself (Kernel::gridDependency).
    bool programmatic = false;
  };
  struct Instance {
    std::map<std::string, cuda::DeviceBuffer> buffers;
    cuda::Graph graph;
  };

  Instance &instance(int64_t batch);
  void requireBound(const Plan &plan) const;
  /// requireBound for steps [first, last) of `plan` alone.
  void requireBound(const Plan &plan, size_t first, size_t last) const;
  void enqueue(const Plan &plan, Instance &instance, CUstream stream);
  void enqueueStep(const Plan &plan, size_t s, Instance &instance,
                   CUstream stream);
  void enqueueGemm(const Plan &plan, const Step &step, Instance &instance,
                   CUstream stream, const std::string &where);
  /// Points cuBLAS at `stream` (outside any capture: the call resets the
  /// workspace, which must not happen mid-capture).
  void prepareCublas(CUstream stream);
  void allocateState();
  void allocateWorkspaces();
  /// Device vectors of ones, one per dtype of a gemm step with a bias, as
  /// long as the most rows such a step has.
  void makeBiasOnes();
  cuda::DeviceBuffer &bufferOf(const std::string &name, Instance &instance);
  CUdeviceptr argumentPointer(const Arg &arg, Instance &instance);
  void dropGraphs();
  /// Keeps a host copy of `weight`'s perm when a guard names the weight:
  /// from `host` when given, else read back from `device`.
  void recordPerm(const std::string &weight, const std::string &component,
                  const void *host, CUdeviceptr device);
  void bindOwned(const std::pair<std::string, std::string> &key,
                 cuda::DeviceBuffer buffer);
  [[noreturn]] void fail(const std::string &what) const;
  /// Checks every component of `weight` against its encoding and repacks
  /// them to the artifact's layout into `out` (WeightLayouts.h): the
  /// uploads of those the plans read, pointing into `raw` where the layout
  /// is the checkpoint's order.
  void layOut(const WeightSpec &weight, const RowMajorViews &raw,
              const std::string &origin, LaidOutWeight &out,
              const LayoutRepacker *repacker = nullptr) const;
  /// layOut of every artifact entry checkpoint tensor `name` binds, after
  /// checking that `raw` names only components of its encoding.
  void layOutEntries(const std::string &name, const RowMajorViews &raw,
                     LaidOutWeight &out,
                     const LayoutRepacker *repacker = nullptr) const;

  const Artifact &artifact_;
  const cuda::Context &context_;
  std::vector<LoadedKernel> kernels_; // parallel to artifact_.kernels

  std::set<std::pair<std::string, std::string>> usedComponents_;
  std::set<std::string> usedTensors_;
  // Uploaded data (owned) and the pointer each argument resolves to.
  std::map<std::pair<std::string, std::string>, cuda::DeviceBuffer>
      ownedComponents_;
  std::map<std::pair<std::string, std::string>, CUdeviceptr> components_;
  std::map<std::string, cuda::DeviceBuffer> tensors_;
  // The weights guards name, and the perms bound for them.
  std::set<std::string> guardWeights_;
  BoundPerms perms_;

  std::map<int64_t, std::unique_ptr<Instance>> instances_;
  // State buffers, shared by every instance; empty until first allocated.
  std::map<std::string, cuda::DeviceBuffer> state_;
  bool stateAllocated_ = false;
  // Workspaces, shared by every instance, never zeroed; empty until the
  // first allocate.
  std::map<std::string, cuda::DeviceBuffer> workspaces_;
  // Whether the workspaces the running steps read are allocated (reset
  // when a guard's perm is bound).
  bool workspacesAllocated_ = false;

  // Set only inside runSteps: buffer names resolved to caller memory.
  const std::map<std::string, CUdeviceptr> *overrides_ = nullptr;

  // gemm steps: a handle with its own workspace, the stream it was last
  // pointed at, and M ones per dtype (f16, bf16) for bias rank-1 updates.
  std::unique_ptr<cuda::Cublas> cublas_;
  CUstream cublasStream_ = nullptr;
  bool cublasStreamSet_ = false;
  std::map<DType, cuda::DeviceBuffer> ones_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_EXECUTOR_H
