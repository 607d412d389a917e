//===- CheckpointFiles.h - a checkpoint directory's files into place -*- C++ -*-===//
//
// A quantized checkpoint is several files: model.safetensors and its
// configs. Each is written under a temporary name (AtomicFile); then the
// configs are renamed into place and model.safetensors last, an earlier one
// removed just before, so that no interruption leaves a directory whose
// model.safetensors sits beside another run's configs (docs/faults.md).
// Private to the checkpoint writers.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_CHECKPOINT_CHECKPOINTFILES_H
#define QFUSE_RUNTIME_CHECKPOINT_CHECKPOINTFILES_H

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace qfuse::runtime::detail {

inline constexpr const char *kModelFile = "model.safetensors";

/// `outDir`, created if missing; throws naming it.
void createCheckpointDir(const std::string &outDir);

/// Writes each (file name, bytes) of `configs` into `outDir` under a
/// temporary name, removes an earlier model.safetensors, renames the
/// configs into place and then calls `commitModel`, which renames
/// model.safetensors (written under its temporary name already).
void commitCheckpointFiles(
    const std::string &outDir,
    const std::vector<std::pair<std::string, std::string>> &configs,
    const std::function<void()> &commitModel);

} // namespace qfuse::runtime::detail

#endif // QFUSE_RUNTIME_CHECKPOINT_CHECKPOINTFILES_H
