//===- SimTestUtil.h - buffers and launches for the PTX tests ---*- C++ -*-===//

#ifndef QFUSE_UNITTESTS_SIM_SIMTESTUTIL_H
#define QFUSE_UNITTESTS_SIM_SIMTESTUTIL_H

#include "qfuse/sim/GlobalMemory.h"
#include "qfuse/sim/Ptx.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace qfuse::sim::test {

/// Host memory a kernel may use as global memory while the buffer lives.
class Buffer {
public:
  Buffer(size_t bytes, std::string label) : data(bytes + 16, 0xAB) {
    base = data.data() + (16 - reinterpret_cast<uintptr_t>(data.data()) % 16) % 16;
    size = bytes;
    GlobalMemory::instance().add(base, bytes, std::move(label));
  }
  ~Buffer() { GlobalMemory::instance().remove(base); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  template <class T> T *as() { return reinterpret_cast<T *>(base); }
  uint64_t address() const { return reinterpret_cast<uintptr_t>(base); }
  template <class T> void fill(const std::vector<T> &v) {
    std::memcpy(base, v.data(), v.size() * sizeof(T));
  }
  template <class T> std::vector<T> read(size_t n) const {
    std::vector<T> v(n);
    std::memcpy(v.data(), base, n * sizeof(T));
    return v;
  }

private:
  std::vector<uint8_t> data;
  uint8_t *base;
  size_t size;
};

/// The value of f16 bits (a reference independent of the simulator's).
inline double fromHalf(uint16_t u) {
  const int exponent = (u >> 10) & 0x1f, fraction = u & 0x3ff;
  const double sign = (u & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0x1f)
    return fraction ? NAN : sign * INFINITY;
  if (exponent == 0)
    return sign * std::ldexp(fraction, -24);
  return sign * std::ldexp(1024 + fraction, exponent - 25);
}

/// f16 bits of v rounded once to nearest even, in long double (a
/// reference independent of the simulator's); NaN is 0x7e00.
inline uint16_t half(long double v) {
  if (std::isnan(v))
    return 0x7e00;
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  long double a = std::fabs(v);
  if (a == 0)
    return sign;
  // Round once, in long double, to 11 significant bits (fewer below 2^-14).
  int e;
  std::frexp(a, &e); // a = m * 2^e, m in [0.5, 1)
  const int q = std::max(e, -13) - 11;
  a = std::ldexp(std::nearbyint(std::ldexp(a, -q)), q);
  if (a == 0)
    return sign;
  if (a > 65504)
    return sign | 0x7c00;
  const long double m = std::frexp(a, &e);
  if (e < -13) // subnormal: a multiple of 2^-24
    return sign | uint16_t(std::ldexp(a, 24));
  return sign | uint16_t((e + 14) << 10) | uint16_t(std::ldexp(m, 11) - 1024);
}

inline std::string readInput(const std::string &name) {
  std::ifstream in(std::string(QFUSE_SIM_INPUTS) + "/" + name,
                   std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::unique_ptr<PtxModule> loadInput(const std::string &name,
                                            std::string &error) {
  return PtxModule::parse(readInput(name), error);
}

/// Launches with 64-bit argument values (a u32 parameter takes the low
/// half, as the host is little-endian).
inline std::string launch(const PtxModule &module, const std::string &kernel,
                          Dim3 grid, Dim3 block,
                          std::vector<uint64_t> args, uint32_t dynShared = 0,
                          Dim3 cluster = Dim3()) {
  std::vector<void *> params;
  for (uint64_t &a : args)
    params.push_back(&a);
  LaunchConfig cfg;
  cfg.grid = grid;
  cfg.block = block;
  cfg.cluster = cluster;
  cfg.dynamicSharedBytes = dynShared;
  return module.launch(kernel, cfg, params.data());
}

} // namespace qfuse::sim::test

#endif // QFUSE_UNITTESTS_SIM_SIMTESTUTIL_H
