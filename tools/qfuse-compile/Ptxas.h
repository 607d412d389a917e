//===- Ptxas.h - assemble qfuse-compile's PTX into a cubin ------*- C++ -*-===//
//
// qfuse-compile embeds a cubin beside the PTX where the CUDA toolkit's ptxas
// is installed (docs/artifact.md); one per chip of a --chip list.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TOOLS_QFUSE_COMPILE_PTXAS_H
#define QFUSE_TOOLS_QFUSE_COMPILE_PTXAS_H

#include "mlir/Support/LLVM.h"

#include <string>

namespace qfuse::compile {

/// The ptxas to use: `explicitPath` when given, else $CUDA_HOME/bin,
/// $CUDA_ROOT/bin, $CUDA_PATH/bin, /usr/local/cuda/bin or PATH; empty when
/// there is none.
std::string findPtxas(llvm::StringRef explicitPath);

/// Assembles `ptx` for `chip` ("sm_90a") with `ptxas`; the cubin, or failure
/// with `error` set.
mlir::FailureOr<std::string> assemble(llvm::StringRef ptxas,
                                      llvm::StringRef chip, llvm::StringRef ptx,
                                      std::string &error);

} // namespace qfuse::compile

#endif // QFUSE_TOOLS_QFUSE_COMPILE_PTXAS_H
