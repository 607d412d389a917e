//===- QuantizeInputs.h - what a quantize run reads -------------*- C++ -*-===//
//
// The artifacts a run of quantizeModel reads (the options' paths, or the
// defaults beside the model), its inputs checked before the GPU is touched
// (checkInputs), and the identity of all of them, which --resume compares
// (RunIdentity.h). Private to QuantizeModel.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_QUANTIZEINPUTS_H
#define QFUSE_RUNTIME_GPTQ_QUANTIZEINPUTS_H

#include "qfuse/format/Encoding.h"
#include "qfuse/runtime/artifact/ArtifactSet.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/checkpoint/QuantizedCheckpoint.h"
#include "qfuse/runtime/gptq/QuantizeModel.h"
#include "qfuse/runtime/gptq/RunIdentity.h"

#include <optional>
#include <string>

namespace qfuse::runtime {

struct QuantizeArtifacts {
  std::string fp16, gptq, decode; // decode: the qfuse format only
};

/// Checks the options that need no file and resolves the artifacts' paths;
/// a missing artifact is an error that prints the command making it.
QuantizeArtifacts resolveArtifacts(const QuantizeModelOptions &options,
                                   CheckpointFormat outFormat);

/// What a run reads, checked before the GPU is touched: the output format,
/// the artifacts' paths, the source checkpoint and every variant of each
/// artifact (the device then picks the variant that runs, ArtifactSet.h),
/// with the encoding GPTQ quantizes to.
struct CheckedInputs {
  CheckpointFormat format;
  QuantizeArtifacts paths;
  ModelCheckpoint checkpoint;
  ArtifactSet fp16, blocks;
  std::optional<ArtifactSet> decode;
  format::Encoding enc;
};

/// Checks, in this order: the options, the artifacts' paths
/// (resolveArtifacts), the source checkpoint (not quantized already), the
/// output directory (checkOutputDir), every variant of each artifact and
/// the GPTQ artifact's encoding against the output format and the decode
/// artifact's weights.
CheckedInputs checkInputs(const QuantizeModelOptions &options);

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
