//===- WeightEncoding.cpp - RTN-quantized, dequantized weights ------------===//

#include "qfuse/reference/WeightEncoding.h"

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/Error.h"

namespace qfuse::reference {
namespace {

/// "fp16" is the frontend's name for dense f16 weights (#qf.enc<f16>); the
/// other names are qfuse_format's, else the text is an encoding body.
format::Encoding resolveEncoding(const std::string &name,
                                 const std::string &what) {
  format::Encoding enc;
  std::string error;
  if (name == "fp16") {
    if (!format::parseEncoding("f16", enc, error))
      throw Error(what + ": " + error);
    return enc;
  }
  std::string nameError;
  if (format::encodingFromName(name, enc, nameError))
    return enc;
  if (format::parseEncoding(name, enc, error))
    return enc;
  throw Error(what + ": encoding '" + name +
              "' is neither fp16, a known name (" + nameError +
              ") nor an encoding text (" + error + ")");
}

void roundToHalf(std::vector<float> &values) {
  for (float &v : values)
    v = format::halfToFloat(format::floatToHalf(v));
}

} // namespace

const std::string &EncodingPlan::encodingFor(Projection p) const {
  auto it = overrides.find(projectionName(p));
  return it == overrides.end() ? defaultEncoding : it->second;
}

std::vector<float> quantizeDequantize(const std::string &encoding,
                                      const std::vector<float> &w, int64_t n,
                                      int64_t k, const std::string &what) {
  format::Encoding enc = resolveEncoding(encoding, what);
  std::string error;
  if (int64_t(w.size()) != n * k)
    throw Error(what + ": " + std::to_string(w.size()) + " values; expected [" +
                std::to_string(n) + ", " + std::to_string(k) + "]");
  if (!format::validate(enc, n, k, error))
    throw Error(what + " [" + std::to_string(n) + ", " + std::to_string(k) +
                "] cannot take encoding '" + encoding + "': " + error);
  // Through the packed components, as the runtime loads them.
  format::TensorMap components;
  if (!format::quantizeRTN(enc, w.data(), n, k, components, error))
    throw Error(what + ": quantizing to '" + encoding + "': " + error);
  std::vector<float> out;
  if (!format::dequantize(enc, components, n, k, out, error))
    throw Error(what + ": dequantizing '" + encoding + "': " + error);
  return out;
}

void applyEncodingPlan(ModelWeights &weights, const EncodingPlan &plan) {
  auto encode = [&](LinearWeights &w, const std::string &name, Projection p) {
    w.weight = quantizeDequantize(plan.encodingFor(p), w.weight, w.n, w.k,
                                  name + ".weight");
    roundToHalf(w.bias);
  };
  for (size_t i = 0; i < weights.layers.size(); ++i) {
    LayerWeights &layer = weights.layers[i];
    roundToHalf(layer.inputLayernorm);
    roundToHalf(layer.postAttentionLayernorm);
    for (Projection p :
         {Projection::Q, Projection::K, Projection::V, Projection::O,
          Projection::Gate, Projection::Up, Projection::Down})
      encode(layer.projection(p), projectionTensorName(int64_t(i), p), p);
  }
  // lm_head first: when tied it is a copy of the embedding's own values.
  encode(weights.lmHead, "lm_head", Projection::LmHead);
  roundToHalf(weights.embedTokens);
  roundToHalf(weights.norm);
}

} // namespace qfuse::reference
