//===- linattn-run.cpp - JIT-compile and run a linattn function -----------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Lowers a module of functions on tensors (or memrefs) with a pass pipeline,
// `linattn-lower-to-cpu` by default, JIT-compiles it with MLIR's
// ExecutionEngine and calls one function through its `_mlir_ciface_` wrapper.
// `--target=cuda` (CudaTarget.cpp) lowers with `linattn-lower-to-nvvm` and
// runs on an NVIDIA GPU through linattn's CUDA runtime library.
//
// Calling convention: every argument and every result of the entry function
// is a ranked tensor or memref of f16, bf16, f32 or f64 (rank 0 and up).
// Arguments are read from `.npy` files (`--input`, in order; float16, float32
// or float64, converted to the argument's type) or drawn uniformly from
// [-1, 1) (`--random-seed`, static shapes only). The function returns its
// outputs: after bufferization they are memrefs the function allocated, which
// this tool writes to `<output-dir>/result<i>.npy` (bf16 as float32, which
// holds it exactly) and frees. Nothing is passed as an out-parameter.
//
// The compiled code's malloc, aligned_alloc and free are the caching host
// allocator's (include/linattn-c/HostAllocator.h) unless
// `--host-allocator=system`; with it the results are freed into the cache too,
// so that `--repeat` calls reuse every buffer, as a framework's caching
// allocator would. `--poison` fills every buffer the compiled code allocates
// (fresh or reused) with NaNs, so an output element the code forgets to write
// shows up as NaN.
//
//===----------------------------------------------------------------------===//

#include "CudaTarget.h"
#include "ToolLibraries.h"

#include "linattn-c/HostAllocator.h"
#include "linattn/Conversion/LinAttnToCPU/TargetCpu.h"
#include "linattn/Conversion/LinAttnToGPU/LinAttnToGPU.h"
#include "linattn/InitAll.h"
#include "linattn/Runtime/Float16Bits.h"

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
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<input .mlir file>"),
                                          cl::init("-"),
                                          cl::cat(linattn_run::toolOptions));
static cl::opt<std::string>
    entryName("entry",
              cl::desc("Function to call (default: the only public "
                       "function of the module)"),
              cl::init(""), cl::cat(linattn_run::toolOptions));
static cl::list<std::string>
    inputFiles("input", cl::desc("An argument as a .npy file, in order"),
               cl::cat(linattn_run::toolOptions));
static cl::opt<int64_t>
    randomSeed("random-seed",
               cl::desc("Draw every argument not given by --input uniformly "
                        "from [-1, 1) with this seed"),
               cl::init(-1), cl::cat(linattn_run::toolOptions));
static cl::opt<std::string>
    outputDir("output-dir", cl::desc("Write result i to <dir>/result<i>.npy"),
              cl::init(""), cl::cat(linattn_run::toolOptions));
static cl::opt<unsigned>
    repeat("repeat",
           cl::desc("Time this many calls after one warm-up call and print "
                    "the median"),
           cl::init(0), cl::cat(linattn_run::toolOptions));
static cl::opt<std::string>
    pipeline("pipeline",
             cl::desc("Pass pipeline that lowers the module to the LLVM "
                      "dialect"),
             cl::init("linattn-lower-to-cpu"),
             cl::cat(linattn_run::toolOptions));
static cl::list<std::string>
    sharedLibs("shared-libs",
               cl::desc("Libraries the JIT-compiled code may call (default: "
                        "MLIR's C runner utilities)"),
               cl::cat(linattn_run::toolOptions));
static cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level"),
                                  cl::init(3),
                                  cl::cat(linattn_run::toolOptions));
static cl::opt<bool>
    poison("poison",
           cl::desc("Fill every buffer the compiled code allocates with NaNs "
                    "(0xff bytes) before it is used"),
           cl::init(false), cl::cat(linattn_run::toolOptions));
namespace {
enum class HostAllocator { Caching, System };
} // namespace
static cl::opt<HostAllocator> hostAllocator(
    "host-allocator", cl::desc("What the compiled code's malloc and free are"),
    cl::values(clEnumValN(HostAllocator::Caching, "caching",
                          "linattn's caching host allocator: freed blocks "
                          "of 128 KiB or more are reused (default)"),
               clEnumValN(HostAllocator::System, "system", "the C library's")),
    cl::init(HostAllocator::Caching), cl::cat(linattn_run::toolOptions));

//===----------------------------------------------------------------------===//
// Arrays and .npy files
//===----------------------------------------------------------------------===//

namespace {
/// The element types this tool reads, passes and writes.
enum class Element { F16, BF16, F32, F64 };

size_t sizeOf(Element element) {
  switch (element) {
  case Element::F16:
  case Element::BF16:
    return 2;
  case Element::F32:
    return 4;
  case Element::F64:
    return 8;
  }
  return 0;
}

StringRef nameOf(Element element) {
  switch (element) {
  case Element::F16:
    return "f16";
  case Element::BF16:
    return "bf16";
  case Element::F32:
    return "f32";
  case Element::F64:
    return "f64";
  }
  return "";
}

/// The value of the element at `data`.
double readElement(Element element, const char *data) {
  if (element == Element::F64) {
    double x;
    std::memcpy(&x, data, 8);
    return x;
  }
  if (element == Element::F32) {
    float x;
    std::memcpy(&x, data, 4);
    return x;
  }
  uint16_t bits;
  std::memcpy(&bits, data, 2);
  return element == Element::BF16 ? ::linattn::bf16ToFloat(bits)
                                  : ::linattn::halfToFloat(bits);
}

/// Stores `x` rounded to nearest even at `data`.
void writeElement(Element element, double x, char *data) {
  if (element == Element::F64) {
    std::memcpy(data, &x, 8);
    return;
  }
  if (element == Element::F32) {
    float y = static_cast<float>(x);
    std::memcpy(data, &y, 4);
    return;
  }
  uint16_t word = element == Element::BF16 ? ::linattn::doubleToBF16(x)
                                           : ::linattn::doubleToHalf(x);
  std::memcpy(data, &word, 2);
}

/// A dense row-major array owned by this tool.
struct Array {
  Element element = Element::F32;
  std::vector<int64_t> shape;
  std::vector<char> bytes;

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  size_t elementSize() const { return sizeOf(element); }

  /// This array's values in `to`, rounded to nearest even.
  Array convertedTo(Element to) const {
    Array result{to, shape, {}};
    int64_t n = numElements();
    result.bytes.resize(n * sizeOf(to));
    for (int64_t e = 0; e < n; ++e)
      writeElement(to, readElement(element, bytes.data() + e * elementSize()),
                   result.bytes.data() + e * sizeOf(to));
    return result;
  }
};
} // namespace

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += "x";
    s += ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
  }
  return s.empty() ? "scalar" : s;
}

/// The bytes of a dense array of `shape` with elements of `elementSize`
/// bytes, or nullopt where that count overflows int64_t: a shape from a
/// .npy header or a function type could wrap around to a small count, pass
/// the checks on the payload and let the function read far past it.
static std::optional<int64_t> byteCount(ArrayRef<int64_t> shape,
                                        size_t elementSize) {
  std::optional<int64_t> bytes = static_cast<int64_t>(elementSize);
  for (int64_t dim : shape)
    if (bytes)
      bytes = llvm::checkedMul(*bytes, dim);
  return bytes;
}

/// Reads a little-endian, C-ordered .npy file of f2, f4 or f8 values.
static FailureOr<Array> readNpy(StringRef path) {
  auto fail = [&](const Twine &why) -> FailureOr<Array> {
    llvm::errs() << "linattn-run: " << path << ": " << why << "\n";
    return failure();
  };
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return fail(buffer.getError().message());
  StringRef data = (*buffer)->getBuffer();
  if (data.size() < 10 || !data.starts_with("\x93NUMPY"))
    return fail("not a .npy file");
  unsigned major = static_cast<unsigned char>(data[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(data[8]) |
                (static_cast<unsigned char>(data[9]) << 8);
    headerStart = 10;
  } else {
    if (data.size() < 12)
      return fail("truncated header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<unsigned char>(data[8 + i]))
                   << (8 * i);
    headerStart = 12;
  }
  if (data.size() < headerStart + headerLen)
    return fail("truncated header");
  StringRef header = data.substr(headerStart, headerLen);

  Array array;
  if (header.contains("'<f2'"))
    array.element = Element::F16;
  else if (header.contains("'<f4'"))
    array.element = Element::F32;
  else if (header.contains("'<f8'"))
    array.element = Element::F64;
  else
    return fail("only little-endian float16, float32 and float64 arrays are "
                "supported");
  if (header.contains("'fortran_order': True"))
    return fail("Fortran-ordered arrays are not supported");
  size_t shapePos = header.find("'shape':");
  if (shapePos == StringRef::npos)
    return fail("no shape in the header");
  StringRef rest = header.substr(shapePos);
  size_t open = rest.find('('), close = rest.find(')');
  if (open == StringRef::npos || close == StringRef::npos || close < open)
    return fail("malformed shape");
  SmallVector<StringRef> parts;
  rest.substr(open + 1, close - open - 1).split(parts, ',');
  for (StringRef part : parts) {
    part = part.trim();
    if (part.empty())
      continue;
    int64_t dim;
    if (part.getAsInteger(10, dim) || dim < 0)
      return fail("malformed shape");
    array.shape.push_back(dim);
  }
  std::optional<int64_t> bytes = byteCount(array.shape, array.elementSize());
  if (!bytes)
    return fail("shape " + shapeString(array.shape) +
                " has more bytes than 64 bits count");
  StringRef payload = data.substr(headerStart + headerLen);
  if (payload.size() < static_cast<uint64_t>(*bytes))
    return fail("file holds fewer values than its shape says");
  array.bytes.assign(payload.begin(), payload.begin() + *bytes);
  return array;
}

static LogicalResult writeNpy(StringRef path, const Array &array) {
  if (array.element == Element::BF16)
    return writeNpy(path, array.convertedTo(Element::F32));
  ArrayRef<int64_t> shape = array.shape;
  std::string dims;
  for (int64_t d : shape)
    dims += std::to_string(d) + ", ";
  if (shape.size() > 1)
    dims.erase(dims.size() - 2); // (a, b) but (a,) for rank 1.
  else if (shape.size() == 1)
    dims.pop_back();
  const char *descr = array.element == Element::F16   ? "<f2"
                      : array.element == Element::F32 ? "<f4"
                                                      : "<f8";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Pad so that the data starts at a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::errs() << "linattn-run: " << path << ": " << ec.message() << "\n";
    return failure();
  }
  os << "\x93NUMPY" << '\x01' << '\x00';
  os << static_cast<char>(header.size() & 0xff)
     << static_cast<char>((header.size() >> 8) & 0xff);
  os << header;
  os.write(array.bytes.data(), array.bytes.size());
  return success();
}

//===----------------------------------------------------------------------===//
// Memref descriptors
//===----------------------------------------------------------------------===//

/// A memref descriptor of any rank as the words the C interface passes:
/// allocated pointer, aligned pointer, offset, sizes[rank], strides[rank].
static std::vector<int64_t> makeDescriptor(char *data,
                                           ArrayRef<int64_t> shape) {
  std::vector<int64_t> words(3 + 2 * shape.size(), 0);
  int64_t pointer = static_cast<int64_t>(reinterpret_cast<intptr_t>(data));
  words[0] = pointer;
  words[1] = pointer;
  words[2] = 0;
  int64_t stride = 1;
  for (int64_t i = shape.size() - 1; i >= 0; --i) {
    words[3 + i] = shape[i];
    words[3 + shape.size() + i] = stride;
    stride *= shape[i];
  }
  return words;
}

/// The type of a function argument or result: shape and element type.
struct ValueSpec {
  SmallVector<int64_t> shape;
  Element element;
};

static FailureOr<ValueSpec> specOf(Type type, StringRef what, unsigned index) {
  auto shaped = dyn_cast<ShapedType>(type);
  std::optional<Element> element;
  if (shaped && shaped.hasRank() && isa<RankedTensorType, MemRefType>(type)) {
    Type elementType = shaped.getElementType();
    if (elementType.isF16())
      element = Element::F16;
    else if (elementType.isBF16())
      element = Element::BF16;
    else if (elementType.isF32())
      element = Element::F32;
    else if (elementType.isF64())
      element = Element::F64;
  }
  if (!element) {
    llvm::errs() << "linattn-run: " << what << " #" << index << " has type "
                 << type
                 << "; only ranked tensors and memrefs of f16, bf16, f32 or "
                    "f64 are supported\n";
    return failure();
  }
  return ValueSpec{SmallVector<int64_t>(shaped.getShape()), *element};
}

/// malloc for the compiled code under --poison: new buffers read as NaN.
static void *poisonedMalloc(size_t bytes) {
  void *memory = hostAllocator == HostAllocator::Caching
                     ? linattnHostMalloc(bytes)
                     : std::malloc(bytes);
  if (memory)
    std::memset(memory, 0xff, bytes);
  return memory;
}

static void *poisonedAlignedAlloc(size_t alignment, size_t bytes) {
  void *memory = hostAllocator == HostAllocator::Caching
                     ? linattnHostAlignedAlloc(alignment, bytes)
                     : std::aligned_alloc(alignment, bytes);
  if (memory)
    std::memset(memory, 0xff, bytes);
  return memory;
}

//===----------------------------------------------------------------------===//
// Main
//===----------------------------------------------------------------------===//

static int run(MLIRContext &context, const char *argv0) {
  std::string error;
  auto file = openInputFile(inputFilename, &error);
  if (!file) {
    llvm::errs() << "linattn-run: " << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  // The entry function and its signature, read before lowering.
  func::FuncOp entry;
  for (auto func : module->getOps<func::FuncOp>()) {
    if (func.isDeclaration())
      continue;
    if (entryName.empty() ? func.isPublic() : func.getName() == entryName) {
      if (entry && entryName.empty()) {
        llvm::errs() << "linattn-run: the module has several public "
                        "functions; choose one with --entry\n";
        return 1;
      }
      entry = func;
    }
  }
  if (!entry) {
    llvm::errs() << "linattn-run: no function "
                 << (entryName.empty() ? std::string("to run")
                                       : "@" + entryName)
                 << " in the module\n";
    return 1;
  }
  std::string name = entry.getName().str();
  SmallVector<ValueSpec> argSpecs, resultSpecs;
  for (auto [i, type] : llvm::enumerate(entry.getArgumentTypes())) {
    FailureOr<ValueSpec> spec = specOf(type, "argument", i);
    if (failed(spec))
      return 1;
    argSpecs.push_back(*spec);
  }
  for (auto [i, type] : llvm::enumerate(entry.getResultTypes())) {
    FailureOr<ValueSpec> spec = specOf(type, "result", i);
    if (failed(spec))
      return 1;
    resultSpecs.push_back(*spec);
  }

  // Arguments: .npy files first, random values for the rest.
  if (inputFiles.size() > argSpecs.size()) {
    llvm::errs() << "linattn-run: @" << name << " takes " << argSpecs.size()
                 << " arguments, got " << inputFiles.size() << " --input\n";
    return 1;
  }
  if (inputFiles.size() < argSpecs.size() && randomSeed < 0) {
    llvm::errs() << "linattn-run: @" << name << " takes " << argSpecs.size()
                 << " arguments, got " << inputFiles.size()
                 << " --input; give the rest or --random-seed\n";
    return 1;
  }
  std::mt19937_64 generator(randomSeed < 0 ? 0 : randomSeed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<Array> args;
  for (auto [i, spec] : llvm::enumerate(argSpecs)) {
    Array array;
    if (i < inputFiles.size()) {
      FailureOr<Array> loaded = readNpy(inputFiles[i]);
      if (failed(loaded))
        return 1;
      array = std::move(*loaded);
      bool matches = array.shape.size() == spec.shape.size();
      for (size_t d = 0; matches && d < spec.shape.size(); ++d)
        matches = ShapedType::isDynamic(spec.shape[d]) ||
                  spec.shape[d] == array.shape[d];
      if (!matches) {
        llvm::errs() << "linattn-run: " << inputFiles[i] << " has shape "
                     << shapeString(array.shape) << ", but argument #" << i
                     << " of @" << name << " is " << shapeString(spec.shape)
                     << "\n";
        return 1;
      }
      // Convert to the argument's element type.
      if (array.element != spec.element)
        array = array.convertedTo(spec.element);
    } else {
      if (llvm::any_of(spec.shape, ShapedType::isDynamic)) {
        llvm::errs() << "linattn-run: argument #" << i << " of @" << name
                     << " has a dynamic shape (" << shapeString(spec.shape)
                     << "): give it with --input\n";
        return 1;
      }
      array.element = spec.element;
      array.shape.assign(spec.shape.begin(), spec.shape.end());
      std::optional<int64_t> bytes =
          byteCount(array.shape, array.elementSize());
      if (!bytes) {
        llvm::errs() << "linattn-run: argument #" << i << " of @" << name
                     << " (" << shapeString(spec.shape)
                     << ") has more bytes than 64 bits count\n";
        return 1;
      }
      array.bytes.resize(*bytes);
      int64_t n = array.numElements();
      for (int64_t e = 0; e < n; ++e)
        writeElement(spec.element, uniform(generator),
                     array.bytes.data() + e * array.elementSize());
    }
    args.push_back(std::move(array));
  }

  // Lower and JIT-compile.
  std::string pipelineText = pipeline;
  SmallVector<std::string> libNames(sharedLibs.begin(), sharedLibs.end());
  // MLIR's runner utilities and the OpenMP runtime, beside the tool or where
  // configured. Without MLIR's (the relocatable bundle), linattn's
  // memrefCopy, the one of them linattn's lowerings call.
  std::string libDir = linattn_tools::toolLibraryDir(argv0);
  if (sharedLibs.empty())
    if (auto lib = linattn_tools::findRunnerUtils(
            libDir, LINATTN_C_RUNNER_UTILS,
            LINATTN_RUNTIME_DIR "/liblinattn_runner_utils.so"))
      libNames.push_back(*lib);
#ifdef LINATTN_OMP_LIBRARY
  if (auto lib = linattn_tools::findToolLibrary(libDir, LINATTN_OMP_LIBRARY))
    libNames.push_back(*lib);
#endif
  bool cuda = linattn_run::isCudaTarget();
  if (cuda && failed(linattn_run::setUpCudaTarget(
                  argv0, pipelineText, pipeline.getNumOccurrences() > 0,
                  libNames)))
    return 1;
  PassManager pm(&context);
  if (!pipelineText.empty() &&
      failed(parsePassPipeline(pipelineText, pm, llvm::errs())))
    return 1;
  if (failed(pm.run(*module)))
    return 1;
  if ((*module)->hasAttr(mlir::linattn::kDeviceBuffersAttrName)) {
    llvm::errs() << "linattn-run: the functions were lowered with "
                    "device-buffers: they take device buffers, out-params "
                    "and a stream, not host arrays (call them from a program: "
                    "linattn-compile --target=cuda)\n";
    return 1;
  }

  if (failed(mlir::linattn::verifyRunsOnHost(*module)))
    return 1;

  SmallVector<StringRef> libs(libNames.begin(), libNames.end());
  auto transformer = makeOptimizingTransformer(optLevel, /*sizeLevel=*/0,
                                               /*targetMachine=*/nullptr);
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel =
      static_cast<llvm::CodeGenOptLevel>(std::min(optLevel.getValue(), 3u));
  engineOptions.sharedLibPaths = libs;
  auto engine = ExecutionEngine::create(*module, engineOptions);
  if (!engine) {
    llvm::errs() << "linattn-run: cannot JIT-compile the module: "
                 << llvm::toString(engine.takeError()) << "\n";
    return 1;
  }
  bool caching = hostAllocator == HostAllocator::Caching;
  if (poison || caching) {
    (*engine)->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
      llvm::orc::SymbolMap symbols;
      auto bind = [&](StringRef name, auto *function) {
        symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(function),
                                   llvm::JITSymbolFlags::Exported};
      };
      if (poison) {
        bind("malloc", &poisonedMalloc);
        bind("aligned_alloc", &poisonedAlignedAlloc);
      } else {
        bind("malloc", &linattnHostMalloc);
        bind("aligned_alloc", &linattnHostAlignedAlloc);
      }
      if (caching)
        bind("free", &linattnHostFree);
      return symbols;
    });
  }

  // Descriptors for the arguments; the results come back packed one after
  // the other into one struct the wrapper's first parameter points to.
  std::vector<std::vector<int64_t>> argDescriptors;
  for (Array &array : args)
    argDescriptors.push_back(makeDescriptor(array.bytes.data(), array.shape));
  size_t resultWords = 0;
  for (const ValueSpec &spec : resultSpecs)
    resultWords += 3 + 2 * spec.shape.size();
  std::vector<int64_t> results(resultWords, 0);

  std::vector<void *> argPointers;
  for (auto &descriptor : argDescriptors)
    argPointers.push_back(descriptor.data());
  void *resultPointer = results.data();
  SmallVector<void *> packed;
  if (!resultSpecs.empty())
    packed.push_back(&resultPointer);
  for (void *&pointer : argPointers)
    packed.push_back(&pointer);

  // Frees the buffers of the results of one call (each once, never an
  // argument's buffer, which a result may alias).
  auto freeResults = [&] {
    SmallVector<int64_t> freed;
    for (const auto &descriptor : argDescriptors)
      freed.push_back(descriptor[0]);
    size_t offset = 0;
    for (const ValueSpec &spec : resultSpecs) {
      int64_t allocated = results[offset];
      if (allocated && !llvm::is_contained(freed, allocated)) {
        void *block =
            reinterpret_cast<void *>(static_cast<intptr_t>(allocated));
        if (caching)
          linattnHostFree(block);
        else
          std::free(block);
        freed.push_back(allocated);
      }
      offset += 3 + 2 * spec.shape.size();
    }
  };

  std::string wrapper = "_mlir_ciface_" + name;
  // A crash from here on is the compiled code's: a failed run-time check
  // (linattn-check-sizes) has printed why, and the code, not LLVM, is where
  // to look.
  llvm::setBugReportMsg("linattn-run: the compiled function stopped the "
                        "process; a failed check prints why above.\n");
  unsigned calls = repeat == 0 ? 1 : repeat + 1;
  std::vector<double> times;
  LinattnHostCacheStats cacheBefore = linattnHostCacheGetStats();
  for (unsigned call = 0; call < calls; ++call) {
    if (call)
      freeResults();
    if (cuda)
      linattn_run::startCudaTimer();
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error err = (*engine)->invokePacked(wrapper, packed)) {
      std::string message = llvm::toString(std::move(err));
      // The wrapper itself missing, or code the JIT could not link (the
      // symbols it lacks are reported above, as "JIT session error").
      StringRef hint =
          StringRef(message).contains("Failed to materialize")
              ? "the compiled code calls functions that no library given by "
                "--shared-libs defines"
              : "was the module lowered with c-interface?";
      llvm::errs() << "linattn-run: cannot call " << wrapper << ": " << message
                   << " (" << hint << ")\n";
      return 1;
    }
    auto end = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(end - start).count();
    if (cuda) {
      seconds = linattn_run::stopCudaTimer() * 1e-3;
      if (failed(linattn_run::checkCudaErrors()))
        return 1;
    }
    if (repeat != 0 && call != 0)
      times.push_back(seconds);
  }

  // Results: report, write, free.
  size_t offset = 0;
  int status = 0;
  for (auto [i, spec] : llvm::enumerate(resultSpecs)) {
    size_t rank = spec.shape.size();
    const int64_t *descriptor = results.data() + offset;
    offset += 3 + 2 * rank;
    SmallVector<int64_t> shape(descriptor + 3, descriptor + 3 + rank);
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    Array result{
        spec.element, std::vector<int64_t>(shape.begin(), shape.end()), {}};
    size_t elementSize = result.elementSize();
    // Gather through the strides: the result need not be contiguous.
    std::vector<char> &dense = result.bytes;
    dense.resize(n * elementSize);
    const char *base =
        reinterpret_cast<const char *>(static_cast<intptr_t>(descriptor[1]));
    for (int64_t e = 0; e < n; ++e) {
      int64_t rem = e, linear = descriptor[2];
      for (int64_t d = rank - 1; d >= 0; --d) {
        linear += (rem % shape[d]) * descriptor[3 + rank + d];
        rem /= shape[d];
      }
      std::memcpy(dense.data() + e * elementSize, base + linear * elementSize,
                  elementSize);
    }
    llvm::outs() << "result #" << i << ": " << shapeString(shape) << "x"
                 << nameOf(spec.element) << "\n";
    if (!outputDir.empty()) {
      SmallString<256> path(outputDir);
      llvm::sys::path::append(path, "result" + std::to_string(i) + ".npy");
      if (failed(writeNpy(path, result)))
        status = 1;
    }
  }
  freeResults();

  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    double median =
        times.size() % 2
            ? times[times.size() / 2]
            : 0.5 * (times[times.size() / 2 - 1] + times[times.size() / 2]);
    llvm::outs() << "median time: " << llvm::format("%.6f", median * 1e3)
                 << " ms over " << times.size() << " calls"
                 << (cuda ? " (CUDA events)" : "") << "\n";
    if (caching) {
      LinattnHostCacheStats cache = linattnHostCacheGetStats();
      llvm::outs() << "host cache: " << cache.hits - cacheBefore.hits << " of "
                   << cache.hits + cache.misses - cacheBefore.hits -
                          cacheBefore.misses
                   << " allocations of 128 KiB or more reused\n";
    }
  }
  return status;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  registerAllPasses();
  mlir::linattn::registerAllPasses();
  // LLVM's own options still work; --help lists the tool's.
  cl::HideUnrelatedOptions(linattn_run::toolOptions);
  cl::ParseCommandLineOptions(
      argc, argv,
      "linattn-run: lower, JIT-compile and run a function on .npy inputs\n");
  if (!outputDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir)) {
      llvm::errs() << "linattn-run: " << outputDir << ": " << ec.message()
                   << "\n";
      return 1;
    }
  }

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  mlir::linattn::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  return run(context, argv[0]);
}
