//===- GptqTestArtifacts.h - the GPTQ GPU tests' inputs ---------*- C++ -*-===//
//
// What the GPTQ solver's GPU tests share: where bench/make-gptq-artifacts.sh
// wrote the test artifacts, a module's weights as the device holds them
// with the same values in f32, the solver inputs made of them, and the
// bitwise comparison of parameters.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_UNITTESTS_RUNTIME_GPTQTESTARTIFACTS_H
#define QFUSE_UNITTESTS_RUNTIME_GPTQTESTARTIFACTS_H

#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/gptq/GptqSolver.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace qfuse::testing {

/// QFUSE_GPTQ_ARTIFACTS, else artifacts/gptq/ of the source tree, with a
/// trailing slash.
inline std::string gptqArtifactDir() {
  if (const char *dir = std::getenv("QFUSE_GPTQ_ARTIFACTS"))
    return std::string(dir) + "/";
  const std::string file = __FILE__;
  const std::string suffix = "unittests/Runtime/GptqTestArtifacts.h";
  return file.substr(0, file.size() - suffix.size()) + "artifacts/gptq/";
}

/// One module's [n, K] weight: its f16 (or bf16) bits and the same values.
struct GptqTestModule {
  std::string name;
  int64_t n;
  std::vector<uint16_t> bits;
  std::vector<float> f32;
};

/// Where the solver outputs each module's f16 weight (GptqModuleInput::
/// halfOut): nowhere, a buffer of its own, or over its f16 device input.
enum class GptqHalfOut { None, OwnBuffer, InPlaceOverF16 };

/// The solver inputs of `modules`: their f32 values on the host, or
/// (onDevice) their bits of `type` uploaded into `stored`; the f16 outputs
/// poisoned first with 0x7E00 (NaN) in `halves` (one per module, in place
/// only over an f16 device input). `stored` and `halves` are cleared first
/// and must outlive the solve.
inline std::vector<runtime::GptqModuleInput>
gptqTestInputs(std::vector<GptqTestModule> &modules, bool onDevice,
               runtime::GptqDeviceWeight type, GptqHalfOut halfOut,
               std::vector<runtime::cuda::DeviceBuffer> &stored,
               std::vector<runtime::cuda::DeviceBuffer> &halves) {
  stored.clear();
  halves.clear();
  stored.reserve(modules.size());
  halves.reserve(modules.size());
  std::vector<runtime::GptqModuleInput> inputs;
  for (GptqTestModule &m : modules) {
    runtime::GptqModuleInput in;
    in.name = m.name;
    in.n = m.n;
    if (onDevice) {
      stored.emplace_back(m.bits.size() * 2, m.name);
      stored.back().upload(m.bits.data(), m.bits.size() * 2);
      in.device = stored.back().ptr();
      in.deviceType = type;
    } else {
      in.weight = m.f32.data();
    }
    if (halfOut != GptqHalfOut::None) {
      const std::vector<uint16_t> poison(m.bits.size(), 0x7E00);
      halves.emplace_back(m.bits.size() * 2, m.name + " f16");
      halves.back().upload(poison.data(), poison.size() * 2);
      const bool inPlace = halfOut == GptqHalfOut::InPlaceOverF16 &&
                           onDevice && type == runtime::GptqDeviceWeight::F16;
      in.halfOut = inPlace ? in.device : halves.back().ptr();
    }
    inputs.push_back(in);
  }
  return inputs;
}

/// The same floats bit for bit (-0 is not 0, NaN payloads count).
inline bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

} // namespace qfuse::testing

#endif // QFUSE_UNITTESTS_RUNTIME_GPTQTESTARTIFACTS_H
