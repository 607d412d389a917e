//===- StreamOrder.cpp - cuBLAS and cuSOLVER work in stream order ---------===//

#include "StreamOrder.h"

#include <dlfcn.h>

namespace qfuse::sim {
namespace {

// qfuseSimSubmit's signature (sim/driver/SimDriver.h), with CUresult as int.
using Submit = int (*)(void *stream, int (*fn)(void *), void *arg,
                       void (*destroy)(void *));

Submit findSubmit() {
  static const Submit submit =
      reinterpret_cast<Submit>(dlsym(RTLD_DEFAULT, "qfuseSimSubmit"));
  return submit;
}

int runWork(void *arg) {
  (*static_cast<std::function<void()> *>(arg))();
  return 0;
}

void destroyWork(void *arg) { delete static_cast<std::function<void()> *>(arg); }

} // namespace

bool runInStreamOrder(void *stream, std::function<void()> work) {
  Submit submit = findSubmit();
  if (!submit) {
    work();
    return true;
  }
  auto *owned = new std::function<void()>(std::move(work));
  return submit(stream, runWork, owned, destroyWork) == 0;
}

} // namespace qfuse::sim
