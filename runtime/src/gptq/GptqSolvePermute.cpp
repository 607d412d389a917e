//===- GptqSolvePermute.cpp - act-order and static groups on the GPU ------===//
//
// The moves that act-order and static groups add to GptqSolver::solve
// (GptqSolveRun.h), on the device: H -> P^T H P, W's columns in the
// processing order, the static parameters expanded to one per (row,
// position), and after the solve the codes and f16 values back in column
// order. Every move is exact: whole-row copies (cuMemcpyDtoDAsync, runs of
// consecutive or repeated rows merged), pitched column copies
// (cuMemcpy2DAsync) and cuBLAS transposes (geam, C = 1 * A^T, B not read),
// no arithmetic on the values.
//
// Copies rather than a generated gather kernel: the moves are whole rows
// (4 K or 4 R bytes), so one gather costs at most K copies (14336 for
// Llama-3-8B's down_proj) and needs no kernel in every artifact; their cost
// on the H200 is in docs/gptq.md (act-order's prepare). With
// GptqSolveOptions::hostPrepare the host loops they replace run instead
// (the reference the GPU tests compare with).
//
//===----------------------------------------------------------------------===//

#include "GptqSolveRun.h"

#include "ParallelRows.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/gptq/PermutationMoves.h"

namespace qfuse::runtime {
using namespace detail;

namespace {

/// cuBLAS in its pedantic math mode while in scope: the transposes below
/// must not go through an emulated FP32 mode (bf16x9) the solve selected.
class PedanticMath {
public:
  explicit PedanticMath(cublasHandle_t blas) : blas_(blas) {
    QFUSE_CUBLAS(cublasGetMathMode(blas_, &saved_));
    QFUSE_CUBLAS(cublasSetMathMode(blas_, CUBLAS_PEDANTIC_MATH));
  }
  ~PedanticMath() { cublasSetMathMode(blas_, saved_); }
  PedanticMath(const PedanticMath &) = delete;
  PedanticMath &operator=(const PedanticMath &) = delete;

private:
  cublasHandle_t blas_;
  cublasMath_t saved_ = CUBLAS_DEFAULT_MATH;
};

/// Row-major [rows, cols] f32 at `src` -> row-major [cols, rows] at `dst`
/// (distinct buffers): column-major C [rows x cols] = 1 * A^T + 0 * B^T
/// with A = B = src, so that each element is x + 0 * x, which is x for
/// every finite x, -0 included, whether or not cuBLAS reads B at beta 0
/// (dst's old contents are never read).
void transpose(cublasHandle_t blas, CUdeviceptr dst, CUdeviceptr src,
               int64_t rows, int64_t cols) {
  const float one = 1.0f, zero = 0.0f;
  const float *a = reinterpret_cast<const float *>(src);
  QFUSE_CUBLAS(cublasSgeam(blas, CUBLAS_OP_T, CUBLAS_OP_T, int(rows),
                           int(cols), &one, a, int(cols), &zero, a, int(cols),
                           reinterpret_cast<float *>(dst), int(rows)));
}

/// Row i of `dst` = row from[i] of `src` (rows of `rowBytes`): the copies
/// of rowGather (PermutationMoves.h), in order on `stream` (the identity is
/// one copy; a group's parameters over its `group` positions
/// 1 + log2(group)).
void gatherRows(CUdeviceptr dst, CUdeviceptr src, size_t rowBytes,
                const std::vector<int64_t> &from, CUstream stream,
                const char *what) {
  for (const RowCopy &c : rowGather(from))
    QFUSE_CU_CTX(cuMemcpyDtoDAsync(dst + size_t(c.dst) * rowBytes,
                                   (c.fromDst ? dst : src) +
                                       size_t(c.src) * rowBytes,
                                   size_t(c.count) * rowBytes, stream),
                 what);
}

} // namespace

void detail::scatterColumns(CUdeviceptr dst, size_t dstPitch, CUdeviceptr src,
                            size_t srcPitch, size_t elementBytes,
                            size_t height, const int64_t *to, int64_t count,
                            CUstream stream, const char *what) {
  for (const ColumnCopy &c : columnScatter(to, count))
    copy2D(dst + size_t(c.dst) * elementBytes, dstPitch,
           src + size_t(c.src) * elementBytes, srcPitch,
           size_t(c.count) * elementBytes, height, stream, what);
}

/// H -> P^T H P, H[i][j] = H[perm[i]][perm[j]]: twice "gather the rows by
/// perm, transpose", through the Cholesky factor's buffer (factor()
/// overwrites it). No symmetry is assumed of H's bytes.
void SolveRun::permuteHessian() {
  if (options.hostPrepare) {
    // The reference: one range of rows per thread on the host.
    std::vector<float> h(static_cast<size_t>(k * k)), p(h.size());
    QFUSE_CU(cuStreamSynchronize(stream));
    QFUSE_CU(cuMemcpyDtoH(h.data(), hessian, h.size() * 4));
    detail::parallelRows(k, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i)
        for (int64_t j = 0; j < k; ++j)
          p[size_t(i * k + j)] = h[size_t(perm[i] * k + perm[j])];
    });
    QFUSE_CU(cuMemcpyHtoDAsync(hessian, p.data(), p.size() * 4, stream));
    QFUSE_CU(cuStreamSynchronize(stream));
    return;
  }
  const CUdeviceptr scratch =
      buffer("Cholesky factor", size_t(k * k) * 4).ptr();
  PedanticMath exact(blas);
  for (int pass = 0; pass < 2; ++pass) {
    gatherRows(scratch, hessian, size_t(k) * 4, perm, stream,
               "GPTQ: the Hessian's rows in act-order");
    transpose(blas, hessian, scratch, k, k);
  }
}

/// W's columns in the processing order, W[r][c] = W[r][perm[c]], in
/// "weights" (which holds W, dead channels zeroed): transposed into the
/// Z buffer (written by the blocks before they read it), its rows gathered
/// back into "weights", transposed and copied back.
void SolveRun::permuteWeights() {
  cuda::DeviceBuffer &w = buffer("weights");
  if (options.hostPrepare) {
    std::vector<float> work(original.size());
    detail::parallelRows(rows, [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r)
        for (int64_t c = 0; c < k; ++c)
          work[size_t(r * k + c)] = original[size_t(r * k + perm[size_t(c)])];
    });
    w.upload(work.data(), work.size() * 4);
    return;
  }
  const size_t bytes = size_t(rows * k) * 4;
  const CUdeviceptr z = buffer("Z = E U", bytes).ptr();
  PedanticMath exact(blas);
  transpose(blas, z, w.ptr(), rows, k);
  gatherRows(w.ptr(), z, size_t(rows) * 4, perm, stream,
             "GPTQ: the weights' columns in act-order");
  transpose(blas, z, w.ptr(), k, rows);
  QFUSE_CU(cuMemcpyDtoDAsync(w.ptr(), z, bytes, stream));
}

/// The static parameters ([rows, groups], staticParams) as the kernels
/// read them, one per (row, position), into "scales" and "zeros": [K, rows]
/// for the eager kernel, and for the fused one [rows, wb] per block (the
/// layouts at the top of GptqSolver.cpp). On the device: [groups, rows]
/// uploaded (or left there by the device fit, GptqSolveFits.cpp), its rows
/// gathered by the group of each position into [K, rows], and for the
/// fused kernel each block's rows transposed.
void SolveRun::expandStaticParams() {
  if (options.hostPrepare) {
    expandStaticParamsOnHost();
    return;
  }
  // The tables, unless the device fit left them there.
  std::vector<float> s(staticTablesOnDevice ? 0 : size_t(groups * rows)),
      z(hasZeros ? s.size() : 0);
  for (int64_t r = 0; r < rows && !staticTablesOnDevice; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      const gptq::GroupParams &p = staticParams[size_t(r * groups + g)];
      s[size_t(g * rows + r)] = p.scale;
      if (hasZeros)
        z[size_t(g * rows + r)] = p.zero;
    }
  std::vector<int64_t> from(static_cast<size_t>(k));
  for (int64_t c = 0; c < k; ++c)
    from[size_t(c)] = groupOfPosition(c);
  auto expand = [&](const std::vector<float> &byGroup, const char *table,
                    CUdeviceptr out) {
    cuda::DeviceBuffer &t = buffer(table, size_t(groups * rows) * 4);
    if (!staticTablesOnDevice)
      t.upload(byGroup.data(), byGroup.size() * 4);
    const size_t rowBytes = size_t(rows) * 4;
    if (options.eager) {
      gatherRows(out, t.ptr(), rowBytes, from, stream,
                 "GPTQ: the static parameters by position");
      return;
    }
    const CUdeviceptr scratch = buffer("Z = E U", size_t(rows * k) * 4).ptr();
    gatherRows(scratch, t.ptr(), rowBytes, from, stream,
               "GPTQ: the static parameters by position");
    PedanticMath exact(blas);
    for (int64_t b = 0; b < numBlocks; ++b)
      transpose(blas, offset(out, rows * blockStart(b) * 4),
                offset(scratch, blockStart(b) * rowBytes), blockWidth(b),
                rows);
  };
  expand(s, "static scales", buffer("scales").ptr());
  if (hasZeros)
    expand(z, "static zeros", buffer("zeros").ptr());
  // The tables are rewritten by the next solve's uploads.
  QFUSE_CU(cuStreamSynchronize(stream));
}

/// The reference of expandStaticParams: rows x K entries (117M for
/// Llama-3-8B's gate/up) on the host, one range of rows per thread.
void SolveRun::expandStaticParamsOnHost() {
  std::vector<float> s(static_cast<size_t>(paramCount)),
      z(hasZeros ? s.size() : 0);
  detail::parallelRows(rows, [&](int64_t first, int64_t last) {
    for (int64_t c = 0; c < k; ++c) {
      const int64_t b = c / kBlockWidth, i1 = blockStart(b),
                    wb = blockWidth(b), g = groupOfPosition(c);
      for (int64_t r = first; r < last; ++r) {
        const size_t at = options.eager
                              ? size_t(c * rows + r)
                              : size_t(rows * i1 + r * wb + (c - i1));
        const gptq::GroupParams &p = staticParams[size_t(r * groups + g)];
        s[at] = p.scale;
        if (hasZeros)
          z[at] = p.zero;
      }
    }
  });
  buffer("scales").upload(s.data(), s.size() * 4);
  if (hasZeros)
    buffer("zeros").upload(z.data(), z.size() * 4);
}

} // namespace qfuse::runtime
