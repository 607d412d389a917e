//===- RunIdentity.cpp - what decides a quantize run's results ------------===//

#include "qfuse/runtime/gptq/RunIdentity.h"

#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/Error.h"

#include <cerrno>
#include <cstdio>
#include <dlfcn.h>
#include <fcntl.h>
#include <map>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>

namespace qfuse::runtime {
namespace {

struct stat statOrThrow(const std::string &path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error("'" + path + "': cannot stat: " + systemErrorText(errno));
  return st;
}

} // namespace

void RunIdentity::add(const std::string &name, const std::string &value) {
  for (const auto &field : fields)
    if (field.first == name)
      throw Error("run identity: '" + name + "' added twice");
  fields.emplace_back(name, value);
}

void RunIdentity::addFile(const std::string &name, const std::string &path) {
  const struct stat st = statOrThrow(path);
  add(name, std::to_string(st.st_size) + " bytes, fnv1a64 " + fileHash(path));
}

void RunIdentity::addLargeFile(const std::string &name,
                               const std::string &path) {
  const struct stat st = statOrThrow(path);
  const int64_t ns = int64_t(st.st_mtim.tv_sec) * 1000000000 +
                     int64_t(st.st_mtim.tv_nsec);
  add(name, std::to_string(st.st_size) + " bytes, modified " +
                std::to_string(ns));
}

std::string fileHash(const std::string &path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error("'" + path + "': cannot open: " + systemErrorText(errno));
  uint64_t hash = 0xcbf29ce484222325ull;
  std::vector<unsigned char> buffer(1 << 20);
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw Error("'" + path + "': cannot read: " + systemErrorText(error));
    }
    if (n == 0)
      break;
    for (ssize_t i = 0; i < n; ++i)
      hash = (hash ^ buffer[size_t(i)]) * 0x100000001b3ull;
  }
  ::close(fd);
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", (unsigned long long)hash);
  return text;
}

std::string quantizerBuild() {
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void *>(&quantizerBuild), &info) ||
      !info.dli_fname)
    return "unknown (dladdr failed)";
  std::string path = info.dli_fname;
  // The main executable may report a bare or relative argv[0];
  // /proc/self/exe is its file either way.
  if (path.find('/') == std::string::npos || ::access(path.c_str(), R_OK))
    path = "/proc/self/exe";
  std::string name = path == "/proc/self/exe" ? "" : path;
  if (name.empty()) {
    char target[4096];
    const ssize_t n = ::readlink(path.c_str(), target, sizeof(target) - 1);
    name = n > 0 ? std::string(target, size_t(n)) : path;
  }
  // The file name and its bytes: the same build anywhere it is copied.
  return name.substr(name.rfind('/') + 1) + ", fnv1a64 " + fileHash(path);
}

std::string differences(const RunIdentity &recorded, const RunIdentity &now) {
  std::map<std::string, std::string> then(recorded.fields.begin(),
                                          recorded.fields.end());
  std::string text;
  for (const auto &[name, value] : now.fields) {
    auto it = then.find(name);
    if (it == then.end())
      text += "  " + name + ": not in the progress, '" + value + "' now\n";
    else if (it->second != value)
      text += "  " + name + ": '" + it->second + "' in the progress, '" +
              value + "' now\n";
    if (it != then.end())
      then.erase(it);
  }
  for (const auto &[name, value] : then)
    text += "  " + name + ": '" + value + "' in the progress, not now\n";
  return text;
}

} // namespace qfuse::runtime
