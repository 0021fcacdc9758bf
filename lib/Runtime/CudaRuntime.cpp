//===- CudaRuntime.cpp - the mgpu* functions over the CUDA driver API -----===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The runtime library the host code of linattn-lower-to-nvvm calls: every
// mgpu* function MLIR 22's gpu-to-llvm and the GPU offloading translation
// emit, implemented over the CUDA driver API. libcuda.so.1 is opened with
// dlopen on first use, so the library loads (and reports a clear error) on a
// machine without a GPU or driver.
//
// Streams are created blocking (ordered with the legacy default stream), so
// timing events recorded on the default stream around a call of generated
// code cover the work it queues.
//
//===----------------------------------------------------------------------===//

#include "linattn/Runtime/CudaRuntime.h"

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <string>

#define LINATTN_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

//===----------------------------------------------------------------------===//
// The driver, loaded on first use
//===----------------------------------------------------------------------===//

// The versioned symbol names (cuMemAlloc_v2, ...) come from cuda.h's macros:
// stringize after expansion.
#define LINATTN_STR(x) #x
#define LINATTN_XSTR(x) LINATTN_STR(x)

#define LINATTN_DRIVER_FUNCTIONS(X)                                            \
  X(cuInit)                                                                    \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxSetCurrent)                                                           \
  X(cuModuleLoadData)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncSetAttribute)                                                        \
  X(cuLaunchKernel)                                                            \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventSynchronize)                                                        \
  X(cuEventRecord)                                                             \
  X(cuEventElapsedTime)                                                        \
  X(cuMemAlloc)                                                                \
  X(cuMemAllocAsync)                                                           \
  X(cuMemAllocManaged)                                                         \
  X(cuMemFree)                                                                 \
  X(cuMemFreeAsync)                                                            \
  X(cuMemcpyAsync)                                                             \
  X(cuMemsetD32Async)                                                          \
  X(cuMemsetD16Async)                                                          \
  X(cuMemHostRegister)                                                         \
  X(cuMemHostUnregister)

struct Driver {
#define LINATTN_DECLARE(name) decltype(&::name) name = nullptr;
  LINATTN_DRIVER_FUNCTIONS(LINATTN_DECLARE)
#undef LINATTN_DECLARE
  void *library = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  bool ready = false;
};

std::mutex errorMutex;
std::string lastError;
bool hasError = false;
std::once_flag initFlag;
Driver driver;
int defaultDevice = 0;

bool abortOnError() {
  const char *value = std::getenv("LINATTN_CUDA_ABORT_ON_ERROR");
  return value && *value && std::strcmp(value, "0") != 0;
}

void reportError(const std::string &message) {
  std::fprintf(stderr, "linattn-cuda-runtime: %s\n", message.c_str());
  if (abortOnError())
    std::abort();
  std::lock_guard<std::mutex> lock(errorMutex);
  if (!hasError) {
    lastError = message;
    hasError = true;
  }
}

/// Records a failure of `what` unless `result` is CUDA_SUCCESS; returns
/// whether it succeeded.
bool check(CUresult result, const char *what) {
  if (result == CUDA_SUCCESS)
    return true;
  const char *name = nullptr, *text = nullptr;
  if (driver.cuGetErrorName)
    driver.cuGetErrorName(result, &name);
  if (driver.cuGetErrorString)
    driver.cuGetErrorString(result, &text);
  reportError(std::string(what) + " failed: " +
              (name ? name : ("CUresult " + std::to_string(result)).c_str()) +
              (text ? std::string(": ") + text : std::string()));
  return false;
}

void initialize() {
  driver.library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver.library) {
    const char *why = dlerror();
    reportError(std::string("cannot load the CUDA driver (libcuda.so.1): ") +
                (why ? why : "unknown error"));
    return;
  }
#define LINATTN_LOAD(name)                                                     \
  driver.name = reinterpret_cast<decltype(&::name)>(                           \
      dlsym(driver.library, LINATTN_XSTR(name)));                              \
  if (!driver.name) {                                                          \
    reportError("the CUDA driver has no " LINATTN_XSTR(name));                 \
    return;                                                                    \
  }
  LINATTN_DRIVER_FUNCTIONS(LINATTN_LOAD)
#undef LINATTN_LOAD
  if (!check(driver.cuInit(0), "cuInit"))
    return;
  int count = 0;
  if (!check(driver.cuDeviceGetCount(&count), "cuDeviceGetCount"))
    return;
  if (defaultDevice < 0 || defaultDevice >= count) {
    reportError("no CUDA device #" + std::to_string(defaultDevice) + " (" +
                std::to_string(count) + " found)");
    return;
  }
  if (!check(driver.cuDeviceGet(&driver.device, defaultDevice),
             "cuDeviceGet") ||
      !check(driver.cuDevicePrimaryCtxRetain(&driver.context, driver.device),
             "cuDevicePrimaryCtxRetain"))
    return;
  driver.ready = true;
}

/// Loads the driver once and makes the device's primary context current on
/// this thread; false (with an error recorded once) when there is none.
bool ready() {
  std::call_once(initFlag, initialize);
  if (!driver.ready)
    return false;
  thread_local bool current = false;
  if (!current)
    current = check(driver.cuCtxSetCurrent(driver.context), "cuCtxSetCurrent");
  return current;
}

} // namespace

//===----------------------------------------------------------------------===//
// Modules and launches
//===----------------------------------------------------------------------===//

LINATTN_EXPORT CUmodule mgpuModuleLoad(void *data, size_t /*size*/) {
  CUmodule module = nullptr;
  if (ready())
    check(driver.cuModuleLoadData(&module, data), "cuModuleLoadData");
  return module;
}

LINATTN_EXPORT CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  CUmodule module = nullptr;
  if (!ready())
    return module;
  char log[8192] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                    reinterpret_cast<void *>(static_cast<intptr_t>(
                        optLevel < 0 ? 0 : (optLevel > 4 ? 4 : optLevel)))};
  CUresult result =
      driver.cuModuleLoadDataEx(&module, data, 3, options, values);
  if (result != CUDA_SUCCESS && log[0])
    reportError(std::string("PTX JIT compilation log: ") + log);
  check(result, "cuModuleLoadDataEx (PTX JIT)");
  return module;
}

LINATTN_EXPORT void mgpuModuleUnload(CUmodule module) {
  if (module && ready())
    check(driver.cuModuleUnload(module), "cuModuleUnload");
}

LINATTN_EXPORT CUfunction mgpuModuleGetFunction(CUmodule module,
                                                const char *name) {
  CUfunction function = nullptr;
  if (!module) {
    reportError(std::string("no module to find kernel ") + name +
                " in (it failed to load)");
    return function;
  }
  if (ready())
    check(driver.cuModuleGetFunction(&function, module, name),
          "cuModuleGetFunction");
  return function;
}

LINATTN_EXPORT void mgpuLaunchKernel(CUfunction function, intptr_t gridX,
                                     intptr_t gridY, intptr_t gridZ,
                                     intptr_t blockX, intptr_t blockY,
                                     intptr_t blockZ, int32_t smem,
                                     CUstream stream, void **params,
                                     void **extra, size_t /*paramsCount*/) {
  // An empty grid has nothing to do (CUDA rejects it).
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return;
  if (!function) {
    reportError("launch of a kernel that failed to load");
    return;
  }
  if (!ready())
    return;
  if (smem > 48 * 1024 &&
      !check(
          driver.cuFuncSetAttribute(
              function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
          "cuFuncSetAttribute"))
    return;
  check(driver.cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                              blockZ, smem, stream, params, extra),
        "cuLaunchKernel");
}

LINATTN_EXPORT void mgpuLaunchClusterKernel(CUfunction, intptr_t, intptr_t,
                                            intptr_t, intptr_t, intptr_t,
                                            intptr_t, intptr_t, intptr_t,
                                            intptr_t, int32_t, CUstream,
                                            void **, void **, size_t) {
  reportError("cluster launches are not supported by this runtime");
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

LINATTN_EXPORT CUstream mgpuStreamCreate() {
  CUstream stream = nullptr;
  if (ready())
    check(driver.cuStreamCreate(&stream, CU_STREAM_DEFAULT), "cuStreamCreate");
  return stream;
}

LINATTN_EXPORT void mgpuStreamDestroy(CUstream stream) {
  if (stream && ready())
    check(driver.cuStreamDestroy(stream), "cuStreamDestroy");
}

LINATTN_EXPORT void mgpuStreamSynchronize(CUstream stream) {
  if (ready())
    check(driver.cuStreamSynchronize(stream), "cuStreamSynchronize");
}

LINATTN_EXPORT void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  if (event && ready())
    check(driver.cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent");
}

LINATTN_EXPORT CUevent mgpuEventCreate() {
  CUevent event = nullptr;
  if (ready())
    check(driver.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
          "cuEventCreate");
  return event;
}

LINATTN_EXPORT void mgpuEventDestroy(CUevent event) {
  if (event && ready())
    check(driver.cuEventDestroy(event), "cuEventDestroy");
}

LINATTN_EXPORT void mgpuEventSynchronize(CUevent event) {
  if (event && ready())
    check(driver.cuEventSynchronize(event), "cuEventSynchronize");
}

LINATTN_EXPORT void mgpuEventRecord(CUevent event, CUstream stream) {
  if (event && ready())
    check(driver.cuEventRecord(event, stream), "cuEventRecord");
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

// With a stream, allocations and frees are stream-ordered (the device's
// default memory pool): they neither synchronize nor are illegal while the
// stream is captured into a CUDA graph, where they become memory nodes.
// Without one (and for host-shared memory) they are the synchronous calls.

LINATTN_EXPORT void *mgpuMemAlloc(uint64_t bytes, CUstream stream,
                                  bool isHostShared) {
  CUdeviceptr pointer = 0;
  if (bytes == 0 || !ready())
    return nullptr;
  if (isHostShared)
    check(driver.cuMemAllocManaged(&pointer, bytes, CU_MEM_ATTACH_GLOBAL),
          "cuMemAllocManaged");
  else if (stream)
    check(driver.cuMemAllocAsync(&pointer, bytes, stream), "cuMemAllocAsync");
  else
    check(driver.cuMemAlloc(&pointer, bytes), "cuMemAlloc");
  return reinterpret_cast<void *>(pointer);
}

LINATTN_EXPORT void mgpuMemFree(void *pointer, CUstream stream) {
  if (!pointer || !ready())
    return;
  if (stream)
    check(driver.cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(pointer), stream),
          "cuMemFreeAsync");
  else
    check(driver.cuMemFree(reinterpret_cast<CUdeviceptr>(pointer)),
          "cuMemFree");
}

LINATTN_EXPORT void mgpuMemcpy(void *dst, void *src, size_t bytes,
                               CUstream stream) {
  if (bytes == 0 || !ready())
    return;
  check(driver.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                             reinterpret_cast<CUdeviceptr>(src), bytes, stream),
        "cuMemcpyAsync");
}

LINATTN_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                                 CUstream stream) {
  if (count == 0 || !ready())
    return;
  check(driver.cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                count, stream),
        "cuMemsetD32Async");
}

LINATTN_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                                 CUstream stream) {
  if (count == 0 || !ready())
    return;
  check(driver.cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                count, stream),
        "cuMemsetD16Async");
}

namespace {
/// The rank-independent head of a memref descriptor; sizes and strides follow.
struct DescriptorHead {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[1];
};

/// The first byte and the byte count a strided memref covers.
std::pair<char *, uint64_t> extentOf(int64_t rank, const void *descriptor,
                                     int64_t elementSize) {
  const auto *head = static_cast<const DescriptorHead *>(descriptor);
  const int64_t *sizes = head->sizesAndStrides;
  const int64_t *strides = sizes + rank;
  int64_t extent = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (sizes[i] == 0)
      return {head->aligned + head->offset * elementSize, 0};
    extent += (sizes[i] - 1) * strides[i];
  }
  return {head->aligned + head->offset * elementSize,
          static_cast<uint64_t>(extent * elementSize)};
}
} // namespace

LINATTN_EXPORT void mgpuMemHostRegister(void *pointer, uint64_t bytes) {
  if (bytes && ready())
    check(driver.cuMemHostRegister(pointer, bytes, 0), "cuMemHostRegister");
}

LINATTN_EXPORT void mgpuMemHostUnregister(void *pointer) {
  if (pointer && ready())
    check(driver.cuMemHostUnregister(pointer), "cuMemHostUnregister");
}

LINATTN_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                              int64_t elementSize) {
  auto [pointer, bytes] = extentOf(rank, descriptor, elementSize);
  mgpuMemHostRegister(pointer, bytes);
}

LINATTN_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                                int64_t elementSize) {
  auto [pointer, bytes] = extentOf(rank, descriptor, elementSize);
  if (bytes)
    mgpuMemHostUnregister(pointer);
}

LINATTN_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  // Takes effect when the driver is first used.
  defaultDevice = device;
}

//===----------------------------------------------------------------------===//
// linattn extras
//===----------------------------------------------------------------------===//

LINATTN_EXPORT const char *linattnCudaGetLastError(void) {
  std::lock_guard<std::mutex> lock(errorMutex);
  return hasError ? lastError.c_str() : nullptr;
}

LINATTN_EXPORT void linattnCudaClearLastError(void) {
  std::lock_guard<std::mutex> lock(errorMutex);
  hasError = false;
  lastError.clear();
}

LINATTN_EXPORT int linattnCudaGetDeviceCount(void) {
  std::call_once(initFlag, initialize);
  int count = 0;
  if (!driver.cuDeviceGetCount || !driver.ready ||
      driver.cuDeviceGetCount(&count) != CUDA_SUCCESS)
    return 0;
  return count;
}

LINATTN_EXPORT int linattnCudaGetDeviceName(char *name, int size) {
  if (!ready() || size <= 0)
    return 1;
  return check(driver.cuDeviceGetName(name, size, driver.device),
               "cuDeviceGetName")
             ? 0
             : 1;
}

LINATTN_EXPORT int linattnCudaGetComputeCapability(int *major, int *minor) {
  if (!ready() || !major || !minor)
    return 1;
  auto attribute = [](int *value, CUdevice_attribute which) {
    return check(driver.cuDeviceGetAttribute(value, which, driver.device),
                 "cuDeviceGetAttribute");
  };
  bool ok = attribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) &&
            attribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  return ok ? 0 : 1;
}

namespace {
CUevent timerStart = nullptr, timerStop = nullptr;
} // namespace

LINATTN_EXPORT int linattnCudaTimerStart(void) {
  if (!ready())
    return 1;
  if (!timerStart &&
      (!check(driver.cuEventCreate(&timerStart, CU_EVENT_DEFAULT),
              "cuEventCreate") ||
       !check(driver.cuEventCreate(&timerStop, CU_EVENT_DEFAULT),
              "cuEventCreate")))
    return 1;
  return check(driver.cuEventRecord(timerStart, nullptr), "cuEventRecord") ? 0
                                                                           : 1;
}

LINATTN_EXPORT double linattnCudaTimerStop(void) {
  if (!ready() || !timerStart)
    return -1.0;
  float ms = 0.0f;
  if (!check(driver.cuEventRecord(timerStop, nullptr), "cuEventRecord") ||
      !check(driver.cuEventSynchronize(timerStop), "cuEventSynchronize") ||
      !check(driver.cuEventElapsedTime(&ms, timerStart, timerStop),
             "cuEventElapsedTime"))
    return -1.0;
  return ms;
}
