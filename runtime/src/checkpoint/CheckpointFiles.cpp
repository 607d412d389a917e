//===- CheckpointFiles.cpp - a checkpoint directory's files into place ----===//

#include "CheckpointFiles.h"

#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/Error.h"

#include <filesystem>
#include <list>

namespace qfuse::runtime::detail {

namespace fs = std::filesystem;

void createCheckpointDir(const std::string &outDir) {
  std::error_code ec;
  fs::create_directories(outDir, ec);
  if (ec)
    throw Error("cannot create '" + outDir + "': " + ec.message());
}

void commitCheckpointFiles(
    const std::string &outDir,
    const std::vector<std::pair<std::string, std::string>> &configs,
    const std::function<void()> &commitModel) {
  std::list<AtomicFile> written; // AtomicFile does not move
  for (const auto &[name, bytes] : configs)
    written.emplace_back(outDir + "/" + name).write(bytes, name);
  const std::string model = outDir + "/" + kModelFile;
  std::error_code ec;
  if (fs::exists(model, ec) && !fs::remove(model, ec))
    throw Error("cannot replace '" + model + "': " + ec.message());
  for (AtomicFile &file : written)
    file.commit();
  commitModel();
}

} // namespace qfuse::runtime::detail
