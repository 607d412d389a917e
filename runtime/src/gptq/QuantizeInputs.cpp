//===- QuantizeInputs.cpp - what a quantize run reads ---------------------===//

#include "QuantizeInputs.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/gptq/GptqSolver.h"

#include <filesystem>
#include <sstream>

namespace qfuse::runtime {
namespace {

namespace fs = std::filesystem;

std::string number(double value) {
  std::ostringstream text;
  text.precision(17);
  text << value;
  return text.str();
}

} // namespace

QuantizeArtifacts resolveArtifacts(const QuantizeModelOptions &options,
                                   CheckpointFormat outFormat) {
  const std::string &modelDir = options.modelDir;
  const std::string &encodingName = options.encoding;
  if (modelDir.empty() || encodingName.empty() || options.calibration.empty() ||
      options.outDir.empty())
    throw Error("quantize: the model directory, encoding, calibration and "
                "output directory are all required");
  if (options.seqLen <= 0)
    throw Error("quantize: the sequence length must be positive, got " +
                std::to_string(options.seqLen));
  QuantizeArtifacts a{options.fp16Artifact, options.gptqArtifact,
                      options.decodeArtifact};
  if (a.fp16.empty())
    a.fp16 = (fs::path(modelDir) / "qfuse-fp16-calib.qfa").string();
  if (a.gptq.empty())
    a.gptq = (fs::path(modelDir) / ("qfuse-gptq-" + encodingName + ".qfa"))
                 .string();
  if (a.decode.empty())
    a.decode =
        (fs::path(modelDir) / ("qfuse-" + encodingName + ".qfa")).string();
  const std::string config = (fs::path(modelDir) / "config.json").string();
  auto require = [&](const std::string &path, const std::string &how) {
    if (!fs::exists(path))
      throw Error("no artifact '" + path + "'; make it on the compiler "
                  "machine with: " + how);
  };
  require(a.fp16, "python3 -m qfuse compile --config " + config +
                      " --encoding fp16 --batch-sizes 1," +
                      std::to_string(std::min<int64_t>(options.seqLen, 512)) +
                      " -o " + a.fp16);
  require(a.gptq, "python3 -m qfuse compile-gptq --config " + config +
                      " --encoding " + encodingName + " -o " + a.gptq);
  if (outFormat == CheckpointFormat::QfusePacked)
    require(a.decode, "python3 -m qfuse compile --config " + config +
                          " --encoding " + encodingName + " -o " + a.decode);
  else
    a.decode.clear();
  return a;
}

CheckedInputs checkInputs(const QuantizeModelOptions &options) {
  const CheckpointFormat outFormat = parseCheckpointFormat(options.format);
  QuantizeArtifacts paths = resolveArtifacts(options, outFormat);

  ModelCheckpoint checkpoint = ModelCheckpoint::open(options.modelDir);
  if (checkpoint.config().quantization != CheckpointQuantization::None)
    throw Error("'" + options.modelDir + "' is already quantized (" +
                checkpoint.config().quantMethod +
                "); GPTQ needs the fp16/bf16/f32 checkpoint");
  // Before any GPU work: an output that would be refused at the end.
  checkOutputDir(checkpoint, options.outDir, options.overwrite);
  // Every variant of each file is validated before the GPU is touched; the
  // device then picks the variant that runs (artifact sets, ArtifactSet.h).
  // The variants of one file share their weights' encodings.
  ArtifactSet fp16Set = ArtifactSet::load(paths.fp16);
  ArtifactSet blocksSet = ArtifactSet::load(paths.gptq);
  std::optional<ArtifactSet> decodeSet;
  if (!paths.decode.empty())
    decodeSet = ArtifactSet::load(paths.decode);
  const format::Encoding enc = gptqArtifactEncoding(blocksSet.variants()[0]);
  checkEncodingForFormat(outFormat, enc);
  if (decodeSet)
    for (const WeightSpec &w : decodeSet->variants()[0].weights)
      if (w.encodingAttr.isQuantized() && !(w.encodingAttr == enc))
        throw Error("the decode artifact '" + paths.decode + "' stores '" +
                    w.name + "' as '" + w.encoding +
                    "', the GPTQ artifact quantizes to '" +
                    format::printEncoding(enc) + "'");
  return {outFormat,
          std::move(paths),
          std::move(checkpoint),
          std::move(fp16Set),
          std::move(blocksSet),
          std::move(decodeSet),
          enc};
}

RunIdentity runIdentity(const QuantizeModelOptions &options,
                        const QuantizeArtifacts &artifacts,
                        const ModelCheckpoint &checkpoint,
                        const format::Encoding &encoding,
                        CheckpointFormat outFormat, const std::string &device) {
  RunIdentity id;
  std::error_code ec;
  const fs::path model = fs::canonical(options.modelDir, ec);
  id.add("model", ec ? options.modelDir : model.string());
  id.addFile("model config.json",
             (fs::path(options.modelDir) / "config.json").string());
  for (const SafetensorsFile &file : checkpoint.files())
    id.addLargeFile("model " + fs::path(file.path()).filename().string(),
                    file.path());
  id.add("encoding", format::printEncoding(encoding));
  id.add("format", std::string(checkpointFormatName(outFormat)));
  id.add("calibration", options.calibration);
  if (options.calibration.rfind("random:", 0) != 0)
    id.addFile("calibration file", options.calibration);
  id.add("seq_len", std::to_string(options.seqLen));
  id.add("seed", std::to_string(options.seed));
  id.add("damp", number(options.damp));
  id.add("hessian_rows", std::to_string(options.hessianRows));
  id.add("act_order", options.actOrder ? "true" : "false");
  id.add("static_groups", options.staticGroups ? "true" : "false");
  id.add("host_weights", options.hostWeights ? "true" : "false");
  id.addFile("fp16 artifact", artifacts.fp16);
  id.addFile("gptq artifact", artifacts.gptq);
  if (!artifacts.decode.empty())
    id.addFile("decode artifact", artifacts.decode);
  id.add("device", device);
  id.add("quantizer", quantizerBuild());
  return id;
}

} // namespace qfuse::runtime
