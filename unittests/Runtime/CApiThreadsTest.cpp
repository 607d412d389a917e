//===- CApiThreadsTest.cpp - the C API from many threads, without a GPU ---===//
//
// qfuse.h's "Threads" rules on what needs no device: errors are per thread
// and name each thread's own input; artifacts validate, encodings
// canonicalize and opens fail at once from every thread; tokenizers give
// the single-threaded results on a handle per thread and on one shared
// handle, whose returned text is per thread; streams on one tokenizer run at
// once. Built with -DQFUSE_SANITIZE=thread, ThreadSanitizer checks the same
// runs for data races (docs/threads.md).
//
//===----------------------------------------------------------------------===//

#include "ValidArtifact.h"

#include "qfuse/runtime/qfuse.h"
#include "qfuse/text/SyntheticTokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 8;
constexpr int kRounds = 40;

/// body(t) on kThreads threads at once; the number of failed checks.
int onThreads(const std::function<int(int)> &body) {
  std::atomic<int> failures{0};
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      ++ready;
      while (ready < kThreads) // start together
        std::this_thread::yield();
      failures += body(t);
    });
  for (std::thread &thread : threads)
    thread.join();
  return failures;
}

std::string tempDir() {
  std::string pattern = ::testing::TempDir() + "qfuse-capi-threads-XXXXXX";
  if (!mkdtemp(pattern.data()))
    std::abort();
  return pattern;
}

std::string writeFile(const std::string &path, const std::string &text) {
  std::ofstream(path) << text;
  return path;
}

bool contains(const char *text, const std::string &part) {
  return text && std::string(text).find(part) != std::string::npos;
}

TEST(CApiThreads, ErrorsArePerThread) {
  const std::string dir = tempDir();
  const std::string valid = writeFile(dir + "/valid.qfa",
                                      qfuse::testing::kValidArtifact);
  const int failures = onThreads([&](int t) {
    int bad = 0;
    const std::string missing = dir + "/missing-" + std::to_string(t) + ".qfa";
    char out[256];
    for (int r = 0; r < kRounds; ++r) {
      bad += qfuse_validate_artifact(missing.c_str()) != -1;
      bad += !contains(qfuse_last_error(), missing);
      bad += qfuse_canonical_encoding("int4-g128", out, sizeof out) != 0;
      bad += std::string(qfuse_last_error()) != "";
      bad += std::string(out) != "int4, group = 128, scale = f16";
      const std::string wrong = "int" + std::to_string(50 + t);
      bad += qfuse_canonical_encoding(wrong.c_str(), out, sizeof out) != -1;
      bad += !contains(qfuse_last_error(), "'" + wrong + "'");
      bad += qfuse_validate_artifact(valid.c_str()) != 0;
      bad += std::string(qfuse_last_error()) != "";
    }
    return bad;
  });
  EXPECT_EQ(failures, 0);
}

TEST(CApiThreads, OpenQuantizeAndDeviceCountAtOnce) {
  const int devices = qfuse_device_count();
  const int failures = onThreads([&](int t) {
    int bad = 0;
    const std::string path = "/nonexistent/model-" + std::to_string(t) + ".qfa";
    const std::string key = "modle" + std::to_string(t);
    const std::string options = "{\"" + key + "\": 1}";
    char report[64];
    for (int r = 0; r < kRounds / 4; ++r) {
      bad += qfuse_open(path.c_str(), 0) != nullptr;
      bad += !contains(qfuse_last_error(), path);
      bad += qfuse_quantize(options.c_str(), report, sizeof report) != -1;
      bad += !contains(qfuse_last_error(), "unknown option '" + key + "'");
      bad += qfuse_device_count() != devices;
    }
    return bad;
  });
  EXPECT_EQ(failures, 0);
}

struct Expected {
  std::vector<std::vector<int32_t>> ids;
  std::vector<std::string> decoded;
  std::string chat;
  std::vector<int32_t> stops;
};

const char *kTexts[] = {"Once upon a time", "the quick brown fox jumps",
                        "déjà vu, naïve café 🙂", "1234 + 5678 = 6912",
                        "  spaces\tand\nnewlines  "};

Expected expectedFor(qfuse_tokenizer *tok) {
  Expected e;
  for (const char *text : kTexts) {
    int32_t ids[256];
    const int64_t n = qfuse_tokenizer_encode(tok, text, std::strlen(text), 1,
                                             ids, 256);
    EXPECT_GT(n, 0) << qfuse_last_error();
    e.ids.emplace_back(ids, ids + n);
    size_t length = 0;
    const char *back = qfuse_tokenizer_decode(tok, ids, size_t(n), 1, &length);
    e.decoded.emplace_back(back ? std::string(back, length) : "");
  }
  size_t length = 0;
  const char *chat = qfuse_tokenizer_chat(tok, "Be brief.", "Hi", &length);
  e.chat = chat ? std::string(chat, length) : qfuse_last_error();
  int32_t stops[16];
  const int64_t n = qfuse_tokenizer_stop_ids(tok, 1, stops, 16);
  e.stops.assign(stops, stops + std::max<int64_t>(n, 0));
  return e;
}

int checkTokenizer(qfuse_tokenizer *tok, const Expected &e) {
  int bad = 0;
  for (int r = 0; r < kRounds; ++r) {
    const size_t i = size_t(r) % e.ids.size();
    const char *text = kTexts[i];
    int32_t ids[256];
    const int64_t n = qfuse_tokenizer_encode(tok, text, std::strlen(text), 1,
                                             ids, 256);
    bad += std::vector<int32_t>(ids, ids + std::max<int64_t>(n, 0)) != e.ids[i];
    size_t length = 0;
    const char *back = qfuse_tokenizer_decode(tok, ids, size_t(n), 1, &length);
    bad += !back || std::string(back, length) != e.decoded[i];
    const char *chat = qfuse_tokenizer_chat(tok, "Be brief.", "Hi", &length);
    bad += !chat || std::string(chat, length) != e.chat;
    // The decode's text is this thread's: the chat call replaced it, and
    // another thread's calls never do.
    int32_t stops[16];
    const int64_t m = qfuse_tokenizer_stop_ids(tok, 1, stops, 16);
    bad += std::vector<int32_t>(stops, stops + std::max<int64_t>(m, 0)) != e.stops;
  }
  return bad;
}

TEST(CApiThreads, TokenizersOnSeparateAndSharedHandles) {
  const std::string dir = tempDir();
  qfuse::text::writeSyntheticTokenizer(dir, 1024);
  qfuse_tokenizer *shared = qfuse_tokenizer_open(dir.c_str());
  ASSERT_NE(shared, nullptr) << qfuse_last_error();
  const Expected expected = expectedFor(shared);
  ASSERT_FALSE(expected.chat.empty());
  const int failures = onThreads([&](int t) {
    if (t % 2 == 0)
      return checkTokenizer(shared, expected);
    qfuse_tokenizer *own = qfuse_tokenizer_open(dir.c_str());
    if (!own)
      return 1;
    const int bad = checkTokenizer(own, expected);
    qfuse_tokenizer_close(own);
    return bad;
  });
  EXPECT_EQ(failures, 0);
  qfuse_tokenizer_close(shared);
}

TEST(CApiThreads, StreamsOnOneTokenizer) {
  const std::string dir = tempDir();
  qfuse::text::writeSyntheticTokenizer(dir, 1024);
  qfuse_tokenizer *tok = qfuse_tokenizer_open(dir.c_str());
  ASSERT_NE(tok, nullptr) << qfuse_last_error();
  const Expected expected = expectedFor(tok);
  const int failures = onThreads([&](int t) {
    int bad = 0;
    for (int r = 0; r < kRounds / 4; ++r) {
      const size_t i = size_t(t + r) % expected.ids.size();
      qfuse_text_stream *stream = qfuse_text_stream_open(tok);
      if (!stream)
        return bad + 1;
      std::string text;
      size_t length = 0;
      for (int32_t id : expected.ids[i]) {
        const char *piece = qfuse_text_stream_push(stream, id, &length);
        bad += !piece;
        text.append(piece ? piece : "", piece ? length : 0);
      }
      const char *rest = qfuse_text_stream_finish(stream, &length);
      text.append(rest ? rest : "", rest ? length : 0);
      bad += text != expected.decoded[i];
      qfuse_text_stream_close(stream);
    }
    return bad;
  });
  EXPECT_EQ(failures, 0);
  qfuse_tokenizer_close(tok);
}

} // namespace
