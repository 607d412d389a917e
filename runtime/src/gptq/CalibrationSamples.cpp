//===- CalibrationSamples.cpp - the token ids GPTQ calibrates on ----------===//

#include "qfuse/runtime/gptq/CalibrationSamples.h"

#include "qfuse/runtime/Error.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <random>

namespace qfuse::runtime {

using nlohmann::json;

std::vector<std::vector<int32_t>> calibrationSamples(const std::string &spec,
                                                     int64_t seqLen,
                                                     int64_t vocab,
                                                     uint64_t seed) {
  std::vector<std::vector<int32_t>> samples;
  if (spec.rfind("random:", 0) == 0) {
    int64_t count = 0;
    try {
      count = std::stoll(spec.substr(7));
    } catch (const std::exception &) {
    }
    if (count <= 0)
      throw Error("--calibration '" + spec +
                  "': expected random:N with N a positive integer");
    if (vocab <= 0)
      throw Error("--calibration random:N needs vocab_size in config.json");
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int32_t> token(0, int32_t(vocab - 1));
    samples.resize(size_t(count));
    for (auto &s : samples) {
      s.resize(size_t(seqLen));
      for (int32_t &t : s)
        t = token(rng);
    }
    return samples;
  }
  std::ifstream in(spec);
  if (!in)
    throw Error("--calibration '" + spec +
                "': no such file (expected random:N or a JSON file of token "
                "id lists)");
  json doc;
  try {
    in >> doc;
  } catch (const json::exception &e) {
    throw Error("--calibration '" + spec + "': not JSON: " + e.what());
  }
  if (!doc.is_array() || doc.empty())
    throw Error("--calibration '" + spec +
                "': expected a non-empty JSON array of token id lists");
  for (size_t i = 0; i < doc.size(); ++i) {
    const json &seq = doc[i];
    if (!seq.is_array() || seq.empty())
      throw Error("--calibration '" + spec + "': sample " + std::to_string(i) +
                  " is not a non-empty list of token ids");
    std::vector<int32_t> ids;
    for (const json &t : seq) {
      if (!t.is_number_integer() || t.get<int64_t>() < 0 ||
          (vocab > 0 && t.get<int64_t>() >= vocab))
        throw Error("--calibration '" + spec + "': sample " +
                    std::to_string(i) + " has a token id outside [0, " +
                    std::to_string(vocab) + ")");
      ids.push_back(t.get<int32_t>());
    }
    if (int64_t(ids.size()) > seqLen)
      ids.resize(size_t(seqLen)); // at most --seq-len tokens per sample
    samples.push_back(std::move(ids));
  }
  return samples;
}

} // namespace qfuse::runtime
