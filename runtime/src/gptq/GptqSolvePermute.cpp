//===- GptqSolvePermute.cpp - act-order and static groups on the GPU ------===//
//
// The moves that act-order and static groups add to GptqSolver::solve
// (GptqSolveRun.h), on the device: H -> P^T H P, W's columns in the
// processing order, the static parameters expanded to one per (row,
// position), and after the solve the codes and f16 values back in column
// order. Every move is exact: column gathers (the artifact's
// qf_gather_fields kernel, format::columnGather), whole-row copies (runs of
// consecutive or repeated rows merged), pitched column copies and cuBLAS
// transposes (geam, C = 1 * A^T, B not read), no arithmetic on the values.
//
// With a gather kernel (GptqSolveOptions::gather, which the pipeline's
// device packing brings) a permutation or an expansion is one launch.
// Without one, copies: a gather is at most K copies (14336 for Llama-3-8B's
// down_proj) and a block's scatter at most 128 pitched ones, each enqueued
// as a few batches (cuMemcpyBatchAsync per wave of rowGatherWaves,
// cuMemcpy3DBatchAsync per scatter; one call per copy where the driver
// refuses batches), which cost the driver about what the copies one by one
// did (docs/gptq.md, act-order's prepare). With
// GptqSolveOptions::hostPrepare the host loops they replace run instead
// (the reference the GPU tests compare with).
//
//===----------------------------------------------------------------------===//

#include "GptqSolveRun.h"

#include "ParallelRows.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/device/DeviceGather.h"
#include "qfuse/runtime/gptq/PermutationMoves.h"

#include "qfuse/format/FieldGather.h"

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

/// dst[r][j] = src[r][from[j]] for row-major arrays of `elementBytes`-byte
/// elements ([rows, srcCols] into [rows, from.size()]), by one launch of the artifact's
/// qf_gather_fields kernel (format::columnGather: every bit pattern moves
/// unchanged), on `stream`. False, with nothing enqueued, where there is no
/// gather kernel (GptqSolveOptions::gather) or the array is too large for
/// its 32-bit indices: the caller moves rows by copies instead.
bool SolveRun::gatherColumns(CUdeviceptr dst, CUdeviceptr src, int64_t rows,
                             int64_t srcCols, unsigned elementBytes,
                             const std::vector<int64_t> &from,
                             const char *what) {
  if (!options.gather)
    return false;
  format::FieldGather g;
  std::string why;
  bool planned = false;
  for (unsigned bits : {8u, 4u, 2u, 1u})
    if (!planned && options.gather->has(bits))
      planned = format::columnGather(rows, srcCols, elementBytes, from, bits,
                                     g, why);
  if (!planned)
    return false;
  // The perm goes up in stream order (a pageable source is staged before
  // the call returns), so a later gather's perm never overwrites one that
  // an earlier launch still reads.
  const CUdeviceptr permOnDevice =
      buffer("column gather perm", g.perm.size() * 4).ptr();
  QFUSE_CU_CTX(cuMemcpyHtoDAsync(permOnDevice, g.perm.data(),
                                 g.perm.size() * 4, stream),
               what);
  // Every field value is in range, so the status is never set; the
  // kernel takes one anyway.
  const CUdeviceptr status = buffer("column gather status", 4).ptr();
  QFUSE_CU_CTX(cuMemsetD32Async(status, 0, 1, stream), what);
  options.gather->enqueue(g, src, dst, status, stream, permOnDevice);
  return true;
}

/// H -> P^T H P, H[i][j] = H[perm[i]][perm[j]]: twice "gather the columns
/// by perm, transpose" (or, without a gather kernel, "gather the rows,
/// transpose"), through the Cholesky factor's buffer (factor() overwrites
/// it). No symmetry is assumed of H's bytes.
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
    if (!gatherColumns(scratch, hessian, k, k, 4, perm,
                       "GPTQ: the Hessian's columns in act-order"))
      gatherRows(scratch, hessian, size_t(k) * 4, perm, stream,
                 "GPTQ: the Hessian's rows in act-order");
    transpose(blas, hessian, scratch, k, k);
  }
}

/// W's columns in the processing order, W[r][c] = W[r][perm[c]], in
/// "weights" (which holds W, dead channels zeroed), through the Z buffer
/// (written by the blocks before they read it): gathered there by columns
/// and copied back, or without a gather kernel transposed there, its rows
/// gathered back into "weights", transposed and copied back.
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
  if (gatherColumns(z, w.ptr(), rows, k, 4, perm,
                    "GPTQ: the weights' columns in act-order")) {
    QFUSE_CU(cuMemcpyDtoDAsync(w.ptr(), z, bytes, stream));
    return;
  }
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
  std::vector<float> s(tablesOnDevice ? 0 : size_t(groups * rows)),
      z(hasZeros ? s.size() : 0);
  for (int64_t r = 0; r < rows && !tablesOnDevice; ++r)
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
    if (!tablesOnDevice)
      t.upload(byGroup.data(), byGroup.size() * 4);
    const size_t rowBytes = size_t(rows) * 4;
    const CUdeviceptr scratch = buffer("Z = E U", size_t(rows * k) * 4).ptr();
    // In column order a position's group runs over whole groups, so the
    // row copies are 1 + log2(group) waves; under act-order they are
    // about one per position, which the gather replaces.
    if (options.actOrder && expandByColumns(t.ptr(), from, scratch, out))
      return;
    if (options.eager) {
      gatherRows(out, t.ptr(), rowBytes, from, stream,
                 "GPTQ: the static parameters by position");
      return;
    }
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

/// expandStaticParams with a gather kernel: the [groups, rows] table
/// transposed to [rows, groups], its columns gathered by each position's
/// group into [rows, K] (`scratch`), which is the fused kernel's blocks as
/// column ranges (one pitched copy each) and the eager kernel's [K, rows]
/// transposed. False, with nothing enqueued, without a gather kernel.
bool SolveRun::expandByColumns(CUdeviceptr table,
                               const std::vector<int64_t> &from,
                               CUdeviceptr scratch, CUdeviceptr out) {
  if (!options.gather)
    return false;
  const CUdeviceptr byRow =
      buffer("static parameters by row", size_t(groups * rows) * 4).ptr();
  PedanticMath exact(blas);
  transpose(blas, byRow, table, groups, rows);
  if (!gatherColumns(scratch, byRow, rows, groups, 4, from,
                     "GPTQ: the static parameters by position"))
    return false;
  if (options.eager) {
    transpose(blas, out, scratch, rows, k);
    return true;
  }
  for (int64_t b = 0; b < numBlocks; ++b)
    copy2D(offset(out, rows * blockStart(b) * 4), size_t(blockWidth(b)) * 4,
           offset(scratch, blockStart(b) * 4), size_t(k) * 4,
           size_t(blockWidth(b)) * 4, size_t(rows), stream,
           "GPTQ: a block's static parameters");
  return true;
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
