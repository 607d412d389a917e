//===- PackedCheckpointStream.cpp - the qfuse output as layers finish -----===//

#include "qfuse/runtime/gptq/PackedCheckpointStream.h"

#include "SerialJobs.h"

namespace qfuse::runtime {

PackedCheckpointStream::PackedCheckpointStream(
    const ModelCheckpoint &source, const Artifact &artifact,
    const std::string &outDir, bool overwrite, std::set<std::string> solved,
    BackgroundPacker &packer, const DenseQuantizer *rounding)
    : out_(source, artifact, outDir, overwrite), packer_(packer),
      fromSource_(std::make_unique<detail::SerialJobs>()),
      modules_(std::make_unique<detail::SerialJobs>()) {
  fromSource_->add([this, solved = std::move(solved), rounding] {
    out_.writeFromSource(/*except=*/solved, rounding);
  });
}

PackedCheckpointStream::~PackedCheckpointStream() = default;

void PackedCheckpointStream::add(const std::string &name, size_t index) {
  modules_->add([this, name, index] {
    out_.writeWeight(name, *packer_.packed(index));
  });
}

void PackedCheckpointStream::wait() {
  fromSource_->wait();
  modules_->wait();
}

void PackedCheckpointStream::commit() { out_.commit(); }

} // namespace qfuse::runtime
