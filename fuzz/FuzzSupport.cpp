//===- FuzzSupport.cpp - Scratch files for the libFuzzer harnesses ---------===//

#include "FuzzSupport.h"

#include <cstdio>

#include <unistd.h>

namespace qfuse::fuzz {

ScratchDir &ScratchDir::get() {
  static ScratchDir dir;
  return dir;
}

ScratchDir::ScratchDir() {
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") +
                        "/qfuse-fuzz-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (!mkdtemp(buffer.data())) {
    std::perror(pattern.c_str());
    std::abort();
  }
  path_ = buffer.data();
}

ScratchDir::~ScratchDir() {
  clear();
  rmdir(path_.c_str());
}

void ScratchDir::clear() {
  for (const std::string &file : written_)
    unlink(file.c_str());
  written_.clear();
}

std::string ScratchDir::write(const std::string &name,
                              std::string_view bytes) {
  std::string file = path_ + "/" + name;
  FILE *out = std::fopen(file.c_str(), "wb");
  if (!out || std::fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size() ||
      std::fclose(out) != 0) {
    std::perror(file.c_str());
    std::abort();
  }
  written_.push_back(file);
  return file;
}

} // namespace qfuse::fuzz
