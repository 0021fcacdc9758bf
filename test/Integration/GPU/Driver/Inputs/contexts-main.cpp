//===- contexts-main.cpp - which context the runtime launches in ----------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Calls the decode step of Mock/Inputs/device-buffers.mlir (compiled with
// linattn-compile --target=cuda, linked with liblinattn_cuda_runtime.so) the
// ways applications on a machine with two GPUs do, over the fake driver of
// test/FakeCuda: on a thread without a context, in a context the caller made
// current (as a framework does for its device), on a new thread after
// mgpuSetDefaultDevice, after the caller left no context, with a default
// device that does not exist, and on two threads of which one fails. Each
// step says on stderr, between the driver's log lines, which device's
// context is current when the call returns, and the failure the runtime
// recorded, if any.
//
//===----------------------------------------------------------------------===//

#include "dense-buffer.h"
#include "device-buffers.h"
#include "driver-api.h"

#include <cstdint>
#include <cstdio>
#include <future>
#include <thread>
#include <vector>

extern "C" void *mgpuMemAlloc(uint64_t bytes, void *stream, bool hostShared);
extern "C" void mgpuMemFree(void *pointer, void *stream);
extern "C" void mgpuSetDefaultDevice(int32_t device);
extern "C" const char *linattnCudaGetLastError(void);
extern "C" void linattnCudaClearLastError(void);

namespace {

/// The driver functions this program calls itself, from the libcuda.so.1
/// the runtime loads too.
#define DRIVER_FUNCTIONS(X)                                                    \
  X(cuInit)                                                                    \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxGetCurrent)                                                           \
  X(cuCtxGetDevice)                                                            \
  X(cuStreamCreate)                                                            \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamDestroy)                                                           \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)

LINATTN_DRIVER(DRIVER_FUNCTIONS) driver;
#define CU(call) check(driver.call, #call)

/// "device N" for the current context, "no context" without one.
void reportContext(const char *when) {
  CUcontext context = nullptr;
  CU(cuCtxGetCurrent(&context));
  CUdevice device = -1;
  if (context)
    CU(cuCtxGetDevice(&device));
  if (context)
    std::fprintf(stderr, "%s: device %d\n", when, device);
  else
    std::fprintf(stderr, "%s: no context\n", when);
}

/// The decode step's eight buffers, from `allocate`, freed by `release`.
template <typename Allocate, typename Release>
struct DecodeBuffers {
  linattn_memref_f32_2d q, k, v, z0, z1, o;
  linattn_memref_f32_3d s0, s1;
  std::vector<void *> pointers;
  Release release;

  template <typename D, int Rank>
  void make(D &d, const int64_t (&sizes)[Rank], Allocate &allocate) {
    d = denseBuffer<D>(sizes, [&](uint64_t bytes) {
      pointers.push_back(allocate(bytes));
      return pointers.back();
    });
  }

  DecodeBuffers(Allocate allocate, Release release) : release(release) {
    make(q, {8, 16}, allocate);
    make(k, {8, 16}, allocate);
    make(v, {8, 24}, allocate);
    make(s0, {8, 16, 24}, allocate);
    make(z0, {8, 16}, allocate);
    make(o, {8, 24}, allocate);
    make(s1, {8, 16, 24}, allocate);
    make(z1, {8, 16}, allocate);
  }
  ~DecodeBuffers() {
    for (void *p : pointers)
      release(p);
  }

  void call(void *stream) {
    _mlir_ciface_decode(&q, &k, &v, &s0, &z0, &o, &s1, &z1, stream);
  }
};

template <typename A, typename R>
DecodeBuffers<A, R> buffers(A a, R r) {
  return DecodeBuffers<A, R>(a, r);
}

/// A decode step on buffers of the runtime's (mgpuMemAlloc) and the legacy
/// stream, as a program that leaves contexts to the runtime makes it.
void runtimeStep() {
  auto b = buffers([](uint64_t n) { return mgpuMemAlloc(n, nullptr, false); },
                   [](void *p) { mgpuMemFree(p, nullptr); });
  b.call(nullptr);
}

/// Says which failure the runtime recorded on this thread, if any.
void reportFailure(const char *who) {
  const char *error = linattnCudaGetLastError();
  std::fprintf(stderr, "%s: %s\n", who, error ? error : "no failure");
}

/// Starts a step, after saying whether the runtime recorded a failure in
/// the last one (and forgetting it).
void step(const char *what) {
  if (const char *error = linattnCudaGetLastError())
    std::fprintf(stderr, "failure: %s\n", error);
  linattnCudaClearLastError();
  std::fprintf(stderr, "== %s\n", what);
}

} // namespace

int main() {
  driver.load();
  CU(cuInit(0));

  step("no context of the caller's");
  runtimeStep();
  reportContext("after the call");

  step("the caller's context on device 1");
  CUcontext device1 = nullptr;
  CU(cuDevicePrimaryCtxRetain(&device1, 1));
  CU(cuCtxSetCurrent(device1));
  CUstream stream = nullptr;
  CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  {
    auto b = buffers(
        [](uint64_t n) {
          CUdeviceptr p = 0;
          CU(cuMemAlloc(&p, n));
          return reinterpret_cast<void *>(p);
        },
        [](void *p) { CU(cuMemFree(reinterpret_cast<CUdeviceptr>(p))); });
    b.call(stream);
    b.call(stream);
    CU(cuStreamSynchronize(stream));
  }
  CU(cuStreamDestroy(stream));
  reportContext("after the calls");

  step("a new thread after mgpuSetDefaultDevice(1)");
  mgpuSetDefaultDevice(1);
  std::thread([] {
    reportContext("before the call");
    runtimeStep();
    reportContext("after the call");
  }).join();

  step("the caller left no context");
  CU(cuCtxSetCurrent(nullptr));
  runtimeStep();
  reportContext("after the call");

  step("mgpuSetDefaultDevice(0) on a thread the runtime chose for");
  mgpuSetDefaultDevice(0);
  runtimeStep();
  reportContext("after the call");

  step("mgpuSetDefaultDevice(2) on a machine with two devices");
  mgpuSetDefaultDevice(2);
  runtimeStep();

  step("a failure is its thread's");
  // This thread makes device 1's context current itself, which the runtime
  // never replaces; a new thread without one looks for device #2 and fails.
  // The two take turns.
  CU(cuCtxSetCurrent(device1));
  std::promise<void> failed, checked;
  std::thread other([&] {
    runtimeStep();
    failed.set_value();
    checked.get_future().wait();
    reportFailure("the other thread");
    linattnCudaClearLastError();
    CU(cuCtxSetCurrent(device1));
    runtimeStep();
    reportFailure("the other thread, after clearing");
  });
  failed.get_future().wait();
  runtimeStep();
  reportFailure("this thread");
  checked.set_value();
  other.join();

  step("done");
  // The runtime unloads the modules when the program ends, on this thread.
  mgpuSetDefaultDevice(0);
  return 0;
}
