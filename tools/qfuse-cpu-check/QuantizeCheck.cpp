//===- QuantizeCheck.cpp - qf.quantize on the CPU against quantizeRTN -----===//
//
// For every lowered qf.quantize and each input kind:
//
//   stress     rows cycle through exact ties of rint (integer grids) and of
//              the e2m1 grid, subnormals of the input type, a group of
//              equal values, groups of +0 and -0, magnitudes near the
//              input type's largest, quads of equal magnitudes in every
//              pattern (2:4's ties), and random values of mixed scale
//   random     normal values, a few outliers
//   nonfinite  random with a NaN and an infinity
//   droppednan 2:4 only: random with NaNs where select24 drops them (the
//              last of a quad), which the host quantizes
//   bits       unquantized 2:4 only: quads [x, +0, +0, +0] (select24 keeps
//              x whatever it is) of random input bit patterns, every third
//              a NaN with a random sign and payload, given to the function
//              as those bytes and to the host as the f32 the runtime
//              widens them to (NaN payloads are what the test is about)
//
// the JIT function writes into buffers poisoned with 0xFF, and its bytes
// must equal qfuse::format::quantizeRTN's packed components; where the host
// quantizer refuses the input (non-finite weights, scales that overflow
// their type) the function must report status 1.
//
//===----------------------------------------------------------------------===//

#include "QuantizeCheck.h"

#include "qfuse/Conversion/QFToCPU.h"
#include "qfuse/Dialect/QF/IR/QFDialect.h"
#include "qfuse/format/Encoding.h"
#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
namespace fmt = qfuse::format;

namespace qfuse::cpucheck {
namespace {

/// A memref descriptor of rank <= 2 as the C interface passes it.
struct Descriptor {
  void *allocated = nullptr;
  void *aligned = nullptr;
  int64_t offset = 0;
  int64_t sizesAndStrides[4] = {0, 0, 0, 0};
};

/// Rounds `v` to the input type; returns the stored bytes' value as float.
float roundToInput(float v, Type t) {
  if (t.isF16())
    return fmt::halfToFloat(fmt::floatToHalf(v));
  if (t.isBF16())
    return fmt::bfloat16ToFloat(fmt::floatToBFloat16(v));
  return v;
}

/// The smallest positive subnormal and the largest finite value of `t`.
std::pair<double, double> inputRange(Type t) {
  if (t.isF16())
    return {std::ldexp(1.0, -24), 65504.0};
  if (t.isBF16())
    return {std::ldexp(1.0, -133), 3.3895313892515355e38};
  return {std::ldexp(1.0, -149), 3.4028234663852886e38};
}

/// Row `row` of the stress input (column j, group size `g`).
float stressValue(int64_t row, int64_t j, int64_t g, Type t,
                  std::mt19937_64 &rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  auto [tiny, largest] = inputRange(t);
  int64_t inGroup = g > 0 ? j % g : j;
  switch (row % 8) {
  case 0: // rint ties on a power-of-two integer scale: amax = 7 * 2^-5
    return inGroup == 0 ? 7.0f / 32 : float((inGroup % 14) - 7 + 0.5) / 32.0f;
  case 1: { // e2m1 midpoints with amax = 6 * 2^-3
    static const float mids[] = {6.0f, 0.25f, 0.75f, 1.25f, 1.75f,
                                 2.5f, 3.5f,  5.0f,  -2.5f, -0.25f};
    return mids[inGroup % 10] / 8.0f;
  }
  case 2: // subnormals of the input type
    return float(double((inGroup % 41) - 20) * tiny);
  case 3: // one value repeated
    return 0.3f;
  case 4: // signed zeros
    return (inGroup % 3) ? -0.0f : 0.0f;
  case 5: // near the largest finite value
    return float((inGroup % 2 ? -1.0 : 1.0) * largest *
                 (1.0 - 0.001 * double(inGroup % 7)));
  case 6: { // 2:4 ties: quad q's magnitudes are the base-3 digits of q, so
            // the quads run through every pattern of equal magnitudes
    int64_t quad = j / 4, digits = quad % 81;
    for (int64_t p = 0; p < j % 4; ++p)
      digits /= 3;
    double sign = (j * 7 + row) % 3 == 0 ? -1.0 : 1.0;
    return float(sign * double(digits % 3 + 1) / 8.0);
  }
  default: // mixed scales
    return float(normal(rng) * std::ldexp(1.0, int(j % 13) - 8));
  }
}

std::vector<float> makeInput(const QuantizeCase &c, const fmt::Encoding &enc,
                             StringRef kind, std::mt19937_64 &rng) {
  std::vector<float> w(size_t(c.n * c.k));
  std::normal_distribution<double> normal(0.0, 0.02);
  int64_t g = enc.isPerChannel() ? c.k : enc.groupSize;
  for (int64_t r = 0; r < c.n; ++r)
    for (int64_t j = 0; j < c.k; ++j) {
      double v = kind == "stress" ? stressValue(r, j, g, c.input, rng)
                                  : normal(rng) * ((j % 97) ? 1.0 : 40.0);
      w[r * c.k + j] = roundToInput(float(v), c.input);
    }
  if (kind == "nonfinite") {
    w[size_t(c.n * c.k / 2)] = NAN;
    w[size_t(c.k / 3)] = INFINITY;
  }
  if (kind == "droppednan") {
    w[size_t((c.n / 2) * c.k + 3)] = NAN;
    w[size_t(c.k - 1)] = NAN;
  }
  return w;
}

/// The input in the input type's bytes.
std::vector<uint8_t> inputBytes(const std::vector<float> &w, Type t) {
  unsigned size = t.isF32() ? 4 : 2;
  std::vector<uint8_t> bytes(w.size() * size);
  for (size_t i = 0; i < w.size(); ++i) {
    if (t.isF32()) {
      std::memcpy(&bytes[4 * i], &w[i], 4);
      continue;
    }
    uint16_t h =
        t.isBF16() ? fmt::floatToBFloat16(w[i]) : fmt::floatToHalf(w[i]);
    bytes[2 * i] = uint8_t(h);
    bytes[2 * i + 1] = uint8_t(h >> 8);
  }
  return bytes;
}

/// The "bits" input: `bytes` in the input type, `w` the host's f32 of each
/// (halfToFloat / bfloat16ToFloat, exact, payloads kept).
void bitPatternInput(const QuantizeCase &c, std::mt19937_64 &rng,
                     std::vector<float> &w, std::vector<uint8_t> &bytes) {
  const bool f32 = c.input.isF32(), bf16 = c.input.isBF16();
  const size_t size = f32 ? 4 : 2;
  w.assign(size_t(c.n * c.k), 0.0f);
  bytes.assign(w.size() * size, 0);
  // Exponent all ones and the payload's width, per input type.
  const uint32_t exponent = f32 ? 0x7F800000u : bf16 ? 0x7F80u : 0x7C00u;
  const uint32_t payload = f32 ? 0x7FFFFFu : bf16 ? 0x7Fu : 0x3FFu;
  const uint32_t sign = f32 ? 0x80000000u : 0x8000u;
  for (size_t q = 0; 4 * q < w.size(); ++q) {
    uint32_t x = uint32_t(rng());
    if (q % 3 == 0) // a NaN: any non-zero payload, either sign
      x = (x & sign) | exponent | std::max<uint32_t>(x & payload, 1u);
    else if (!f32)
      x &= 0xFFFFu;
    std::memcpy(&bytes[4 * q * size], &x, size); // little-endian
    if (f32)
      std::memcpy(&w[4 * q], &x, 4);
    else
      w[4 * q] = bf16 ? fmt::bfloat16ToFloat(uint16_t(x))
                      : fmt::halfToFloat(uint16_t(x));
  }
}

/// Runs the JIT function; `buffers` in parameter order with their memref
/// shapes (`shapes[i]`: [rows, cols] or [size]).
bool invoke(ExecutionEngine &engine, const QuantizeCase &c,
            std::vector<std::vector<uint8_t>> &buffers,
            const std::vector<std::vector<int64_t>> &shapes,
            std::string &error) {
  std::vector<Descriptor> descs(buffers.size());
  SmallVector<void *> ptrs, args;
  for (size_t i = 0; i < buffers.size(); ++i) {
    Descriptor &d = descs[i];
    d.allocated = d.aligned = buffers[i].data();
    // Row-major: sizes, then strides.
    const std::vector<int64_t> &shape = shapes[i];
    for (size_t dim = 0; dim < shape.size(); ++dim) {
      d.sizesAndStrides[dim] = shape[dim];
      d.sizesAndStrides[shape.size() + dim] =
          dim + 1 < shape.size() ? shape[dim + 1] : 1;
    }
    ptrs.push_back(&d);
  }
  for (void *&p : ptrs)
    args.push_back(&p);
  if (llvm::Error err =
          engine.invokePacked("_mlir_ciface_" + c.function, args)) {
    error = "running " + c.function + ": " + llvm::toString(std::move(err));
    return false;
  }
  return true;
}

} // namespace

bool collectQuantizeCases(ModuleOp module, std::vector<QuantizeCase> &cases) {
  bool ok = true;
  int index = 0;
  module.walk([&](qf::QuantizeOp op) {
    auto ref = op->getAttrOfType<DictionaryAttr>(qf::kCPUReferenceAttrName);
    if (!ref) // not lowered: qf-to-cpu said why in a remark
      return;
    QuantizeCase c{
        "",         "", "", {}, 0, 0, op.getInput().getType().getElementType(),
        op.getLoc()};
    c.label = "qf.quantize#" + std::to_string(index++);
    c.function = ref.getAs<SymbolRefAttr>("function").getLeafReference().str();
    for (Attribute p : ref.getAs<ArrayAttr>("params"))
      c.params.push_back(cast<StringAttr>(p).str());
    qf::WeightType type = op.getResult().getType();
    c.n = type.getN();
    c.k = type.getK();
    std::string text;
    llvm::raw_string_ostream os(text);
    Attribute(type.getEncoding()).print(os);
    size_t open = text.find('<');
    c.encodingText = text.substr(open + 1, text.size() - open - 2);
    cases.push_back(std::move(c));
  });
  return ok;
}

bool checkQuantizeCase(ExecutionEngine &engine, const QuantizeCase &c,
                       uint64_t seed, const std::string &perturb, int &total,
                       int &failed) {
  std::string error;
  fmt::Encoding enc;
  std::vector<fmt::ComponentSpec> specs;
  if (!fmt::parseEncoding(c.encodingText, enc, error) ||
      !fmt::componentSpecs(enc, c.n, c.k, specs, error)) {
    llvm::errs() << "qfuse-cpu-check: " << c.label << ": " << error << "\n";
    return false;
  }
  std::mt19937_64 rng(seed);
  SmallVector<StringRef> kinds = {"stress", "random", "nonfinite"};
  if (enc.isSparse24())
    kinds.push_back("droppednan");
  if (!enc.isQuantized())
    kinds.push_back("bits");
  for (StringRef kind : kinds) {
    std::vector<float> w;
    std::vector<uint8_t> raw;
    if (kind == "bits") {
      bitPatternInput(c, rng, w, raw);
    } else {
      w = makeInput(c, enc, kind, rng);
      raw = inputBytes(w, c.input);
    }
    fmt::TensorMap expected;
    std::string hostError;
    bool hostOk =
        fmt::quantizeRTN(enc, w.data(), c.n, c.k, expected, hostError);

    std::vector<std::vector<uint8_t>> buffers;
    std::vector<std::vector<int64_t>> shapes;
    for (const std::string &p : c.params) {
      if (p == "w") {
        buffers.push_back(raw);
        shapes.push_back({c.n, c.k});
        // Every third element: a high mantissa bit (never an exponent bit,
        // so the input stays finite and the codes, not the status, differ).
        size_t eb = buffers.back().size() / w.size();
        if (perturb == "w")
          for (size_t i = 0; i < w.size(); i += 3)
            buffers.back()[i * eb + eb - 2] ^= 0x40;
        continue;
      }
      if (p == "status") {
        buffers.push_back(std::vector<uint8_t>(4, 0xFF));
        shapes.push_back({1});
        continue;
      }
      auto spec = llvm::find_if(specs, [&](auto &s) { return s.name == p; });
      int64_t bytes = int64_t(fmt::dtypeBytes(spec->dtype));
      for (int64_t d : spec->shape)
        bytes *= d;
      buffers.push_back(std::vector<uint8_t>(size_t(bytes), 0xFF));
      shapes.push_back(spec->shape);
    }
    if (!invoke(engine, c, buffers, shapes, error)) {
      llvm::errs() << "qfuse-cpu-check: " << c.label << ": " << error << "\n";
      return false;
    }
    int32_t status;
    std::memcpy(&status, buffers.back().data(), 4);
    std::string detail;
    bool pass = hostOk ? status == 0 : status == 1;
    if (!pass)
      detail = hostOk
                   ? " status=" + std::to_string(status) + " (expected 0)"
                   : " status=" + std::to_string(status) +
                         " (expected 1: the host refuses: " + hostError + ")";
    // Every component quantizeRTN packs must be one the function wrote.
    for (const auto &component : expected)
      if (pass && hostOk && !llvm::is_contained(c.params, component.first)) {
        pass = false;
        detail = " no parameter for component '" + component.first + "'";
      }
    for (size_t i = 0; pass && hostOk && i < c.params.size(); ++i) {
      auto it = expected.find(c.params[i]);
      if (it == expected.end())
        continue;
      const std::vector<uint8_t> &want = it->second.data;
      // Bytes per row, for the message (one row for [K] and [1]).
      const int64_t rowLen =
          shapes[i].size() == 2
              ? shapes[i][1] * int64_t(fmt::dtypeBytes(it->second.dtype))
              : int64_t(want.size());
      for (size_t j = 0; j < want.size(); ++j)
        if (want[j] != buffers[i][j]) {
          pass = false;
          detail = llvm::formatv(" {0}: byte {1} (row {2}) is {3:x2}, "
                                 "quantizeRTN wrote {4:x2}",
                                 c.params[i], j, j / size_t(rowLen),
                                 buffers[i][j], want[j])
                       .str();
          break;
        }
    }
    ++total;
    failed += !pass;
    llvm::outs() << llvm::formatv(
        "{0} {1} {2}x{3} {4} -> #qf.enc<{5}> {6}{7}{8}\n",
        pass ? "PASS" : "FAIL", c.label, c.n, c.k, c.input, c.encodingText,
        kind, hostOk ? "" : " (host refuses; status 1)", detail);
  }
  return true;
}

} // namespace qfuse::cpucheck
