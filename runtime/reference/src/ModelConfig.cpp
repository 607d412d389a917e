//===- ModelConfig.cpp - A Hugging Face config.json, validated ------------===//

#include "qfuse/reference/ModelConfig.h"

#include "qfuse/runtime/Error.h"

#include "StrictJson.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace qfuse::reference {
namespace {

using nlohmann::json;

/// Reads the fields of one config.json; every failure names the file and
/// the field, as the Python frontend's ConfigError does.
class FieldReader {
public:
  FieldReader(const json &raw, const std::string &source)
      : raw_(raw), source_(source) {}

  [[noreturn]] void fail(const std::string &field,
                         const std::string &what) const {
    throw Error(source_ + ": field '" + field + "' " + what);
  }

  /// The value of `field`, or nullptr when it is absent or JSON null (Hugging
  /// Face writes null for "use the default").
  const json *get(const json &object, const std::string &key) const {
    auto it = object.find(key);
    if (it == object.end() || it->is_null())
      return nullptr;
    return &*it;
  }
  const json *get(const std::string &field) const { return get(raw_, field); }

  /// An integer from 1 to `limit`. nlohmann keeps non-negative integers as
  /// uint64 (2^63 stays 2^63) and integers past 2^64 as floats, which are
  /// rejected as not integers.
  int64_t boundedInt(const std::string &field, int64_t limit,
                     std::optional<int64_t> fallback = std::nullopt) const {
    std::string expected =
        "expected an integer from 1 to " + std::to_string(limit);
    const json *value = get(field);
    if (!value) {
      if (!fallback)
        fail(field, "is missing; " + expected);
      return *fallback;
    }
    // JSON booleans are not numbers in nlohmann, and 4096.0 is a float.
    bool inRange = value->is_number_unsigned()
                       ? value->get<uint64_t>() >= 1 &&
                             value->get<uint64_t>() <= uint64_t(limit)
                       : value->is_number_integer() &&
                             value->get<int64_t>() >= 1 &&
                             value->get<int64_t>() <= limit;
    if (!inRange)
      fail(field, "is " + value->dump() + "; " + expected);
    return value->get<int64_t>();
  }

  double positiveNumber(const std::string &field, const json &object,
                        std::optional<double> fallback) const {
    auto key = field.substr(field.rfind('.') + 1);
    const json *value = get(object, key);
    if (!value) {
      if (!fallback)
        fail(field, "is missing; expected a positive number");
      return *fallback;
    }
    if (!value->is_number() || !(value->get<double>() > 0) ||
        !std::isfinite(value->get<double>()))
      fail(field, "is " + value->dump() + "; expected a positive number");
    return value->get<double>();
  }
  double positiveNumber(const std::string &field, double fallback) const {
    return positiveNumber(field, raw_, fallback);
  }

  bool boolean(const std::string &field, bool fallback) const {
    const json *value = get(field);
    if (!value)
      return fallback;
    if (!value->is_boolean())
      fail(field, "is " + value->dump() + "; expected true or false");
    return value->get<bool>();
  }

private:
  const json &raw_;
  const std::string &source_;
};

struct FamilyDefaults {
  int64_t maxPositionEmbeddings;
};

/// Hugging Face's defaults where a config may leave a field out
/// (rms_norm_eps 1e-6, rope_theta 1e4 and untied embeddings for all three).
FamilyDefaults defaultsFor(Architecture arch) {
  switch (arch) {
  case Architecture::Llama:
    return {2048};
  case Architecture::Mistral:
    return {4096 * 32};
  case Architecture::Qwen2:
    return {32768};
  }
  return {2048};
}

std::optional<Architecture> architectureFromName(const std::string &name) {
  for (Architecture arch :
       {Architecture::Llama, Architecture::Mistral, Architecture::Qwen2})
    if (name == architectureName(arch))
      return arch;
  return std::nullopt;
}

std::optional<Architecture> architectureFromModelType(const std::string &t) {
  for (Architecture arch :
       {Architecture::Llama, Architecture::Mistral, Architecture::Qwen2})
    if (t == modelTypeName(arch))
      return arch;
  return std::nullopt;
}

Architecture parseArchitecture(const FieldReader &r) {
  const char *expected = "; expected one of LlamaForCausalLM, "
                         "MistralForCausalLM, Qwen2ForCausalLM";
  const json *archs = r.get("architectures");
  if (!archs) {
    // Older configs name only the model type.
    const json *type = r.get("model_type");
    if (type && type->is_string())
      if (auto arch = architectureFromModelType(type->get<std::string>()))
        return *arch;
    r.fail("architectures", std::string("is missing") + expected);
  }
  json list = archs->is_string() ? json::array({*archs}) : *archs;
  if (!list.is_array() || list.size() != 1 || !list[0].is_string() ||
      !architectureFromName(list[0].get<std::string>()))
    r.fail("architectures",
           "is " + archs->dump() + ", which is not supported" + expected);
  return *architectureFromName(list[0].get<std::string>());
}

/// Products of the sizes against ConfigLimits; each factor is bounded
/// already, so no product can overflow.
void checkProducts(const FieldReader &r, const ModelConfig &c) {
  auto str = [](int64_t v) { return std::to_string(v); };
  if (c.qWidth() > ConfigLimits::kQWidth)
    r.fail("head_dim", "is " + str(c.headDim) +
                           "; num_attention_heads * head_dim = " +
                           str(c.qWidth()) + ", expected at most " +
                           str(ConfigLimits::kQWidth) + " (the q_proj width)");
  struct Product {
    const char *field;
    int64_t size;
    const char *weights;
  };
  for (const Product &p :
       {Product{"intermediate_size", c.intermediateSize,
                "gate_proj, up_proj and down_proj"},
        Product{"vocab_size", c.vocabSize, "lm_head and embed_tokens"}})
    if (p.size * c.hiddenSize > ConfigLimits::kWeightElements)
      r.fail(p.field, "is " + str(p.size) + "; " + p.field +
                          " * hidden_size = " + str(p.size * c.hiddenSize) +
                          " elements in " + p.weights + ", expected at most " +
                          str(ConfigLimits::kWeightElements) + " per weight");
}

// The rotary has two spellings: transformers 5 writes `rope_parameters`
// ({"rope_type", "rope_theta", and the type's fields}; per layer type in some
// models), older versions a top-level `rope_theta` and `rope_scaling`. Either
// is read; when both are given they must agree.

struct Rotary {
  double theta = 10000.0;
  std::optional<Llama3RopeScaling> llama3;
};

bool sameScaling(const std::optional<Llama3RopeScaling> &a,
                 const std::optional<Llama3RopeScaling> &b) {
  if (!a || !b)
    return !a && !b;
  return a->factor == b->factor && a->lowFreqFactor == b->lowFreqFactor &&
         a->highFreqFactor == b->highFreqFactor &&
         a->originalMaxPositionEmbeddings == b->originalMaxPositionEmbeddings;
}

bool sameRotary(const Rotary &a, const Rotary &b) {
  return a.theta == b.theta && sameScaling(a.llama3, b.llama3);
}

std::string numberText(double value) { return json(value).dump(); }

/// A rope scaling in a message, as the Python frontend writes it.
std::string scalingText(const std::optional<Llama3RopeScaling> &s) {
  if (!s)
    return "no scaling";
  return "llama3 scaling (factor " + numberText(s->factor) +
         ", low_freq_factor " + numberText(s->lowFreqFactor) +
         ", high_freq_factor " + numberText(s->highFreqFactor) +
         ", original_max_position_embeddings " +
         numberText(s->originalMaxPositionEmbeddings) + ")";
}

/// The llama3 scaling of a rope_scaling / rope_parameters object named
/// `name`, or none ("default", or no type).
std::optional<Llama3RopeScaling> parseRopeType(const FieldReader &r,
                                               const json &object,
                                               const std::string &name) {
  // transformers reads "rope_type", falling back to the older "type".
  const json *kind = r.get(object, "rope_type");
  if (!kind)
    kind = r.get(object, "type");
  if (!kind || *kind == "default")
    return std::nullopt;
  if (*kind != "llama3")
    r.fail(name, "has rope_type " + kind->dump() +
                     ", which the reference (and qf.rotary) does not "
                     "implement; expected \"llama3\", \"default\" or null");
  Llama3RopeScaling s;
  s.factor = r.positiveNumber(name + ".factor", object, std::nullopt);
  s.lowFreqFactor =
      r.positiveNumber(name + ".low_freq_factor", object, std::nullopt);
  s.highFreqFactor =
      r.positiveNumber(name + ".high_freq_factor", object, std::nullopt);
  s.originalMaxPositionEmbeddings = r.positiveNumber(
      name + ".original_max_position_embeddings", object, std::nullopt);
  if (s.originalMaxPositionEmbeddings >
      double(ConfigLimits::kMaxPositionEmbeddings))
    r.fail(name + ".original_max_position_embeddings",
           "is " + numberText(s.originalMaxPositionEmbeddings) +
               "; expected at most " +
               std::to_string(ConfigLimits::kMaxPositionEmbeddings));
  // The smoothing between the two wavelengths divides by their difference.
  if (!(s.highFreqFactor > s.lowFreqFactor))
    r.fail(name + ".high_freq_factor",
           "is " + numberText(s.highFreqFactor) +
               "; expected more than low_freq_factor = " +
               numberText(s.lowFreqFactor));
  return s;
}

/// One rope_parameters object named `name`; `theta` where it names none.
Rotary parseRopeObject(const FieldReader &r, const json &object,
                       const std::string &name, double theta) {
  Rotary rotary;
  rotary.theta = r.positiveNumber(name + ".rope_theta", object, theta);
  double partial =
      r.positiveNumber(name + ".partial_rotary_factor", object, 1.0);
  if (partial != 1.0)
    r.fail(name + ".partial_rotary_factor",
           "is " + numberText(partial) +
               "; qfuse rotates the whole head (expected 1.0)");
  rotary.llama3 = parseRopeType(r, object, name);
  return rotary;
}

/// `rope_parameters`; `theta` (the top-level rope_theta, or its default)
/// where it names none, as transformers does.
Rotary parseRopeParameters(const FieldReader &r, const json &params,
                           double theta) {
  if (!params.is_object())
    r.fail("rope_parameters",
           "is " + params.dump() + "; expected an object or null");
  // nlohmann keeps an object's keys sorted, as the Python reader sorts them.
  std::vector<std::string> layerTypes;
  for (const auto &[key, value] : params.items())
    if (value.is_object())
      layerTypes.push_back(key);
  if (layerTypes.empty())
    return parseRopeObject(r, params, "rope_parameters", theta);
  // One object per layer type ({"full_attention": {...}, ...}).
  for (const auto &[key, value] : params.items())
    if (!value.is_object())
      r.fail("rope_parameters." + key,
             "is " + value.dump() +
                 "; expected an object, as rope_parameters." +
                 layerTypes.front() +
                 " is (rope_parameters holds either one rotary or one object "
                 "per layer type)");
  std::vector<Rotary> rotaries;
  for (const std::string &key : layerTypes)
    rotaries.push_back(
        parseRopeObject(r, params.at(key), "rope_parameters." + key, theta));
  for (const Rotary &rotary : rotaries)
    if (!sameRotary(rotary, rotaries.front())) {
      std::string listed;
      for (size_t i = 0; i < rotaries.size(); ++i)
        listed += (i ? "; " : "") + layerTypes[i] + ": rope_theta " +
                  numberText(rotaries[i].theta) + ", " +
                  scalingText(rotaries[i].llama3);
      r.fail("rope_parameters",
             "gives the layer types different rotaries (" + listed +
                 "); qfuse applies one rotary to every layer");
    }
  return rotaries.front();
}

Rotary parseRope(const FieldReader &r) {
  // Some configs give a partial rotary at the top level rather than in
  // rope_parameters.
  double partial = r.positiveNumber("partial_rotary_factor", 1.0);
  if (partial != 1.0)
    r.fail("partial_rotary_factor",
           "is " + numberText(partial) +
               "; qfuse rotates the whole head (expected 1.0)");
  Rotary legacy;
  legacy.theta = r.positiveNumber("rope_theta", 10000.0);
  const json *scaling = r.get("rope_scaling");
  if (scaling) {
    if (!scaling->is_object())
      r.fail("rope_scaling",
             "is " + scaling->dump() + "; expected an object or null");
    legacy.llama3 = parseRopeType(r, *scaling, "rope_scaling");
  }
  const json *params = r.get("rope_parameters");
  if (!params)
    return legacy;
  Rotary rotary = parseRopeParameters(r, *params, legacy.theta);
  const std::string disagree =
      "; the two spellings of the rotary disagree (keep one)";
  if (r.get("rope_theta") && rotary.theta != legacy.theta)
    r.fail("rope_parameters", "has rope_theta " + numberText(rotary.theta) +
                                  ", but field 'rope_theta' is " +
                                  numberText(legacy.theta) + disagree);
  if (scaling && !sameScaling(rotary.llama3, legacy.llama3))
    r.fail("rope_parameters", "has " + scalingText(rotary.llama3) +
                                  ", but field 'rope_scaling' has " +
                                  scalingText(legacy.llama3) + disagree);
  return rotary;
}

/// A context length as Hugging Face writes it (8192, not 8192.0).
json integralOrDouble(double value) {
  if (value == std::floor(value) && std::fabs(value) < 9e15)
    return json(int64_t(value));
  return json(value);
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path + ": cannot read: " + qfuse::systemErrorText(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

const char *architectureName(Architecture arch) {
  switch (arch) {
  case Architecture::Llama:
    return "LlamaForCausalLM";
  case Architecture::Mistral:
    return "MistralForCausalLM";
  case Architecture::Qwen2:
    return "Qwen2ForCausalLM";
  }
  return "?";
}

const char *modelTypeName(Architecture arch) {
  switch (arch) {
  case Architecture::Llama:
    return "llama";
  case Architecture::Mistral:
    return "mistral";
  case Architecture::Qwen2:
    return "qwen2";
  }
  return "?";
}

ModelConfig ModelConfig::parse(std::string_view text,
                               const std::string &source) {
  json raw = runtime::detail::parseStrictJson(text, source);
  if (!raw.is_object())
    throw Error(source + ": is " + std::string(raw.type_name()) +
                ", expected a JSON object");
  FieldReader r(raw, source);
  ModelConfig c;
  c.source = source;
  c.architecture = parseArchitecture(r);

  c.hiddenSize = r.boundedInt("hidden_size", ConfigLimits::kHiddenSize);
  c.intermediateSize =
      r.boundedInt("intermediate_size", ConfigLimits::kIntermediateSize);
  c.numAttentionHeads =
      r.boundedInt("num_attention_heads", ConfigLimits::kNumAttentionHeads);
  c.numHiddenLayers =
      r.boundedInt("num_hidden_layers", ConfigLimits::kNumHiddenLayers);
  c.vocabSize = r.boundedInt("vocab_size", ConfigLimits::kVocabSize);
  c.numKeyValueHeads =
      r.boundedInt("num_key_value_heads", ConfigLimits::kNumKeyValueHeads,
                   c.numAttentionHeads);
  if (c.numAttentionHeads % c.numKeyValueHeads)
    r.fail("num_key_value_heads",
           "is " + std::to_string(c.numKeyValueHeads) +
               ", which does not divide num_attention_heads = " +
               std::to_string(c.numAttentionHeads));
  if (r.get("head_dim")) {
    c.headDim = r.boundedInt("head_dim", ConfigLimits::kHeadDim);
  } else {
    if (c.hiddenSize % c.numAttentionHeads)
      r.fail("hidden_size", "is " + std::to_string(c.hiddenSize) +
                                ", not a multiple of num_attention_heads = " +
                                std::to_string(c.numAttentionHeads) +
                                " (and head_dim is not given)");
    c.headDim = c.hiddenSize / c.numAttentionHeads;
    // The limit holds for head_dim however it is set.
    if (c.headDim > ConfigLimits::kHeadDim)
      r.fail("hidden_size",
             "is " + std::to_string(c.hiddenSize) +
                 "; hidden_size / num_attention_heads = " +
                 std::to_string(c.headDim) +
                 " (head_dim is not given), expected at most " +
                 std::to_string(ConfigLimits::kHeadDim));
  }
  if (c.headDim % 2)
    r.fail("head_dim", "is " + std::to_string(c.headDim) +
                           "; rotate-half rotary needs an even head_dim");
  checkProducts(r, c);

  FamilyDefaults defaults = defaultsFor(c.architecture);
  c.maxPositionEmbeddings = r.boundedInt("max_position_embeddings",
                                         ConfigLimits::kMaxPositionEmbeddings,
                                         defaults.maxPositionEmbeddings);
  c.rmsNormEps = r.positiveNumber("rms_norm_eps", 1e-6);
  Rotary rotary = parseRope(r);
  c.ropeTheta = rotary.theta;
  c.ropeScaling = rotary.llama3;
  c.tieWordEmbeddings = r.boolean("tie_word_embeddings", false);

  const json *act = r.get("hidden_act");
  if (act && *act != "silu")
    r.fail("hidden_act",
           "is " + act->dump() + ", which is not supported; expected \"silu\"");

  // Qwen2's attention always has q/k/v biases (its config has no switch);
  // Llama and Mistral read attention_bias (q, k, v, o) and mlp_bias.
  if (c.architecture != Architecture::Qwen2) {
    c.attentionBias = r.boolean("attention_bias", false);
    c.mlpBias = r.boolean("mlp_bias", false);
  }

  // Mistral applies sliding_window whenever it is set; Qwen2 only under
  // use_sliding_window; Llama has none.
  bool windowed = c.architecture == Architecture::Mistral ||
                  (c.architecture == Architecture::Qwen2 &&
                   r.boolean("use_sliding_window", false));
  if (windowed && r.get("sliding_window"))
    c.slidingWindow =
        r.boundedInt("sliding_window", ConfigLimits::kSlidingWindow);
  return c;
}

ModelConfig ModelConfig::load(const std::string &path) {
  std::string file = path;
  if (std::filesystem::is_directory(path))
    file = (std::filesystem::path(path) / "config.json").string();
  return parse(readFile(file), file);
}

std::string ModelConfig::toJson() const {
  json j;
  j["architectures"] = json::array({architectureName(architecture)});
  j["model_type"] = modelTypeName(architecture);
  j["hidden_size"] = hiddenSize;
  j["intermediate_size"] = intermediateSize;
  j["num_attention_heads"] = numAttentionHeads;
  j["num_key_value_heads"] = numKeyValueHeads;
  j["head_dim"] = headDim;
  j["num_hidden_layers"] = numHiddenLayers;
  j["vocab_size"] = vocabSize;
  j["max_position_embeddings"] = maxPositionEmbeddings;
  j["rms_norm_eps"] = rmsNormEps;
  j["rope_theta"] = ropeTheta;
  j["hidden_act"] = "silu";
  j["tie_word_embeddings"] = tieWordEmbeddings;
  if (ropeScaling) {
    j["rope_scaling"] = {
        {"rope_type", "llama3"},
        {"factor", ropeScaling->factor},
        {"low_freq_factor", ropeScaling->lowFreqFactor},
        {"high_freq_factor", ropeScaling->highFreqFactor},
        {"original_max_position_embeddings",
         integralOrDouble(ropeScaling->originalMaxPositionEmbeddings)}};
  } else {
    j["rope_scaling"] = nullptr;
  }
  switch (architecture) {
  case Architecture::Llama:
    j["attention_bias"] = attentionBias;
    j["mlp_bias"] = mlpBias;
    break;
  case Architecture::Mistral:
    j["attention_bias"] = attentionBias;
    j["mlp_bias"] = mlpBias;
    j["sliding_window"] = slidingWindow ? json(*slidingWindow) : json(nullptr);
    break;
  case Architecture::Qwen2:
    j["use_sliding_window"] = slidingWindow.has_value();
    j["sliding_window"] =
        slidingWindow ? json(*slidingWindow) : json(maxPositionEmbeddings);
    break;
  }
  return j.dump(2) + "\n";
}

void ModelConfig::checkSequenceLength(int64_t positions) const {
  if (slidingWindow && positions > *slidingWindow)
    throw Error(source + ": field 'sliding_window' is " +
                std::to_string(*slidingWindow) + ", shorter than the " +
                std::to_string(positions) +
                " positions being run; the reference attends to every "
                "cached position, so it is exact only within the window");
}

} // namespace qfuse::reference
