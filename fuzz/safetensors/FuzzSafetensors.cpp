//===- FuzzSafetensors.cpp - libFuzzer: the safetensors reader -------------===//
//
// The input is one safetensors file. SafetensorsFile::fromBytes must accept
// it or throw qfuse::Error; when it accepts, every entry must lie inside the
// file (each byte is read, so ASan sees any view past the end), lookups by
// name must find the entry, and float tensors must convert to f32 or fail
// with qfuse::Error (convertDense, what the loader does with dense tensors).
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"

using namespace qfuse::runtime;
using qfuse::fuzz::propertyFailed;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    SafetensorsFile file = SafetensorsFile::fromBytes(
        std::vector<uint8_t>(data, data + size), "fuzz.safetensors");
    uint64_t covered = 0;
    for (const TensorInfo &info : file.tensors()) {
      if (file.find(info.name) != &info)
        propertyFailed("find('" + info.name + "') is not its entry");
      TensorView view = file.view(info);
      if (view.size != info.numBytes())
        propertyFailed("view of '" + info.name + "' has the wrong size");
      volatile uint8_t sum = 0;
      for (size_t i = 0; i < view.size; ++i)
        sum += view.data[i];
      (void)sum;
      covered += view.size;
      if (info.dtype == DType::F16 || info.dtype == DType::BF16 ||
          info.dtype == DType::F32) {
        try {
          convertDense(info.dtype, view.data, info.numElements(), DType::F32,
                       info.name);
        } catch (const qfuse::Error &) {
        }
      }
    }
    if (covered > size)
      propertyFailed("the tensors cover more bytes than the file holds");
  } catch (const qfuse::Error &) {
  }
  return 0;
}
