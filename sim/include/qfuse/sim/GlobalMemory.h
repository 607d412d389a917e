//===- GlobalMemory.h - host ranges a simulated kernel may touch -*- C++ -*-===//
//
// The simulated driver's device memory is host memory. Every range a kernel
// may read or write as global memory is registered here (device and pinned
// host allocations, a module's .global variables); an access outside all of
// them fails the launch with the address, instead of corrupting the host.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_SIM_GLOBALMEMORY_H
#define QFUSE_SIM_GLOBALMEMORY_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace qfuse::sim {

class GlobalMemory {
public:
  /// The process's one registry (thread-safe).
  static GlobalMemory &instance();

  void add(const void *base, size_t bytes, std::string label);
  void remove(const void *base);
  /// Whether [p, p + bytes) lies inside one registered range.
  bool contains(const void *p, size_t bytes) const;
  /// Whether [p, p + bytes) lies inside one registered range, and which:
  /// [base, base + size). Lets a caller check later accesses to that range
  /// without the lock.
  bool rangeOf(const void *p, size_t bytes, uintptr_t &base,
               size_t &size) const;
  /// The size of the range starting exactly at `base`, or 0.
  size_t sizeAt(const void *base) const;
  /// "0x... is N bytes past the end of <label> (M bytes at 0x...)", or
  /// "0x... is in no allocation": for error messages.
  std::string describe(const void *p) const;

private:
  GlobalMemory() = default;
};

} // namespace qfuse::sim

#endif // QFUSE_SIM_GLOBALMEMORY_H
