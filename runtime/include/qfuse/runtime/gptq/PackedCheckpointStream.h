//===- PackedCheckpointStream.h - the qfuse output as layers finish -*- C++ -*-===//
//
// qfuse-quantize's qfuse-packed checkpoint, written while the layers run
// (PackedCheckpoint.h) instead of after the last one: model.safetensors is
// laid out and reserved before the first layer; a thread of its own writes
// what the source gives at once (the weights GPTQ leaves alone, such as
// lm_head, quantized with round-to-nearest; the dense tensors), and another
// writes each module once the BackgroundPacker has packed it, so the layer
// loop waits for neither. At the end only the configs and the renames are
// left.
//
//   PackedCheckpointStream out(source, decode, outDir, overwrite, solved,
//                              packer, rtn.hook()); // QuantizeAtLoad rtn
//   out.add(name, packer.add(std::move(module))); // per module, any order
//   ...
//   out.wait();   // everything written (or the first error)
//   out.commit();
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_PACKEDCHECKPOINTSTREAM_H
#define QFUSE_RUNTIME_GPTQ_PACKEDCHECKPOINTSTREAM_H

#include "qfuse/runtime/checkpoint/PackedCheckpoint.h"
#include "qfuse/runtime/gptq/BackgroundPacker.h"

#include <memory>
#include <set>
#include <string>

namespace qfuse::runtime {
namespace detail {
class SerialJobs;
}

class PackedCheckpointStream {
public:
  /// Starts `artifact`'s qfuse-packed directory in `outDir`
  /// (PackedCheckpointWriter) and writes, in the background, every weight
  /// the source gives but those in `solved` (which add() brings), and
  /// every dense tensor; `rounding` (may be null; it must outlive the
  /// stream) rounds the dense weights it takes on the device.
  PackedCheckpointStream(const ModelCheckpoint &source,
                         const Artifact &artifact, const std::string &outDir,
                         bool overwrite, std::set<std::string> solved,
                         BackgroundPacker &packer,
                         const DenseQuantizer *rounding = nullptr);
  /// Stops the writes (an unfinished run's checkpoint is not renamed into
  /// place, and its temporary is removed).
  ~PackedCheckpointStream();

  /// Writes module `name` once `packer` has packed its weight `index`, on
  /// the stream's thread; throws an earlier write's error.
  void add(const std::string &name, size_t index);
  /// Waits until everything given and the source's part are written;
  /// throws the first error.
  void wait();
  /// Throws naming every tensor never written; else the configs and the
  /// renames (PackedCheckpointWriter::commit).
  void commit();

private:
  PackedCheckpointWriter out_;
  BackgroundPacker &packer_;
  // Declared last: destroyed (their threads stopped) before out_.
  std::unique_ptr<detail::SerialJobs> fromSource_, modules_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_GPTQ_PACKEDCHECKPOINTSTREAM_H
