//===- capture-main.cpp - device-buffer calls captured in CUDA graphs -----===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Captures the entry points of Mock/Inputs/device-buffers.mlir (compiled with
// linattn-compile --target=cuda, linked with liblinattn_cuda_runtime.so) in
// CUDA graphs in global capture mode, the strictest, over the fake driver of
// test/FakeCuda, which rejects the calls that mode forbids: each call is
// made once plainly (the kernels load), captured, instantiated and replayed
// twice. Then a call the mode forbids, a synchronous allocation, is made
// during a capture, which must fail and invalidate it. The driver's log and
// this program's lines go to stderr.
//
//===----------------------------------------------------------------------===//

#include "dense-buffer.h"
#include "device-buffers.h"
#include "driver-api.h"

#include <cstdint>
#include <cstdio>
#include <vector>

extern "C" void *mgpuMemAlloc(uint64_t bytes, void *stream, bool hostShared);
extern "C" const char *linattnCudaGetLastError(void);
extern "C" void linattnCudaClearLastError(void);

namespace {

#define DRIVER_FUNCTIONS(X)                                                    \
  X(cuInit)                                                                    \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamBeginCapture)                                                      \
  X(cuStreamEndCapture)                                                        \
  X(cuGraphInstantiate)                                                        \
  X(cuGraphLaunch)                                                             \
  X(cuGraphExecDestroy)                                                        \
  X(cuGraphDestroy)                                                            \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)

LINATTN_DRIVER(DRIVER_FUNCTIONS) cu;
#define CU(call) check(cu.call, #call)

/// Says whether the runtime recorded a failure, and forgets it.
void reportRuntime(const char *when) {
  const char *error = linattnCudaGetLastError();
  std::fprintf(stderr, "%s: %s\n", when, error ? error : "no failure");
  linattnCudaClearLastError();
}

std::vector<CUdeviceptr> allocations;

/// A dense row-major device buffer of `sizes` from the driver.
template <typename Descriptor, int Rank>
Descriptor buffer(const int64_t (&sizes)[Rank]) {
  return denseBuffer<Descriptor>(sizes, [](uint64_t bytes) {
    CUdeviceptr pointer = 0;
    CU(cuMemAlloc(&pointer, bytes));
    allocations.push_back(pointer);
    return reinterpret_cast<void *>(pointer);
  });
}

/// Calls `call` plainly, then captures it, instantiates the graph and
/// replays it twice.
template <typename F>
void captureAndReplay(const char *name, CUstream stream, F call) {
  std::fprintf(stderr, "== %s\n", name);
  call();
  CU(cuStreamSynchronize(stream));
  reportRuntime("plain call");
  CU(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  call();
  CUgraph graph = nullptr;
  CU(cuStreamEndCapture(stream, &graph));
  reportRuntime("captured call");
  CUgraphExec exec = nullptr;
  CU(cuGraphInstantiate(&exec, graph, 0));
  CU(cuGraphDestroy(graph));
  CU(cuGraphLaunch(exec, stream));
  CU(cuGraphLaunch(exec, stream));
  CU(cuStreamSynchronize(stream));
  CU(cuGraphExecDestroy(exec));
}

} // namespace

int main() {
  cu.load();
  CU(cuInit(0));
  // The runtime made device 0's primary context current when the module's
  // constructor loaded the kernels.
  CUstream stream = nullptr;
  CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  void *s = stream;

  using D2 = linattn_memref_f32_2d;
  using D3 = linattn_memref_f32_3d;
  using D4 = linattn_memref_f32_4d;
  D2 q = buffer<D2>({8, 16}), k = buffer<D2>({8, 16}), v = buffer<D2>({8, 24});
  D3 s0 = buffer<D3>({8, 16, 24}), s1 = buffer<D3>({8, 16, 24});
  D2 z0 = buffer<D2>({8, 16}), z1 = buffer<D2>({8, 16}),
     o = buffer<D2>({8, 24});
  captureAndReplay("decode", stream, [&] {
    _mlir_ciface_decode(&q, &k, &v, &s0, &z0, &o, &s1, &z1, s);
  });

  D3 cq = buffer<D3>({2, 7, 32}), ck = buffer<D3>({2, 13, 32});
  D3 cv = buffer<D3>({2, 13, 40}), co = buffer<D3>({2, 7, 40});
  captureAndReplay("cross", stream,
                   [&] { _mlir_ciface_cross(&cq, &ck, &cv, &co, s); });

  D4 sq = buffer<D4>({3, 4, 5, 16}), sk = buffer<D4>({3, 4, 5, 16});
  D4 sv = buffer<D4>({3, 4, 5, 40}), so = buffer<D4>({3, 4, 5, 40});
  D4 ss = buffer<D4>({3, 4, 16, 40});
  captureAndReplay("causal", stream,
                   [&] { _mlir_ciface_causal(&sq, &sk, &sv, &so, &ss, s); });

  std::fprintf(stderr, "== a synchronous allocation during a capture\n");
  CU(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  void *pointer = mgpuMemAlloc(256, nullptr, false);
  CUgraph graph = nullptr;
  CUresult ended = cu.cuStreamEndCapture(stream, &graph);
  std::fprintf(
      stderr, "allocation: %s; capture %s\n", pointer ? "made" : "refused",
      ended == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED ? "invalidated"
                                                     : "not invalidated");
  reportRuntime("runtime");

  for (CUdeviceptr p : allocations)
    CU(cuMemFree(p));
  CU(cuStreamDestroy(stream));
  std::fprintf(stderr, "== done\n");
  return 0;
}
