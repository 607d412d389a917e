//===- TempFiles.h - scratch directories and files for the tests -*- C++ -*-===//
//
// What the checkpoint and file-writing tests share: a fresh directory under
// the test's temporary directory, a file's bytes, a directory's names and
// contents, and an expected qfuse::Error whose message holds every given fragment.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_UNITTESTS_RUNTIME_TEMPFILES_H
#define QFUSE_UNITTESTS_RUNTIME_TEMPFILES_H

#include "qfuse/runtime/Error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace qfuse::testing {

/// A new directory named `<prefix>-XXXXXX` under gtest's TempDir().
inline std::string makeTempDir(const std::string &prefix) {
  std::string pattern = ::testing::TempDir() + prefix + "-XXXXXX";
  if (!mkdtemp(pattern.data()))
    throw qfuse::Error("mkdtemp failed");
  return pattern;
}

inline std::vector<uint8_t> readFileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The names in `dir`, sorted.
inline std::vector<std::string> listDir(const std::string &dir) {
  std::vector<std::string> names;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// Every file of `dir`, by name, with its bytes.
inline std::map<std::string, std::string> filesOf(const std::string &dir) {
  std::map<std::string, std::string> files;
  for (const auto &entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    files[entry.path().filename().string()] = bytes.str();
  }
  return files;
}

/// `body` must throw a qfuse::Error whose message holds every fragment.
inline void expectError(const std::function<void()> &body,
                        std::initializer_list<std::string> fragments) {
  try {
    body();
    ADD_FAILURE() << "no error";
  } catch (const qfuse::Error &e) {
    const std::string message = e.what();
    for (const std::string &fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "'" << fragment << "' not in: " << message;
  }
}

} // namespace qfuse::testing

#endif // QFUSE_UNITTESTS_RUNTIME_TEMPFILES_H
