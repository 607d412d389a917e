//===- GemmKernel.cpp - blocked, threaded host GEMM in double -------------===//
//
// C is cut into MC x NC tiles, one task each. A task walks k in KC
// chunks: it converts its slice of op(A) and op(B) to double panels
// (MR rows / NR columns interleaved per k, zero padded), and a register
// micro-kernel adds each product onto per-element double accumulators, so
// every element is still one sum in plain k order whatever the blocking
// or the thread count.
//
//===----------------------------------------------------------------------===//
#include "GemmKernel.h"
#include "qfuse/sim/Half.h"
#include "ParallelFor.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace qfuse::sim {
namespace {

constexpr int64_t MR = 4, NR = 4;
constexpr int64_t MC = 64, NC = 64, KC = 256;

double load(const void *data, Element type, int64_t index) {
  switch (type) {
  case Element::F16:
    return halfToFloat(static_cast<const uint16_t *>(data)[index]);
  case Element::BF16:
    return bf16ToFloat(static_cast<const uint16_t *>(data)[index]);
  case Element::F32:
    return static_cast<const float *>(data)[index];
  case Element::F64:
    return static_cast<const double *>(data)[index];
  case Element::I8:
    return static_cast<const int8_t *>(data)[index];
  case Element::I32:
    return static_cast<const int32_t *>(data)[index];
  }
  return 0.0;
}

void store(void *data, Element type, int64_t index, double value) {
  switch (type) {
  case Element::F16:
    static_cast<uint16_t *>(data)[index] = halfFromDouble(value);
    return;
  case Element::BF16:
    static_cast<uint16_t *>(data)[index] = bf16FromDouble(value);
    return;
  case Element::F32:
    static_cast<float *>(data)[index] = float(value);
    return;
  case Element::F64:
    static_cast<double *>(data)[index] = value;
    return;
  case Element::I8:
  case Element::I32: {
    // Integer results wrap like the device's 32-bit arithmetic.
    const double clamped =
        std::isnan(value) ? 0.0 : std::clamp(value, -0x1p62, 0x1p62);
    const uint32_t bits = uint32_t(int64_t(clamped));
    if (type == Element::I8)
      static_cast<int8_t *>(data)[index] = int8_t(uint8_t(bits));
    else
      static_cast<int32_t *>(data)[index] = int32_t(bits);
    return;
  }
  }
}

/// Element (row, col) of op(X), as stored column-major.
template <Element T>
double opElement(const Operand &x, int64_t row, int64_t col) {
  const int64_t index = x.transposed ? col + row * x.ld : row + col * x.ld;
  return load(x.data, T, index);
}

/// op(A)[i0 : i0 + rows, p0 : p0 + depth] as MR-row panels: panel r, step
/// p, lane l at (r * depth + p) * MR + l. Lanes past `rows` are zero.
template <Element T>
void packA(const Operand &a, int64_t i0, int64_t rows, int64_t p0,
           int64_t depth, double *out) {
  for (int64_t r = 0; r * MR < rows; ++r)
    for (int64_t p = 0; p < depth; ++p)
      for (int64_t l = 0; l < MR; ++l) {
        const int64_t i = r * MR + l;
        out[(r * depth + p) * MR + l] =
            i < rows ? opElement<T>(a, i0 + i, p0 + p) : 0.0;
      }
}

/// op(B)[p0 : p0 + depth, j0 : j0 + cols] as NR-column panels.
template <Element T>
void packB(const Operand &b, int64_t j0, int64_t cols, int64_t p0,
           int64_t depth, double *out) {
  for (int64_t c = 0; c * NR < cols; ++c)
    for (int64_t p = 0; p < depth; ++p)
      for (int64_t l = 0; l < NR; ++l) {
        const int64_t j = c * NR + l;
        out[(c * depth + p) * NR + l] =
            j < cols ? opElement<T>(b, p0 + p, j0 + j) : 0.0;
      }
}

template <typename Body> void dispatch(Element type, const Body &body) {
  switch (type) {
  case Element::F16:
    return body(std::integral_constant<Element, Element::F16>());
  case Element::BF16:
    return body(std::integral_constant<Element, Element::BF16>());
  case Element::F32:
    return body(std::integral_constant<Element, Element::F32>());
  case Element::F64:
    return body(std::integral_constant<Element, Element::F64>());
  case Element::I8:
    return body(std::integral_constant<Element, Element::I8>());
  case Element::I32:
    return body(std::integral_constant<Element, Element::I32>());
  }
}

/// acc[MR x NR] (row stride `ldAcc`) += panel A * panel B over `depth`.
void microKernel(int64_t depth, const double *a, const double *b, double *acc,
                 int64_t ldAcc) {
  double sum[MR][NR];
  for (int64_t r = 0; r < MR; ++r)
    for (int64_t c = 0; c < NR; ++c)
      sum[r][c] = acc[r * ldAcc + c];
  for (int64_t p = 0; p < depth; ++p, a += MR, b += NR)
    for (int64_t r = 0; r < MR; ++r)
      for (int64_t c = 0; c < NR; ++c)
        sum[r][c] += a[r] * b[c];
  for (int64_t r = 0; r < MR; ++r)
    for (int64_t c = 0; c < NR; ++c)
      acc[r * ldAcc + c] = sum[r][c];
}

/// One MC x NC tile of C: its full sums over k, then the update of C.
void computeTile(const GemmArgs &g, int64_t i0, int64_t j0) {
  const int64_t rows = std::min(MC, g.m - i0), cols = std::min(NC, g.n - j0);
  const int64_t rowPanels = (rows + MR - 1) / MR,
                colPanels = (cols + NR - 1) / NR;
  std::vector<double> acc(size_t(rowPanels * MR * colPanels * NR), 0.0);
  std::vector<double> aPanel(size_t(rowPanels * MR * KC));
  std::vector<double> bPanel(size_t(colPanels * NR * KC));
  const int64_t ldAcc = colPanels * NR;
  for (int64_t p0 = 0; p0 < g.k; p0 += KC) {
    const int64_t depth = std::min(KC, g.k - p0);
    dispatch(g.a.type, [&](auto t) {
      packA<decltype(t)::value>(g.a, i0, rows, p0, depth, aPanel.data());
    });
    dispatch(g.b.type, [&](auto t) {
      packB<decltype(t)::value>(g.b, j0, cols, p0, depth, bPanel.data());
    });
    for (int64_t r = 0; r < rowPanels; ++r)
      for (int64_t c = 0; c < colPanels; ++c)
        microKernel(depth, &aPanel[size_t(r * depth * MR)],
                    &bPanel[size_t(c * depth * NR)],
                    &acc[size_t(r * MR * ldAcc + c * NR)], ldAcc);
  }
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t index = (i0 + i) + (j0 + j) * g.ldc;
      double value = g.alpha * acc[size_t(i * ldAcc + j)];
      if (g.beta != 0.0)
        value += g.beta * load(g.c, g.cType, index);
      store(g.c, g.cType, index, value);
    }
}

/// C = beta C (zero where beta = 0, C unread): alpha = 0 or k = 0.
void scaleOnly(const GemmArgs &g) {
  for (int64_t j = 0; j < g.n; ++j)
    for (int64_t i = 0; i < g.m; ++i) {
      const int64_t index = i + j * g.ldc;
      store(g.c, g.cType, index,
            g.beta == 0.0 ? 0.0 : g.beta * load(g.c, g.cType, index));
    }
}

} // namespace

void gemm(const GemmArgs &g) {
  if (g.m <= 0 || g.n <= 0)
    return;
  if (g.k <= 0 || g.alpha == 0.0)
    return scaleOnly(g);
  const int64_t tilesM = (g.m + MC - 1) / MC, tilesN = (g.n + NC - 1) / NC;
  parallelFor(tilesM * tilesN, double(g.m) * double(g.n) * double(g.k),
              [&](int64_t tile) {
                computeTile(g, (tile / tilesN) * MC, (tile % tilesN) * NC);
              });
}

} // namespace qfuse::sim
