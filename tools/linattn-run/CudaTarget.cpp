//===- CudaTarget.cpp - linattn-run's CUDA target -------------------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "CudaTarget.h"
#include "ToolLibraries.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
namespace cl = llvm::cl;

llvm::cl::OptionCategory linattn_run::toolOptions("linattn-run options");

namespace {
enum class Target { CPU, CUDA };
} // namespace

static cl::opt<Target> target(
    "target", cl::desc("Where the function runs"), cl::init(Target::CPU),
    cl::values(clEnumValN(Target::CPU, "cpu",
                          "the host CPU, through linattn-lower-to-cpu"),
               clEnumValN(Target::CUDA, "cuda",
                          "an NVIDIA GPU, through linattn-lower-to-nvvm and "
                          "the CUDA runtime library")),
    cl::cat(linattn_run::toolOptions));
static cl::opt<bool>
    mockGpu("mock-gpu",
            cl::desc("With --target=cuda: call the mock runtime, which keeps "
                     "buffers in host memory, runs no kernel and logs every "
                     "call to $LINATTN_MOCK_GPU_LOG or stderr (also "
                     "LINATTN_MOCK_GPU=1)"),
            cl::init(false), cl::cat(linattn_run::toolOptions));
static cl::opt<bool> emulateGpu(
    "emulate-gpu",
    cl::desc("With --target=cuda: run the kernels on the CPU through the GPU "
             "emulator (liblinattn_gpu_emulator.so), which interprets them "
             "and aborts on out-of-bounds accesses, shared-memory races and "
             "divergent barriers; adds emulate=true to linattn-lower-to-nvvm "
             "(also LINATTN_EMULATE_GPU=1)"),
    cl::init(false), cl::cat(linattn_run::toolOptions));
static cl::opt<std::string>
    gpuRuntime("gpu-runtime",
               cl::desc("With --target=cuda: the runtime library to call "
                        "(default: liblinattn_cuda_runtime.so, or the mock, "
                        "from this build)"),
               cl::init(""), cl::cat(linattn_run::toolOptions));

namespace {
/// The runtime's extras (include/linattn/Runtime/CudaRuntime.h), looked up
/// in the loaded library.
struct Runtime {
  const char *(*getLastError)() = nullptr;
  void (*clearLastError)() = nullptr;
  int (*getDeviceCount)() = nullptr;
  int (*getDeviceName)(char *, int) = nullptr;
  int (*timerStart)() = nullptr;
  double (*timerStop)() = nullptr;
};
} // namespace

static Runtime runtime;

bool linattn_run::isCudaTarget() { return target == Target::CUDA; }

/// The runtime library `name`: beside the tool (<bin>/../lib), or where the
/// build put it.
static std::string defaultRuntime(const char *argv0, StringRef name) {
  SmallString<256> built(LINATTN_RUNTIME_DIR);
  llvm::sys::path::append(built, name);
  return linattn_tools::findToolLibrary(linattn_tools::toolLibraryDir(argv0),
                                        built)
      .value_or(std::string(built));
}

static bool envFlag(const char *name) {
  const char *value = std::getenv(name);
  return value && *value && StringRef(value) != "0";
}

/// Adds emulate=true to the options of linattn-lower-to-nvvm in `pipeline`
/// (unless it sets emulate itself); fails when it has no such pass.
static LogicalResult addEmulateOption(std::string &pipeline) {
  StringRef name = "linattn-lower-to-nvvm";
  size_t at = pipeline.find(name.str());
  if (at == std::string::npos) {
    llvm::errs() << "linattn-run: --emulate-gpu needs linattn-lower-to-nvvm "
                    "in the pipeline\n";
    return failure();
  }
  size_t end = at + name.size();
  if (end >= pipeline.size() || pipeline[end] != '{') {
    pipeline.insert(end, "{emulate=true}");
    return success();
  }
  int depth = 0;
  for (size_t i = end; i < pipeline.size(); ++i) {
    if (pipeline[i] == '{')
      ++depth;
    else if (pipeline[i] == '}' && --depth == 0) {
      if (StringRef(pipeline).slice(end, i).contains("emulate="))
        return success();
      pipeline.insert(i, " emulate=true");
      return success();
    }
  }
  llvm::errs() << "linattn-run: unbalanced braces in the pipeline\n";
  return failure();
}

LogicalResult linattn_run::setUpCudaTarget(const char *argv0,
                                           std::string &pipeline,
                                           bool pipelineGiven,
                                           SmallVectorImpl<std::string> &libs) {
  bool emulate = emulateGpu || envFlag("LINATTN_EMULATE_GPU");
  bool mock = !emulate && (mockGpu || envFlag("LINATTN_MOCK_GPU"));
  if (emulate && mockGpu) {
    llvm::errs() << "linattn-run: --emulate-gpu and --mock-gpu exclude each "
                    "other\n";
    return failure();
  }
#ifdef LINATTN_STATIC_TOOL
  // The emulator library links libMLIR.so, a second MLIR in this process.
  if (emulate) {
    llvm::errs() << "linattn-run: this statically linked linattn-run (the "
                    "bundle's) cannot emulate the GPU; use the build's\n";
    return failure();
  }
#endif
  std::string path = gpuRuntime;
  if (path.empty())
    path = defaultRuntime(argv0, emulate ? "liblinattn_gpu_emulator.so"
                                 : mock  ? "liblinattn_mock_gpu_runtime.so"
                                         : "liblinattn_cuda_runtime.so");
  std::string error;
  auto library =
      llvm::sys::DynamicLibrary::getPermanentLibrary(path.c_str(), &error);
  if (!library.isValid()) {
    llvm::errs() << "linattn-run: cannot load the GPU runtime " << path << ": "
                 << error << "\n";
    return failure();
  }
#define LOOKUP(field, symbol)                                                  \
  runtime.field = reinterpret_cast<decltype(runtime.field)>(                   \
      library.getAddressOfSymbol(symbol));                                     \
  if (!runtime.field) {                                                        \
    llvm::errs() << "linattn-run: " << path << " has no " << symbol            \
                 << ": not a linattn GPU runtime\n";                           \
    return failure();                                                          \
  }
  LOOKUP(getLastError, "linattnCudaGetLastError")
  LOOKUP(clearLastError, "linattnCudaClearLastError")
  LOOKUP(getDeviceCount, "linattnCudaGetDeviceCount")
  LOOKUP(getDeviceName, "linattnCudaGetDeviceName")
  LOOKUP(timerStart, "linattnCudaTimerStart")
  LOOKUP(timerStop, "linattnCudaTimerStop")
#undef LOOKUP
  if (runtime.getDeviceCount() <= 0) {
    const char *why = runtime.getLastError();
    llvm::errs() << "linattn-run: no CUDA device"
                 << (why ? std::string(": ") + why : std::string()) << "\n";
    return failure();
  }
  char name[256] = {0};
  if (runtime.getDeviceName(name, sizeof(name)) == 0)
    llvm::outs() << "device: " << name << "\n";
  if (!pipelineGiven)
    pipeline = "linattn-lower-to-nvvm";
  if (emulate && failed(addEmulateOption(pipeline)))
    return failure();
  libs.push_back(path);
  return success();
}

void linattn_run::startCudaTimer() { runtime.timerStart(); }

double linattn_run::stopCudaTimer() { return runtime.timerStop(); }

LogicalResult linattn_run::checkCudaErrors() {
  const char *error = runtime.getLastError();
  if (!error)
    return success();
  llvm::errs() << "linattn-run: the GPU runtime failed: " << error << "\n";
  runtime.clearLastError();
  return failure();
}
