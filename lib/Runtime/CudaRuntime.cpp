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
// Every call acts in the context current on the calling thread: a
// framework's (PyTorch makes its device's primary context current), or, on a
// thread without one, the primary context of the default device (0, or the
// one mgpuSetDefaultDevice names), which the runtime then makes current
// there. A kernel image is loaded into each context that launches from it.
//
// Streams are created blocking (ordered with the legacy default stream), so
// timing events recorded on the default stream around a call of generated
// code cover the work it queues.
//
//===----------------------------------------------------------------------===//

#include "linattn/Runtime/CudaRuntime.h"

#include <cuda.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

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
  X(cuCtxGetCurrent)                                                           \
  X(cuCtxGetDevice)                                                            \
  X(cuCtxPushCurrent)                                                          \
  X(cuCtxPopCurrent)                                                           \
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
  /// Optional (CUDA 12.3 on): names kernels in messages.
  decltype(&::cuFuncGetName) cuFuncGetName = nullptr;
  void *library = nullptr;
  int devices = 0;
  bool ready = false;
  /// Why it is not ready.
  const std::string *failure = nullptr;
};

// The state below stays usable after this library's static destructors
// have run (the generated code unloads its modules from a global destructor
// that runs later): what has a destructor is allocated and never freed.
std::once_flag initFlag;
Driver driver;

/// The device whose primary context threads without a context use.
std::atomic<int> defaultDevice{0};
/// The primary contexts retained so far, by device ordinal (allocated when
/// the driver is loaded).
std::mutex contextMutex;
CUcontext *primaryContexts = nullptr;
/// The context this runtime made current on this thread, which it may
/// replace when the default device changes (a context the caller made
/// current it never replaces).
thread_local CUcontext runtimeContext = nullptr;

bool abortOnError() {
  const char *value = std::getenv("LINATTN_CUDA_ABORT_ON_ERROR");
  return value && *value && std::strcmp(value, "0") != 0;
}

/// The failure recorded on a thread: the first since the thread last cleared
/// it. Each thread has its own, as the CUDA runtime's last error is: a
/// failure on one thread neither holds back another's launches nor is
/// reported (and cleared) by another's check, which would leave the failing
/// call's caller without it.
struct Failure {
  std::string *message = nullptr; ///< Allocated on the first failure.
  bool recorded = false;
  bool launchesSkipped = false;
  bool threadEnded = false; ///< The thread's thread-locals are destroyed.
};
thread_local Failure failure;

/// Frees the thread's message when the thread ends. The main thread's ends
/// at exit before the global destructors that unload modules run: failures
/// after that are printed, not recorded.
struct FailureRelease {
  ~FailureRelease() {
    delete failure.message;
    failure.message = nullptr;
    failure.recorded = false;
    failure.threadEnded = true;
  }
};

/// Records `message` as the calling thread's failure unless one is recorded.
void recordFailure(const std::string &message) {
  if (failure.recorded || failure.threadEnded)
    return;
  if (!failure.message) {
    static thread_local FailureRelease release;
    (void)release;
    failure.message = new std::string();
  }
  *failure.message = message;
  failure.recorded = true;
}

void reportError(const std::string &message) {
  std::fprintf(stderr, "linattn-cuda-runtime: %s\n", message.c_str());
  if (abortOnError())
    std::abort();
  recordFailure(message);
}

/// Whether a launch must be skipped because a failure is recorded on this
/// thread: after a buffer that was not allocated or a copy that did not
/// happen, the kernel would touch memory that is not there, which on a GPU is
/// a fault that ends the process's CUDA context (a framework's too). Nothing
/// is launched from the thread until it clears the failure
/// (linattnCudaClearLastError); the first skip says so.
bool skipLaunchAfterFailure() {
  if (!failure.recorded)
    return false;
  if (!failure.launchesSkipped)
    std::fprintf(stderr,
                 "linattn-cuda-runtime: kernels are not launched until the "
                 "failure above is cleared\n");
  failure.launchesSkipped = true;
  return true;
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
  driver.cuFuncGetName = reinterpret_cast<decltype(&::cuFuncGetName)>(
      dlsym(driver.library, "cuFuncGetName"));
  if (!check(driver.cuInit(0), "cuInit") ||
      !check(driver.cuDeviceGetCount(&driver.devices), "cuDeviceGetCount"))
    return;
  primaryContexts = new CUcontext[driver.devices]();
  driver.ready = true;
}

/// Loads the driver on the first call; whether it is usable. When it is not,
/// the failure (printed once, by the thread that loaded it) is recorded on
/// every calling thread.
bool driverReady() {
  std::call_once(initFlag, [] {
    initialize();
    if (!driver.ready)
      driver.failure =
          new std::string(failure.recorded ? *failure.message
                                           : "the CUDA driver failed to load");
  });
  if (!driver.ready)
    recordFailure(*driver.failure);
  return driver.ready;
}

/// The primary context of device `ordinal`, retained on first use; null
/// (with an error recorded) when there is no such device.
CUcontext primaryContext(int ordinal) {
  std::lock_guard<std::mutex> lock(contextMutex);
  if (ordinal < 0 || ordinal >= driver.devices) {
    reportError("no CUDA device #" + std::to_string(ordinal) + " (" +
                std::to_string(driver.devices) + " found)");
    return nullptr;
  }
  CUcontext &context = primaryContexts[ordinal];
  CUdevice device = 0;
  if (!context &&
      (!check(driver.cuDeviceGet(&device, ordinal), "cuDeviceGet") ||
       !check(driver.cuDevicePrimaryCtxRetain(&context, device),
              "cuDevicePrimaryCtxRetain")))
    context = nullptr;
  return context;
}

/// Loads the driver once and returns the context this call acts in: the
/// calling thread's current context, or, where it has none (or only the one
/// this runtime made current there), the default device's primary context,
/// made current. Null (with an error recorded) when there is none.
CUcontext currentContext() {
  if (!driverReady())
    return nullptr;
  CUcontext context = nullptr;
  if (!check(driver.cuCtxGetCurrent(&context), "cuCtxGetCurrent"))
    return nullptr;
  if (context && context != runtimeContext)
    return context;
  CUcontext primary = primaryContext(defaultDevice.load());
  if (!primary)
    return nullptr;
  if (primary != context &&
      !check(driver.cuCtxSetCurrent(primary), "cuCtxSetCurrent"))
    return nullptr;
  runtimeContext = primary;
  return primary;
}

bool ready() { return currentContext() != nullptr; }

/// The device of the context calls act in; false (with an error recorded)
/// when there is none.
bool currentDevice(CUdevice &device) {
  return ready() && check(driver.cuCtxGetDevice(&device), "cuCtxGetDevice");
}

} // namespace

//===----------------------------------------------------------------------===//
// Modules and launches
//===----------------------------------------------------------------------===//

namespace {
/// A kernel image the generated code loaded (a cubin, or PTX to JIT-compile)
/// and the module it became in each context that looked up its kernels. The
/// generated code loads every image once, from a global constructor, and
/// looks a kernel up before each launch: the lookup loads the image into the
/// context of the launching thread on first use there, so that threads
/// driving different devices each find their kernels.
struct Image {
  std::string data;
  bool jit = false;
  int optLevel = 0;
  std::mutex mutex;
  std::vector<std::pair<CUcontext, CUmodule>> modules;
};

/// Loads `image` into the current context `context`; null (with an error
/// recorded) on failure.
CUmodule loadInto(Image &image, CUcontext context) {
  CUmodule module = nullptr;
  if (!image.jit) {
    if (!check(driver.cuModuleLoadData(&module, image.data.data()),
               "cuModuleLoadData"))
      return nullptr;
  } else {
    char log[8192] = {0};
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                              CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                              CU_JIT_OPTIMIZATION_LEVEL};
    void *values[] = {
        log, reinterpret_cast<void *>(sizeof(log)),
        reinterpret_cast<void *>(static_cast<intptr_t>(image.optLevel))};
    CUresult result = driver.cuModuleLoadDataEx(&module, image.data.data(), 3,
                                                options, values);
    if (result != CUDA_SUCCESS && log[0])
      reportError(std::string("PTX JIT compilation log: ") + log);
    if (!check(result, "cuModuleLoadDataEx (PTX JIT)"))
      return nullptr;
  }
  image.modules.emplace_back(context, module);
  return module;
}

/// The image, loaded into the current context: a handle for the generated
/// code, or null (with an error recorded) when it cannot be loaded.
Image *loadImage(std::string data, bool jit, int optLevel) {
  CUcontext context = currentContext();
  if (!context)
    return nullptr;
  auto image = std::make_unique<Image>();
  image->data = std::move(data);
  image->jit = jit;
  image->optLevel = optLevel < 0 ? 0 : (optLevel > 4 ? 4 : optLevel);
  if (!loadInto(*image, context))
    return nullptr;
  return image.release();
}
} // namespace

LINATTN_EXPORT void *mgpuModuleLoad(void *data, size_t size) {
  return loadImage(std::string(static_cast<const char *>(data), size),
                   /*jit=*/false, 0);
}

LINATTN_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return loadImage(static_cast<const char *>(data), /*jit=*/true, optLevel);
}

LINATTN_EXPORT void mgpuModuleUnload(void *handle) {
  std::unique_ptr<Image> image(static_cast<Image *>(handle));
  if (!image || !driver.ready)
    return;
  // Each module in its own context. A program's global destructors, where
  // its modules are unloaded, run after the driver shuts down at exit
  // (CUDA_ERROR_DEINITIALIZED), which frees them itself.
  auto checkUnlessShutDown = [](CUresult result, const char *what) {
    return result != CUDA_ERROR_DEINITIALIZED && check(result, what);
  };
  for (auto [context, module] : image->modules) {
    if (!checkUnlessShutDown(driver.cuCtxPushCurrent(context),
                             "cuCtxPushCurrent"))
      continue;
    checkUnlessShutDown(driver.cuModuleUnload(module), "cuModuleUnload");
    CUcontext popped = nullptr;
    checkUnlessShutDown(driver.cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
  }
}

LINATTN_EXPORT CUfunction mgpuModuleGetFunction(void *handle,
                                                const char *name) {
  CUfunction function = nullptr;
  auto *image = static_cast<Image *>(handle);
  if (!image) {
    reportError(std::string("no module to find kernel ") + name +
                " in (it failed to load)");
    return function;
  }
  CUcontext context = currentContext();
  if (!context)
    return function;
  CUmodule module = nullptr;
  {
    std::lock_guard<std::mutex> lock(image->mutex);
    for (auto [loadedIn, loaded] : image->modules)
      if (loadedIn == context)
        module = loaded;
    if (!module)
      module = loadInto(*image, context);
  }
  if (module)
    check(driver.cuModuleGetFunction(&function, module, name),
          "cuModuleGetFunction");
  return function;
}

namespace {
/// "KERNEL (grid XxYxZ, block XxYxZ, N bytes of dynamic shared memory)", for
/// messages about a launch.
std::string describeLaunch(CUfunction function, intptr_t gridX, intptr_t gridY,
                           intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                           intptr_t blockZ, int32_t smem) {
  const char *name = nullptr;
  if (!driver.cuFuncGetName ||
      driver.cuFuncGetName(&name, function) != CUDA_SUCCESS || !name)
    name = "a kernel";
  auto dims = [](intptr_t x, intptr_t y, intptr_t z) {
    return std::to_string(x) + "x" + std::to_string(y) + "x" +
           std::to_string(z);
  };
  return std::string(name) + " (grid " + dims(gridX, gridY, gridZ) +
         ", block " + dims(blockX, blockY, blockZ) + ", " +
         std::to_string(smem) + " bytes of dynamic shared memory)";
}
} // namespace

LINATTN_EXPORT void mgpuLaunchKernel(CUfunction function, intptr_t gridX,
                                     intptr_t gridY, intptr_t gridZ,
                                     intptr_t blockX, intptr_t blockY,
                                     intptr_t blockZ, int32_t smem,
                                     CUstream stream, void **params,
                                     void **extra, size_t /*paramsCount*/) {
  // An empty grid has nothing to do (CUDA rejects it).
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return;
  if (skipLaunchAfterFailure())
    return;
  if (!function) {
    reportError("launch of a kernel that failed to load");
    return;
  }
  if (!ready())
    return;
  auto describe = [&] {
    return describeLaunch(function, gridX, gridY, gridZ, blockX, blockY, blockZ,
                          smem);
  };
  // The driver takes 32-bit sizes: larger ones would wrap around and launch
  // part of the grid.
  if (gridX > INT32_MAX || gridY > 65535 || gridZ > 65535) {
    reportError("cannot launch " + describe() +
                ": CUDA's grid has at most 2^31 - 1 blocks in x and 65535 "
                "in y and z");
    return;
  }
  // The messages are built only on failure: launches are the hot path.
  if (smem > 48 * 1024) {
    CUresult result = driver.cuFuncSetAttribute(
        function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem);
    if (result != CUDA_SUCCESS) {
      check(result, ("cuFuncSetAttribute for " + describe()).c_str());
      return;
    }
  }
  CUresult result =
      driver.cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                            blockZ, smem, stream, params, extra);
  if (result != CUDA_SUCCESS)
    check(result, ("cuLaunchKernel of " + describe()).c_str());
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
  // From the next call of every thread without a context of its own.
  defaultDevice = device;
}

//===----------------------------------------------------------------------===//
// linattn extras
//===----------------------------------------------------------------------===//

LINATTN_EXPORT const char *linattnCudaGetLastError(void) {
  return failure.recorded ? failure.message->c_str() : nullptr;
}

LINATTN_EXPORT void linattnCudaClearLastError(void) {
  failure.recorded = false;
  failure.launchesSkipped = false;
}

LINATTN_EXPORT int linattnCudaGetDeviceCount(void) {
  return driverReady() ? driver.devices : 0;
}

LINATTN_EXPORT int linattnCudaGetDeviceName(char *name, int size) {
  CUdevice device = 0;
  if (size <= 0 || !currentDevice(device))
    return 1;
  return check(driver.cuDeviceGetName(name, size, device), "cuDeviceGetName")
             ? 0
             : 1;
}

LINATTN_EXPORT int linattnCudaGetComputeCapability(int *major, int *minor) {
  CUdevice device = 0;
  if (!major || !minor || !currentDevice(device))
    return 1;
  auto attribute = [device](int *value, CUdevice_attribute which) {
    return check(driver.cuDeviceGetAttribute(value, which, device),
                 "cuDeviceGetAttribute");
  };
  bool ok = attribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) &&
            attribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  return ok ? 0 : 1;
}

LINATTN_EXPORT int linattnCudaGetMultiprocessorCount(int *count) {
  CUdevice device = 0;
  if (!count || !currentDevice(device))
    return 1;
  return check(driver.cuDeviceGetAttribute(
                   count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
               "cuDeviceGetAttribute")
             ? 0
             : 1;
}

namespace {
/// The calling thread's timing events, created in `context`.
struct Timer {
  CUcontext context = nullptr;
  CUevent start = nullptr, stop = nullptr;
};
thread_local Timer timer;
} // namespace

LINATTN_EXPORT int linattnCudaTimerStart(void) {
  CUcontext context = currentContext();
  if (!context)
    return 1;
  if (timer.context != context) {
    // Events belong to the context they were created in.
    if (timer.start)
      driver.cuEventDestroy(timer.start);
    if (timer.stop)
      driver.cuEventDestroy(timer.stop);
    timer = Timer();
    if (!check(driver.cuEventCreate(&timer.start, CU_EVENT_DEFAULT),
               "cuEventCreate") ||
        !check(driver.cuEventCreate(&timer.stop, CU_EVENT_DEFAULT),
               "cuEventCreate"))
      return 1;
    timer.context = context;
  }
  return check(driver.cuEventRecord(timer.start, nullptr), "cuEventRecord") ? 0
                                                                            : 1;
}

LINATTN_EXPORT double linattnCudaTimerStop(void) {
  if (currentContext() != timer.context || !timer.context)
    return -1.0;
  float ms = 0.0f;
  if (!check(driver.cuEventRecord(timer.stop, nullptr), "cuEventRecord") ||
      !check(driver.cuEventSynchronize(timer.stop), "cuEventSynchronize") ||
      !check(driver.cuEventElapsedTime(&ms, timer.start, timer.stop),
             "cuEventElapsedTime"))
    return -1.0;
  return ms;
}
