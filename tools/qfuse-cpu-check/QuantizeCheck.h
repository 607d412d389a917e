//===- QuantizeCheck.h - qf.quantize's CPU reference against quantizeRTN -===//
//
// qfuse-cpu-check's second kind of case: every qf.quantize that qf-to-cpu
// lowered runs on stress inputs (QuantizeCheck.cpp) and must write exactly
// the bytes qfuse::format::quantizeRTN packs.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TOOLS_QFUSECPUCHECK_QUANTIZECHECK_H
#define QFUSE_TOOLS_QFUSECPUCHECK_QUANTIZECHECK_H

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace qfuse::cpucheck {

/// One lowered qf.quantize.
struct QuantizeCase {
  std::string label, function, encodingText;
  std::vector<std::string> params;
  int64_t n = 0, k = 0;
  mlir::Type input;
  mlir::Location loc;
};

/// The lowered qf.quantize ops of `module` (after qf-to-cpu), in program
/// order; false (with an error on the op) when one could not be read.
bool collectQuantizeCases(mlir::ModuleOp module,
                          std::vector<QuantizeCase> &cases);

/// Runs `c` on stress inputs drawn from `seed` (with `perturb`, a parameter
/// name, corrupted on the JIT side), printing one PASS/FAIL line per input
/// kind; counts them into total/failed. False (with a message) when the
/// case could not run.
bool checkQuantizeCase(mlir::ExecutionEngine &engine, const QuantizeCase &c,
                       uint64_t seed, const std::string &perturb, int &total,
                       int &failed);

} // namespace qfuse::cpucheck

#endif // QFUSE_TOOLS_QFUSECPUCHECK_QUANTIZECHECK_H
