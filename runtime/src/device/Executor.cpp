//===- Executor.cpp - Runs an artifact's plans on one GPU -----------------===//
//
// Loads an artifact's kernels, allocates its buffers per batch size and
// enqueues its plans (launches, gemms, memsets) directly or as CUDA graphs.
// Binding weights and tensors is in ExecutorWeights.cpp.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/device/Executor.h"
#include "BoundInputs.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/runtime/Error.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string_view>

namespace qfuse::runtime {
namespace {

/// Default dynamic shared memory a kernel may use without opting in.
constexpr int64_t kDefaultDynamicShared = 48 * 1024;

/// The cuBLAS type of a gemm step's operands (the validator allows these).
cudaDataType_t cublasType(DType dtype) {
  return dtype == DType::BF16 ? CUDA_R_16BF : CUDA_R_16F;
}

} // namespace

Executor::Executor(const Artifact &artifact, const cuda::Context &context)
    : artifact_(artifact), context_(context) {
  context_.makeCurrent();
  cuda::checkTarget(artifact_.target, context_);

  bool hasGemm = false;
  for (const Plan &plan : artifact_.plans)
    for (const Step &step : plan.steps) {
      forEachBoundInput(
          step,
          [&](const std::string &weight, const std::string &component) {
            usedComponents_.emplace(weight, component);
          },
          [&](const std::string &name) { usedTensors_.insert(name); });
      guardWeights_.insert(step.guard.weights.begin(),
                           step.guard.weights.end());
      hasGemm |= step.kind == Step::Kind::Gemm;
    }
  if (hasGemm)
    cublas_ = std::make_unique<cuda::Cublas>();
  makeBiasOnes();

  const int maxSharedOptIn =
      context_.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  kernels_.reserve(artifact_.kernels.size());
  // Programmatic dependent launch: sm_90 and later, unless QFUSE_PDL=0
  // (for profiles and A/B runs).
  const char *pdl = std::getenv("QFUSE_PDL");
  const bool programmatic =
      context_.attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) >= 9 &&
      !(pdl && std::string(pdl) == "0");
  std::vector<size_t> codeHashes;
  for (size_t i = 0; i < artifact_.kernels.size(); ++i) {
    const Kernel &kernel = artifact_.kernels[i];
    LoadedKernel loaded;
    codeHashes.push_back(
        std::hash<std::string_view>()(kernel.ptx) ^
        (std::hash<std::string_view>()(std::string_view(
             reinterpret_cast<const char *>(kernel.cubin.data()),
             kernel.cubin.size())) *
         31));
    for (size_t j = 0; j < i && !loaded.module; ++j)
      if (codeHashes[j] == codeHashes[i] &&
          artifact_.kernels[j].ptx == kernel.ptx &&
          artifact_.kernels[j].cubin == kernel.cubin)
        loaded.module = kernels_[j].module;
    if (!loaded.module)
      loaded.module = std::make_shared<cuda::Module>(
          cuda::Module::load(kernel, artifact_.target, context_));
    loaded.function = loaded.module->function(kernel.name);
    loaded.programmatic = programmatic && kernel.gridDependency;

    // What the plans ask of this kernel, against what the device allows.
    int64_t maxDynamic = 0, maxThreads = 0;
    for (const Plan &plan : artifact_.plans)
      for (const Step &step : plan.steps)
        if (step.kind == Step::Kind::Launch && step.kernelIndex == i) {
          maxDynamic = std::max<int64_t>(maxDynamic, step.sharedBytes);
          maxThreads =
              std::max<int64_t>(maxThreads, int64_t(step.block[0]) *
                                                step.block[1] * step.block[2]);
        }
    int staticShared = 0, functionMaxThreads = 0;
    QFUSE_CU_CTX(cuFuncGetAttribute(&staticShared,
                                    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                    loaded.function),
                 "querying kernel '" + kernel.name + "'");
    QFUSE_CU_CTX(cuFuncGetAttribute(&functionMaxThreads,
                                    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                    loaded.function),
                 "querying kernel '" + kernel.name + "'");
    if (staticShared + maxDynamic > maxSharedOptIn)
      fail("kernel '" + kernel.name + "' needs " +
           std::to_string(staticShared) + " bytes of static and " +
           std::to_string(maxDynamic) +
           " of dynamic shared memory, more than " + context_.describe() +
           " allows per block (" + std::to_string(maxSharedOptIn) + ")");
    if (maxThreads > functionMaxThreads)
      fail("kernel '" + kernel.name + "' is launched with " +
           std::to_string(maxThreads) +
           " threads per block but, as compiled "
           "for " +
           context_.describe() + ", allows at most " +
           std::to_string(functionMaxThreads));
    if (maxDynamic > kDefaultDynamicShared)
      QFUSE_CU_CTX(
          cuFuncSetAttribute(loaded.function,
                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             static_cast<int>(maxDynamic)),
          "raising the dynamic shared memory of kernel '" + kernel.name + "'");
    kernels_.push_back(std::move(loaded));
  }
}

Executor::~Executor() {
  // Graphs and buffers go before the modules they reference.
  instances_.clear();
  state_.clear();
  workspaces_.clear();
}

void Executor::makeBiasOnes() {
  std::map<DType, int64_t> rows; // the most rows a gemm adds a bias to
  for (const Plan &plan : artifact_.plans)
    for (const Step &step : plan.steps)
      if (step.kind == Step::Kind::Gemm && !step.gemm.bias.empty()) {
        int64_t &most = rows[step.gemm.dtype];
        most = std::max(
            most, artifact_.findBuffer(step.gemm.x)->extent(0, plan.batch));
      }
  for (const auto &[dtype, count] : rows) {
    const uint16_t one = dtype == DType::BF16 ? format::floatToBFloat16(1.0f)
                                              : format::floatToHalf(1.0f);
    std::vector<uint16_t> ones(static_cast<size_t>(count), one);
    cuda::DeviceBuffer buffer(ones.size() * 2, "gemm bias ones (" +
                                                   std::string(artifactName(
                                                       dtype)) +
                                                   ")");
    buffer.upload(ones.data(), ones.size() * 2);
    ones_.emplace(dtype, std::move(buffer));
  }
}

void Executor::fail(const std::string &what) const {
  throw Error("artifact '" + artifact_.source + "': " + what);
}

bool Executor::loadedFromCubin(const std::string &name) const {
  const Kernel *kernel = artifact_.findKernel(name);
  if (!kernel)
    fail("no kernel '" + name + "'");
  return kernels_[static_cast<size_t>(kernel - artifact_.kernels.data())]
      .module->fromCubin();
}

size_t Executor::numModules() const {
  std::set<const cuda::Module *> modules;
  for (const LoadedKernel &kernel : kernels_)
    modules.insert(kernel.module.get());
  return modules.size();
}

//===----------------------------------------------------------------------===//
// Buffers and plans
//===----------------------------------------------------------------------===//

Executor::Instance &Executor::instance(int64_t batch) {
  artifact_.plan(batch); // throws listing the compiled batch sizes
  auto it = instances_.find(batch);
  if (it == instances_.end())
    fail("buffers for batch " + std::to_string(batch) +
         " are not allocated (call allocate first)");
  return *it->second;
}

void Executor::allocateState() {
  if (stateAllocated_)
    return;
  for (const BufferSpec &spec : artifact_.buffers) {
    if (!spec.state)
      continue;
    cuda::DeviceBuffer buffer(spec.numBytes(1), spec.name + " (state)");
    // Zeroed once, here: later runs keep what the plans wrote. The legacy
    // stream, synchronized, so no later stream can see the buffer unzeroed.
    QFUSE_CU_CTX(cuMemsetD8Async(buffer.ptr(), 0, buffer.size(), nullptr),
                 "zeroing state buffer '" + spec.name + "'");
    state_.emplace(spec.name, std::move(buffer));
  }
  QFUSE_CU_CTX(cuStreamSynchronize(nullptr), "zeroing the state buffers");
  stateAllocated_ = true;
}

/// One allocation per workspace, left as allocated: every plan writes a
/// workspace before reading it, so its contents never outlive a run. A
/// workspace only steps that do not run read (an act_order group's
/// fallback while its perms are equal, PermGuards.h) is not allocated until
/// one of them does: the check runs again once a perm is bound.
void Executor::allocateWorkspaces() {
  if (workspacesAllocated_)
    return;
  std::set<std::string> read;
  for (const Plan &plan : artifact_.plans)
    for (const Step &step : plan.steps) {
      if (!runsStep(step))
        continue;
      if (step.kind == Step::Kind::Gemm)
        read.insert(step.gemm.weightBuffer);
      for (const Arg &arg : step.args)
        if (arg.kind == Arg::Kind::Buffer)
          read.insert(arg.name);
    }
  for (const BufferSpec &spec : artifact_.buffers)
    if (spec.workspace && read.count(spec.name) &&
        !workspaces_.count(spec.name))
      workspaces_.emplace(spec.name, cuda::DeviceBuffer(spec.numBytes(1),
                                                        spec.name +
                                                            " (workspace)"));
  workspacesAllocated_ = true;
}

void Executor::allocate(int64_t batch) {
  artifact_.plan(batch);
  allocateState();
  allocateWorkspaces();
  if (instances_.count(batch))
    return;
  auto created = std::make_unique<Instance>();
  for (const BufferSpec &spec : artifact_.buffers)
    if (!spec.sharedByPlans())
      created->buffers.emplace(
          spec.name, cuda::DeviceBuffer(spec.numBytes(batch),
                                        spec.name + " (batch " +
                                            std::to_string(batch) + ")"));
  instances_.emplace(batch, std::move(created));
}

cuda::DeviceBuffer &Executor::bufferOf(const std::string &name,
                                       Instance &instance) {
  auto it = instance.buffers.find(name);
  if (it != instance.buffers.end())
    return it->second;
  auto state = state_.find(name);
  if (state != state_.end())
    return state->second;
  auto workspace = workspaces_.find(name);
  if (workspace != workspaces_.end())
    return workspace->second;
  fail("no buffer '" + name + "' (not declared in 'buffers')");
}

cuda::DeviceBuffer &Executor::buffer(int64_t batch, const std::string &name) {
  return bufferOf(name, instance(batch));
}

cuda::DeviceBuffer &Executor::stateBuffer(const std::string &name) {
  allocateState();
  auto it = state_.find(name);
  if (it == state_.end())
    fail("no state buffer '" + name + "'");
  return it->second;
}

size_t Executor::stateBytes() const {
  size_t total = 0;
  for (const auto &entry : state_)
    total += entry.second.size();
  return total;
}

size_t Executor::workspaceBytes() const {
  size_t total = 0;
  for (const auto &entry : workspaces_)
    total += entry.second.size();
  return total;
}

void Executor::resetState(CUstream stream) {
  allocateState();
  for (auto &entry : state_)
    entry.second.zero(stream);
}

size_t Executor::bufferBytes(int64_t batch) const {
  auto it = instances_.find(batch);
  if (it == instances_.end())
    return 0;
  size_t total = 0;
  for (const auto &entry : it->second->buffers)
    total += entry.second.size();
  return total;
}

void Executor::requireBound(const Plan &plan) const {
  std::vector<std::string> missing = unboundArguments();
  if (missing.empty())
    return;
  std::string list;
  for (const std::string &item : missing)
    list += (list.empty() ? "" : ", ") + item;
  fail("the plan for batch " + std::to_string(plan.batch) +
       " reads unbound arguments: " + list);
}

void Executor::requireBound(const Plan &plan, size_t first,
                            size_t last) const {
  std::set<std::string> missing; // sorted, each once
  auto component = [&](const std::string &weight, const std::string &name) {
    if (!components_.count({weight, name}))
      missing.insert("weight '" + weight + "' component '" + name + "'");
  };
  auto tensor = [&](const std::string &name) {
    if (!tensors_.count(name))
      missing.insert("tensor '" + name + "'");
  };
  for (size_t s = first; s < last; ++s)
    forEachBoundInput(plan.steps[s], component, tensor);
  if (missing.empty())
    return;
  std::string list;
  for (const std::string &item : missing)
    list += (list.empty() ? "" : ", ") + item;
  fail("steps [" + std::to_string(first) + ", " + std::to_string(last) +
       ") of the plan for batch " + std::to_string(plan.batch) +
       " read unbound arguments: " + list);
}

CUdeviceptr Executor::argumentPointer(const Arg &arg, Instance &instance) {
  switch (arg.kind) {
  case Arg::Kind::Buffer:
    if (overrides_) {
      auto it = overrides_->find(arg.name);
      if (it != overrides_->end())
        return it->second;
    }
    return bufferOf(arg.name, instance).ptr();
  case Arg::Kind::Weight:
    return components_.at({arg.name, arg.component});
  case Arg::Kind::Tensor:
    return tensors_.at(arg.name).ptr();
  default:
    return 0;
  }
}

void Executor::enqueue(const Plan &plan, Instance &instance, CUstream stream) {
  for (size_t s = 0; s < plan.steps.size(); ++s)
    if (runsStep(plan.steps[s]))
      enqueueStep(plan, s, instance, stream);
}

Plan Executor::runningPlan(int64_t batch) const {
  const Plan &plan = artifact_.plan(batch);
  Plan running;
  running.batch = plan.batch;
  for (const Step &step : plan.steps)
    if (runsStep(step))
      running.steps.push_back(step);
  return running;
}

void Executor::enqueueStep(const Plan &plan, size_t s, Instance &instance,
                           CUstream stream) {
  const Step &step = plan.steps[s];
  // Only built when a call fails.
  auto where = [&] {
    return "running the plan for batch " + std::to_string(plan.batch) +
           ", step " + std::to_string(s);
  };
  if (step.kind == Step::Kind::Memset) {
    cuda::DeviceBuffer &target = bufferOf(step.target, instance);
    QFUSE_CU_CTX(cuMemsetD8Async(target.ptr(), 0, target.size(), stream),
                 where() + " (memset '" + step.target + "')");
    return;
  }
  if (step.kind == Step::Kind::Gemm) {
    enqueueGemm(plan, step, instance, stream, where());
    return;
  }
  // One 8-byte slot per argument; cuLaunchKernel copies the values out.
  std::vector<uint64_t> slots(step.args.size(), 0);
  std::vector<void *> params(step.args.size());
  for (size_t a = 0; a < step.args.size(); ++a) {
    const Arg &arg = step.args[a];
    void *slot = &slots[a];
    switch (arg.kind) {
    case Arg::Kind::I32: {
      int32_t value = static_cast<int32_t>(arg.intValue);
      std::memcpy(slot, &value, sizeof(value));
      break;
    }
    case Arg::Kind::I64:
      std::memcpy(slot, &arg.intValue, sizeof(arg.intValue));
      break;
    case Arg::Kind::F32:
      std::memcpy(slot, &arg.floatValue, sizeof(arg.floatValue));
      break;
    default: {
      CUdeviceptr ptr = argumentPointer(arg, instance);
      std::memcpy(slot, &ptr, sizeof(ptr));
      break;
    }
    }
    params[a] = slot;
  }
  const LoadedKernel &kernel = kernels_[step.kernelIndex];
  if (!kernel.programmatic) {
    QFUSE_CU_CTX(cuLaunchKernel(kernel.function, step.grid[0], step.grid[1],
                                step.grid[2], step.block[0], step.block[1],
                                step.block[2], step.sharedBytes, stream,
                                params.data(), nullptr),
                 where() + " (launch '" + step.target + "')");
    return;
  }
  // Programmatic dependent launch: the kernel may be scheduled while the
  // one before it finishes; it waits for that grid itself.
  CUlaunchConfig config{};
  config.gridDimX = step.grid[0];
  config.gridDimY = step.grid[1];
  config.gridDimZ = step.grid[2];
  config.blockDimX = step.block[0];
  config.blockDimY = step.block[1];
  config.blockDimZ = step.block[2];
  config.sharedMemBytes = static_cast<unsigned>(step.sharedBytes);
  config.hStream = stream;
  CUlaunchAttribute dependent{};
  dependent.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  dependent.value.programmaticStreamSerializationAllowed = 1;
  config.attrs = &dependent;
  config.numAttrs = 1;
  QFUSE_CU_CTX(cuLaunchKernelEx(&config, kernel.function, params.data(),
                                nullptr),
               where() + " (launch '" + step.target + "')");
}

cuda::Graph Executor::makePartialGraph(
    int64_t batch, CUstream stream, const std::function<bool(size_t)> &keep) {
  const Plan &plan = artifact_.plan(batch);
  requireBound(plan);
  allocate(batch);
  prepareCublas(stream);
  Instance &target = instance(batch);
  return cuda::Graph::capture(stream, [&] {
    for (size_t s = 0; s < plan.steps.size(); ++s)
      if (keep(s) && runsStep(plan.steps[s]))
        enqueueStep(plan, s, target, stream);
  });
}

void Executor::enqueueGemm(const Plan &plan, const Step &step,
                           Instance &instance, CUstream stream,
                           const std::string &where) {
  const GemmStep &gemm = step.gemm;
  // The validator checked the extents against the weight: K is x's last
  // extent and N is y's, whichever way the weight is given.
  const BufferSpec &xSpec = *artifact_.findBuffer(gemm.x);
  const int m = static_cast<int>(xSpec.extent(0, plan.batch));
  const int k = static_cast<int>(xSpec.extent(1, plan.batch));
  const int n =
      static_cast<int>(artifact_.findBuffer(gemm.y)->extent(1, plan.batch));
  const cudaDataType_t type = cublasType(gemm.dtype);
  const CUdeviceptr w =
      gemm.weight.empty() ? bufferOf(gemm.weightBuffer, instance).ptr()
                          : components_.at({gemm.weight, format::kCodes});
  CUdeviceptr y = bufferOf(gemm.y, instance).ptr();
  // y = residual (+ bias) + x W^T: each term lands on y in turn, and the
  // product accumulates with beta = 1 onto what is already there.
  float beta = 0.0f;
  if (!gemm.residual.empty()) {
    const size_t bytes = size_t(m) * size_t(n) * 2; // f16 or bf16
    QFUSE_CU_CTX(cuMemcpyDtoDAsync(y, bufferOf(gemm.residual, instance).ptr(),
                                   bytes, stream),
                 where + " (gemm '" + step.target + "': copying residual '" +
                     gemm.residual + "' into '" + gemm.y + "')");
    beta = 1.0f;
  }
  if (!gemm.bias.empty()) {
    cublas_->addRowBroadcast(type, y, tensors_.at(gemm.bias).ptr(),
                             ones_.at(gemm.dtype).ptr(), m, n, beta);
    beta = 1.0f;
  }
  cublas_->gemmRowMajor(type, y, bufferOf(gemm.x, instance).ptr(), w, m, n, k,
                        beta);
}

void Executor::prepareCublas(CUstream stream) {
  if (!cublas_ || (cublasStreamSet_ && cublasStream_ == stream))
    return;
  cublas_->setStream(stream);
  cublasStream_ = stream;
  cublasStreamSet_ = true;
}

void Executor::run(int64_t batch, CUstream stream) {
  const Plan &plan = artifact_.plan(batch);
  requireBound(plan);
  allocate(batch);
  prepareCublas(stream);
  enqueue(plan, instance(batch), stream);
}

void Executor::runSteps(int64_t batch, size_t first, size_t last,
                        CUstream stream,
                        const std::map<std::string, CUdeviceptr> &overrides) {
  const Plan &plan = artifact_.plan(batch);
  if (first > last || last > plan.steps.size())
    fail("steps [" + std::to_string(first) + ", " + std::to_string(last) +
         ") are outside the plan for batch " + std::to_string(batch) + " (" +
         std::to_string(plan.steps.size()) + " steps)");
  requireBound(plan, first, last);
  allocate(batch);
  prepareCublas(stream);
  Instance &target = instance(batch);
  overrides_ = &overrides;
  try {
    for (size_t s = first; s < last; ++s)
      if (runsStep(plan.steps[s]))
        enqueueStep(plan, s, target, stream);
  } catch (...) {
    overrides_ = nullptr;
    throw;
  }
  overrides_ = nullptr;
}

cuda::Graph Executor::makeGraph(int64_t batch, CUstream stream) {
  const Plan &plan = artifact_.plan(batch);
  requireBound(plan);
  allocate(batch);
  prepareCublas(stream);
  Instance &target = instance(batch);
  return cuda::Graph::capture(stream, [&] { enqueue(plan, target, stream); });
}

void Executor::capture(int64_t batch, CUstream stream) {
  allocate(batch);
  instance(batch).graph = cuda::Graph(); // release the old one first
  cuda::Graph graph = makeGraph(batch, stream);
  instance(batch).graph = std::move(graph);
}

bool Executor::hasGraph(int64_t batch) const {
  auto it = instances_.find(batch);
  return it != instances_.end() && !it->second->graph.empty();
}

void Executor::replay(int64_t batch, CUstream stream) {
  Instance &target = instance(batch);
  if (target.graph.empty())
    fail("no captured graph for batch " + std::to_string(batch) +
         " (call capture first)");
  target.graph.launch(stream);
}

void Executor::dropGraphs() {
  for (auto &entry : instances_)
    entry.second->graph = cuda::Graph();
}

} // namespace qfuse::runtime
