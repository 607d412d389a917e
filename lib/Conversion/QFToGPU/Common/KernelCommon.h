//===- KernelCommon.h - pieces every generated kernel shares ----*- C++ -*-===//
//
// The kernel function itself (entry, launch bounds, argument attributes),
// dynamic shared memory, and the f16 value of a code under a table format:
// one definition for the matvec and the tensor-core generators.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_COMMON_KERNELCOMMON_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_COMMON_KERNELCOMMON_H

#include "Common/KernelEmitter.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include <string>

namespace mlir {
namespace qf {

/// What a kernel parameter is, for its LLVM type and attributes: a global
/// pointer the kernel only reads (noalias readonly: NVPTX may use the
/// non-coherent path), one it writes (noalias), or an immediate.
enum class ParamKind { In, Out, I32, F32 };

/// The one way every generator creates a kernel: an `llvm.func` `name` in
/// `module` with one parameter per entry of `kinds`, nvvm.kernel and
/// maxntid = threads, and `b` placed at the start of its entry block.
LLVM::LLVMFuncOp createKernelEntry(ImplicitLocOpBuilder &b,
                                   gpu::GPUModuleOp module, StringRef name,
                                   ArrayRef<ParamKind> kinds, int64_t threads);

/// Where a kernel releases the next kernel of the stream
/// (griddepcontrol.launch_dependents): never (it is released when this one
/// ends), at the start, or late: where the generator marked the end of its
/// main loop, else before the kernel's first global store.
enum class GridDependencyTrigger { None, Start, Late };

/// Programmatic dependent launch (sm_90 and later), what qf-to-gpu's
/// grid-dependency options ask for.
struct GridDependencyOptions {
  bool enabled = false;
  GridDependencyTrigger trigger = GridDependencyTrigger::None;
  /// Keep the L2 prefetches a generator placed before its wait.
  bool prefetch = false;
};

/// A point a generator marks in its kernel (an empty inline asm tagged
/// `qf.grid_dependency`) for addGridDependencyControl to fill in: the wait,
/// placed after the prefetches of data no earlier kernel writes and before
/// anything else is read, and the trigger, after the main loop.
void markGridDependencyWait(ImplicitLocOpBuilder &b);
void markGridDependencyTrigger(ImplicitLocOpBuilder &b);

/// An L2 prefetch of the bytes [ptr + begin, ptr + end) that lie on whole
/// 16-byte units (cp.async.bulk.prefetch.L2, sm_90), placed before the
/// kernel's wait: it streams weights while the kernel ahead finishes.
/// Tagged, so that it goes away unless GridDependencyOptions::prefetch.
void prefetchL2BeforeWait(ImplicitLocOpBuilder &b, Value ptr, Value begin,
                          Value end);

/// Programmatic dependent launch (sm_90 and later): every kernel of
/// `module` waits (griddepcontrol.wait) before it reads or writes anything
/// an earlier grid may touch: at its marked point, else at its start; and
/// releases its dependents as `options.trigger` says. Without the launch
/// attribute (the runtime's choice per kernel, docs/artifact.md) both are
/// no-ops. Disabled, the marks and prefetches are removed.
void addGridDependencyControl(gpu::GPUModuleOp module,
                              const GridDependencyOptions &options);

/// An `llvm.func` kernel in `module` taking one global pointer per name in
/// `params` (all noalias; all but "y" readonly, so NVPTX may use the
/// non-coherent path), with `maxntid = threads`, and the builder placed at
/// the start of its entry block.
struct KernelFunction {
  LLVM::LLVMFuncOp fn;
  /// The argument named `name`, or a null Value when the kernel has none.
  Value arg(StringRef name);
  ArrayRef<std::string> params;
};
KernelFunction createKernelFunction(ImplicitLocOpBuilder &b,
                                    gpu::GPUModuleOp module, StringRef name,
                                    ArrayRef<std::string> params,
                                    int64_t threads);

/// The base of the kernel's dynamic shared memory: an extern array
/// `<name>` whose size is given at launch.
Value dynamicSharedBase(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                        StringRef name);

/// The bits of the encoding's constant table (NF4, E2M1, inline codebooks)
/// in `valueType` (f16 or bf16), each value rounded once.
SmallVector<uint16_t> constantCodeTableBits(EncodingAttr encoding,
                                            Type valueType);

/// Whether 4-bit codes of a constant table decode from registers
/// (decode::table4Registers: prmt lookups, no shared table): NF4 and inline
/// 4-bit codebooks (e2m1 decodes as sign and magnitude).
bool decodesTable4InRegisters(EncodingAttr encoding);

/// Whether a kernel of this encoding builds the shared code table:
/// usesSharedCodeTable (DecodeFamily.h), or under --qf-table4-in-shared
/// every table format but e2m1.
bool needsSharedCodeTable(EncodingAttr encoding);

/// The value of code `index` (i32) of a table format in `valueType` (f16,
/// or bf16 for kernels with bf16 activations), rounded once from the table:
/// the encoding's constant table (NF4, E2M1, inline codebooks), kept as a
/// global named `<kernel>_codes` and created once through `cache`, or the
/// `table` argument for named codebooks.
Value codeTableValue(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                     StringRef kernel, EncodingAttr encoding, Value table,
                     Value index, LLVM::GlobalOp &cache, Type valueType);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_COMMON_KERNELCOMMON_H
