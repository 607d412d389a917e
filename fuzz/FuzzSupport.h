//===- FuzzSupport.h - What the libFuzzer harnesses share -------*- C++ -*-===//
//
// Inputs that stand for several files (a model directory, a tokenizer with
// its config) are the files' bytes joined by kPartSeparator, a string no
// JSON text holds; ScratchDir writes them where the readers under test
// expect them. A harness catches only the errors the code under test
// documents (qfuse::Error, TokenizerError, a `false` with a message):
// anything else, a crash, a sanitizer report, a hang or an allocation past
// libFuzzer's -rss_limit_mb, is a finding (docs/fuzzing.md).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FUZZ_FUZZSUPPORT_H
#define QFUSE_FUZZ_FUZZSUPPORT_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace qfuse::fuzz {

/// Between the files of one input: NUL bytes never occur in JSON text.
inline constexpr std::string_view kPartSeparator{"\0--file--\0", 10};

/// The files of one input, in order (one part when there is no separator).
inline std::vector<std::string_view> splitParts(const uint8_t *data,
                                                size_t size) {
  std::string_view all(reinterpret_cast<const char *>(data), size);
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (true) {
    size_t at = all.find(kPartSeparator, begin);
    if (at == std::string_view::npos) {
      parts.push_back(all.substr(begin));
      return parts;
    }
    parts.push_back(all.substr(begin, at - begin));
    begin = at + kPartSeparator.size();
  }
}

/// A property the code under test documents does not hold: report it the
/// way libFuzzer reports a crash, with the input saved.
[[noreturn]] inline void propertyFailed(const std::string &what) {
  std::fprintf(stderr, "qfuse-fuzz: property violated: %s\n", what.c_str());
  std::abort();
}

/// One directory per process under $TMPDIR (default /tmp), emptied before
/// each input and removed at exit.
class ScratchDir {
public:
  static ScratchDir &get();

  const std::string &path() const { return path_; }
  /// Removes every file written since the last clear().
  void clear();
  /// Writes `bytes` to path()/name and returns the full path.
  std::string write(const std::string &name, std::string_view bytes);

private:
  ScratchDir();
  ~ScratchDir();
  std::string path_;
  std::vector<std::string> written_;
};

} // namespace qfuse::fuzz

#endif // QFUSE_FUZZ_FUZZSUPPORT_H
