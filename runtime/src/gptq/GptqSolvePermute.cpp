//===- GptqSolvePermute.cpp - act-order and static groups on the GPU ------===//
//
// The moves that act-order and static groups add to GptqSolver::solve
// (GptqSolveRun.h), on the device: H -> P^T H P, W's columns in the
// processing order, the static parameters expanded to one per (row,
// position), and after the solve the codes and f16 values back in column
// order. Every move is exact: whole-row copies (runs of consecutive or
// repeated rows merged), pitched column copies and cuBLAS transposes (geam,
// C = 1 * A^T, B not read), no arithmetic on the values.
//
// Copies rather than a generated gather kernel: the moves are whole rows
// (4 K or 4 R bytes) and need no kernel in every artifact. A gather is at
// most K copies (14336 for Llama-3-8B's down_proj) and a block's scatter
// at most 128 pitched ones: each is enqueued as a few batches
// (cuMemcpyBatchAsync per wave of rowGatherWaves, cuMemcpy3DBatchAsync per
// scatter), since one driver call per copy cost far more host time than
// the solve (docs/gptq.md, act-order's prepare); one call per copy remains
// where the driver refuses batches. With GptqSolveOptions::hostPrepare the
// host loops they replace run instead (the reference the GPU tests compare
// with).
//
//===----------------------------------------------------------------------===//

#include "GptqSolveRun.h"

#include "ParallelRows.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/gptq/PermutationMoves.h"

#include <cstring>

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

/// One batch of 1D copies on `stream` (cuMemcpyBatchAsync: one call; the
/// copies unordered among themselves, the batch in stream order, each
/// source read in stream order). False, with nothing enqueued, where the
/// driver or the stream cannot take batches (the legacy default stream):
/// the caller copies one by one.
bool copyBatch(std::vector<CUdeviceptr> &dsts, std::vector<CUdeviceptr> &srcs,
               std::vector<size_t> &sizes, CUstream stream, const char *what) {
  if (dsts.empty())
    return true;
  if (stream == nullptr || stream == CU_STREAM_LEGACY)
    return false;
  CUmemcpyAttributes attrs;
  std::memset(&attrs, 0, sizeof(attrs));
  attrs.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  size_t first = 0;
  const CUresult status =
      cuMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), dsts.size(),
                         &attrs, &first, 1, stream);
  if (status == CUDA_ERROR_NOT_SUPPORTED)
    return false;
  QFUSE_CU_CTX(status, what);
  return true;
}

/// Row i of `dst` = row from[i] of `src` (rows of `rowBytes`): the copies
/// of rowGather (PermutationMoves.h), one batch per wave of rowGatherWaves
/// (a permutation is one batch; a group's parameters over its `group`
/// positions 1 + log2(group)), or one by one in order where batches are not
/// supported.
void gatherRows(CUdeviceptr dst, CUdeviceptr src, size_t rowBytes,
                const std::vector<int64_t> &from, CUstream stream,
                const char *what) {
  auto at = [&](const RowCopy &c) {
    return (c.fromDst ? dst : src) + size_t(c.src) * rowBytes;
  };
  for (const std::vector<RowCopy> &wave : rowGatherWaves(from)) {
    std::vector<CUdeviceptr> dsts, srcs;
    std::vector<size_t> sizes;
    for (const RowCopy &c : wave) {
      dsts.push_back(dst + size_t(c.dst) * rowBytes);
      srcs.push_back(at(c));
      sizes.push_back(size_t(c.count) * rowBytes);
    }
    // Unsupported shows on the first batch, before anything is enqueued.
    if (copyBatch(dsts, srcs, sizes, stream, what))
      continue;
    for (const RowCopy &c : rowGather(from))
      QFUSE_CU_CTX(cuMemcpyDtoDAsync(dst + size_t(c.dst) * rowBytes, at(c),
                                     size_t(c.count) * rowBytes, stream),
                   what);
    return;
  }
}

} // namespace

/// The scatter's pitched copies (distinct destinations, so unordered is
/// fine) as one cuMemcpy3DBatchAsync, or one copy2D each where batches are
/// not supported.
void detail::scatterColumns(CUdeviceptr dst, size_t dstPitch, CUdeviceptr src,
                            size_t srcPitch, size_t elementBytes,
                            size_t height, const int64_t *to, int64_t count,
                            CUstream stream, const char *what) {
  const std::vector<ColumnCopy> copies = columnScatter(to, count);
  if (copies.empty() || height == 0)
    return;
  if (stream != nullptr && stream != CU_STREAM_LEGACY) {
    std::vector<CUDA_MEMCPY3D_BATCH_OP> ops(copies.size());
    for (size_t i = 0; i < copies.size(); ++i) {
      CUDA_MEMCPY3D_BATCH_OP &op = ops[i];
      std::memset(&op, 0, sizeof(op));
      op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
      // Pointer operands count in bytes; a row's length is the pitch.
      op.src.op.ptr.ptr = src + size_t(copies[i].src) * elementBytes;
      op.src.op.ptr.rowLength = srcPitch;
      op.dst.op.ptr.ptr = dst + size_t(copies[i].dst) * elementBytes;
      op.dst.op.ptr.rowLength = dstPitch;
      op.extent = {size_t(copies[i].count) * elementBytes, height, 1};
      op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    }
    const CUresult status =
        cuMemcpy3DBatchAsync(ops.size(), ops.data(), 0, stream);
    if (status != CUDA_ERROR_NOT_SUPPORTED) {
      QFUSE_CU_CTX(status, std::string("GPTQ: ") + what);
      return;
    }
  }
  for (const ColumnCopy &c : copies)
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
  std::vector<float> s(fitOnDevice ? 0 : size_t(groups * rows)),
      z(hasZeros ? s.size() : 0);
  for (int64_t r = 0; r < rows && !fitOnDevice; ++r)
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
    if (!fitOnDevice)
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
