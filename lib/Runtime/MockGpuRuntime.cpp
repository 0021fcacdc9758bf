//===- MockGpuRuntime.cpp - the mgpu* functions on host memory ------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// A stand-in for liblinattn_cuda_runtime.so on machines without a GPU: the
// same symbols, "device" memory is host memory (allocations, copies and
// memsets really happen), kernels are not run. Every call is written as one
// line to the log, $LINATTN_MOCK_GPU_LOG (appended to) or stderr, so that
// tests can check the host side's calling sequence:
//
//   mgpu: module-load bin 3864 bytes
//   mgpu: stream-create s1
//   mgpu: alloc d1 4096 bytes s1
//   mgpu: memcpy h2d d1 4096 bytes s1
//   mgpu: launch linattn_scan_forward_elu_0 grid 8x2x1 block 32x1x1 ...
//   mgpu: memcpy d2h d3 4096 bytes s1
//   mgpu: free d1 s1
//
// Device buffers are named d1, d2, ... and streams s1, s2, ... in the order
// they are created. When the library is unloaded it reports buffers that were
// never freed ("mgpu: leak d3 4096 bytes"). The device it describes is an
// H100 SXM's compute capability (9.0) and 132 SMs, or $LINATTN_MOCK_GPU_SMS
// SMs.
//
// Built with LINATTN_GPU_EMULATOR this is liblinattn_gpu_emulator.so: the
// same memory and log (written only when $LINATTN_MOCK_GPU_LOG is set), but
// the modules are the MLIR text of linattn-lower-to-nvvm{emulate=true} and
// launches run the kernels through the interpreter of GpuEmulator.cpp. Fresh
// device allocations are then filled with 0xff bytes (NaN in every float
// type) instead of zeros, so that results a kernel never writes show.
//
//===----------------------------------------------------------------------===//

#include "linattn/Runtime/CudaRuntime.h"

#ifdef LINATTN_GPU_EMULATOR
#include "GpuEmulator.h"

#include <chrono>
#endif

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#define LINATTN_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct Buffer {
  int id;
  uint64_t bytes;
};

struct Module {
  std::vector<std::unique_ptr<std::string>> functions;
};

struct State {
  std::mutex mutex;
  FILE *log = nullptr;
  std::map<char *, Buffer> buffers; // by start address
  int nextBuffer = 1;
  int nextStream = 1;
  ~State() {
    for (auto &[pointer, buffer] : buffers) {
      write("leak d%d %llu bytes", buffer.id,
            static_cast<unsigned long long>(buffer.bytes));
      std::free(pointer);
    }
    if (log && log != stderr)
      std::fclose(log);
  }

  void write(const char *format, ...) __attribute__((format(printf, 2, 3))) {
    if (!log) {
      const char *path = std::getenv("LINATTN_MOCK_GPU_LOG");
      log = path && *path ? std::fopen(path, "a") : nullptr;
#ifdef LINATTN_GPU_EMULATOR
      if (!log)
        return;
#else
      if (!log)
        log = stderr;
#endif
    }
    std::fputs("mgpu: ", log);
    va_list args;
    va_start(args, format);
    std::vfprintf(log, format, args);
    va_end(args);
    std::fputc('\n', log);
    std::fflush(log);
  }

  /// The buffer `pointer` points into, if any.
  const Buffer *find(const void *pointer) {
    const char *p = static_cast<const char *>(pointer);
    auto it = buffers.upper_bound(const_cast<char *>(p));
    if (it == buffers.begin())
      return nullptr;
    --it;
    if (p < it->first + it->second.bytes)
      return &it->second;
    return nullptr;
  }

  /// Whether [pointer, pointer + bytes) lies in one buffer.
  bool contains(const void *pointer, uint64_t bytes) {
    const char *p = static_cast<const char *>(pointer);
    auto it = buffers.upper_bound(const_cast<char *>(p));
    if (it == buffers.begin())
      return false;
    --it;
    return p >= it->first && p + bytes <= it->first + it->second.bytes;
  }

  std::string name(const void *pointer) {
    const Buffer *buffer = find(pointer);
    return buffer ? "d" + std::to_string(buffer->id) : "host";
  }
};

State &state() {
  static State instance;
  return instance;
}

/// The name of a function of mgpuModuleGetFunction.
const char *functionName(void *function) {
#ifdef LINATTN_GPU_EMULATOR
  return linattn::gpu_emulator::functionName(function);
#else
  return static_cast<std::string *>(function)->c_str();
#endif
}

/// Streams and events are small integers in disguise.
std::string handleName(const char *prefix, const void *handle) {
  if (!handle)
    return std::string(prefix) + "0";
  return prefix + std::to_string(reinterpret_cast<intptr_t>(handle));
}

} // namespace

LINATTN_EXPORT void *mgpuModuleLoad(void *data, size_t size) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("module-load bin %llu bytes", static_cast<unsigned long long>(size));
#ifdef LINATTN_GPU_EMULATOR
  return linattn::gpu_emulator::loadModule(data, size);
#else
  (void)data;
  return new Module();
#endif
}

LINATTN_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("module-load ptx %zu bytes O%d",
          std::strlen(static_cast<const char *>(data)), optLevel);
#ifdef LINATTN_GPU_EMULATOR
  linattn::gpu_emulator::fatalError(
      "mgpuModuleLoadJIT got PTX; the emulator runs the MLIR text of "
      "linattn-lower-to-nvvm{emulate=true}");
#else
  return new Module();
#endif
}

LINATTN_EXPORT void mgpuModuleUnload(void *module) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("module-unload");
#ifdef LINATTN_GPU_EMULATOR
  linattn::gpu_emulator::unloadModule(module);
#else
  delete static_cast<Module *>(module);
#endif
}

LINATTN_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
#ifdef LINATTN_GPU_EMULATOR
  return linattn::gpu_emulator::getFunction(module, name);
#else
  auto *m = static_cast<Module *>(module);
  m->functions.push_back(std::make_unique<std::string>(name));
  return m->functions.back().get();
#endif
}

LINATTN_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX,
                                     intptr_t gridY, intptr_t gridZ,
                                     intptr_t blockX, intptr_t blockY,
                                     intptr_t blockZ, int32_t smem,
                                     void *stream, void **params, void **,
                                     size_t paramsCount) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  bool empty = gridX == 0 || gridY == 0 || gridZ == 0;
  s.write("%s %s grid %ldx%ldx%ld block %ldx%ldx%ld smem %d params %zu %s",
          empty ? "launch-skipped-empty-grid" : "launch",
          functionName(function), static_cast<long>(gridX),
          static_cast<long>(gridY), static_cast<long>(gridZ),
          static_cast<long>(blockX), static_cast<long>(blockY),
          static_cast<long>(blockZ), smem, paramsCount,
          handleName("s", stream).c_str());
#ifdef LINATTN_GPU_EMULATOR
  if (empty)
    return;
  const int64_t grid[3] = {gridX, gridY, gridZ};
  const int64_t block[3] = {blockX, blockY, blockZ};
  linattn::gpu_emulator::launch(function, grid, block, params, paramsCount,
                                [&s](const void *pointer, uint64_t bytes) {
                                  return s.contains(pointer, bytes);
                                });
#else
  (void)params;
#endif
}

LINATTN_EXPORT void mgpuLaunchClusterKernel(void *function, intptr_t, intptr_t,
                                            intptr_t, intptr_t, intptr_t,
                                            intptr_t, intptr_t, intptr_t,
                                            intptr_t, int32_t, void *, void **,
                                            void **, size_t) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("launch-cluster %s", functionName(function));
#ifdef LINATTN_GPU_EMULATOR
  linattn::gpu_emulator::fatalError(
      std::string("cluster launches are not emulated (kernel ") +
      functionName(function) + ")");
#endif
}

LINATTN_EXPORT void *mgpuStreamCreate() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  void *stream =
      reinterpret_cast<void *>(static_cast<intptr_t>(s.nextStream++));
  s.write("stream-create %s", handleName("s", stream).c_str());
  return stream;
}

LINATTN_EXPORT void mgpuStreamDestroy(void *stream) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("stream-destroy %s", handleName("s", stream).c_str());
}

LINATTN_EXPORT void mgpuStreamSynchronize(void *stream) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("stream-sync %s", handleName("s", stream).c_str());
}

LINATTN_EXPORT void mgpuStreamWaitEvent(void *stream, void *) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("stream-wait-event %s", handleName("s", stream).c_str());
}

LINATTN_EXPORT void *mgpuEventCreate() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("event-create");
  return reinterpret_cast<void *>(1);
}

LINATTN_EXPORT void mgpuEventDestroy(void *) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("event-destroy");
}

LINATTN_EXPORT void mgpuEventSynchronize(void *) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("event-sync");
}

LINATTN_EXPORT void mgpuEventRecord(void *, void *stream) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("event-record %s", handleName("s", stream).c_str());
}

LINATTN_EXPORT void *mgpuMemAlloc(uint64_t bytes, void *stream,
                                  bool isHostShared) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (bytes == 0) {
    s.write("alloc-empty %s", handleName("s", stream).c_str());
    return nullptr;
  }
#ifdef LINATTN_GPU_EMULATOR
  // NaN in every float type: results a kernel leaves unwritten show. 256-byte
  // aligned, as cuMemAlloc's are (alignment checks and sector counts).
  char *pointer =
      static_cast<char *>(std::aligned_alloc(256, (bytes + 255) / 256 * 256));
  if (pointer)
    std::memset(pointer, 0xff, bytes);
#else
  // Zeroed, so that results of launches that never ran are deterministic.
  char *pointer = static_cast<char *>(std::calloc(bytes, 1));
#endif
  int id = s.nextBuffer++;
  s.buffers[pointer] = {id, bytes};
  s.write("alloc%s d%d %llu bytes %s", isHostShared ? "-shared" : "", id,
          static_cast<unsigned long long>(bytes),
          handleName("s", stream).c_str());
  return pointer;
}

LINATTN_EXPORT void mgpuMemFree(void *pointer, void *stream) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!pointer)
    return;
  auto it = s.buffers.find(static_cast<char *>(pointer));
  if (it == s.buffers.end()) {
    s.write("free-unknown-pointer %s", handleName("s", stream).c_str());
    return;
  }
  s.write("free d%d %s", it->second.id, handleName("s", stream).c_str());
  s.buffers.erase(it);
  std::free(pointer);
}

LINATTN_EXPORT void mgpuMemcpy(void *dst, void *src, size_t bytes,
                               void *stream) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  bool toDevice = s.find(dst), fromDevice = s.find(src);
  const char *kind =
      toDevice ? (fromDevice ? "d2d" : "h2d") : (fromDevice ? "d2h" : "h2h");
  std::string buffer = toDevice ? s.name(dst) : s.name(src);
  s.write("memcpy %s %s %zu bytes %s", kind, buffer.c_str(), bytes,
          handleName("s", stream).c_str());
  if (bytes)
    std::memmove(dst, src, bytes);
}

LINATTN_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                                 void *stream) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("memset32 %s %zu %s", s.name(dst).c_str(), count,
          handleName("s", stream).c_str());
  auto *words = static_cast<uint32_t *>(dst);
  for (size_t i = 0; i < count; ++i)
    words[i] = value;
}

LINATTN_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                                 void *stream) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("memset16 %s %zu %s", s.name(dst).c_str(), count,
          handleName("s", stream).c_str());
  auto *halves = static_cast<uint16_t *>(dst);
  for (size_t i = 0; i < count; ++i)
    halves[i] = value;
}

LINATTN_EXPORT void mgpuMemHostRegister(void *, uint64_t bytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("host-register %llu bytes", static_cast<unsigned long long>(bytes));
}

LINATTN_EXPORT void mgpuMemHostUnregister(void *) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("host-unregister");
}

LINATTN_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank, void *,
                                              int64_t elementSize) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("host-register-memref rank %lld element %lld",
          static_cast<long long>(rank), static_cast<long long>(elementSize));
}

LINATTN_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank, void *,
                                                int64_t elementSize) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("host-unregister-memref rank %lld element %lld",
          static_cast<long long>(rank), static_cast<long long>(elementSize));
}

LINATTN_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.write("set-default-device %d", device);
}

LINATTN_EXPORT const char *linattnCudaGetLastError(void) { return nullptr; }

LINATTN_EXPORT void linattnCudaClearLastError(void) {}

LINATTN_EXPORT int linattnCudaGetDeviceCount(void) { return 1; }

LINATTN_EXPORT int linattnCudaGetDeviceName(char *name, int size) {
  if (size <= 0)
    return 1;
#ifdef LINATTN_GPU_EMULATOR
  std::snprintf(name, size, "%s", linattn::gpu_emulator::deviceName().c_str());
#else
  std::snprintf(name, size, "mock GPU (host memory, kernels not run)");
#endif
  return 0;
}

// The chip linattn-lower-to-nvvm compiles for by default.
LINATTN_EXPORT int linattnCudaGetComputeCapability(int *major, int *minor) {
  if (!major || !minor)
    return 1;
  *major = 9;
  *minor = 0;
  return 0;
}

// An H100 SXM's, which linattn-lower-to-nvvm's sequence-parallel-blocks
// assumes by default, or $LINATTN_MOCK_GPU_SMS.
LINATTN_EXPORT int linattnCudaGetMultiprocessorCount(int *count) {
  if (!count)
    return 1;
  *count = 132;
  if (const char *text = std::getenv("LINATTN_MOCK_GPU_SMS")) {
    char *end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (end == text || *end || value <= 0 || value > 1 << 16)
      return 1;
    *count = static_cast<int>(value);
  }
  return 0;
}

#ifdef LINATTN_GPU_EMULATOR
// Host wall-clock time of the emulation: nothing like a GPU's, but it tells
// how long a test takes.
static std::chrono::steady_clock::time_point timerStart;

LINATTN_EXPORT int linattnCudaTimerStart(void) {
  timerStart = std::chrono::steady_clock::now();
  return 0;
}

LINATTN_EXPORT double linattnCudaTimerStop(void) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - timerStart)
      .count();
}
#else
LINATTN_EXPORT int linattnCudaTimerStart(void) { return 0; }

LINATTN_EXPORT double linattnCudaTimerStop(void) { return 0.0; }
#endif
