//===- GlobalMemory.cpp - host ranges a simulated kernel may touch --------===//

#include "qfuse/sim/GlobalMemory.h"

#include <cstdio>
#include <iterator>
#include <map>
#include <mutex>
#include <shared_mutex>

namespace qfuse::sim {
namespace {

struct Range {
  size_t bytes;
  std::string label;
};

// Ranges by base address; a kernel's checks only read, so they share the lock.
std::shared_mutex rangesLock;
std::map<uintptr_t, Range> ranges;

// The range holding p, or ranges.end().
std::map<uintptr_t, Range>::const_iterator find(uintptr_t p) {
  auto it = ranges.upper_bound(p);
  if (it == ranges.begin())
    return ranges.end();
  --it;
  return p < it->first + it->second.bytes ? it : ranges.end();
}

std::string hex(uintptr_t p) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx",
                static_cast<unsigned long long>(p));
  return text;
}

} // namespace

GlobalMemory &GlobalMemory::instance() {
  static GlobalMemory memory;
  return memory;
}

void GlobalMemory::add(const void *base, size_t bytes, std::string label) {
  std::unique_lock lock(rangesLock);
  ranges[reinterpret_cast<uintptr_t>(base)] = Range{bytes, std::move(label)};
}

void GlobalMemory::remove(const void *base) {
  std::unique_lock lock(rangesLock);
  ranges.erase(reinterpret_cast<uintptr_t>(base));
}

bool GlobalMemory::contains(const void *p, size_t bytes) const {
  uintptr_t address = reinterpret_cast<uintptr_t>(p);
  std::shared_lock lock(rangesLock);
  auto it = find(address);
  return it != ranges.end() &&
         address + bytes <= it->first + it->second.bytes;
}

bool GlobalMemory::rangeOf(const void *p, size_t bytes, uintptr_t &base,
                           size_t &size) const {
  uintptr_t address = reinterpret_cast<uintptr_t>(p);
  std::shared_lock lock(rangesLock);
  auto it = find(address);
  if (it == ranges.end() || address + bytes > it->first + it->second.bytes)
    return false;
  base = it->first;
  size = it->second.bytes;
  return true;
}

size_t GlobalMemory::sizeAt(const void *base) const {
  std::shared_lock lock(rangesLock);
  auto it = ranges.find(reinterpret_cast<uintptr_t>(base));
  return it == ranges.end() ? 0 : it->second.bytes;
}

std::string GlobalMemory::describe(const void *p) const {
  uintptr_t address = reinterpret_cast<uintptr_t>(p);
  std::shared_lock lock(rangesLock);
  auto it = find(address);
  if (it != ranges.end())
    return hex(address) + " is " + std::to_string(address - it->first) +
           " bytes into " + it->second.label + " (" +
           std::to_string(it->second.bytes) + " bytes)";
  auto next = ranges.upper_bound(address);
  if (next != ranges.begin()) {
    auto before = std::prev(next);
    return hex(address) + " is " +
           std::to_string(address - before->first - before->second.bytes) +
           " bytes past the end of " + before->second.label + " (" +
           std::to_string(before->second.bytes) + " bytes at " +
           hex(before->first) + ")";
  }
  return hex(address) + " is in no allocation";
}

} // namespace qfuse::sim
