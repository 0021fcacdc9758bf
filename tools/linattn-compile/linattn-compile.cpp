//===- linattn-compile.cpp - ahead-of-time compile a linattn module -------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Lowers a module of functions on tensors with a pass pipeline,
// `linattn-lower-to-cpu` by default (the one linattn-run JIT-compiles with),
// translates it to LLVM IR, optimizes it for a target machine (the host CPU
// and its features unless --mtriple/--mcpu/--mattr say otherwise) and writes
// an object file. On request it also
//   --header=<f.h>      writes a C header declaring the `_mlir_ciface_`
//                       entry points and the memref descriptor structs;
//   --shared=<f.so>     links a shared library with the compiler driver found
//                       at configure time;
//   --link-flags=<f>    writes the linker flags the object needs (runtime
//                       libraries, as a response file: `cc main.c x.o @f`).
// Runtime libraries are found from the calls the code makes: MLIR's C runner
// utilities (memrefCopy), the OpenMP runtime (__kmpc_*, --openmp=auto|on|off),
// MLIR's async runtime, linattn's GPU runtime (mgpu*, --gpu-runtime) and
// its caching host allocator (linattnHost*: --host-allocator=caching binds
// the code's malloc, aligned_alloc and free to it, as the JIT does).
//
// --target=cuda lowers with `linattn-lower-to-nvvm{device-buffers=true}`
// instead: the entry points take device buffers, results as out-params and
// a CUDA stream (docs/UsingLinAttn.md), and the kernels are embedded in the
// object.
//
//===----------------------------------------------------------------------===//

#include "ToolLibraries.h"

#include "linattn/Conversion/LinAttnToGPU/LinAttnToGPU.h"
#include "linattn/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace mlir;
namespace cl = llvm::cl;

/// The tool's own options: the ones --help lists.
static cl::OptionCategory toolOptions("linattn-compile options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<input .mlir file>"),
                                          cl::init("-"), cl::cat(toolOptions));
static cl::opt<std::string> outputFilename("o",
                                           cl::desc("Output file (object, "
                                                    "assembly or LLVM IR)"),
                                           cl::value_desc("file"), cl::init(""),
                                           cl::cat(toolOptions));
enum class Target { CPU, CUDA };
static cl::opt<Target> target(
    "target", cl::desc("What the compiled functions run on"),
    cl::init(Target::CPU),
    cl::values(clEnumValN(Target::CPU, "cpu",
                          "the host CPU (linattn-lower-to-cpu, default)"),
               clEnumValN(Target::CUDA, "cuda",
                          "an NVIDIA GPU: kernels on the caller's device "
                          "buffers and stream "
                          "(linattn-lower-to-nvvm{device-buffers=true})")),
    cl::cat(toolOptions));
static cl::opt<std::string>
    pipeline("pipeline",
             cl::desc("Pass pipeline that lowers the module to the LLVM "
                      "dialect (default: the --target's)"),
             cl::init(""), cl::cat(toolOptions));
static cl::opt<std::string> gpuRuntime(
    "gpu-runtime",
    cl::desc("GPU runtime library the link flags name when the code calls "
             "mgpu* functions: cuda (liblinattn_cuda_runtime.so, default), "
             "mock (liblinattn_mock_gpu_runtime.so) or a path"),
    cl::init("cuda"), cl::cat(toolOptions));
enum class EmitKind { Object, Assembly, LLVMIR };
static cl::opt<EmitKind>
    emitKind("emit", cl::desc("What -o receives"), cl::init(EmitKind::Object),
             cl::values(clEnumValN(EmitKind::Object, "obj", "an object file"),
                        clEnumValN(EmitKind::Assembly, "asm", "assembly"),
                        clEnumValN(EmitKind::LLVMIR, "llvm",
                                   "optimized LLVM IR (textual)")),
             cl::cat(toolOptions));
static cl::opt<std::string>
    targetTriple("mtriple", cl::desc("Target triple (default: the host's)"),
                 cl::init(""), cl::cat(toolOptions));
static cl::opt<std::string>
    targetCPU("mcpu",
              cl::desc("Target CPU (default: the host CPU; \"generic\" for "
                       "portable code)"),
              cl::init(""), cl::cat(toolOptions));
static cl::opt<std::string> targetFeatures(
    "mattr",
    cl::desc("Target features, e.g. +avx2,-avx512f (default: the host CPU's "
             "when --mcpu is not given; these are added to them)"),
    cl::init(""), cl::cat(toolOptions));
static cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level"),
                                  cl::init(3), cl::cat(toolOptions));
static cl::opt<std::string>
    headerFilename("header",
                   cl::desc("Write a C header declaring the entry points"),
                   cl::value_desc("file"), cl::init(""), cl::cat(toolOptions));
static cl::opt<std::string>
    sharedFilename("shared",
                   cl::desc("Also link a shared library with the object"),
                   cl::value_desc("file"), cl::init(""), cl::cat(toolOptions));
static cl::opt<std::string> linkFlagsFilename(
    "link-flags",
    cl::desc("Write the linker flags the object needs (one a line, a "
             "response file for clang/gcc: @file)"),
    cl::value_desc("file"), cl::init(""), cl::cat(toolOptions));
enum class OpenMPMode { Auto, On, Off };
static cl::opt<OpenMPMode>
    openmp("openmp", cl::desc("Link the OpenMP runtime"),
           cl::init(OpenMPMode::Auto),
           cl::values(clEnumValN(OpenMPMode::Auto, "auto",
                                 "when the code calls it (default)"),
                      clEnumValN(OpenMPMode::On, "on", "always"),
                      clEnumValN(OpenMPMode::Off, "off", "never")),
           cl::cat(toolOptions));
enum class HostAllocator { System, Caching };
static cl::opt<HostAllocator> hostAllocator(
    "host-allocator",
    cl::desc("What the compiled code's malloc, aligned_alloc and free are"),
    cl::init(HostAllocator::System),
    cl::values(clEnumValN(HostAllocator::System, "system",
                          "the C library's (default)"),
               clEnumValN(HostAllocator::Caching, "caching",
                          "linattn's caching host allocator "
                          "(liblinattn_host_allocator.so): freed blocks of "
                          "128 KiB or more are reused")),
    cl::cat(toolOptions));
static cl::opt<std::string>
    linker("linker",
           cl::desc("Compiler driver that links --shared, with its own "
                    "linker (default: the C compiler and linker linattn was "
                    "configured with; cc where that compiler is missing)"),
           cl::init(LINATTN_LINKER_DRIVER), cl::cat(toolOptions));
static cl::list<std::string>
    extraLinkArgs("Xlinker-arg",
                  cl::desc("Extra argument for the --shared link command"),
                  cl::cat(toolOptions));
static cl::opt<bool> verbose("v", cl::desc("Print the link command"),
                             cl::init(false), cl::cat(toolOptions));

/// Whether --mcpu asks for the host's CPU (empty, native or host).
static bool hostCpuRequested() {
  return targetCPU.empty() || targetCPU == "native" || targetCPU == "host";
}

/// linattn-lower-to-cpu for --mcpu and --mattr: the kernels' vector width
/// and register tile follow the CPU the code is generated for.
static std::string defaultCpuPipeline() {
  SmallVector<std::string> options;
  if (!hostCpuRequested())
    options.push_back("target-cpu=" + targetCPU);
  if (!targetFeatures.empty())
    options.push_back("target-features=" + targetFeatures);
  if (options.empty())
    return "linattn-lower-to-cpu";
  return "linattn-lower-to-cpu{" + llvm::join(options, " ") + "}";
}

static int fail(const Twine &message) {
  llvm::errs() << "linattn-compile: " << message << "\n";
  return 1;
}

//===----------------------------------------------------------------------===//
// The C header
//===----------------------------------------------------------------------===//

namespace {
/// How one argument or result of an entry function is passed in C.
struct CType {
  /// The C element type ("float") or scalar type.
  std::string element;
  /// Short element name for struct names ("f32").
  std::string elementName;
  /// Rank for memrefs; std::nullopt for scalars.
  std::optional<int64_t> rank;

  std::string descriptorName() const {
    return "linattn_memref_" + elementName + "_" + std::to_string(*rank) + "d";
  }
  /// The C type of a value of this type held in a struct or returned.
  std::string valueType() const { return rank ? descriptorName() : element; }
};
} // namespace

static FailureOr<CType> cTypeOf(Type type) {
  auto elementOf = [](Type t, CType &c) -> LogicalResult {
    if (t.isF32()) {
      c.element = "float";
      c.elementName = "f32";
    } else if (t.isF64()) {
      c.element = "double";
      c.elementName = "f64";
    } else if (t.isF16() || t.isBF16()) {
      // Passed as their bit patterns.
      c.element = "uint16_t";
      c.elementName = t.isF16() ? "f16" : "bf16";
    } else if (t.isIndex()) {
      c.element = "intptr_t";
      c.elementName = "index";
    } else if (t.isSignlessInteger(1)) {
      c.element = "bool";
      c.elementName = "i1";
    } else if (auto i = dyn_cast<IntegerType>(t);
               i && llvm::is_contained({8u, 16u, 32u, 64u}, i.getWidth())) {
      c.element = "int" + std::to_string(i.getWidth()) + "_t";
      c.elementName = "i" + std::to_string(i.getWidth());
    } else {
      return failure();
    }
    return success();
  };
  CType c;
  if (isa<RankedTensorType, MemRefType>(type)) {
    auto shaped = cast<ShapedType>(type);
    if (failed(elementOf(shaped.getElementType(), c)))
      return failure();
    c.rank = shaped.getRank();
    return c;
  }
  // Scalars are passed in registers: only types whose C counterpart has the
  // same calling convention (not f16/bf16, not i1).
  if (type.isF16() || type.isBF16() || type.isSignlessInteger(1) ||
      failed(elementOf(type, c)))
    return failure();
  return c;
}

static void writeDescriptor(llvm::raw_ostream &os, const CType &c) {
  os << "/// A memref of rank " << *c.rank << " of " << c.element
     << ": the data is at aligned + offset, element (i, ...) at\n"
     << "/// aligned[offset + i * strides[0] + ...].\n";
  os << "typedef struct {\n"
     << "  " << c.element << " *allocated;\n"
     << "  " << c.element << " *aligned;\n"
     << "  int64_t offset;\n";
  if (*c.rank > 0)
    os << "  int64_t sizes[" << *c.rank << "];\n"
       << "  int64_t strides[" << *c.rank << "];\n";
  os << "} " << c.descriptorName() << ";\n\n";
}

namespace {
/// A public function of the module, with the user's types (read before
/// lowering).
struct Entry {
  std::string name;
  FunctionType type;
};
} // namespace

/// Checks that the header can declare every entry point.
static LogicalResult checkHeaderTypes(ArrayRef<Entry> entries) {
  for (const Entry &entry : entries) {
    for (auto [what, types] :
         {std::make_pair("argument", entry.type.getInputs()),
          std::make_pair("result", entry.type.getResults())}) {
      for (auto [i, type] : llvm::enumerate(types)) {
        if (succeeded(cTypeOf(type)))
          continue;
        llvm::errs() << "linattn-compile: @" << entry.name << ": " << what
                     << " #" << i << " has type " << type
                     << ", which the header cannot declare\n";
        return failure();
      }
    }
  }
  return success();
}

/// Writes the header for the entry points: with `deviceBuffers`, in the
/// device-buffer calling convention of linattn-lower-to-nvvm.
static LogicalResult writeHeader(StringRef path, ArrayRef<Entry> entries,
                                 StringRef source, bool deviceBuffers) {
  std::string guard = "LINATTN_AOT_";
  for (char ch : llvm::sys::path::filename(path))
    guard += llvm::isAlnum(ch) ? llvm::toUpper(ch) : '_';

  std::string body, descriptors;
  llvm::raw_string_ostream bodyOs(body), descOs(descriptors);
  llvm::StringSet<> written;
  auto need = [&](const CType &c) {
    if (c.rank && written.insert(c.descriptorName()).second)
      writeDescriptor(descOs, c);
  };
  for (const Entry &entry : entries) {
    SmallVector<CType> args, results;
    for (auto [types, out] :
         {std::make_pair(entry.type.getInputs(), &args),
          std::make_pair(entry.type.getResults(), &results)}) {
      for (Type type : types) {
        FailureOr<CType> c = cTypeOf(type);
        if (failed(c))
          return failure();
        need(*c);
        out->push_back(*c);
      }
    }
    const std::string &name = entry.name;
    bodyOs << "/// @" << name << " " << entry.type << "\n";
    std::string returnType = "void";
    SmallVector<std::string> params;
    if (deviceBuffers) {
      // Arguments, then the results' out-params, then the stream.
      for (auto [i, c] : llvm::enumerate(args))
        params.push_back(c.rank
                             ? c.descriptorName() + " *arg" + std::to_string(i)
                             : c.element + " arg" + std::to_string(i));
      for (auto [i, c] : llvm::enumerate(results))
        params.push_back(c.descriptorName() + " *result" + std::to_string(i));
      params.push_back("void *stream");
      bodyOs << "void _mlir_ciface_" << name << "(" << llvm::join(params, ", ")
             << ");\n\n";
      continue;
    }
    if (results.size() == 1 && !results[0].rank) {
      returnType = results[0].element;
    } else if (results.size() == 1) {
      params.push_back(results[0].valueType() + " *result");
    } else if (results.size() > 1) {
      std::string structName = "linattn_" + name + "_results";
      bodyOs << "typedef struct {\n";
      for (auto [i, c] : llvm::enumerate(results))
        bodyOs << "  " << c.valueType() << " result" << i << ";\n";
      bodyOs << "} " << structName << ";\n";
      params.push_back(structName + " *results");
    }
    for (auto [i, c] : llvm::enumerate(args))
      params.push_back(c.rank ? c.descriptorName() + " *arg" + std::to_string(i)
                              : c.element + " arg" + std::to_string(i));
    if (params.empty())
      params.push_back("void");
    bodyOs << returnType << " _mlir_ciface_" << name << "("
           << llvm::join(params, ", ") << ");\n\n";
  }

  std::error_code ec;
  llvm::ToolOutputFile file(path, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::errs() << "linattn-compile: " << path << ": " << ec.message() << "\n";
    return failure();
  }
  llvm::raw_ostream &os = file.os();
  os << "/* Generated by linattn-compile from " << source << ". Do not edit.\n"
     << " *\n"
     << " * The entry points of the compiled module. Arguments are passed as\n"
     << " * pointers to memref descriptors (for a dense row-major array:\n"
     << " * allocated = aligned = data, offset 0, strides the row-major\n";
  if (deviceBuffers)
    os << " * ones). Every buffer is device memory the caller owns: the\n"
       << " * arguments, then one out-param per result (allocated with the\n"
       << " * result's shape; the kernels write it), then the CUstream all\n"
       << " * kernels are launched on. Nothing is copied or synchronized: the\n"
       << " * results are ready when the stream reaches them, and a call can\n"
       << " * be captured in a CUDA graph.\n";
  else
    os << " * ones). Results are returned through the first parameter: each\n"
       << " * is a freshly allocated memref the caller releases with\n"
       << " * free(result.allocated), unless it aliases an argument.\n";
  os << " */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdint.h>\n#ifndef __cplusplus\n#include <stdbool.h>\n"
     << "#endif\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << descriptors << body
     << "#ifdef __cplusplus\n} // extern \"C\"\n#endif\n\n#endif // " << guard
     << "\n";
  file.keep();
  return success();
}

//===----------------------------------------------------------------------===//
// Runtime libraries
//===----------------------------------------------------------------------===//

/// The GPU runtime library --gpu-runtime names: for cuda and mock, beside the
/// tool (<bin>/../lib), or where the build put it.
static std::string gpuRuntimeLibrary() {
  if (gpuRuntime != "cuda" && gpuRuntime != "mock")
    return gpuRuntime;
  SmallString<256> built(LINATTN_RUNTIME_DIR);
  llvm::sys::path::append(built, gpuRuntime == "cuda"
                                     ? "liblinattn_cuda_runtime.so"
                                     : "liblinattn_mock_gpu_runtime.so");
  return linattn_tools::findToolLibrary(linattn_tools::toolLibraryDir(nullptr),
                                        built)
      .value_or(std::string(built));
}

/// The libraries the code calls into, as linker arguments.
static std::vector<std::string> runtimeLinkArgs(const llvm::Module &module) {
  bool runnerUtils = false, omp = openmp == OpenMPMode::On, async = false,
       gpu = false, hostCache = false;
  for (const llvm::Function &f : module) {
    if (!f.isDeclaration() || f.isIntrinsic())
      continue;
    StringRef name = f.getName();
    if (name == "memrefCopy" || name.starts_with("_mlir_") ||
        name.starts_with("print") || name == "rtclock")
      runnerUtils = true;
    if (openmp == OpenMPMode::Auto &&
        (name.starts_with("__kmpc_") || name.starts_with("omp_")))
      omp = true;
    if (name.starts_with("mlirAsync"))
      async = true;
    if (name.starts_with("mgpu"))
      gpu = true;
    if (name.starts_with("linattnHost"))
      hostCache = true;
  }
  std::vector<std::string> args;
  StringRef libDir = LINATTN_LLVM_LIBRARY_DIR;
  if (runnerUtils) {
    // A missing library is left to the linker, which names the functions.
    std::string library =
        linattn_tools::findRunnerUtils(
            linattn_tools::toolLibraryDir(nullptr), LINATTN_C_RUNNER_UTILS,
            LINATTN_RUNTIME_DIR "/liblinattn_runner_utils.so")
            .value_or(LINATTN_C_RUNNER_UTILS);
    args.push_back(library);
    args.push_back(
        ("-Wl,-rpath," + llvm::sys::path::parent_path(library)).str());
  }
  if (async) {
    args.push_back(("-L" + libDir).str());
    args.push_back("-lmlir_async_runtime");
    args.push_back(("-Wl,-rpath," + libDir).str());
  }
  if (omp) {
    // The OpenMP runtime beside the tool, else the configured one (a path,
    // or -lomp when configuring found none).
    std::string library =
        linattn_tools::findToolLibrary(linattn_tools::toolLibraryDir(nullptr),
                                       LINATTN_OPENMP_LIBRARY)
            .value_or(LINATTN_OPENMP_LIBRARY);
    args.push_back(library);
    if (llvm::sys::path::is_absolute(library))
      args.push_back(
          ("-Wl,-rpath," + llvm::sys::path::parent_path(library)).str());
    else
      args.push_back(("-Wl,-rpath," + libDir).str());
  }
  if (gpu) {
    std::string library = gpuRuntimeLibrary();
    args.push_back(library);
    args.push_back(
        ("-Wl,-rpath," + llvm::sys::path::parent_path(library)).str());
  }
  if (hostCache) {
    std::string built = LINATTN_RUNTIME_DIR "/liblinattn_host_allocator.so";
    std::string library = linattn_tools::findToolLibrary(
                              linattn_tools::toolLibraryDir(nullptr), built)
                              .value_or(built);
    args.push_back(library);
    args.push_back(
        ("-Wl,-rpath," + llvm::sys::path::parent_path(library)).str());
  }
  args.push_back("-lm");
  return args;
}

/// Renames the code's calls of the C library's allocator to linattn's
/// caching host allocator (linattn-c/HostAllocator.h), which returns the C
/// library's blocks, so a caller may still `free` the results.
static void bindHostAllocator(llvm::Module &module) {
  for (auto [libc, cached] :
       {std::pair<StringRef, StringRef>{"malloc", "linattnHostMalloc"},
        {"aligned_alloc", "linattnHostAlignedAlloc"},
        {"free", "linattnHostFree"}}) {
    llvm::Function *function = module.getFunction(libc);
    if (function && function->isDeclaration())
      function->setName(cached);
  }
}

//===----------------------------------------------------------------------===//
// Main
//===----------------------------------------------------------------------===//

/// The target machine of --mtriple, --mcpu and --mattr: the host's triple,
/// CPU and features by default. Null, after saying why, for names LLVM does
/// not know (it would only warn, and a CPU it does not know can leave it
/// without the target's basic features: an error that aborts).
static std::unique_ptr<llvm::TargetMachine> createTargetMachine() {
  auto failed = [](const Twine &message) {
    fail(message);
    return std::unique_ptr<llvm::TargetMachine>();
  };
  std::string error;
  llvm::Triple triple(targetTriple.empty()
                          ? llvm::sys::getProcessTriple()
                          : llvm::Triple::normalize(targetTriple));
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return failed("no target for " + triple.str() + ": " + error);
  std::string cpu = targetCPU;
  std::unique_ptr<llvm::MCSubtargetInfo> known(
      target->createMCSubtargetInfo(triple, "", ""));
  if (known && !hostCpuRequested() && !known->isCPUStringValid(cpu))
    return failed("--mcpu: unknown CPU '" + cpu + "' for " + triple.str());
  llvm::SubtargetFeatures features;
  if (hostCpuRequested()) {
    cpu = llvm::sys::getHostCPUName().str();
    if (targetTriple.empty() ||
        triple == llvm::Triple(llvm::sys::getProcessTriple()))
      for (const auto &feature : llvm::sys::getHostCPUFeatures())
        features.AddFeature(feature.first(), feature.second);
  }
  if (!targetFeatures.empty()) {
    SmallVector<StringRef> extra;
    StringRef(targetFeatures).split(extra, ',', -1, /*KeepEmpty=*/false);
    for (StringRef feature : extra) {
      feature = feature.trim();
      if (!llvm::SubtargetFeatures::hasFlag(feature))
        return failed("--mattr: feature '" + feature +
                      "' must start with + or -");
      StringRef name = llvm::SubtargetFeatures::StripFlag(feature);
      if (known && !llvm::any_of(known->getAllProcessorFeatures(),
                                 [&](const llvm::SubtargetFeatureKV &kv) {
                                   return name == kv.Key;
                                 }))
        return failed("--mattr: unknown feature '" + name + "' for " +
                      triple.str());
      features.AddFeature(feature);
    }
  }
  llvm::TargetOptions targetOptions;
  // The GPU binary is loaded by a global constructor: .init_array, which
  // every linker runs (lld does not turn .ctors into it).
  targetOptions.UseInitArray = true;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, features.getString(), targetOptions, llvm::Reloc::PIC_,
      std::nullopt,
      static_cast<llvm::CodeGenOptLevel>(std::min(optLevel.getValue(), 3u))));
  if (!machine)
    return failed("cannot create a target machine for " + triple.str());
  return machine;
}

static int compile(MLIRContext &context) {
  if (outputFilename.empty())
    return fail("no output file: give -o <file>");

  std::string error;
  auto file = openInputFile(inputFilename, &error);
  if (!file)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  // The entry points: public functions with bodies, with their user types.
  SmallVector<Entry> entries;
  for (auto func : module->getOps<func::FuncOp>())
    if (func.isPublic() && !func.isDeclaration())
      entries.push_back({func.getName().str(), func.getFunctionType()});
  if (!headerFilename.empty() && failed(checkHeaderTypes(entries)))
    return 1;

  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine();
  if (!machine)
    return 1;

  // Lower to the LLVM dialect, then to LLVM IR.
  std::string pipelineText = pipeline;
  if (pipeline.getNumOccurrences() == 0)
    pipelineText = target == Target::CUDA
                       ? "linattn-lower-to-nvvm{device-buffers=true}"
                       : defaultCpuPipeline();
  PassManager pm(&context);
  if (!pipelineText.empty() &&
      failed(parsePassPipeline(pipelineText, pm, llvm::errs())))
    return 1;
  if (failed(pm.run(*module)))
    return 1;
  // The device-buffer calling convention, as the pipeline reports it.
  bool deviceBuffers = (*module)->hasAttr(linattn::kDeviceBuffersAttrName);
  if (!headerFilename.empty() &&
      failed(
          writeHeader(headerFilename, entries, inputFilename, deviceBuffers)))
    return 1;
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, inputFilename);
  if (!llvmModule)
    return fail("cannot translate the lowered module to LLVM IR (did the "
                "pipeline reach the LLVM dialect?)");
  if (!headerFilename.empty()) {
    for (const Entry &entry : entries) {
      if (!llvmModule->getFunction("_mlir_ciface_" + entry.name))
        return fail("the lowered module has no _mlir_ciface_" + entry.name +
                    " (was it lowered with c-interface?)");
    }
  }

  ExecutionEngine::setupTargetTripleAndDataLayout(llvmModule.get(),
                                                  machine.get());
  auto optimize = makeOptimizingTransformer(std::min(optLevel.getValue(), 3u),
                                            /*sizeLevel=*/0, machine.get());
  if (llvm::Error err = optimize(llvmModule.get()))
    return fail("LLVM optimization failed: " + llvm::toString(std::move(err)));
  // After optimization, which knows what malloc and free do by their names.
  if (hostAllocator == HostAllocator::Caching)
    bindHostAllocator(*llvmModule);

  // Write -o.
  std::error_code ec;
  llvm::ToolOutputFile output(outputFilename, ec,
                              emitKind == EmitKind::Object
                                  ? llvm::sys::fs::OF_None
                                  : llvm::sys::fs::OF_Text);
  if (ec)
    return fail(outputFilename + ": " + ec.message());
  if (emitKind == EmitKind::LLVMIR) {
    llvmModule->print(output.os(), nullptr);
  } else {
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, output.os(), nullptr,
                                     emitKind == EmitKind::Object
                                         ? llvm::CodeGenFileType::ObjectFile
                                         : llvm::CodeGenFileType::AssemblyFile))
      return fail("the target cannot emit this kind of file");
    codegen.run(*llvmModule);
  }
  output.keep();
  output.os().flush();

  std::vector<std::string> linkArgs = runtimeLinkArgs(*llvmModule);
  if (!linkFlagsFilename.empty()) {
    llvm::ToolOutputFile flags(linkFlagsFilename, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return fail(linkFlagsFilename + ": " + ec.message());
    for (const std::string &arg : linkArgs)
      flags.os() << arg << "\n";
    flags.keep();
  }

  if (!sharedFilename.empty()) {
    if (emitKind != EmitKind::Object)
      return fail("--shared needs --emit=obj");
    if (linker.empty())
      return fail("no compiler driver to link with: give --linker");
    // The configured driver links with the configured linker (lld). Where it
    // is missing (the bundle on another machine) the system's `cc` links
    // with its own.
    bool configured = linker.getNumOccurrences() == 0;
    // (A name with a slash comes back unchecked.)
    auto found = [](StringRef name) -> std::optional<std::string> {
      auto program = llvm::sys::findProgramByName(name);
      if (!program || !llvm::sys::fs::can_execute(*program))
        return std::nullopt;
      return *program;
    };
    std::optional<std::string> program = found(linker);
    if (!program && configured) {
      program = found("cc");
      configured = false;
    }
    if (!program)
      return fail("cannot find the linker driver '" + linker + "'");
    std::vector<std::string> args = {*program, "-shared", "-o", sharedFilename,
                                     outputFilename};
    if (configured && StringRef(LINATTN_LINKER_FLAVOR).size())
      args.push_back("-fuse-ld=" LINATTN_LINKER_FLAVOR);
    llvm::append_range(args, linkArgs);
    llvm::append_range(args, extraLinkArgs);
    SmallVector<StringRef> argRefs(args.begin(), args.end());
    if (verbose)
      llvm::errs() << llvm::join(args, " ") << "\n";
    std::string message;
    int status = llvm::sys::ExecuteAndWait(*program, argRefs, std::nullopt, {},
                                           0, 0, &message);
    if (status != 0)
      return fail("linking " + sharedFilename + " failed" +
                  (message.empty() ? "" : ": " + message) + " (" +
                  llvm::join(args, " ") + ")");
  }
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  registerAllPasses();
  linattn::registerAllPasses();
  // LLVM's own options still work; --help lists the tool's.
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(
      argc, argv,
      "linattn-compile: lower a linattn module and compile it ahead of time "
      "to an object file or shared library with C entry points\n");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  linattn::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  return compile(context);
}
