//===- DriverModules.cpp - modules, functions and launches ----------------===//
//
// Modules are PTX only: a cubin holds machine code for a GPU, which the
// simulator cannot run, so loading one fails as on a GPU without a binary
// for it (the runtime then JIT-compiles the artifact's PTX, which here
// means parsing it). Launches run the kernel on the calling thread.
//
//===----------------------------------------------------------------------===//

#include "SimDriver.h"

#include <cstdio>
#include <cstring>
#include <string_view>

using namespace qfuse::sim;

namespace {

bool isElf(const void *image) {
  return std::memcmp(image, "\x7f" "ELF", 4) == 0;
}

// Writes `text` to the caller's CU_JIT_ERROR_LOG_BUFFER, if it gave one.
void writeErrorLog(const std::string &text, unsigned int count,
                   const CUjit_option *options, void **values) {
  char *buffer = nullptr;
  size_t bytes = 0;
  for (unsigned int i = 0; i < count && options && values; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
      buffer = static_cast<char *>(values[i]);
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      bytes = reinterpret_cast<size_t>(values[i]);
  }
  if (buffer && bytes)
    std::snprintf(buffer, bytes, "%s", text.c_str());
}

CUresult loadModule(CUmodule *module, const void *image, unsigned int count,
                    const CUjit_option *options, void **values) {
  if (!module || !image)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  if (isElf(image)) {
    writeErrorLog("qfuse-sim runs PTX only, not cubins", count, options,
                  values);
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  }
  std::string error;
  auto ptx = PtxModule::parse(static_cast<const char *>(image), error);
  if (!ptx) {
    writeErrorLog("qfuse-sim: " + error, count, options, values);
    std::fprintf(stderr, "qfuse-sim: the PTX does not load: %s\n",
                 error.c_str());
    return CUDA_ERROR_INVALID_PTX;
  }
  auto *m = new SimModule;
  m->ptx = std::move(ptx);
  *module = reinterpret_cast<CUmodule>(m);
  return CUDA_SUCCESS;
}

SimFunction *toFunction(CUfunction f) {
  return reinterpret_cast<SimFunction *>(f);
}

CUresult launch(const SimFunction *f, const LaunchConfig &config,
                void **kernelParams, void **extra, CUstream stream) {
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  if (extra || (!kernelParams && !f->info->params.empty()))
    return CUDA_ERROR_INVALID_VALUE;
  if (config.block.count() == 0 || config.grid.count() == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (config.block.count() > f->info->maxThreads ||
      config.dynamicSharedBytes > uint32_t(f->maxDynamicShared) ||
      f->info->staticSharedBytes + config.dynamicSharedBytes > 227u * 1024)
    return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  auto params = copyParams(*f, kernelParams);
  return submit(stream, [f, config, params = std::move(params)] {
    return runKernel(*f, config, params);
  });
}

} // namespace

namespace qfuse::sim {

std::vector<std::vector<unsigned char>> copyParams(const SimFunction &function,
                                                   void **kernelParams) {
  std::vector<std::vector<unsigned char>> values;
  for (size_t i = 0; i < function.info->params.size(); ++i) {
    const auto *p = static_cast<const unsigned char *>(kernelParams[i]);
    values.emplace_back(p, p + function.info->params[i].size);
  }
  return values;
}

CUresult runKernel(const SimFunction &function, const LaunchConfig &config,
                   const std::vector<std::vector<unsigned char>> &params) {
  if (stickyError() != CUDA_SUCCESS)
    return stickyError();
  std::vector<void *> pointers;
  for (const auto &value : params)
    pointers.push_back(const_cast<unsigned char *>(value.data()));
  std::string error =
      function.module->ptx->launch(function.info->name, config, pointers.data());
  if (error.empty())
    return CUDA_SUCCESS;
  std::fprintf(stderr, "qfuse-sim: kernel %s failed: %s\n",
               function.info->name.c_str(), error.c_str());
  setStickyError(CUDA_ERROR_LAUNCH_FAILED);
  return CUDA_ERROR_LAUNCH_FAILED;
}

} // namespace qfuse::sim

extern "C" {

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image) {
  return loadModule(module, image, 0, nullptr, nullptr);
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image,
                                    unsigned int count, CUjit_option *options,
                                    void **values) {
  return loadModule(module, image, count, options, values);
}

CUresult CUDAAPI cuModuleUnload(CUmodule module) {
  if (!module)
    return CUDA_ERROR_INVALID_HANDLE;
  delete reinterpret_cast<SimModule *>(module);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *function, CUmodule module,
                                     const char *name) {
  if (!function || !module || !name)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  auto *m = reinterpret_cast<SimModule *>(module);
  const KernelInfo *info = m->ptx->kernel(name);
  if (!info)
    return CUDA_ERROR_NOT_FOUND;
  for (const auto &f : m->functions)
    if (f->info == info) {
      *function = reinterpret_cast<CUfunction>(f.get());
      return CUDA_SUCCESS;
    }
  auto f = std::make_unique<SimFunction>();
  f->module = m;
  f->info = info;
  *function = reinterpret_cast<CUfunction>(f.get());
  m->functions.push_back(std::move(f));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetAttribute(int *value, CUfunction_attribute attribute,
                                    CUfunction function) {
  if (!value || !function)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  const SimFunction *f = toFunction(function);
  switch (attribute) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = int(f->info->maxThreads);
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
    *value = int(f->info->staticSharedBytes);
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    *value = f->maxDynamicShared;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_NUM_REGS:
    *value = int(f->info->numRegs);
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_PTX_VERSION:
  case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
    *value = computeMajor() * 10 + computeMinor();
    return CUDA_SUCCESS;
  default:
    *value = 0;
    return CUDA_SUCCESS;
  }
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction function,
                                    CUfunction_attribute attribute,
                                    int value) {
  if (!function)
    return CUDA_ERROR_INVALID_HANDLE;
  QFUSE_SIM_READY();
  SimFunction *f = toFunction(function);
  if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    if (value < 0 || f->info->staticSharedBytes + uint32_t(value) > 227u * 1024)
      return CUDA_ERROR_INVALID_VALUE;
    f->maxDynamicShared = value;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction function, unsigned int gridX,
                                unsigned int gridY, unsigned int gridZ,
                                unsigned int blockX, unsigned int blockY,
                                unsigned int blockZ, unsigned int sharedBytes,
                                CUstream stream, void **kernelParams,
                                void **extra) {
  QFUSE_SIM_READY();
  LaunchConfig config;
  config.grid = {gridX, gridY, gridZ};
  config.block = {blockX, blockY, blockZ};
  config.dynamicSharedBytes = sharedBytes;
  return launch(toFunction(function), config, kernelParams, extra, stream);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction function,
                                  void **kernelParams, void **extra) {
  if (!c)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  LaunchConfig config;
  config.grid = {c->gridDimX, c->gridDimY, c->gridDimZ};
  config.block = {c->blockDimX, c->blockDimY, c->blockDimZ};
  config.dynamicSharedBytes = c->sharedMemBytes;
  for (unsigned int i = 0; i < c->numAttrs; ++i) {
    const CUlaunchAttribute &a = c->attrs[i];
    if (a.id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
      config.cluster = {a.value.clusterDim.x, a.value.clusterDim.y,
                        a.value.clusterDim.z};
  }
  if (config.grid.x % config.cluster.x || config.grid.y % config.cluster.y ||
      config.grid.z % config.cluster.z)
    return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  return launch(toFunction(function), config, kernelParams, extra, c->hStream);
}

} // extern "C"
