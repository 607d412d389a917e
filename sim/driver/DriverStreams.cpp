//===- DriverStreams.cpp - streams, events and graphs ---------------------===//
//
// Work runs on the thread that submits it, when it is submitted: a valid
// schedule of any stream program (every wait is already satisfied), so
// synchronizing is free. A stream being captured records its work instead;
// a graph replays it in order.
//
//===----------------------------------------------------------------------===//

#include "SimDriver.h"

#include <memory>
#include <mutex>

using namespace qfuse::sim;

namespace {

// Streams are few and live long; the lock guards capture state.
std::mutex streamsLock;

SimStream *toStream(CUstream stream) {
  return reinterpret_cast<SimStream *>(stream);
}

bool isSpecial(CUstream stream) {
  return stream == nullptr || stream == CU_STREAM_LEGACY ||
         stream == CU_STREAM_PER_THREAD;
}

} // namespace

namespace qfuse::sim {

CUresult submit(CUstream stream, StreamWork work) {
  if (!isSpecial(stream)) {
    std::lock_guard<std::mutex> lock(streamsLock);
    SimStream *s = toStream(stream);
    if (s->capturing) {
      s->captured.push_back(std::move(work));
      return CUDA_SUCCESS;
    }
  }
  return work();
}

int &capturesOnThisThread() {
  thread_local int captures = 0;
  return captures;
}

} // namespace qfuse::sim

extern "C" {

int qfuseSimSubmit(void *stream, int (*fn)(void *), void *arg,
                   void (*destroy)(void *)) {
  // Owned from here, so that work refused below is destroyed too.
  std::shared_ptr<void> owned(arg, destroy ? destroy : [](void *) {});
  QFUSE_SIM_READY();
  return submit(static_cast<CUstream>(stream),
                [fn, owned] { return CUresult(fn(owned.get())); });
}

CUresult CUDAAPI cuStreamCreate(CUstream *stream, unsigned int) {
  if (!stream)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  *stream = reinterpret_cast<CUstream>(new SimStream);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream stream) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  if (isSpecial(stream))
    return CUDA_ERROR_INVALID_HANDLE;
  delete toStream(stream);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream) {
  QFUSE_SIM_READY();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamBeginCapture(CUstream stream,
                                      CUstreamCaptureMode) {
  QFUSE_SIM_READY();
  if (isSpecial(stream))
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  std::lock_guard<std::mutex> lock(streamsLock);
  SimStream *s = toStream(stream);
  if (s->capturing)
    return CUDA_ERROR_ILLEGAL_STATE;
  s->capturing = true;
  s->captured.clear();
  ++capturesOnThisThread();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream stream, CUgraph *graph) {
  if (!graph)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  if (isSpecial(stream))
    return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
  std::lock_guard<std::mutex> lock(streamsLock);
  SimStream *s = toStream(stream);
  if (!s->capturing)
    return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
  s->capturing = false;
  --capturesOnThisThread();
  auto *g = new SimGraph;
  g->nodes = std::move(s->captured);
  s->captured.clear();
  *graph = reinterpret_cast<CUgraph>(g);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphGetNodes(CUgraph graph, CUgraphNode *nodes,
                                 size_t *count) {
  if (!graph || !count)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  const SimGraph *g = reinterpret_cast<const SimGraph *>(graph);
  if (nodes) {
    size_t n = std::min(*count, g->nodes.size());
    for (size_t i = 0; i < n; ++i)
      nodes[i] = reinterpret_cast<CUgraphNode>(
          const_cast<StreamWork *>(&g->nodes[i]));
    *count = n;
  } else {
    *count = g->nodes.size();
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph,
                                             unsigned long long) {
  if (!exec || !graph)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  auto *copy = new SimGraph(*reinterpret_cast<const SimGraph *>(graph));
  *exec = reinterpret_cast<CUgraphExec>(copy);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  if (!exec)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  const SimGraph *g = reinterpret_cast<const SimGraph *>(exec);
  return submit(stream, [g] {
    for (const StreamWork &work : g->nodes)
      if (CUresult status = work())
        return status;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec exec) {
  delete reinterpret_cast<SimGraph *>(exec);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphDestroy(CUgraph graph) {
  delete reinterpret_cast<SimGraph *>(graph);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent *event, unsigned int) {
  if (!event)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  *event = reinterpret_cast<CUevent>(new SimEvent);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent event) {
  if (!event)
    return CUDA_ERROR_INVALID_HANDLE;
  delete reinterpret_cast<SimEvent *>(event);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent event, CUstream stream) {
  if (!event)
    return CUDA_ERROR_INVALID_HANDLE;
  QFUSE_SIM_READY();
  SimEvent *e = reinterpret_cast<SimEvent *>(event);
  return submit(stream, [e] {
    e->when = std::chrono::steady_clock::now();
    e->recorded = true;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuEventSynchronize(CUevent event) {
  if (!event)
    return CUDA_ERROR_INVALID_HANDLE;
  QFUSE_SIM_READY();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  if (!ms || !start || !end)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  const SimEvent *a = reinterpret_cast<const SimEvent *>(start);
  const SimEvent *b = reinterpret_cast<const SimEvent *>(end);
  if (!a->recorded || !b->recorded)
    return CUDA_ERROR_INVALID_HANDLE;
  *ms = std::chrono::duration<float, std::milli>(b->when - a->when).count();
  return CUDA_SUCCESS;
}

} // extern "C"
