//===- Ptxas.cpp - assemble qfuse-compile's PTX into a cubin --------------===//

#include "Ptxas.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace llvm;

namespace qfuse::compile {

std::string findPtxas(StringRef explicitPath) {
  if (!explicitPath.empty())
    return explicitPath.str();
  for (const char *var : {"CUDA_HOME", "CUDA_ROOT", "CUDA_PATH"})
    if (const char *root = std::getenv(var)) {
      std::string candidate = std::string(root) + "/bin/ptxas";
      if (sys::fs::can_execute(candidate))
        return candidate;
    }
  if (sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  if (auto found = sys::findProgramByName("ptxas"))
    return *found;
  return "";
}

mlir::FailureOr<std::string> assemble(StringRef ptxas, StringRef chip,
                                      StringRef ptx, std::string &error) {
  SmallString<128> ptxFile, cubinFile;
  int fd;
  if (sys::fs::createTemporaryFile("qfuse", "ptx", fd, ptxFile) ||
      sys::fs::createTemporaryFile("qfuse", "cubin", cubinFile)) {
    error = "cannot create temporary files for ptxas";
    return mlir::failure();
  }
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << ptx;
  }
  std::string arch = "-arch=" + chip.str();
  SmallVector<StringRef> args = {ptxas, arch, ptxFile, "-o", cubinFile};
  std::string message;
  int rc = sys::ExecuteAndWait(ptxas, args, std::nullopt, {}, 0, 0, &message);
  sys::fs::remove(ptxFile);
  auto buffer = MemoryBuffer::getFile(cubinFile);
  sys::fs::remove(cubinFile);
  if (rc != 0 || !buffer) {
    error = "ptxas failed (exit " + std::to_string(rc) + ") " + message;
    return mlir::failure();
  }
  return (*buffer)->getBuffer().str();
}

} // namespace qfuse::compile
