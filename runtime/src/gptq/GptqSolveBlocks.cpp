//===- GptqSolveBlocks.cpp - The block loop of one GPTQ solve -------------===//
//
// The left-looking block loop of GptqSolver::solve: the updates from earlier
// blocks, each block fused (the compiler's qf.gptq_block_update kernel) or
// eager (one operation per launch), and the updates after it.
//
//===----------------------------------------------------------------------===//

#include "GptqSolveRun.h"
#include "ParallelRows.h"
#include "qfuse/gptq/Grid.h"
#include "qfuse/runtime/Error.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <sstream>

namespace qfuse::runtime {
using namespace detail;

/// Blocks, left-looking. Right-looking GPTQ subtracts E_B U[B, F] from
/// every later block F after block B. Summed, block F receives
/// T_F = sum_{B<F} E_B U_BF before its turn; with Z = E U (so Z Ut = E,
/// Ut upper) that is T_F = -G_F U_FF, G_F = Z[:, :i1] Ut[:i1, F], and after
/// the block Z_F = E_F U_FF + T_F. So, per block (U_FF = Ut_FF^-1 by one
/// small triangular solve):
///   G = Z[:, :i1] Ut[:i1, i1:i2];  P = G U_FF;  W_F += P      (GEMMs)
///   the column loop on W_F with U_FF -> codes, E_F           (the kernel)
///   Z_F = E_F U_FF - P                                       (GEMM)
/// The same R K^2 flops as the right-looking updates; only Ut is needed.
/// options.profile: an event after each step of a block, named by the step
/// it ends (the breakdown of GptqSolveReport::profileMs).
void SolveRun::runBlocks() {
  marks = std::vector<cuda::Event>(size_t(numBlocks) * 3);
  if (options.profile)
    ticks.reserve(size_t(numBlocks) * 8 + 1);
  tick("start");
  for (int64_t b = 0; b < numBlocks; ++b) {
    marks[size_t(3 * b)].record(stream);
    blockUpdatesBefore(b);
    marks[size_t(3 * b + 1)].record(stream);
    tick("other");
    if (options.eager)
      eagerBlock(b);
    else
      fusedBlock(b);
    marks[size_t(3 * b + 2)].record(stream);
    tick("column loop");
    blockUpdatesAfter(b);
  }
}

/// U_FF, and the earlier blocks' feedback into W_F (in cuBLAS's
/// column-major terms every row-major [R, c] matrix with row stride ld is a
/// [c, R] matrix with leading dimension ld).
void SolveRun::blockUpdatesBefore(int64_t b) {
  const int64_t i1 = blockStart(b), wb = blockWidth(b);
  const int WB = int(wb), R = int(rows), K = int(k);
  const float plusOne = 1.0f, zero = 0.0f;
  const float *utPtr = reinterpret_cast<const float *>(hessian);
  float *uBlock = f32("U block");
  // U_FF = Ut_FF^-1: Ut_FF read column-major is lower triangular.
  copy2D(buffer("U block").ptr(), size_t(wb) * 4,
         buffer("block identity").ptr(), kBlockWidth * 4, size_t(wb) * 4,
         size_t(wb), stream, "block identity");
  QFUSE_CUBLAS(cublasStrsm(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER,
                           CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, WB, WB, &plusOne,
                           utPtr + i1 * k + i1, K, uBlock, WB));
  tick("U_FF (trsm)");
  if (i1 == 0)
    return;
  float *wPtr = f32("weights"), *zPtr = f32("Z = E U"), *gPtr = f32("G"),
        *pPtr = f32("P");
  // G^T [R, wb] column-major = Z[:, :i1] Ut[:i1, F], both read transposed:
  // a tall output, which cuBLAS runs faster than the wide [wb, R] one
  // (docs/gptq.md).
  QFUSE_CUBLAS(cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_T, R, WB, int(i1),
                           &plusOne, zPtr, K, utPtr + i1, K, &zero, gPtr, R));
  tick("G = Z Ut");
  QFUSE_CUBLAS(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, WB, R, WB,
                           &plusOne, uBlock, WB, gPtr, R, &zero, pPtr, WB));
  tick("P = G U_FF");
  QFUSE_CUBLAS(cublasSgeam(blas, CUBLAS_OP_N, CUBLAS_OP_N, WB, R, &plusOne,
                           wPtr + i1, K, &plusOne, pPtr, WB, wPtr + i1, K));
  tick("W_F += P");
}

/// The block's column loop: one qf.gptq_block_update launch for every row.
void SolveRun::fusedBlock(int64_t b) {
  const int64_t i1 = blockStart(b), wb = blockWidth(b);
  const CUdeviceptr tile = buffer("weight tile").ptr();
  copy2D(tile, size_t(wb) * 4, offset(buffer("weights").ptr(), i1 * 4),
         size_t(k) * 4, size_t(wb) * 4, size_t(rows), stream, "weight tile");
  std::map<std::string, CUdeviceptr> args = {
      {"w", tile},
      {"u", buffer("U block").ptr()},
      {"codes", offset(buffer("codes").ptr(), rows * i1)},
      {"err", buffer("block errors").ptr()}};
  if (enc.globalScale)
    args["global_scale"] = buffer("global scales").ptr();
  const CUdeviceptr scales = buffer("scales").ptr();
  const CUdeviceptr zeros = hasZeros ? buffer("zeros").ptr() : 0;
  if (dynamic) {
    args["scales_out"] = offset(scales, rows * (i1 / group) * 4);
    if (hasZeros)
      args["zeros_out"] = offset(zeros, rows * (i1 / group) * 4);
  } else {
    args["scales"] = offset(scales, rows * i1 * 4);
    if (hasZeros)
      args["zeros"] = offset(zeros, rows * i1 * 4);
  }
  if (writeHalves)
    args["values"] = buffer("block values").ptr();
  im.launch(rows, wb, !dynamic, args, stream);
  if (writeHalves)
    copyHalves(b);
}

/// Block b's values ([rows, wb] f16) into columns [i1, i1 + wb) of each
/// module's halfOut ([n, K] row-major); under act-order position c into
/// column perm[c] (one pitched copy per run of consecutive columns).
void SolveRun::copyHalves(int64_t b) {
  const int64_t i1 = blockStart(b), wb = blockWidth(b);
  const CUdeviceptr values = buffer("block values").ptr();
  int64_t r0 = 0;
  for (const GptqModuleInput &m : modules) {
    if (m.halfOut && options.actOrder)
      scatterColumns(m.halfOut, size_t(k) * 2, offset(values, r0 * wb * 2),
                     size_t(wb) * 2, 2, size_t(m.n), perm.data() + i1, wb,
                     stream, "f16 values in column order");
    else if (m.halfOut)
      copy2D(offset(m.halfOut, i1 * 2), size_t(k) * 2,
             offset(values, r0 * wb * 2), size_t(wb) * 2, size_t(wb) * 2,
             size_t(m.n), stream, "f16 values");
    r0 += m.n;
  }
}

/// The block one operation per launch (the eager baseline): per column, a
/// group fit where one starts (dynamic), the column quantized with its
/// group's parameters, then its error fed into the rest of the block.
void SolveRun::eagerBlock(int64_t b) {
  const int64_t i1 = blockStart(b), wb = blockWidth(b), i2 = i1 + wb;
  const int WB = int(wb), R = int(rows), K = int(k);
  const float minusOne = -1.0f, plusOne = 1.0f, zero = 0.0f;
  float *eCols = f32("eager error columns"), *wPtr = f32("weights");
  float *uBlock = f32("U block");
  const CUdeviceptr scales = buffer("scales").ptr();
  const CUdeviceptr zeros = hasZeros ? buffer("zeros").ptr() : 0;
  const CUdeviceptr globals =
      enc.globalScale ? buffer("global scales").ptr() : 0;
  for (int64_t j = i1; j < i2; ++j) {
    const int64_t jj = j - i1;
    if (dynamic && j % group == 0) {
      // The group's parameters from its current weights: the dynamic
      // kernel fits them at its first column (U = I; GptqSolveFits.cpp).
      fitGroup(offset(buffer("weights").ptr(), j * 4),
               offset(scales, (j / group) * rows * 4),
               hasZeros ? offset(zeros, (j / group) * rows * 4) : 0);
    }
    // Column j alone: gather it, quantize it with its group's parameters,
    // then feed its error into the rest of the block.
    QFUSE_CUBLAS(cublasScopy(blas, R, wPtr + j, K, f32("eager column"), 1));
    const int64_t slot = dynamic ? (j / group) * rows : j * rows;
    std::map<std::string, CUdeviceptr> args = {
        {"w", buffer("eager column").ptr()},
        {"u", offset(buffer("U block").ptr(), (jj * wb + jj) * 4)},
        {"scales", offset(scales, slot * 4)},
        {"codes", offset(buffer("codes").ptr(), j * rows)},
        {"err", offset(buffer("eager error columns").ptr(), jj * rows * 4)}};
    if (hasZeros)
      args["zeros"] = offset(zeros, slot * 4);
    if (enc.globalScale)
      args["global_scale"] = globals;
    im.launch(rows, 1, true, args, stream);
    if (i2 - j - 1 > 0)
      QFUSE_CUBLAS(cublasSger(blas, int(i2 - j - 1), R, &minusOne,
                              uBlock + jj * wb + jj + 1, 1, eCols + jj * rows,
                              1, wPtr + j + 1, K));
  }
  // E column by column [wb, R] -> row-major [R, wb].
  float *ePtr = f32("block errors");
  QFUSE_CUBLAS(cublasSgeam(blas, CUBLAS_OP_T, CUBLAS_OP_N, WB, R, &plusOne,
                           eCols, R, &zero, ePtr, WB, ePtr, WB));
}

/// Z_F = E_F U_FF - P for the blocks after this one, and the block's loss
/// per module (sum of e^2 over its rows).
void SolveRun::blockUpdatesAfter(int64_t b) {
  const int64_t i1 = blockStart(b), wb = blockWidth(b), i2 = i1 + wb;
  const int WB = int(wb), R = int(rows), K = int(k);
  const float minusOne = -1.0f, plusOne = 1.0f, zero = 0.0f;
  float *zPtr = f32("Z = E U"), *pPtr = f32("P"), *ePtr = f32("block errors");
  if (i2 < k) {
    if (i1 > 0)
      QFUSE_CUBLAS(cublasSgeam(blas, CUBLAS_OP_N, CUBLAS_OP_N, WB, R,
                               &minusOne, pPtr, WB, &zero, pPtr, WB,
                               zPtr + i1, K));
    QFUSE_CUBLAS(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, WB, R, WB,
                             &plusOne, f32("U block"), WB, ePtr, WB,
                             i1 > 0 ? &plusOne : &zero, zPtr + i1, K));
  }
  tick("Z_F = E U_FF - P");
  QFUSE_CUBLAS(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_DEVICE));
  int64_t r0 = 0;
  for (size_t m = 0; m < numModules; ++m) {
    const float *e = ePtr + r0 * wb;
    QFUSE_CUBLAS(cublasSdot(blas, int(modules[m].n * wb), e, 1, e, 1,
                            f32("loss") + b * numModules + m));
    r0 += modules[m].n;
  }
  QFUSE_CUBLAS(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_HOST));
  tick("loss dots");
}

} // namespace qfuse::runtime
