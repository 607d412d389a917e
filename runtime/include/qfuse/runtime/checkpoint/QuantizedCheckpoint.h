//===- QuantizedCheckpoint.h - Writing quantized checkpoints ----*- C++ -*-===//
//
// The one writer of quantized model directories (export): a source
// Hugging Face checkpoint plus the quantized linear modules GPTQ (or any
// quantizer producing format::Unpacked) made, written as
//
//   qfuse-packed        model.safetensors: every artifact weight as its
//                       row-major components `<weight>.<component>`
//                       (Packing.h) with `qfuse.encoding.<weight>` in the
//                       metadata, every artifact tensor in the artifact's
//                       dtype; config.json copied. qfuse-run --model loads
//                       it without quantizing.
//   compressed-tensors  `<module>.weight_packed`, `.weight_scale`,
//                       `.weight_shape`, [`.weight_zero_point`,
//                       `.weight_g_idx`] (format "pack-quantized"), or
//                       NVFP4's `.weight_packed`, `.weight_scale`,
//                       `.weight_global_scale` ("nvfp4-pack-quantized");
//                       every other tensor copied unchanged; config.json
//                       gains the `quantization_config` LLM Compressor
//                       writes (vLLM and transformers load it).
//   auto-gptq           `<module>.qweight`, `.qzeros`, `.scales`, `.g_idx`
//                       (GPTQ v1); every other tensor copied unchanged;
//                       config.json gains `quantization_config`
//                       {quant_method: "gptq", ...}, and quantize_config.json
//                       holds the same fields (AutoGPTQ reads that file).
//
// The tensor layouts are format/'s converters (Checkpoint.h), and
// the configs are exactly what ModelCheckpoint's parser accepts, so that
// every file written here (but nvfp4-pack-quantized, which the runtime does
// not read yet) loads back through ModelCheckpoint + checkpointWeight to the
// same components.
//
// compressed-tensors and AutoGPTQ are converted and checked in memory
// first: an encoding the format cannot store, a module the source does not
// have, or a shape that disagrees is a qfuse::Error before any file is
// written. qfuse-packed is planned from the artifact and streamed
// (PackedCheckpoint.h): the weights given are checked against the artifact
// before any file is written, and each tensor is written as soon as it is
// made; an error after that leaves no file either (the temporary is
// removed).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_CHECKPOINT_QUANTIZEDCHECKPOINT_H
#define QFUSE_RUNTIME_CHECKPOINT_QUANTIZEDCHECKPOINT_H

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/HostBytes.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace qfuse::runtime {

enum class CheckpointFormat { QfusePacked, CompressedTensors, AutoGptq };

/// "qfuse", "compressed-tensors" or "auto-gptq" (the command-line names);
/// throws listing the valid names.
CheckpointFormat parseCheckpointFormat(std::string_view name);
std::string_view checkpointFormatName(CheckpointFormat format);
/// The names parseCheckpointFormat accepts, for help texts.
std::vector<std::string> checkpointFormatNames();

/// Throws, naming the encoding and the format, when `format` cannot store
/// weights in `encoding`: compressed-tensors holds int4/int8 (symmetric) and
/// uint4/uint8 with zero = int, dense, with f16/bf16/f32 scales, or NVFP4;
/// AutoGPTQ the same integer encodings and nothing else; qfuse-packed every
/// valid encoding. writeQuantizedCheckpoint checks this itself; call it
/// before quantizing so that an hour of GPTQ is not spent on weights that
/// cannot be written.
void checkEncodingForFormat(CheckpointFormat format,
                            const format::Encoding &encoding);

/// Throws where writeQuantizedCheckpoint would refuse `outDir` (the
/// source's own directory, an existing model.safetensors without
/// `overwrite`, a model.safetensors.index.json); touches nothing. Call it
/// before quantizing, like checkEncodingForFormat.
void checkOutputDir(const ModelCheckpoint &source, const std::string &outDir,
                    bool overwrite);

/// One quantized linear module. `name` is the Hugging Face module name
/// without ".weight" ("model.layers.0.self_attn.q_proj"), the same name as
/// the artifact weight; [n, k] = [out, in].
struct QuantizedWeight {
  std::string name;
  format::Encoding encoding;
  int64_t n = 0, k = 0;
  format::Unpacked weight;
  /// When set: format::pack of `weight`, done already (BackgroundPacker);
  /// the writer takes these components and ignores `weight`.
  std::shared_ptr<const format::TensorMap> packed;
  /// When not empty: the codes as bytes, [n, k] row-major (what
  /// format::packCodeBytes takes), and `weight` holds everything but them.
  HostBytes codeBytes;
  /// When not empty: the codes component packed already (on the device,
  /// format::packWithCodes), and `weight` holds everything but the codes.
  /// With codeBytes too, the packer packs those and checks that the two
  /// codes components are the same bytes.
  HostBytes packedCodes;
};

/// Writes `source` with `weights` replacing their modules into `outDir` in
/// `format` (see the file comment). `outDir` is created if missing. An
/// existing model.safetensors there is an error unless `overwrite`; a
/// model.safetensors.index.json there always is (loaders would read it
/// instead of the file written).
///
/// qfuse-packed needs `artifact`: the directory holds exactly what that
/// artifact binds. Its weights found in `weights` are written from them (the
/// encoding must be the artifact's); every other artifact weight is made as
/// checkpointWeight makes it from `source` (round-to-nearest, or converted
/// from AutoGPTQ / compressed-tensors), so modules GPTQ leaves alone, such as
/// lm_head, are still there. writePackedCheckpoint is this with no weights.
///
/// compressed-tensors and auto-gptq ignore `artifact`. Their configs hold
/// one scheme for all quantized modules (as ModelCheckpoint reads them), so
/// every weight must have the same encoding; the source must be unquantized
/// (fp16/bf16/f32) and hold `<name>.weight` of shape [n, k] for each. For
/// compressed-tensors, the 2-D `.weight` modules left unquantized (and
/// lm_head) are listed in `ignore`. AutoGPTQ has no such list: loaders
/// expect every decoder linear quantized, lm_head per the "lm_head" flag.
///
/// The output is one model.safetensors file, written under a temporary name
/// and renamed into place, with metadata {"format": "pt"} as transformers
/// requires. `seconds`, when given, gets the wall time of the two halves.
struct CheckpointWriteSeconds {
  /// The output in memory (packing, conversion, RTN); qfuse-packed: made
  /// and written into the temporary file.
  double build = 0;
  /// The files written, synced and renamed; qfuse-packed: config.json, the
  /// sync and the renames.
  double files = 0;
};
void writeQuantizedCheckpoint(const ModelCheckpoint &source,
                              const std::vector<QuantizedWeight> &weights,
                              CheckpointFormat format,
                              const std::string &outDir,
                              const Artifact *artifact = nullptr,
                              bool overwrite = false,
                              CheckpointWriteSeconds *seconds = nullptr);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_CHECKPOINT_QUANTIZEDCHECKPOINT_H
