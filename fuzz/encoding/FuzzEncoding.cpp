//===- FuzzEncoding.cpp - libFuzzer: encodings, layouts and their repack ---===//
//
// The input is three lines: the body of a #qf.enc<...> or an encoding name,
// the body of a #qf.layout<...>, and "N K". Parsing must succeed or fail
// with a message; what parses must print and parse back equal (Encoding.h,
// Layout.h). An encoding and layout valid for [N, K] (small enough to pack
// here) must quantize round-to-nearest, repack into the layout and unrepack
// back to the same row-major components, or fail saying why.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Layout.h"
#include "qfuse/format/Packing.h"

#include <cstdlib>
#include <string>
#include <vector>

using namespace qfuse::format;
using qfuse::fuzz::propertyFailed;

namespace {

constexpr int64_t kMaxPackedElements = 1 << 14;

std::string_view line(std::string_view &rest) {
  size_t end = rest.find('\n');
  std::string_view first = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  return first;
}

bool parseAny(std::string_view text, Encoding &enc) {
  std::string error;
  if (encodingFromName(text, enc, error))
    return true;
  if (parseEncoding(text, enc, error))
    return true;
  if (error.empty())
    propertyFailed("parseEncoding failed without a message");
  return false;
}

void checkEncodingRoundTrip(const Encoding &enc) {
  std::string text = printEncoding(enc), error;
  Encoding back;
  if (!parseEncoding(text, back, error))
    propertyFailed("printEncoding gave \"" + text +
                   "\", which does not parse: " + error);
  if (!(back == enc) || printEncoding(back) != text)
    propertyFailed("\"" + text + "\" parses back to \"" + printEncoding(back) +
                   "\"");
}

void checkLayoutRoundTrip(const Layout &layout) {
  std::string text = printLayout(layout), error;
  Layout back;
  if (!parseLayout(text, back, error))
    propertyFailed("printLayout gave \"" + text +
                   "\", which does not parse: " + error);
  if (!(back == layout))
    propertyFailed("\"" + text + "\" parses back to \"" + printLayout(back) +
                   "\"");
}

/// Deterministic weights in [-2, 2) from the input, a few exact zeros.
std::vector<float> weights(int64_t count, std::string_view seedText) {
  uint64_t state = 0x9E3779B97F4A7C15ull ^ seedText.size();
  for (char c : seedText)
    state = state * 1099511628211ull + static_cast<unsigned char>(c);
  std::vector<float> w(static_cast<size_t>(count));
  for (float &value : w) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t bits = static_cast<uint32_t>(state >> 33);
    value = (bits % 17 == 0) ? 0.0f : (bits / float(1u << 31)) * 4.0f - 2.0f;
  }
  return w;
}

void checkRepack(const Encoding &enc, const Layout &layout, int64_t n,
                 int64_t k, std::string_view seedText) {
  std::string error;
  std::vector<ComponentSpec> specs;
  if (!componentSpecs(enc, n, k, specs, error))
    propertyFailed("verifyWeight accepts [" + std::to_string(n) + ", " +
                   std::to_string(k) + "] but componentSpecs fails: " + error);
  for (const ComponentSpec &spec : layoutComponentSpecs(enc, layout, n, k))
    layoutComponentShape(enc, layout, spec, n, k);
  if (n > kMaxPackedElements / k)
    return;
  std::vector<float> w = weights(n * k, seedText);
  QuantizeOptions options;
  std::vector<float> table;
  if (enc.hasNamedTable()) {
    const int entries = 1 << enc.indexBits;
    for (int i = 0; i < entries; ++i)
      table.push_back(-1.0f + 2.0f * i / std::max(1, entries - 1));
    options.table = table.data();
  }
  TensorMap rowMajor;
  if (!quantizeRTN(enc, w.data(), n, k, rowMajor, error, options)) {
    if (error.empty())
      propertyFailed("quantizeRTN failed without a message");
    return;
  }
  if (!checkComponents(enc, rowMajor, n, k, error))
    propertyFailed("quantizeRTN's components fail checkComponents: " + error);
  std::vector<float> dequantized;
  if (!dequantize(enc, rowMajor, n, k, dequantized, error))
    propertyFailed("quantizeRTN's components do not dequantize: " + error);
  TensorMap packed;
  if (!repack(enc, layout, rowMajor, n, k, packed, error)) {
    if (error.empty())
      propertyFailed("repack failed without a message");
    return;
  }
  // The component layoutComponentSpecs promises, each the other's inverse
  // (a producer scatters through inv_perm what the kernel reads via perm).
  for (const ComponentSpec &spec : layoutComponentSpecs(enc, layout, n, k))
    if (!packed.count(spec.name))
      propertyFailed("repack made no '" + spec.name + "' for \"" +
                     printEncoding(enc) + "\"");
  if (packed.count(kPerm) &&
      int32Values(packed.at(kInvPerm)) !=
          invertPermutation(int32Values(packed.at(kPerm))))
    propertyFailed("repack's inv_perm is not the inverse of its perm");
  TensorMap back;
  if (!unrepack(enc, layout, packed, n, k, back, error))
    propertyFailed("unrepack fails on repack's output: " + error);
  for (const auto &[name, tensor] : rowMajor) {
    auto it = back.find(name);
    if (it == back.end() || it->second.shape != tensor.shape ||
        it->second.data != tensor.data)
      propertyFailed("unrepack(repack(x)) differs from x in component '" +
                     name + "' for \"" + printEncoding(enc) + "\" in \"" +
                     printLayout(layout) + "\"");
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view rest(reinterpret_cast<const char *>(data), size);
  std::string_view encodingText = line(rest);
  std::string_view layoutText = line(rest);
  std::string_view shapeText = line(rest);

  Encoding enc;
  bool haveEncoding = parseAny(encodingText, enc);
  if (haveEncoding)
    checkEncodingRoundTrip(enc);

  Layout layout;
  std::string error;
  bool haveLayout = parseLayout(layoutText, layout, error);
  if (haveLayout)
    checkLayoutRoundTrip(layout);
  else if (error.empty())
    propertyFailed("parseLayout failed without a message");

  if (!haveEncoding || !haveLayout)
    return 0;
  std::string shape(shapeText);
  char *end = nullptr;
  long long n = std::strtoll(shape.c_str(), &end, 10);
  long long k = std::strtoll(end, nullptr, 10);
  if (verifyWeight(enc, layout, n, k, error))
    checkRepack(enc, layout, n, k, encodingText);
  else if (error.empty())
    propertyFailed("verifyWeight failed without a message");
  return 0;
}
