//===- FakeCudaDriver.cpp - a libcuda.so.1 that runs no kernel ------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// A stand-in for the CUDA driver, built as libcuda.so.1, so that the real
// runtime library (lib/Runtime/CudaRuntime.cpp, which dlopens libcuda.so.1)
// runs in tests on machines without a GPU: put its folder first on
// LD_LIBRARY_PATH. It implements the driver functions the runtime and the
// tests call with the driver's rules where the runtime could get them wrong,
// and logs every call as one line to $LINATTN_FAKE_CUDA_LOG (appended to) or
// stderr:
//
//   cuda: init 2 devices
//   cuda: primary-ctx-retain dev0 -> ctx0
//   cuda: module-load ctx0 cubin -> m1 (2 kernels)
//   cuda: launch ctx0 linattn_step_elu_0 grid 8x1x1 block 96x1x1 smem 0 s1
//
// Contexts (ctxN is device N's primary context), modules, functions,
// streams, events and allocations are named in the order they are made.
// The rules it enforces, each failing with the driver's error code:
//   - every call but cuInit and the error strings needs cuInit first;
//   - calls that act in a context need one current on the calling thread;
//     a kernel launches, and a stream or event is used, only in the context
//     it belongs to (contexts are per thread: cuCtxSetCurrent, push, pop);
//   - a module's image is a cubin (ELF) or PTX text; the functions looked up
//     in it must be its kernels; PTX for a newer chip than the device fails;
//   - a launch's dynamic shared memory above 48 KiB needs the function's
//     CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES raised first; blocks
//     have at most 1024 threads, and at most the .maxntid of a kernel from
//     PTX (with LINATTN_FAKE_CUDA_EXACT_BLOCKS=1 exactly as many: linattn's
//     kernels are compiled for the block they are launched with); grid y
//     and z at most 65535;
//   - freed pointers must be live allocations; copies and memsets must not
//     touch null and must stay inside the allocations they touch (device
//     memory is host memory here, and the copies and memsets are done).
//   - streams can be captured into graphs (cuStreamBeginCapture ...
//     cuGraphLaunch): their work is recorded, not done, and replayed by
//     graph launches (copies and memsets then happen); allocations on a
//     captured stream are the graph's (memory nodes). During a capture in
//     global mode the calls that may synchronize (synchronous allocations,
//     frees and copies, host registration, synchronizing the capturing
//     stream) and the legacy stream fail and invalidate the capture;
//   - when the program exits (an exit handler cuInit registers, before the
//     program's global destructors run) the driver shuts down: later calls
//     fail with CUDA_ERROR_DEINITIALIZED.
// Kernels are not run. The environment shapes the machine:
//   LINATTN_FAKE_CUDA_DEVICES   how many devices (default 1; 0: cuInit fails
//                               with CUDA_ERROR_NO_DEVICE)
//   LINATTN_FAKE_CUDA_CC        their compute capabilities (default 9.0):
//                               one, or one per device (9.0,8.0: device 1
//                               is an sm_80), the last for the rest
//   LINATTN_FAKE_CUDA_SMS       their multiprocessors (default 132, an
//                               H100 SXM's)
//   LINATTN_FAKE_CUDA_FAIL      NAME=ERROR[:N]: every call (or the first N
//                               calls) of driver function NAME
//                               (cuLaunchKernel, ...) fails with ERROR
//                               (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, ...)
// When the library is unloaded it reports allocations never freed ("cuda:
// leak d3 4096 bytes").
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

//===----------------------------------------------------------------------===//
// State
//===----------------------------------------------------------------------===//

struct Context {
  int device;
  int retains = 0;
};

struct Module {
  int id;
  Context *context;
  std::vector<std::string> kernels;
  /// The threads per block each kernel is compiled for (PTX's .maxntid or
  /// .reqntid; unknown for cubins).
  std::map<std::string, int> blockThreads;
};

struct Function {
  int id;
  Module *module;
  std::string name;
  int maxDynamicShared = 48 * 1024;
  /// Module::blockThreads of this kernel; 0 where unknown.
  int blockThreads = 0;
};

/// Work captured from a stream: what the log says of it and what replaying
/// it does (copies and memsets; launches run nothing).
struct Node {
  std::string what;
  std::function<void()> run;
};

/// The device memory a capture allocated on its stream (memory nodes): it
/// lives until the graph and every instantiation of it are destroyed.
struct GraphMemory {
  std::vector<uintptr_t> addresses;
  ~GraphMemory();
};

struct Graph {
  int id;
  std::vector<Node> nodes;
  std::shared_ptr<GraphMemory> memory = std::make_shared<GraphMemory>();
};

struct GraphExec {
  int id;
  std::vector<Node> nodes;
  std::shared_ptr<GraphMemory> memory;
};

struct Stream {
  int id;
  Context *context;
  /// The graph being captured from this stream, and whether an unsafe call
  /// during the capture invalidated it.
  std::unique_ptr<Graph> capture;
  bool invalidated = false;
};

struct Event {
  int id;
  Context *context;
  bool recorded = false;
};

/// Device memory: host memory aligned as cuMemAlloc's is.
struct FreeDeleter {
  void operator()(char *p) const { std::free(p); }
};
struct Allocation {
  int id;
  uint64_t bytes;
  std::unique_ptr<char, FreeDeleter> memory;
};

/// The largest dynamic shared memory a block may opt into (sm_90).
constexpr int kMaxOptInShared = 227 * 1024;

struct State {
  std::mutex mutex;
  FILE *log = stderr;
  bool initialized = false;
  bool shutDown = false;
  /// Launches must have exactly the threads their kernel is compiled for.
  bool exactBlocks = false;
  int devices = 1;
  /// Every device's multiprocessors.
  int multiprocessors = 132;
  /// The compute capabilities of devices 0, 1, ... as 10 * major + minor;
  /// the last also for the devices after it.
  std::vector<int> chips = {90};
  int chipOf(int device) const {
    return chips[std::min<size_t>(device, chips.size() - 1)];
  }
  std::string failName;
  CUresult failCode = CUDA_SUCCESS;
  /// How many more calls of failName fail (-1: all).
  int failuresLeft = -1;

  /// Whether this call of driver function `name` is made to fail.
  bool failing(const char *name) {
    if (failName != name || failuresLeft == 0)
      return false;
    if (failuresLeft > 0)
      --failuresLeft;
    return true;
  }
  std::vector<std::unique_ptr<Context>> primary;
  std::vector<std::unique_ptr<Module>> modules;
  std::vector<std::unique_ptr<Function>> functions;
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<std::unique_ptr<Event>> events;
  std::map<uintptr_t, Allocation> allocations;
  std::vector<std::unique_ptr<Graph>> graphs;
  std::vector<std::unique_ptr<GraphExec>> execs;
  /// Captures under way in CU_STREAM_CAPTURE_MODE_GLOBAL.
  int globalCaptures = 0;
  int nextModule = 1, nextStream = 1, nextEvent = 1, nextAllocation = 1;
  int nextGraph = 1, nextExec = 1;
  int nextFunction = 1;

  State();

  void write(const char *format, ...) __attribute__((format(printf, 2, 3))) {
    va_list args;
    va_start(args, format);
    std::fputs("cuda: ", log);
    std::vfprintf(log, format, args);
    std::fputc('\n', log);
    std::fflush(log);
    va_end(args);
  }
};

/// The error names and strings of the codes this driver returns.
struct ErrorInfo {
  CUresult code;
  const char *name;
  const char *text;
};
constexpr ErrorInfo kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED",
     "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
     "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE",
     "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
     "invalid device context"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX",
     "a PTX JIT compilation failed"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE",
     "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED",
     "unspecified launch failure"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE",
     "the operation is not permitted in the current state"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
     "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "operation failed due to a previous error during capture"},
    {CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
     "operation would make the legacy stream depend on a capturing blocking "
     "stream"},
};

const ErrorInfo *errorInfo(CUresult code) {
  for (const ErrorInfo &e : kErrors)
    if (e.code == code)
      return &e;
  return nullptr;
}

int envInt(const char *name, int fallback) {
  const char *value = std::getenv(name);
  return value && *value ? std::atoi(value) : fallback;
}

State::State() {
  if (const char *path = std::getenv("LINATTN_FAKE_CUDA_LOG"))
    if (FILE *file = std::fopen(path, "a"))
      log = file;
  devices = envInt("LINATTN_FAKE_CUDA_DEVICES", 1);
  multiprocessors = envInt("LINATTN_FAKE_CUDA_SMS", 132);
  exactBlocks = envInt("LINATTN_FAKE_CUDA_EXACT_BLOCKS", 0) != 0;
  if (const char *cc = std::getenv("LINATTN_FAKE_CUDA_CC")) {
    chips.clear();
    int major = 0, minor = 0, length = 0;
    for (const char *p = cc;
         std::sscanf(p, "%d.%d%n", &major, &minor, &length) == 2;
         p += length + (p[length] == ',')) {
      chips.push_back(10 * major + minor);
      if (!p[length])
        break;
    }
    if (chips.empty())
      chips.push_back(90);
  }
  if (const char *fail = std::getenv("LINATTN_FAKE_CUDA_FAIL")) {
    std::string spec(fail);
    size_t eq = spec.find('=');
    failName = spec.substr(0, eq);
    std::string error = eq == std::string::npos ? "" : spec.substr(eq + 1);
    size_t colon = error.find(':');
    if (colon != std::string::npos) {
      failuresLeft = std::atoi(error.c_str() + colon + 1);
      error.resize(colon);
    }
    failCode = CUDA_ERROR_LAUNCH_FAILED;
    for (const ErrorInfo &e : kErrors)
      if (error == e.name)
        failCode = e.code;
  }
}

/// Never destroyed: programs call the driver from their own destructors
/// (module unloads), which may run after this library's.
State &state() {
  static State *s = new State();
  return *s;
}

GraphMemory::~GraphMemory() {
  // Runs inside a driver call, with the state locked.
  for (uintptr_t address : addresses)
    state().allocations.erase(address);
}

/// Reports the allocations never freed when the library is unloaded.
__attribute__((destructor)) void reportLeaks() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (const auto &[address, a] : s.allocations)
    s.write("leak d%d %llu bytes", a.id,
            static_cast<unsigned long long>(a.bytes));
}

/// The calling thread's context stack; the top is the current context.
/// Trivially destructible: programs call the driver from destructors that
/// run after the main thread's thread-local objects are gone.
struct ContextStack {
  static constexpr int kDepth = 16;
  Context *entries[kDepth];
  int size;
};
thread_local ContextStack contextStack;

Context *current() {
  return contextStack.size ? contextStack.entries[contextStack.size - 1]
                           : nullptr;
}

/// Looks `handle` up among `owned`; null when it is not one of them.
template <typename T, typename H>
T *find(const std::vector<std::unique_ptr<T>> &owned, H handle) {
  for (const auto &p : owned)
    if (reinterpret_cast<H>(p.get()) == handle)
      return p.get();
  return nullptr;
}

template <typename T, typename H>
void erase(std::vector<std::unique_ptr<T>> &owned, H handle) {
  for (auto it = owned.begin(); it != owned.end(); ++it)
    if (reinterpret_cast<H>(it->get()) == handle) {
      owned.erase(it);
      return;
    }
}

/// Fails a call: logs "NAME -> ERROR" and returns the code.
CUresult fail(State &s, const char *name, CUresult code) {
  const ErrorInfo *e = errorInfo(code);
  s.write("%s -> %s", name, e ? e->name : "?");
  return code;
}

/// Destroys the object `handle` names among `owned` and logs `what` with
/// its number; CUDA_ERROR_INVALID_HANDLE when it is none of them.
template <typename T, typename H>
CUresult destroy(State &s, const char *name,
                 std::vector<std::unique_ptr<T>> &owned, H handle,
                 const char *what) {
  T *object = find(owned, handle);
  if (!object)
    return fail(s, name, CUDA_ERROR_INVALID_HANDLE);
  s.write("%s%d", what, object->id);
  erase(owned, handle);
  return CUDA_SUCCESS;
}

/// The checks every call but cuInit makes: initialized and not shut down,
/// not injected to fail, and (when `needsContext`) a context current.
CUresult enter(State &s, const char *name, bool needsContext) {
  if (!s.initialized)
    return fail(s, name, CUDA_ERROR_NOT_INITIALIZED);
  if (s.shutDown)
    return fail(s, name, CUDA_ERROR_DEINITIALIZED);
  if (s.failing(name))
    return fail(s, name, s.failCode);
  if (needsContext && !current())
    return fail(s, name, CUDA_ERROR_INVALID_CONTEXT);
  return CUDA_SUCCESS;
}

#define ENTER(needsContext)                                                    \
  State &s = state();                                                          \
  std::lock_guard<std::mutex> lock(s.mutex);                                   \
  if (CUresult r = enter(s, kName, needsContext))                              \
  return r

std::string contextName(const Context *c) {
  return c ? "ctx" + std::to_string(c->device) : "none";
}

std::string streamName(State &s, CUstream stream) {
  if (!stream)
    return "s0";
  Stream *st = find(s.streams, stream);
  return st ? "s" + std::to_string(st->id) : "s?";
}

/// Whether `stream` may be used in the current context: the legacy stream
/// always, a created one in its own context only.
bool streamUsable(State &s, CUstream stream) {
  if (!stream)
    return true;
  Stream *st = find(s.streams, stream);
  return st && st->context == current();
}

/// Marks every capture under way invalidated: its end fails.
void invalidateCaptures(State &s) {
  for (const auto &st : s.streams)
    if (st->capture)
      st->invalidated = true;
}

/// Fails call `name` while a capture in global mode is under way: the calls
/// that may synchronize (allocations and frees, synchronous copies, host
/// registration) are not allowed then and invalidate the capture.
CUresult unsafeDuringCapture(State &s, const char *name) {
  if (!s.globalCaptures)
    return CUDA_SUCCESS;
  invalidateCaptures(s);
  return fail(s, name, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
}

/// The stream `stream` names, null for the legacy stream.
Stream *streamOf(State &s, CUstream stream) {
  return stream ? find(s.streams, stream) : nullptr;
}

/// Fails call `name` on the legacy stream while a capture in global mode is
/// under way, and invalidates the capture (stricter than the driver, which
/// allows it beside non-blocking streams).
CUresult legacyStreamDuringCapture(State &s, const char *name,
                                   CUstream stream) {
  if (stream || !s.globalCaptures)
    return CUDA_SUCCESS;
  invalidateCaptures(s);
  return fail(s, name, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
}

/// Work on `stream` (usable in the current context): recorded into its
/// graph while it is captured, else logged and done.
CUresult enqueue(State &s, const char *name, CUstream stream,
                 const std::string &what, std::function<void()> run) {
  if (CUresult r = legacyStreamDuringCapture(s, name, stream))
    return r;
  Stream *st = streamOf(s, stream);
  if (st && st->capture) {
    s.write("capture s%d: %s", st->id, what.c_str());
    st->capture->nodes.push_back({what, std::move(run)});
    return CUDA_SUCCESS;
  }
  s.write("%s", what.c_str());
  if (run)
    run();
  return CUDA_SUCCESS;
}

/// The allocation holding [address, address + bytes), or null.
const Allocation *allocationOf(State &s, uintptr_t address, uint64_t bytes,
                               uintptr_t *base = nullptr) {
  auto it = s.allocations.upper_bound(address);
  if (it == s.allocations.begin())
    return nullptr;
  --it;
  if (address + bytes > it->first + it->second.bytes)
    return nullptr;
  if (base)
    *base = it->first;
  return &it->second;
}

/// "d3+128" for device memory, "host" for other memory.
std::string pointerName(State &s, uintptr_t address) {
  uintptr_t base = 0;
  const Allocation *a = allocationOf(s, address, 1, &base);
  if (!a)
    return "host";
  std::string name = "d" + std::to_string(a->id);
  if (address != base)
    name += "+" + std::to_string(address - base);
  return name;
}

/// Whether [address, address + bytes) is inside one allocation, or wholly
/// outside every allocation (host memory).
bool rangeValid(State &s, uintptr_t address, uint64_t bytes) {
  if (allocationOf(s, address, bytes))
    return true;
  for (const auto &[base, a] : s.allocations)
    if (address < base + a.bytes && base < address + bytes)
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Module images
//===----------------------------------------------------------------------===//

/// The kernels (global functions) of a cubin: the ELF's symbol table. The
/// cubin must be for the device's chip `chip` (10 * major + minor), or an
/// earlier one of the same major version, as the driver requires.
CUresult cubinKernels(const char *image, int chip,
                      std::vector<std::string> &kernels) {
  const auto *header = reinterpret_cast<const Elf64_Ehdr *>(image);
  if (header->e_ident[EI_CLASS] != ELFCLASS64 || header->e_machine != EM_CUDA)
    return CUDA_ERROR_INVALID_IMAGE;
  // ptxas's ELF ABI (version 8 on) keeps the SM number in bits 8 to 15.
  int sm = (header->e_flags >> 8) & 0xff;
  if (sm / 10 != chip / 10 || sm > chip)
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  const auto *sections =
      reinterpret_cast<const Elf64_Shdr *>(image + header->e_shoff);
  for (unsigned i = 0; i < header->e_shnum; ++i) {
    if (sections[i].sh_type != SHT_SYMTAB)
      continue;
    const char *names = image + sections[sections[i].sh_link].sh_offset;
    const auto *symbols =
        reinterpret_cast<const Elf64_Sym *>(image + sections[i].sh_offset);
    size_t count = sections[i].sh_size / sizeof(Elf64_Sym);
    for (size_t j = 0; j < count; ++j)
      if (ELF64_ST_TYPE(symbols[j].st_info) == STT_FUNC &&
          ELF64_ST_BIND(symbols[j].st_info) == STB_GLOBAL)
        kernels.push_back(names + symbols[j].st_name);
  }
  return CUDA_SUCCESS;
}

/// The kernels (.entry) of PTX text; an error when it is not PTX or targets
/// a chip newer than the device's `chip`.
CUresult ptxKernels(const char *text, int chip, Module &m) {
  const char *target = std::strstr(text, ".target sm_");
  if (!std::strstr(text, ".version") || !target)
    return CUDA_ERROR_INVALID_IMAGE;
  if (std::atoi(target + std::strlen(".target sm_")) > chip)
    return CUDA_ERROR_INVALID_PTX;
  for (const char *p = std::strstr(text, ".entry "); p;
       p = std::strstr(p + 1, ".entry ")) {
    const char *name = p + std::strlen(".entry ");
    m.kernels.emplace_back(name, std::strcspn(name, "( \n"));
    // The directives between the parameters and the body.
    const char *body = std::strchr(name, '{');
    for (const char *directive : {".maxntid ", ".reqntid "}) {
      const char *at = std::strstr(name, directive);
      if (!at || (body && at > body))
        continue;
      int x = 1, y = 1, z = 1;
      std::sscanf(at + std::strlen(directive), "%d, %d, %d", &x, &y, &z);
      m.blockThreads[m.kernels.back()] = x * y * z;
    }
  }
  return CUDA_SUCCESS;
}

CUresult loadModule(State &s, const char *kName, CUmodule *module,
                    const void *image, const char *how) {
  const char *data = static_cast<const char *>(image);
  auto m = std::make_unique<Module>();
  m->context = current();
  int chip = s.chipOf(m->context->device);
  const char *kind;
  if (std::memcmp(data, ELFMAG, SELFMAG) == 0) {
    kind = "cubin";
    if (CUresult r = cubinKernels(data, chip, m->kernels))
      return fail(s, kName, r);
  } else {
    kind = "ptx";
    if (CUresult r = ptxKernels(data, chip, *m))
      return fail(s, kName, r);
  }
  m->id = s.nextModule++;
  s.write("%s %s %s -> m%d (%zu kernels)", how, contextName(m->context).c_str(),
          kind, m->id, m->kernels.size());
  *module = reinterpret_cast<CUmodule>(m.get());
  s.modules.push_back(std::move(m));
  return CUDA_SUCCESS;
}

} // namespace

//===----------------------------------------------------------------------===//
// Initialization, errors, devices
//===----------------------------------------------------------------------===//

/// As the driver does, from an exit handler that cuInit registers: it runs
/// before the global destructors of programs that used the driver, whose
/// calls then fail with CUDA_ERROR_DEINITIALIZED.
static void shutDown() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.shutDown = true;
  s.write("shut down");
}

FAKE_EXPORT CUresult cuInit(unsigned int) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.failing("cuInit"))
    return fail(s, "cuInit", s.failCode);
  if (s.devices <= 0)
    return fail(s, "cuInit", CUDA_ERROR_NO_DEVICE);
  if (!s.initialized) {
    s.initialized = true;
    std::atexit(shutDown);
    for (int d = 0; d < s.devices; ++d)
      s.primary.push_back(std::make_unique<Context>(Context{d}));
    s.write("init %d devices", s.devices);
  }
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGetErrorName(CUresult error, const char **name) {
  const ErrorInfo *e = errorInfo(error);
  *name = e ? e->name : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_EXPORT CUresult cuGetErrorString(CUresult error, const char **text) {
  const ErrorInfo *e = errorInfo(error);
  *text = e ? e->text : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_EXPORT CUresult cuDeviceGetCount(int *count) {
  static const char *kName = "cuDeviceGetCount";
  ENTER(false);
  *count = s.devices;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  static const char *kName = "cuDeviceGet";
  ENTER(false);
  if (ordinal < 0 || ordinal >= s.devices)
    return fail(s, kName, CUDA_ERROR_INVALID_DEVICE);
  *device = ordinal;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
  static const char *kName = "cuDeviceGetName";
  ENTER(false);
  if (device < 0 || device >= s.devices)
    return fail(s, kName, CUDA_ERROR_INVALID_DEVICE);
  std::snprintf(name, length, "linattn fake CUDA device %d", device);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetAttribute(int *value,
                                          CUdevice_attribute attribute,
                                          CUdevice device) {
  static const char *kName = "cuDeviceGetAttribute";
  ENTER(false);
  if (device < 0 || device >= s.devices)
    return fail(s, kName, CUDA_ERROR_INVALID_DEVICE);
  if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
    *value = s.chipOf(device) / 10;
  else if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
    *value = s.chipOf(device) % 10;
  else if (attribute == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
    *value = s.multiprocessors;
  else
    return fail(s, kName, CUDA_ERROR_INVALID_VALUE);
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Contexts
//===----------------------------------------------------------------------===//

FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *context,
                                              CUdevice device) {
  static const char *kName = "cuDevicePrimaryCtxRetain";
  ENTER(false);
  if (device < 0 || device >= s.devices)
    return fail(s, kName, CUDA_ERROR_INVALID_DEVICE);
  Context *c = s.primary[device].get();
  ++c->retains;
  *context = reinterpret_cast<CUcontext>(c);
  s.write("primary-ctx-retain dev%d -> %s", device, contextName(c).c_str());
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice device) {
  static const char *kName = "cuDevicePrimaryCtxRelease";
  ENTER(false);
  if (device < 0 || device >= s.devices || s.primary[device]->retains == 0)
    return fail(s, kName, CUDA_ERROR_INVALID_DEVICE);
  --s.primary[device]->retains;
  s.write("primary-ctx-release dev%d", device);
  return CUDA_SUCCESS;
}

/// The context `handle` names, or null (also for a null handle).
static Context *contextOf(State &s, CUcontext handle) {
  return find(s.primary, handle);
}

FAKE_EXPORT CUresult cuCtxSetCurrent(CUcontext context) {
  static const char *kName = "cuCtxSetCurrent";
  ENTER(false);
  Context *c = contextOf(s, context);
  if (context && !c)
    return fail(s, kName, CUDA_ERROR_INVALID_CONTEXT);
  // The top of the stack is replaced (a null context pops it).
  if (contextStack.size)
    --contextStack.size;
  if (c)
    contextStack.entries[contextStack.size++] = c;
  s.write("ctx-set-current %s", contextName(c).c_str());
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxGetCurrent(CUcontext *context) {
  static const char *kName = "cuCtxGetCurrent";
  ENTER(false);
  *context = reinterpret_cast<CUcontext>(current());
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxGetDevice(CUdevice *device) {
  static const char *kName = "cuCtxGetDevice";
  ENTER(true);
  *device = current()->device;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxPushCurrent(CUcontext context) {
  static const char *kName = "cuCtxPushCurrent";
  ENTER(false);
  Context *c = contextOf(s, context);
  if (!c)
    return fail(s, kName, CUDA_ERROR_INVALID_CONTEXT);
  if (contextStack.size == ContextStack::kDepth)
    return fail(s, kName, CUDA_ERROR_INVALID_VALUE);
  contextStack.entries[contextStack.size++] = c;
  s.write("ctx-push %s", contextName(c).c_str());
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxPopCurrent(CUcontext *context) {
  static const char *kName = "cuCtxPopCurrent";
  ENTER(true);
  Context *c = current();
  --contextStack.size;
  if (context)
    *context = reinterpret_cast<CUcontext>(c);
  s.write("ctx-pop %s", contextName(c).c_str());
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Modules and launches
//===----------------------------------------------------------------------===//

FAKE_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  static const char *kName = "cuModuleLoadData";
  ENTER(true);
  return loadModule(s, kName, module, image, "module-load");
}

FAKE_EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
                                        unsigned int, CUjit_option *, void **) {
  static const char *kName = "cuModuleLoadDataEx";
  ENTER(true);
  return loadModule(s, kName, module, image, "module-load-jit");
}

FAKE_EXPORT CUresult cuModuleUnload(CUmodule module) {
  static const char *kName = "cuModuleUnload";
  ENTER(false);
  Module *m = find(s.modules, module);
  if (!m)
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  s.write("module-unload m%d", m->id);
  for (auto it = s.functions.begin(); it != s.functions.end();)
    it = (*it)->module == m ? s.functions.erase(it) : it + 1;
  erase(s.modules, module);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                                         const char *name) {
  static const char *kName = "cuModuleGetFunction";
  ENTER(false);
  Module *m = find(s.modules, module);
  if (!m)
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  bool known = false;
  for (const std::string &kernel : m->kernels)
    known |= kernel == name;
  if (!known)
    return fail(s, kName, CUDA_ERROR_NOT_FOUND);
  // One function per module and name, as the driver's handles are.
  for (const auto &f : s.functions)
    if (f->module == m && f->name == name) {
      *function = reinterpret_cast<CUfunction>(f.get());
      return CUDA_SUCCESS;
    }
  s.functions.push_back(
      std::make_unique<Function>(Function{s.nextFunction++, m, name}));
  auto threads = m->blockThreads.find(name);
  if (threads != m->blockThreads.end())
    s.functions.back()->blockThreads = threads->second;
  *function = reinterpret_cast<CUfunction>(s.functions.back().get());
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuFuncGetName(const char **name, CUfunction function) {
  static const char *kName = "cuFuncGetName";
  ENTER(false);
  Function *f = find(s.functions, function);
  if (!f)
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  *name = f->name.c_str();
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuFuncSetAttribute(CUfunction function,
                                        CUfunction_attribute attribute,
                                        int value) {
  static const char *kName = "cuFuncSetAttribute";
  ENTER(false);
  Function *f = find(s.functions, function);
  if (!f)
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ||
      value < 0 || value > kMaxOptInShared)
    return fail(s, kName, CUDA_ERROR_INVALID_VALUE);
  f->maxDynamicShared = value;
  s.write("func-set-attribute %s max-dynamic-shared %d", f->name.c_str(),
          value);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuLaunchKernel(CUfunction function, unsigned gridX,
                                    unsigned gridY, unsigned gridZ,
                                    unsigned blockX, unsigned blockY,
                                    unsigned blockZ, unsigned shared,
                                    CUstream stream, void **, void **) {
  static const char *kName = "cuLaunchKernel";
  ENTER(true);
  Function *f = find(s.functions, function);
  if (!f)
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  if (f->module->context != current() || !streamUsable(s, stream))
    return fail(s, kName, CUDA_ERROR_INVALID_CONTEXT);
  uint64_t threads = uint64_t(blockX) * blockY * blockZ;
  if (!gridX || !gridY || !gridZ || !threads || threads > 1024 || blockZ > 64 ||
      gridY > 65535 || gridZ > 65535 || int64_t(shared) > f->maxDynamicShared)
    return fail(s, kName, CUDA_ERROR_INVALID_VALUE);
  if (f->blockThreads &&
      (threads > uint64_t(f->blockThreads) ||
       (s.exactBlocks && threads != uint64_t(f->blockThreads)))) {
    s.write("launch of %s with %llu threads per block, compiled for %d",
            f->name.c_str(), static_cast<unsigned long long>(threads),
            f->blockThreads);
    return fail(s, kName, CUDA_ERROR_INVALID_VALUE);
  }
  char what[512];
  std::snprintf(what, sizeof(what),
                "launch %s %s grid %ux%ux%u block %ux%ux%u smem %u %s",
                contextName(current()).c_str(), f->name.c_str(), gridX, gridY,
                gridZ, blockX, blockY, blockZ, shared,
                streamName(s, stream).c_str());
  return enqueue(s, kName, stream, what, nullptr);
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

FAKE_EXPORT CUresult cuStreamCreate(CUstream *stream, unsigned int) {
  static const char *kName = "cuStreamCreate";
  ENTER(true);
  s.streams.push_back(std::make_unique<Stream>());
  s.streams.back()->id = s.nextStream++;
  s.streams.back()->context = current();
  *stream = reinterpret_cast<CUstream>(s.streams.back().get());
  s.write("stream-create %s s%d", contextName(current()).c_str(),
          s.streams.back()->id);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuStreamDestroy(CUstream stream) {
  static const char *kName = "cuStreamDestroy";
  ENTER(true);
  if (!stream || !streamUsable(s, stream))
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  s.write("stream-destroy %s", streamName(s, stream).c_str());
  erase(s.streams, stream);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  static const char *kName = "cuStreamSynchronize";
  ENTER(true);
  if (!streamUsable(s, stream))
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  Stream *st = streamOf(s, stream);
  if ((st && st->capture) || (!st && s.globalCaptures)) {
    invalidateCaptures(s);
    return fail(s, kName, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  }
  s.write("stream-sync %s", streamName(s, stream).c_str());
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuStreamWaitEvent(CUstream stream, CUevent event,
                                       unsigned int) {
  static const char *kName = "cuStreamWaitEvent";
  ENTER(true);
  Event *e = find(s.events, event);
  if (!e || !streamUsable(s, stream))
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  s.write("stream-wait-event %s e%d", streamName(s, stream).c_str(), e->id);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventCreate(CUevent *event, unsigned int) {
  static const char *kName = "cuEventCreate";
  ENTER(true);
  s.events.push_back(std::make_unique<Event>(Event{s.nextEvent++, current()}));
  *event = reinterpret_cast<CUevent>(s.events.back().get());
  s.write("event-create %s e%d", contextName(current()).c_str(),
          s.events.back()->id);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventDestroy(CUevent event) {
  static const char *kName = "cuEventDestroy";
  ENTER(false);
  return destroy(s, kName, s.events, event, "event-destroy e");
}

FAKE_EXPORT CUresult cuEventRecord(CUevent event, CUstream stream) {
  static const char *kName = "cuEventRecord";
  ENTER(true);
  Event *e = find(s.events, event);
  if (!e || e->context != current() || !streamUsable(s, stream))
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  e->recorded = true;
  s.write("event-record e%d %s", e->id, streamName(s, stream).c_str());
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventSynchronize(CUevent event) {
  static const char *kName = "cuEventSynchronize";
  ENTER(false);
  Event *e = find(s.events, event);
  if (!e)
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  s.write("event-sync e%d", e->id);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  static const char *kName = "cuEventElapsedTime";
  ENTER(false);
  Event *a = find(s.events, start), *b = find(s.events, end);
  if (!a || !b)
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  if (!a->recorded || !b->recorded)
    return fail(s, kName, CUDA_ERROR_NOT_READY);
  *ms = 1.0f;
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// A new allocation of `bytes` at `*pointer`; "dN N bytes" in `what`.
static CUresult allocate(State &s, const char *kName, CUdeviceptr *pointer,
                         size_t bytes, std::string &what) {
  if (bytes == 0)
    return fail(s, kName, CUDA_ERROR_INVALID_VALUE);
  char *memory =
      static_cast<char *>(std::aligned_alloc(256, (bytes + 255) / 256 * 256));
  if (!memory)
    return fail(s, kName, CUDA_ERROR_OUT_OF_MEMORY);
  std::memset(memory, 0, bytes);
  Allocation a{s.nextAllocation++, bytes,
               std::unique_ptr<char, FreeDeleter>(memory)};
  auto address = reinterpret_cast<uintptr_t>(a.memory.get());
  what = "d" + std::to_string(a.id) + " " + std::to_string(bytes) + " bytes";
  s.allocations.emplace(address, std::move(a));
  *pointer = address;
  return CUDA_SUCCESS;
}

/// A synchronous allocation (`how`: its name in the log).
static CUresult allocateNow(State &s, const char *kName, const char *how,
                            CUdeviceptr *pointer, size_t bytes) {
  if (CUresult r = unsafeDuringCapture(s, kName))
    return r;
  std::string what;
  if (CUresult r = allocate(s, kName, pointer, bytes, what))
    return r;
  s.write("%s %s %s", how, contextName(current()).c_str(), what.c_str());
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemAlloc(CUdeviceptr *pointer, size_t bytes) {
  static const char *kName = "cuMemAlloc";
  ENTER(true);
  return allocateNow(s, kName, "mem-alloc", pointer, bytes);
}

FAKE_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *pointer, size_t bytes,
                                       unsigned int) {
  static const char *kName = "cuMemAllocManaged";
  ENTER(true);
  return allocateNow(s, kName, "mem-alloc-managed", pointer, bytes);
}

FAKE_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *pointer, size_t bytes,
                                     CUstream stream) {
  static const char *kName = "cuMemAllocAsync";
  ENTER(true);
  if (!streamUsable(s, stream))
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  if (CUresult r = legacyStreamDuringCapture(s, kName, stream))
    return r;
  Stream *st = streamOf(s, stream);
  std::string what;
  if (CUresult r = allocate(s, kName, pointer, bytes, what))
    return r;
  // During a capture the memory belongs to the graph (a memory node).
  if (st && st->capture)
    st->capture->memory->addresses.push_back(*pointer);
  return enqueue(s, kName, stream,
                 "mem-alloc-async " + contextName(current()) + " " + what +
                     " " + streamName(s, stream),
                 nullptr);
}

FAKE_EXPORT CUresult cuMemFree(CUdeviceptr pointer) {
  static const char *kName = "cuMemFree";
  ENTER(false);
  if (CUresult r = unsafeDuringCapture(s, kName))
    return r;
  auto it = s.allocations.find(pointer);
  if (it == s.allocations.end())
    return fail(s, kName, CUDA_ERROR_INVALID_VALUE);
  s.write("mem-free d%d", it->second.id);
  s.allocations.erase(it);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemFreeAsync(CUdeviceptr pointer, CUstream stream) {
  static const char *kName = "cuMemFreeAsync";
  ENTER(true);
  if (!streamUsable(s, stream))
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  auto it = s.allocations.find(pointer);
  if (it == s.allocations.end())
    return fail(s, kName, CUDA_ERROR_INVALID_VALUE);
  std::string what = "mem-free-async d" + std::to_string(it->second.id) + " " +
                     streamName(s, stream);
  Stream *st = streamOf(s, stream);
  if (st && st->capture) {
    // Only the capture's own memory: the graph frees what it allocates.
    const auto &own = st->capture->memory->addresses;
    if (std::find(own.begin(), own.end(), pointer) == own.end())
      return fail(s, kName, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    return enqueue(s, kName, stream, what, nullptr);
  }
  if (CUresult r = enqueue(s, kName, stream, what, nullptr))
    return r;
  s.allocations.erase(it);
  return CUDA_SUCCESS;
}

/// A copy of `bytes` from `src` to `dst` on `stream`.
static CUresult copy(State &s, const char *kName, CUdeviceptr dst,
                     CUdeviceptr src, size_t bytes, CUstream stream) {
  if (!streamUsable(s, stream))
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  if (!dst || !src || !rangeValid(s, dst, bytes) || !rangeValid(s, src, bytes))
    return fail(s, kName, CUDA_ERROR_INVALID_VALUE);
  return enqueue(s, kName, stream,
                 "memcpy " + pointerName(s, dst) + " <- " +
                     pointerName(s, src) + " " + std::to_string(bytes) +
                     " bytes " + streamName(s, stream),
                 [=] {
                   std::memmove(reinterpret_cast<void *>(dst),
                                reinterpret_cast<void *>(src), bytes);
                 });
}

FAKE_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src,
                                   size_t bytes, CUstream stream) {
  static const char *kName = "cuMemcpyAsync";
  ENTER(true);
  return copy(s, kName, dst, src, bytes, stream);
}

FAKE_EXPORT CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src,
                                       size_t bytes, CUstream stream) {
  static const char *kName = "cuMemcpyDtoDAsync";
  ENTER(true);
  return copy(s, kName, dst, src, bytes, stream);
}

FAKE_EXPORT CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src,
                                  size_t bytes) {
  static const char *kName = "cuMemcpyHtoD";
  ENTER(true);
  if (CUresult r = unsafeDuringCapture(s, kName))
    return r;
  return copy(s, kName, dst, reinterpret_cast<CUdeviceptr>(src), bytes,
              nullptr);
}

FAKE_EXPORT CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes) {
  static const char *kName = "cuMemcpyDtoH";
  ENTER(true);
  if (CUresult r = unsafeDuringCapture(s, kName))
    return r;
  return copy(s, kName, reinterpret_cast<CUdeviceptr>(dst), src, bytes,
              nullptr);
}

FAKE_EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src,
                                       size_t bytes, CUstream stream) {
  static const char *kName = "cuMemcpyHtoDAsync";
  ENTER(true);
  return copy(s, kName, dst, reinterpret_cast<CUdeviceptr>(src), bytes,
              stream);
}

FAKE_EXPORT CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src,
                                       size_t bytes, CUstream stream) {
  static const char *kName = "cuMemcpyDtoHAsync";
  ENTER(true);
  return copy(s, kName, reinterpret_cast<CUdeviceptr>(dst), src, bytes,
              stream);
}

template <typename T>
static CUresult memset(State &s, const char *kName, CUdeviceptr dst, T value,
                       size_t count, CUstream stream) {
  if (!streamUsable(s, stream))
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  if (!allocationOf(s, dst, count * sizeof(T)))
    return fail(s, kName, CUDA_ERROR_INVALID_VALUE);
  char what[256];
  std::snprintf(what, sizeof(what), "memset%zu %s %zu x 0x%llx %s",
                8 * sizeof(T), pointerName(s, dst).c_str(), count,
                static_cast<unsigned long long>(value),
                streamName(s, stream).c_str());
  return enqueue(s, kName, stream, what, [=] {
    T *p = reinterpret_cast<T *>(dst);
    for (size_t i = 0; i < count; ++i)
      p[i] = value;
  });
}

FAKE_EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value,
                                      size_t count, CUstream stream) {
  static const char *kName = "cuMemsetD32Async";
  ENTER(true);
  return memset<uint32_t>(s, kName, dst, value, count, stream);
}

FAKE_EXPORT CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value,
                                      size_t count, CUstream stream) {
  static const char *kName = "cuMemsetD16Async";
  ENTER(true);
  return memset<uint16_t>(s, kName, dst, value, count, stream);
}

FAKE_EXPORT CUresult cuMemHostRegister(void *pointer, size_t bytes,
                                       unsigned int) {
  static const char *kName = "cuMemHostRegister";
  ENTER(true);
  if (CUresult r = unsafeDuringCapture(s, kName))
    return r;
  if (!pointer || !bytes)
    return fail(s, kName, CUDA_ERROR_INVALID_VALUE);
  s.write("host-register %zu bytes", bytes);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemHostUnregister(void *pointer) {
  static const char *kName = "cuMemHostUnregister";
  ENTER(true);
  if (CUresult r = unsafeDuringCapture(s, kName))
    return r;
  if (!pointer)
    return fail(s, kName, CUDA_ERROR_INVALID_VALUE);
  s.write("host-unregister");
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Stream capture and graphs
//===----------------------------------------------------------------------===//

FAKE_EXPORT CUresult cuStreamBeginCapture(CUstream stream,
                                          CUstreamCaptureMode mode) {
  static const char *kName = "cuStreamBeginCapture";
  ENTER(true);
  Stream *st = streamOf(s, stream);
  if (!st || st->context != current())
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  if (st->capture)
    return fail(s, kName, CUDA_ERROR_ILLEGAL_STATE);
  st->capture = std::make_unique<Graph>();
  st->capture->id = s.nextGraph++;
  st->invalidated = false;
  bool global = mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
  s.globalCaptures += global;
  s.write("begin-capture s%d%s", st->id, global ? " global" : "");
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph) {
  static const char *kName = "cuStreamEndCapture";
  ENTER(true);
  Stream *st = streamOf(s, stream);
  if (!st || !st->capture)
    return fail(s, kName, CUDA_ERROR_ILLEGAL_STATE);
  // Only global captures are counted; others do not restrict calls here.
  if (s.globalCaptures)
    --s.globalCaptures;
  std::unique_ptr<Graph> g = std::move(st->capture);
  *graph = nullptr;
  if (st->invalidated)
    return fail(s, kName, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  s.write("end-capture s%d -> g%d (%zu nodes)", st->id, g->id, g->nodes.size());
  *graph = reinterpret_cast<CUgraph>(g.get());
  s.graphs.push_back(std::move(g));
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGraphInstantiate(CUgraphExec *exec, CUgraph graph,
                                        unsigned long long) {
  static const char *kName = "cuGraphInstantiate";
  ENTER(true);
  Graph *g = find(s.graphs, graph);
  if (!g)
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  s.execs.push_back(std::make_unique<GraphExec>(
      GraphExec{s.nextExec++, g->nodes, g->memory}));
  *exec = reinterpret_cast<CUgraphExec>(s.execs.back().get());
  s.write("graph-instantiate g%d -> e%d", g->id, s.execs.back()->id);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  static const char *kName = "cuGraphLaunch";
  ENTER(true);
  GraphExec *e = find(s.execs, exec);
  if (!e || !streamUsable(s, stream))
    return fail(s, kName, CUDA_ERROR_INVALID_HANDLE);
  return enqueue(s, kName, stream,
                 "graph-launch e" + std::to_string(e->id) + " " +
                     streamName(s, stream) + " (" +
                     std::to_string(e->nodes.size()) + " nodes)",
                 [nodes = e->nodes] {
                   for (const Node &node : nodes)
                     if (node.run)
                       node.run();
                 });
}

FAKE_EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec) {
  static const char *kName = "cuGraphExecDestroy";
  ENTER(false);
  return destroy(s, kName, s.execs, exec, "graph-exec-destroy e");
}

FAKE_EXPORT CUresult cuGraphDestroy(CUgraph graph) {
  static const char *kName = "cuGraphDestroy";
  ENTER(false);
  return destroy(s, kName, s.graphs, graph, "graph-destroy g");
}
