//===- BackgroundRemoval.h - scratch directories removed later --*- C++ -*-===//
//
// Removing gigabytes of scratch files (qfuse-quantize's per-layer progress
// records) takes about a second on some disks, after the result is already
// complete. removeDirectoryInBackground renames the directory out of the
// way first (one atomic step: nothing looks for it under its old name
// afterwards), then leaves the removal to a process of its own (`rm -rf`)
// that outlives this one. Where the rename or the process cannot be had,
// it removes the directory before returning, as a plain remove would.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_BACKGROUNDREMOVAL_H
#define QFUSE_RUNTIME_BACKGROUNDREMOVAL_H

#include <string>

namespace qfuse {

/// Removes `dir` (and what it holds), mostly after returning. Throws
/// qfuse::Error when a removal in this process fails. A missing `dir` is
/// not an error.
void removeDirectoryInBackground(const std::string &dir);

/// The name `dir` is renamed to while it is being removed: "<dir>.removing-
/// <pid>-<n>" (a killed removal may leave one; its name says what it is).
std::string removalName(const std::string &dir);

} // namespace qfuse

#endif // QFUSE_RUNTIME_BACKGROUNDREMOVAL_H
