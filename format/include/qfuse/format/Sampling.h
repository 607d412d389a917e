//===- Sampling.h - The one definition of a sampler's draw ------*- C++ -*-===//
//
// What the device sampler (qf.sample, lib/Conversion/QFToGPU/Ops/
// SampleKernel.cpp) and the host sampler (runtime/src/sampling) must agree
// on bit for bit: the parameter row the runtime writes, and the random
// number behind each draw (docs/sampling.md).
//
// A draw is counter-based: Philox4x32-10 (Salmon et al., SC'11, as in
// Random123 and cuRAND) keyed by the 64-bit seed, over the counter
// (c, c >> 32, 0, 0), where c is the draw's counter (the position of the row
// whose logits it samples). Its first output word's top 24 bits make the
// uniform u = (w >> 8) * 2^-24 in [0, 1): exact in f32 and in double, so
// both sides start from the same u. The same (seed, counter) always gives
// the same draw, on either side, in any order: a CUDA graph replays without
// any state to carry.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_SAMPLING_H
#define QFUSE_FORMAT_SAMPLING_H

#include <array>
#include <cstdint>
#include <cstring>

namespace qfuse::format::sampling {

/// One row of the sampling parameter buffer: kParamSlots 32-bit words, f32
/// values stored as their bits (`sampling_params` [R, 8] i32 in a model
/// artifact; R is 1, shared by every row, or M).
enum ParamSlot : int {
  kTemperature = 0,       // f32; 0: greedy (argmax after the penalty)
  kTopK = 1,              // i32; 0: off
  kTopP = 2,              // f32 in (0, 1]; 1: off
  kMinP = 3,              // f32 in [0, 1]; 0: off
  kRepetitionPenalty = 4, // f32 > 0; 1: off
  kSeedLow = 5,           // u32: the seed's low word (Philox key 0)
  kSeedHigh = 6,          // u32: its high word (Philox key 1)
  kReserved = 7,          // 0
  kParamSlots = 8,
};

// Philox4x32 constants (Random123's philox.h).
constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u; // key increments per round
constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;
constexpr int kPhiloxRounds = 10;
/// Bits of the first output word that make the uniform.
constexpr int kUniformBits = 24;

using Philox4x32 = std::array<uint32_t, 4>;

/// Philox4x32-10 of `counter` under `key`.
constexpr Philox4x32 philox4x32(Philox4x32 counter,
                                std::array<uint32_t, 2> key) {
  for (int round = 0; round < kPhiloxRounds; ++round) {
    const uint64_t p0 = uint64_t(kPhiloxM0) * counter[0];
    const uint64_t p1 = uint64_t(kPhiloxM1) * counter[2];
    counter = {uint32_t(p1 >> 32) ^ counter[1] ^ key[0], uint32_t(p1),
               uint32_t(p0 >> 32) ^ counter[3] ^ key[1], uint32_t(p0)};
    key = {key[0] + kPhiloxW0, key[1] + kPhiloxW1};
  }
  return counter;
}

/// The uniform in [0, 1) of draw `counter` under `seed`.
constexpr double uniform(uint64_t seed, uint64_t counter) {
  const Philox4x32 out = philox4x32(
      {uint32_t(counter), uint32_t(counter >> 32), 0, 0},
      {uint32_t(seed), uint32_t(seed >> 32)});
  return double(out[0] >> (32 - kUniformBits)) / double(1u << kUniformBits);
}

/// The parameter row for the device sampler.
inline std::array<int32_t, kParamSlots>
paramRow(float temperature, int32_t topK, float topP, float minP,
         float repetitionPenalty, uint64_t seed) {
  auto bits = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, 4);
    return i;
  };
  std::array<int32_t, kParamSlots> row{};
  row[kTemperature] = bits(temperature);
  row[kTopK] = topK;
  row[kTopP] = bits(topP);
  row[kMinP] = bits(minP);
  row[kRepetitionPenalty] = bits(repetitionPenalty);
  row[kSeedLow] = int32_t(uint32_t(seed));
  row[kSeedHigh] = int32_t(uint32_t(seed >> 32));
  return row;
}

} // namespace qfuse::format::sampling

#endif // QFUSE_FORMAT_SAMPLING_H
