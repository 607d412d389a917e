//===- TextTestUtil.h - Temporary folders for the text tests ----*- C++ -*-===//

#ifndef QFUSE_UNITTESTS_TEXT_TEXTTESTUTIL_H
#define QFUSE_UNITTESTS_TEXT_TEXTTESTUTIL_H

#include <cstdlib>
#include <fstream>
#include <string>

namespace qfuse::text::test {

/// A fresh temporary folder, removed with its files.
class ScratchDir {
public:
  ScratchDir() {
    char pattern[] = "/tmp/qfuse-text-XXXXXX";
    dir_ = mkdtemp(pattern);
  }
  ~ScratchDir() { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  void write(const std::string &name, const std::string &text) const {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << text;
  }
  const std::string &path() const { return dir_; }

private:
  std::string dir_;
};

} // namespace qfuse::text::test

#endif // QFUSE_UNITTESTS_TEXT_TEXTTESTUTIL_H
