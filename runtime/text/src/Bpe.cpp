//===- Bpe.cpp - The BPE model of a tokenizer.json ------------------------===//
//
// Merging repeatedly applies the lowest-ranked merge among adjacent symbols,
// the leftmost one on ties, with a heap over a linked list of symbols: the
// order Hugging Face's Rust and JavaScript implementations both produce.
//
//===----------------------------------------------------------------------===//

#include "Bpe.h"
#include "JsonInteger.h"

#include "qfuse/text/TokenizerError.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <queue>

namespace qfuse::text {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string &file, const std::string &what) {
  throw TokenizerError(file + ": model: " + what);
}

uint64_t pairKey(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) |
         static_cast<uint32_t>(b);
}

size_t utf8Length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

std::string byteToken(unsigned b) {
  static const char *hex = "0123456789ABCDEF";
  return std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">";
}

} // namespace

int32_t readTokenId(const json &value, const std::string &file,
                    const std::string &what) {
  if (!isIntegerUpTo(value, kMaxTokenId))
    throw TokenizerError(file + ": " + what + " has id " + value.dump() +
                         "; expected an integer from 0 to " +
                         std::to_string(kMaxTokenId));
  return static_cast<int32_t>(value.get<int64_t>());
}

BpeModel BpeModel::fromJson(const json &model, const std::string &file) {
  if (!model.is_object())
    fail(file, "expected an object");
  std::string type = model.value("type", std::string("BPE"));
  if (type != "BPE")
    fail(file, "model type '" + type +
                   "' is not supported (supported: BPE)");
  if (model.contains("dropout") && !model["dropout"].is_null() &&
      model["dropout"].get<double>() != 0.0)
    fail(file, "BPE dropout is not supported");
  for (const char *key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (model.contains(key) && model[key].is_string() &&
        !model[key].get<std::string>().empty())
      fail(file, std::string("BPE '") + key + "' is not supported");
  }

  BpeModel m;
  const json &vocab = model.at("vocab");
  if (!vocab.is_object())
    fail(file, "'vocab' must be an object of token -> id");
  m.vocab_.reserve(vocab.size());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    const int32_t id =
        readTokenId(it.value(), file, "model: vocab token '" + it.key() + "'");
    m.vocab_[it.key()] = static_cast<int32_t>(id);
    if (static_cast<size_t>(id) >= m.tokens_.size()) {
      m.tokens_.resize(id + 1);
      m.hasToken_.resize(id + 1, false);
    }
    m.tokens_[id] = it.key();
    m.hasToken_[id] = true;
  }

  const json &merges = model.at("merges");
  m.merges_.reserve(merges.size());
  int32_t rank = 0;
  for (const json &merge : merges) {
    std::string left, right;
    if (merge.is_string()) {
      // Older files: "left right".
      const std::string &s = merge.get_ref<const std::string &>();
      size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
        fail(file, "merge " + std::to_string(rank) + " '" + s +
                       "' is not two tokens separated by one space");
      left = s.substr(0, space);
      right = s.substr(space + 1);
    } else if (merge.is_array() && merge.size() == 2) {
      left = merge[0].get<std::string>();
      right = merge[1].get<std::string>();
    } else {
      fail(file, "merge " + std::to_string(rank) + " is neither \"a b\" nor [a, b]");
    }
    auto a = m.vocab_.find(left), b = m.vocab_.find(right),
         ab = m.vocab_.find(left + right);
    if (a == m.vocab_.end() || b == m.vocab_.end() || ab == m.vocab_.end())
      fail(file, "merge " + std::to_string(rank) + " ('" + left + "', '" +
                     right + "') uses or makes a token outside the vocab");
    m.merges_[pairKey(a->second, b->second)] = {rank, ab->second};
    ++rank;
  }

  if (model.contains("unk_token") && model["unk_token"].is_string()) {
    const std::string &unk = model["unk_token"].get_ref<const std::string &>();
    auto it = m.vocab_.find(unk);
    if (it == m.vocab_.end())
      fail(file, "unk_token '" + unk + "' is not in the vocab");
    m.unkId_ = it->second;
  }
  auto flag = [&](const char *key) {
    return model.contains(key) && model[key].is_boolean() && model[key].get<bool>();
  };
  m.byteFallback_ = flag("byte_fallback");
  m.fuseUnk_ = flag("fuse_unk");
  m.ignoreMerges_ = flag("ignore_merges");
  for (unsigned b = 0; b < 256; ++b) {
    auto it = m.vocab_.find(byteToken(b));
    m.byteIds_[b] = it == m.vocab_.end() ? -1 : it->second;
  }
  return m;
}

std::optional<int32_t> BpeModel::tokenToId(const std::string &token) const {
  auto it = vocab_.find(token);
  if (it == vocab_.end())
    return std::nullopt;
  return it->second;
}

const std::string *BpeModel::idToToken(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= tokens_.size() || !hasToken_[id])
    return nullptr;
  return &tokens_[id];
}

void BpeModel::appendUnknown(std::string_view character,
                             std::vector<int32_t> &out) const {
  if (byteFallback_) {
    bool all = true;
    for (unsigned char b : character)
      all = all && byteIds_[b] >= 0;
    if (all) {
      for (unsigned char b : character)
        out.push_back(byteIds_[b]);
      return;
    }
  }
  if (!unkId_)
    throw TokenizerError("BPE: character '" + std::string(character) +
                         "' is not in the vocab and the model has no "
                         "unk_token" +
                         (byteFallback_ ? " or <0xNN> byte tokens" : ""));
  out.push_back(*unkId_);
}

void BpeModel::encodeWord(std::string_view word,
                          std::vector<int32_t> &out) const {
  if (word.empty())
    return;
  if (ignoreMerges_) {
    auto it = vocab_.find(std::string(word));
    if (it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }

  struct Symbol {
    int32_t id; // -1: a character outside the vocab
    int prev, next;
    size_t begin, size; // bytes of `word`
    bool alive;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  for (size_t i = 0; i < word.size();) {
    size_t len = std::min(utf8Length(word[i]), word.size() - i);
    auto it = vocab_.find(std::string(word.substr(i, len)));
    int index = static_cast<int>(symbols.size());
    symbols.push_back({it == vocab_.end() ? -1 : it->second, index - 1,
                       index + 1, i, len, true});
    i += len;
  }
  symbols.back().next = -1;

  struct Candidate {
    int32_t rank;
    int left, right;
    int32_t leftId, rightId;
    bool operator>(const Candidate &o) const {
      return rank != o.rank ? rank > o.rank : left > o.left;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto consider = [&](int left) {
    if (left < 0)
      return;
    int right = symbols[left].next;
    if (right < 0 || symbols[left].id < 0 || symbols[right].id < 0)
      return;
    auto it = merges_.find(pairKey(symbols[left].id, symbols[right].id));
    if (it != merges_.end())
      heap.push({it->second.first, left, right, symbols[left].id,
                 symbols[right].id});
  };
  for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i)
    consider(i);

  while (!heap.empty()) {
    Candidate c = heap.top();
    heap.pop();
    Symbol &l = symbols[c.left];
    if (!l.alive || l.next != c.right || l.id != c.leftId ||
        symbols[c.right].id != c.rightId || !symbols[c.right].alive)
      continue;
    Symbol &r = symbols[c.right];
    l.id = merges_.at(pairKey(c.leftId, c.rightId)).second;
    l.size += r.size;
    l.next = r.next;
    r.alive = false;
    if (l.next >= 0)
      symbols[l.next].prev = c.left;
    consider(l.prev);
    consider(c.left);
  }

  for (int i = 0; i >= 0; i = symbols[i].next) {
    const Symbol &s = symbols[i];
    if (s.id >= 0)
      out.push_back(s.id);
    else
      appendUnknown(word.substr(s.begin, s.size), out);
  }
}

} // namespace qfuse::text
