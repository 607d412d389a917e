//===- QuantizeInputs.h - what a quantize run reads -------------*- C++ -*-===//
//
// The artifacts a run of quantizeModel reads (the options' paths, or the
// defaults beside the model) and the identity of all its inputs, which
// --resume compares (RunIdentity.h). Private to QuantizeModel.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_QUANTIZEINPUTS_H
#define QFUSE_RUNTIME_GPTQ_QUANTIZEINPUTS_H

#include "qfuse/format/Encoding.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/checkpoint/QuantizedCheckpoint.h"
#include "qfuse/runtime/gptq/QuantizeModel.h"
#include "qfuse/runtime/gptq/RunIdentity.h"

#include <string>

namespace qfuse::runtime {

struct QuantizeArtifacts {
  std::string fp16, gptq, decode; // decode: the qfuse format only
};

/// Checks the options that need no file and resolves the artifacts' paths;
/// a missing artifact is an error that prints the command making it.
QuantizeArtifacts resolveArtifacts(const QuantizeModelOptions &options,
                                   CheckpointFormat outFormat);

/// Everything that decides the run's results: the model (config.json's
/// bytes, each weight file's size and time), the encoding and output
/// format, the calibration (a file's bytes), every option of the solve,
/// the artifacts' bytes, the device and the quantizer's build.
RunIdentity runIdentity(const QuantizeModelOptions &options,
                        const QuantizeArtifacts &artifacts,
                        const ModelCheckpoint &checkpoint,
                        const format::Encoding &encoding,
                        CheckpointFormat outFormat, const std::string &device);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_GPTQ_QUANTIZEINPUTS_H
