//===- Ptx.h - PTX modules run on the CPU -----------------------*- C++ -*-===//
//
// The simulator's core: a PTX module parsed once, and a kernel of it run on
// the host, one grid at a time, with the semantics the PTX ISA gives each
// instruction. Global memory is host memory (the simulated driver hands out
// host pointers); every global access is checked against GlobalMemory.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_SIM_PTX_H
#define QFUSE_SIM_PTX_H

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace qfuse::sim {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t(x) * y * z; }
};

/// One `.param` of an `.entry`, in declaration order.
struct KernelParam {
  std::string name;
  uint32_t offset = 0; ///< in the parameter buffer, aligned as declared
  uint32_t size = 0;   ///< bytes
};

/// What the driver needs to know about an `.entry`.
struct KernelInfo {
  std::string name;
  std::vector<KernelParam> params;
  uint32_t paramBytes = 0;
  uint32_t staticSharedBytes = 0; ///< every .shared the kernel can reach
  uint32_t maxThreads = 1024;     ///< .maxntid product, else 1024
  uint32_t numRegs = 0;           ///< registers declared (a stand-in for ptxas's count)
};

struct LaunchConfig {
  Dim3 grid, block;
  Dim3 cluster;                     ///< (1,1,1): no cluster
  uint32_t dynamicSharedBytes = 0;
};

class PtxModule {
public:
  /// Parses PTX text; on failure returns null and sets `error` to a message
  /// that names the line and what was not understood.
  static std::unique_ptr<PtxModule> parse(std::string_view text,
                                          std::string &error);
  virtual ~PtxModule();

  const KernelInfo *kernel(std::string_view name) const;
  std::vector<std::string> kernelNames() const;
  /// Opcodes of the module the simulator parses but cannot run (wgmma,
  /// setmaxnreg, ...): a kernel fails when it reaches one.
  std::vector<std::string> unsupportedOpcodes() const;

  /// Runs one grid to completion. `params` is cuLaunchKernel's kernelParams:
  /// one pointer per parameter, to a value of the parameter's size.
  /// Returns an empty string on success, else an error that names the
  /// kernel, the PTX line, the block and the thread (an out-of-bounds
  /// access, an unsupported instruction, a trap, a barrier deadlock).
  std::string launch(std::string_view kernel, const LaunchConfig &config,
                     void **params) const;

protected:
  PtxModule() = default;
};

} // namespace qfuse::sim

#endif // QFUSE_SIM_PTX_H
