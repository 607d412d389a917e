//===- Layout.cpp - #qf.layout text and the repack into kernel layouts ----===//
//
// The text of #qf.layout, its verification (which the dialect's LayoutAttr
// and WeightType verifiers call), and the repack between the row-major
// checkpoint order and the kernel layouts documented in Layout.h.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Layout.h"

#include "qfuse/format/MmaLayout.h"
#include "qfuse/format/SparseMmaLayout.h"

#include <cctype>

namespace qfuse::format {
namespace {

bool fail(std::string &error, const std::string &message) {
  error = message;
  return false;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

/// "key = value" with a decimal value.
bool parseIntegerEntry(std::string_view entry, std::string &key,
                       int64_t &value, bool &hasValue) {
  size_t eq = entry.find('=');
  key = std::string(trim(entry.substr(0, eq)));
  hasValue = eq != std::string_view::npos;
  if (!hasValue)
    return true;
  std::string_view text = trim(entry.substr(eq + 1));
  bool negative = !text.empty() && text.front() == '-';
  if (negative)
    text.remove_prefix(1);
  if (text.empty() || text.size() > 18)
    return false;
  value = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return false;
    value = value * 10 + (c - '0');
  }
  value = negative ? -value : value;
  return true;
}

/// Whether `layout` is one repack() knows for `enc`, and why not.
bool checkRepackable(const Encoding &enc, const Layout &layout, int64_t n,
                     int64_t k, std::string &error) {
  if (!verifyWeight(enc, layout, n, k, error))
    return false;
  if (layout.isRowMajor())
    return true;
  if (isSparseMmaLayout(layout)) { // any N, K: whole tiles, padded
    if (!enc.isSparse24() || !isSparseMmaCodeBits(codeBits(enc)))
      return fail(error, "the 2:4 fragment layout <" + printLayout(layout) +
                             "> is defined for 2:4 weights of 4-, 8- and "
                             "16-bit kept values, not <" +
                             printEncoding(enc) + ">");
    return true;
  }
  if (isMmaFragmentLayout(layout)) { // any N, K: whole tiles, padded
    if (!isMmaCodeBits(codeBits(enc)) || enc.isSparse24())
      return fail(error, "the mma fragment layout <" + printLayout(layout) +
                             "> is defined for dense 2-, 3-, 4- and 8-bit "
                             "codes, "
                             "not <" +
                             printEncoding(enc) + ">");
    return true;
  }
  if (codeBits(enc) != 4 || layout.tileN != 1 || layout.interleave != 1)
    return fail(error, "the byte order of <" + printLayout(layout) +
                           "> is not defined for <" + printEncoding(enc) +
                           ">: tiled layouts are defined for 4-bit codes with "
                           "tile_n = 1 (matvec) or tile_n = tile_k = 32 (mma) "
                           "and interleave = 1");
  if (rowBytes(enc, k) % 4 != 0 || (layout.tileK * 4) % 32 != 0)
    return fail(error, "the tiled 4-bit layout reorders whole 32-bit words; "
                       "a row of " +
                           std::to_string(rowBytes(enc, k)) +
                           " bytes or tile_k = " + std::to_string(layout.tileK) +
                           " is not whole words");
  return true;
}

/// Applies the nibble permutation (or its inverse) to every 32-bit word.
void permuteWords(std::vector<uint8_t> &bytes, bool toTiled) {
  for (size_t w = 0; w + 4 <= bytes.size(); w += 4) {
    uint32_t in = uint32_t(bytes[w]) | uint32_t(bytes[w + 1]) << 8 |
                  uint32_t(bytes[w + 2]) << 16 | uint32_t(bytes[w + 3]) << 24;
    uint32_t out = 0;
    for (int slot = 0; slot < 8; ++slot) {
      int element = kNibbleOrder[slot];
      if (toTiled) // slot <- element
        out |= ((in >> (4 * element)) & 0xF) << (4 * slot);
      else // element <- slot
        out |= ((in >> (4 * slot)) & 0xF) << (4 * element);
    }
    for (int b = 0; b < 4; ++b)
      bytes[w + b] = uint8_t(out >> (8 * b));
  }
}

/// Moves the codes of every row between checkpoint and sorted column order:
/// sorted column j <- checkpoint column perm[j] (or back).
void permuteColumns(std::vector<uint8_t> &bytes, int64_t n, int64_t rowBytes,
                    unsigned bits, const std::vector<int32_t> &perm,
                    bool toSorted) {
  std::vector<uint8_t> result(bytes.size(), 0);
  const int64_t k = int64_t(perm.size());
  for (int64_t row = 0; row < n; ++row) {
    const uint8_t *src = bytes.data() + row * rowBytes;
    uint8_t *dst = result.data() + row * rowBytes;
    for (int64_t j = 0; j < k; ++j) {
      if (toSorted)
        putBits(dst, j, bits, getBits(src, perm[j], bits));
      else
        putBits(dst, perm[j], bits, getBits(src, j, bits));
    }
  }
  bytes = std::move(result);
}

/// Checks that component `name` of `components` is I32 [K].
bool checkOrderShape(const TensorMap &components, const char *name, int64_t k,
                     std::string &error) {
  const Tensor &t = components.at(name);
  if (t.dtype == DType::I32 && t.shape == std::vector<int64_t>{k})
    return true;
  return fail(error, "component '" + std::string(name) + "' must be " +
                         describe(DType::I32, {k}) + ", found " +
                         describe(t.dtype, t.shape));
}

/// Moves an act_order weight's sorted column order out of `components`
/// (unrepack): "perm", which must be a permutation of 0..K-1, and
/// "inv_perm" when present (older layouts lack it), which must be its
/// inverse: a wrong one would scatter a producer's output elsewhere than
/// this weight's kernel reads it.
bool takeSortedOrder(TensorMap &components, int64_t k,
                     std::vector<int32_t> &perm, std::string &error) {
  if (!components.count(kPerm))
    return fail(error, "act_order weight in a kernel layout has no '" +
                           std::string(kPerm) + "' component");
  if (!checkOrderShape(components, kPerm, k, error))
    return false;
  perm = int32Values(components.at(kPerm));
  components.erase(kPerm);
  std::vector<bool> seen(static_cast<size_t>(k), false);
  for (int64_t j = 0; j < k; ++j) {
    if (perm[j] < 0 || perm[j] >= k || seen[perm[j]])
      return fail(error, "'" + std::string(kPerm) +
                             "' is not a permutation of 0.." +
                             std::to_string(k - 1) + ": entry " +
                             std::to_string(j) + " = " +
                             std::to_string(perm[j]));
    seen[perm[j]] = true;
  }
  if (!components.count(kInvPerm))
    return true;
  if (!checkOrderShape(components, kInvPerm, k, error))
    return false;
  const std::vector<int32_t> inv = int32Values(components.at(kInvPerm));
  components.erase(kInvPerm);
  for (int64_t j = 0; j < k; ++j)
    if (inv[perm[j]] != j)
      return fail(error, "'" + std::string(kInvPerm) +
                             "' is not the inverse of '" +
                             std::string(kPerm) + "': entry " +
                             std::to_string(perm[j]) + " = " +
                             std::to_string(inv[perm[j]]) + ", expected " +
                             std::to_string(j));
  return true;
}

/// The 2:4 fragment layout (SparseMmaLayout.h): codes and metadata move
/// together; the other components keep their row-major bytes.
bool convertSparseMma(const Encoding &enc, const TensorMap &in, int64_t n,
                      int64_t k, TensorMap &out, std::string &error,
                      bool toTiled) {
  TensorMap result = in;
  const unsigned bits = codeBits(enc);
  const std::vector<int64_t> codesShape = {
      sparseMmaPaddedN(n), sparseMmaPaddedK(k) / 2 * int64_t(bits) / 8};
  const std::vector<int64_t> metaShape = {sparseMmaPaddedN(n),
                                          sparseMmaPaddedK(k) / 8};
  if (!toTiled) {
    for (auto [name, shape] : {std::pair{kCodes, codesShape},
                               std::pair{kMetadata, metaShape}}) {
      auto it = result.find(name);
      if (it == result.end())
        return fail(error, "missing component '" + std::string(name) + "'");
      if (it->second.dtype != DType::U8 || it->second.shape != shape)
        return fail(error, "component '" + std::string(name) +
                               "' in the 2:4 fragment layout must be " +
                               describe(DType::U8, shape) +
                               " (whole 32x128 tiles), found " +
                               describe(it->second.dtype, it->second.shape));
    }
  } else if (!checkComponents(enc, result, n, k, error)) {
    return false;
  }
  Tensor &codes = result[kCodes], &meta = result[kMetadata];
  std::vector<uint8_t> codesIn = codes.data, metaIn = meta.data;
  if (toTiled) {
    packSparseMma(codesIn, metaIn, n, k, bits, codes.data, meta.data);
    codes.shape = codesShape;
    meta.shape = metaShape;
  } else {
    unpackSparseMma(codesIn, metaIn, n, k, bits, codes.data, meta.data);
    codes.shape = {n, rowBytes(enc, k)};
    meta.shape = {n, (k + 7) / 8};
    if (!checkComponents(enc, result, n, k, error))
      return false;
  }
  out = std::move(result);
  return true;
}

bool convert(const Encoding &enc, const Layout &layout, const TensorMap &in,
             int64_t n, int64_t k, TensorMap &out, std::string &error,
             bool toTiled) {
  if (isSparseMmaLayout(layout) && enc.isSparse24()) {
    if (!checkRepackable(enc, layout, n, k, error))
      return false;
    return convertSparseMma(enc, in, n, k, out, error, toTiled);
  }
  TensorMap result = in;
  std::vector<int32_t> perm;
  if (!toTiled && sortsColumns(enc) && !takeSortedOrder(result, k, perm, error))
    return false;
  if (!checkRepackable(enc, layout, n, k, error))
    return false;
  // The fragment layout's codes are whole tiles (MmaLayout.h): back to
  // row-major order first, so that every component has its row-major shape.
  const bool fragment = isMmaFragmentLayout(layout);
  const unsigned bits = codeBits(enc);
  const std::vector<int64_t> fragmentShape =
      layoutComponentShape(enc, layout, {kCodes, DType::U8, {}}, n, k);
  if (!toTiled && fragment) {
    auto it = result.find(kCodes);
    if (it != result.end()) {
      if (it->second.dtype != DType::U8 || it->second.shape != fragmentShape)
        return fail(error, "component '" + std::string(kCodes) +
                               "' in the mma fragment layout must be " +
                               describe(DType::U8, fragmentShape) +
                               " (whole 32x32 tiles), found " +
                               describe(it->second.dtype, it->second.shape));
      unpackMmaCodes(std::vector<uint8_t>(it->second.data), n, k, bits,
                     it->second.data);
      it->second.shape = {n, rowBytes(enc, k)};
    }
  }
  if (!checkComponents(enc, result, n, k, error))
    return false;
  const int64_t bytesPerRow = rowBytes(enc, k);
  if (toTiled) {
    if (sortsColumns(enc)) {
      if (!actOrderPermutation(int32Values(result.at(kGIdx)).data(), k,
                               enc.groupSize, perm, error))
        return false;
      permuteColumns(result[kCodes].data, n, bytesPerRow, codeBits(enc), perm,
                     /*toSorted=*/true);
      putSortedOrder(result, perm);
    }
    if (fragment) {
      packMmaCodes(std::vector<uint8_t>(result[kCodes].data), n, k, bits,
                   result[kCodes].data);
      result[kCodes].shape = fragmentShape;
    } else if (!layout.isRowMajor()) {
      permuteWords(result[kCodes].data, /*toTiled=*/true);
    }
  } else {
    if (!fragment && !layout.isRowMajor())
      permuteWords(result[kCodes].data, /*toTiled=*/false);
    if (sortsColumns(enc)) {
      permuteColumns(result[kCodes].data, n, bytesPerRow, codeBits(enc), perm,
                     /*toSorted=*/false);
      std::vector<int32_t> gIdx(static_cast<size_t>(k));
      for (int64_t j = 0; j < k; ++j)
        gIdx[perm[j]] = int32_t(j / enc.groupSize);
      result[kGIdx] = int32Tensor(gIdx);
    }
  }
  out = std::move(result);
  return true;
}

} // namespace

bool actOrderPermutation(const int32_t *gIdx, int64_t k, int64_t groupSize,
                         std::vector<int32_t> &perm, std::string &error) {
  if (groupSize <= 0 || k % groupSize != 0)
    return fail(error, "act_order needs a group size that divides K = " +
                           std::to_string(k) + ", got " +
                           std::to_string(groupSize));
  const int64_t groups = k / groupSize;
  std::vector<int64_t> count(static_cast<size_t>(groups), 0);
  for (int64_t col = 0; col < k; ++col) {
    if (gIdx[col] < 0 || gIdx[col] >= groups)
      return fail(error, "g_idx[" + std::to_string(col) + "] = " +
                             std::to_string(gIdx[col]) + " is outside [0, " +
                             std::to_string(groups) + ")");
    ++count[gIdx[col]];
  }
  for (int64_t g = 0; g < groups; ++g)
    if (count[g] != groupSize)
      return fail(error, "act_order group " + std::to_string(g) + " has " +
                             std::to_string(count[g]) +
                             " columns in g_idx; the sorted layout needs "
                             "exactly group = " +
                             std::to_string(groupSize) +
                             " columns per group (as GPTQ desc_act "
                             "checkpoints have)");
  // A counting sort by group is the stable sort.
  std::vector<int64_t> next(static_cast<size_t>(groups));
  for (int64_t g = 0; g < groups; ++g)
    next[g] = g * groupSize;
  perm.assign(size_t(k), 0);
  for (int64_t col = 0; col < k; ++col)
    perm[next[gIdx[col]]++] = int32_t(col);
  return true;
}

std::vector<int32_t> invertPermutation(const std::vector<int32_t> &perm) {
  const int64_t k = int64_t(perm.size());
  std::vector<int32_t> inv(perm.size(), -1);
  for (int64_t j = 0; j < k; ++j)
    if (perm[j] >= 0 && perm[j] < k)
      inv[perm[j]] = int32_t(j);
  return inv;
}

void putSortedOrder(TensorMap &components, const std::vector<int32_t> &perm) {
  components[kPerm] = int32Tensor(perm);
  components[kInvPerm] = int32Tensor(invertPermutation(perm));
}

std::vector<ComponentSpec> layoutComponentSpecs(const Encoding &enc,
                                                const Layout &layout,
                                                int64_t n, int64_t k) {
  (void)layout;
  (void)n;
  if (!sortsColumns(enc))
    return {};
  return {{kPerm, DType::I32, {k}}, {kInvPerm, DType::I32, {k}}};
}

std::vector<int64_t> layoutComponentShape(const Encoding &enc,
                                          const Layout &layout,
                                          const ComponentSpec &spec, int64_t n,
                                          int64_t k) {
  if (spec.name == kCodes && isMmaFragmentLayout(layout))
    return {mmaPaddedN(n), mmaPaddedK(k) * int64_t(codeBits(enc)) / 8};
  if (isSparseMmaLayout(layout) && enc.isSparse24()) {
    if (spec.name == kCodes)
      return {sparseMmaPaddedN(n),
              sparseMmaPaddedK(k) / 2 * int64_t(codeBits(enc)) / 8};
    if (spec.name == kMetadata)
      return {sparseMmaPaddedN(n), sparseMmaPaddedK(k) / 8};
  }
  return spec.shape;
}

bool verifyLayout(const Layout &layout, std::string &error) {
  if (layout.isRowMajor()) {
    if (layout.tileN != 0 || layout.tileK != 0 || layout.interleave != 0)
      return fail(error, "row_major layout takes no tile_n, tile_k or "
                         "interleave");
    return true;
  }
  if (layout.tileN <= 0 || layout.tileK <= 0)
    return fail(error, "tiled layout needs positive tile_n and tile_k, got " +
                           std::to_string(layout.tileN) + " and " +
                           std::to_string(layout.tileK));
  if (layout.interleave <= 0 || layout.tileN % layout.interleave != 0)
    return fail(error, "interleave must be positive and divide tile_n = " +
                           std::to_string(layout.tileN) + ", got " +
                           std::to_string(layout.interleave));
  return true;
}

bool verifyWeight(const Encoding &enc, const Layout &layout, int64_t n,
                  int64_t k, std::string &error) {
  if (!validate(enc, n, k, error) || !verifyLayout(layout, error))
    return false;
  if (enc.actOrder && enc.isSparse24() && !layout.isRowMajor())
    return fail(error, "act_order with 2:4 sparsity is defined in row_major "
                       "only (its columns stay in checkpoint order: sorting "
                       "them by group would break the quads), not <" +
                           printLayout(layout) + ">");
  // The mma fragment layouts store whole tiles, padded past N and K; the
  // matvec's tiled layouts reorder whole rows of tiles.
  const bool padded = isMmaFragmentLayout(layout) ||
                      (isSparseMmaLayout(layout) && enc.isSparse24());
  if (!layout.isRowMajor() && !padded && k % layout.tileK != 0)
    return fail(error, "tiled layout needs tile_k to divide K; got tile_k = " +
                           std::to_string(layout.tileK) +
                           ", K = " + std::to_string(k));
  return true;
}

bool parseLayout(std::string_view text, Layout &layout, std::string &error) {
  text = trim(text);
  constexpr std::string_view kPrefix = "#qf.layout<";
  if (text.substr(0, kPrefix.size()) == kPrefix && text.back() == '>')
    text = trim(text.substr(kPrefix.size(), text.size() - kPrefix.size() - 1));
  size_t comma = text.find(',');
  std::string kind(trim(text.substr(0, comma)));
  Layout result;
  if (kind == "row_major") {
    result.kind = LayoutKind::RowMajor;
  } else if (kind == "tiled") {
    result.kind = LayoutKind::Tiled;
    result.interleave = 1;
  } else {
    return fail(error, "unknown layout '" + kind +
                           "'; expected 'row_major' or 'tiled'");
  }
  std::vector<std::string> seen;
  while (comma != std::string_view::npos) {
    text = text.substr(comma + 1);
    comma = text.find(',');
    std::string key;
    int64_t value = 0;
    bool hasValue = false;
    if (!parseIntegerEntry(text.substr(0, comma), key, value, hasValue))
      return fail(error, "expected an integer value for '" + key + "'");
    for (const std::string &s : seen)
      if (s == key)
        return fail(error, "duplicate entry '" + key + "'");
    seen.push_back(key);
    int64_t *field = key == "tile_n"       ? &result.tileN
                     : key == "tile_k"     ? &result.tileK
                     : key == "interleave" ? &result.interleave
                                           : nullptr;
    if (!field)
      return fail(error, "unknown layout entry '" + key +
                             "'; expected tile_n, tile_k or interleave");
    if (!hasValue)
      return fail(error, "expected '=' after '" + key + "'");
    *field = value;
  }
  if (!verifyLayout(result, error))
    return false;
  layout = result;
  return true;
}

std::string printLayout(const Layout &layout) {
  if (layout.isRowMajor())
    return "row_major";
  std::string text = "tiled, tile_n = " + std::to_string(layout.tileN) +
                     ", tile_k = " + std::to_string(layout.tileK);
  if (layout.interleave != 1)
    text += ", interleave = " + std::to_string(layout.interleave);
  return text;
}

bool repack(const Encoding &enc, const Layout &layout,
            const TensorMap &rowMajor, int64_t n, int64_t k, TensorMap &out,
            std::string &error) {
  return convert(enc, layout, rowMajor, n, k, out, error, /*toTiled=*/true);
}

bool unrepack(const Encoding &enc, const Layout &layout,
              const TensorMap &packed, int64_t n, int64_t k,
              TensorMap &rowMajor, std::string &error) {
  return convert(enc, layout, packed, n, k, rowMajor, error,
                 /*toTiled=*/false);
}

} // namespace qfuse::format
