//===- StreamOrder.h - cuBLAS and cuSOLVER work in stream order -*- C++ -*-===//
//
// A call's arguments are checked when it is made, and its computation runs
// in its stream's order: through the simulated driver's qfuseSimSubmit, so
// that a call made while the stream is being captured into a graph runs
// when the graph is launched, as on a GPU. Without the simulated driver in
// the process (a test linking these libraries alone) it runs at once.
//
//===----------------------------------------------------------------------===//
#ifndef QFUSE_SIM_BLAS_STREAMORDER_H
#define QFUSE_SIM_BLAS_STREAMORDER_H

#include <functional>

namespace qfuse::sim {

/// False where the driver refused the work (a kernel failed earlier: the
/// caller returns its library's execution-failed status).
bool runInStreamOrder(void *stream, std::function<void()> work);

} // namespace qfuse::sim

#endif // QFUSE_SIM_BLAS_STREAMORDER_H
