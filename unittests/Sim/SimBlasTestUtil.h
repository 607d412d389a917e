//===- SimBlasTestUtil.h - shared helpers of the cuBLAS stand-in tests ----===//
//
// Random operands (never zero, so every product counts), matrices of any
// cuBLAS element type with their exact stored values, and decoders of f16
// and bf16 written independently of the library's (from the formats'
// definitions), so that the references do not share its code.
//
//===----------------------------------------------------------------------===//
#ifndef QFUSE_UNITTESTS_SIM_SIMBLASTESTUTIL_H
#define QFUSE_UNITTESTS_SIM_SIMBLASTESTUTIL_H

#include "qfuse/sim/Half.h"

#include <cublas_v2.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace qfuse::sim::test {

/// Value of an IEEE binary16 pattern: (-1)^s 2^(e-15) 1.m, or 2^-14 0.m.
inline double referenceHalf(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 31)
    return m ? std::numeric_limits<double>::quiet_NaN()
             : sign * std::numeric_limits<double>::infinity();
  return e ? sign * std::ldexp(1024.0 + m, e - 25)
           : sign * std::ldexp(double(m), -24);
}

/// Value of a bfloat16 pattern: (-1)^s 2^(e-127) 1.m, or 2^-126 0.m.
inline double referenceBf16(uint16_t b) {
  const int e = (b >> 7) & 0xff, m = b & 0x7f;
  const double sign = (b & 0x8000) ? -1.0 : 1.0;
  if (e == 255)
    return m ? std::numeric_limits<double>::quiet_NaN()
             : sign * std::numeric_limits<double>::infinity();
  return e ? sign * std::ldexp(128.0 + m, e - 134)
           : sign * std::ldexp(double(m), -133);
}

struct Rng {
  std::mt19937_64 gen{12345};
  /// Uniform in +-[0.25, 1]: never zero.
  double value() {
    const double v = std::uniform_real_distribution<double>(0.25, 1.0)(gen);
    return (gen() & 1) ? -v : v;
  }
  int smallInt() { // +-[1, 100]
    const int v = int(gen() % 100) + 1;
    return (gen() & 1) ? -v : v;
  }
};

inline size_t bytesOf(cudaDataType type) {
  switch (type) {
  case CUDA_R_8I:
    return 1;
  case CUDA_R_16F:
  case CUDA_R_16BF:
    return 2;
  case CUDA_R_64F:
    return 8;
  default:
    return 4;
  }
}

/// A column-major matrix of `type`, rows x cols with leading dimension
/// ld; the rows past `rows` hold NaN (or 127) so that reading them shows.
struct Matrix {
  cudaDataType type;
  int64_t rows, cols, ld;
  std::vector<uint8_t> bytes;

  Matrix(cudaDataType t, int64_t r, int64_t c, int64_t leading)
      : type(t), rows(r), cols(c), ld(leading),
        bytes(size_t(leading * c) * bytesOf(t)) {
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < ld; ++i)
        setIndex(i + j * ld, std::numeric_limits<double>::quiet_NaN());
  }
  void *data() { return bytes.data(); }

  double at(int64_t i, int64_t j) const { return atIndex(i + j * ld); }
  void set(int64_t i, int64_t j, double v) { setIndex(i + j * ld, v); }

  void fillRandom(Rng &rng) {
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < rows; ++i)
        set(i, j, isInteger() ? double(rng.smallInt()) : rng.value());
  }
  bool isInteger() const { return type == CUDA_R_8I || type == CUDA_R_32I; }

  double atIndex(int64_t index) const {
    const uint8_t *p = &bytes[size_t(index) * bytesOf(type)];
    uint16_t h;
    switch (type) {
    case CUDA_R_16F:
      std::memcpy(&h, p, 2);
      return referenceHalf(h);
    case CUDA_R_16BF:
      std::memcpy(&h, p, 2);
      return referenceBf16(h);
    case CUDA_R_8I:
      return double(int8_t(*p));
    case CUDA_R_32I: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case CUDA_R_64F: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    default: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    }
  }
  void setIndex(int64_t index, double v) {
    uint8_t *p = &bytes[size_t(index) * bytesOf(type)];
    uint16_t h;
    switch (type) {
    case CUDA_R_16F:
      h = halfFromDouble(float(v));
      std::memcpy(p, &h, 2);
      return;
    case CUDA_R_16BF:
      h = bf16FromDouble(float(v));
      std::memcpy(p, &h, 2);
      return;
    case CUDA_R_8I:
      *p = uint8_t(int8_t(std::isnan(v) ? 127 : v));
      return;
    case CUDA_R_32I: {
      int32_t x = std::isnan(v) ? 0x7fffffff : int32_t(v);
      std::memcpy(p, &x, 4);
      return;
    }
    case CUDA_R_64F:
      std::memcpy(p, &v, 8);
      return;
    default: {
      float f = float(v);
      std::memcpy(p, &f, 4);
      return;
    }
    }
  }
};

/// Half the distance between neighbours of `type` near |value|, relative:
/// what a correctly rounded result may be off by.
inline double roundingBound(cudaDataType type, double value) {
  switch (type) {
  case CUDA_R_16F:
    return std::ldexp(std::fabs(value), -11) + 0x1p-25;
  case CUDA_R_16BF:
    return std::ldexp(std::fabs(value), -8) + 0x1p-134;
  case CUDA_R_32F:
    return std::ldexp(std::fabs(value), -24) + 0x1p-150;
  case CUDA_R_64F:
    return std::ldexp(std::fabs(value), -52);
  default:
    return 0.0; // integers: exact
  }
}

/// A cuBLAS handle for one test.
struct Handle {
  cublasHandle_t h = nullptr;
  Handle() { cublasCreate(&h); }
  ~Handle() { cublasDestroy(h); }
  operator cublasHandle_t() const { return h; }
};

} // namespace qfuse::sim::test

#endif // QFUSE_UNITTESTS_SIM_SIMBLASTESTUTIL_H
