//===- FitRegisters.cpp - blocks per SM bought with registers -------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// ptxas gives a kernel the registers it likes unless the PTX bounds them,
// and given a bound (`.minnctapersm`) it takes all of it. Where its own
// choice holds a kernel to fewer blocks per SM than the kernel's shared
// memory and threads allow, a bound can buy blocks, or cost spills; only
// ptxas can say which. So this pass asks it: each GPU module's PTX is
// compiled with `ptxas -v`, and every kernel that registers hold below its
// other limits is compiled again under `.minnctapersm` for one block more
// at a time, until ptxas spills (more than it did unbounded) or falls short
// of the blocks asked. The most blocks reached become the kernel's
// `nvvm.minctasm`. Each round compiles the module once, for all kernels
// still searching.
//
//===----------------------------------------------------------------------===//

#include "LLVMFatalErrors.h"
#include "Occupancy.h"

#include "linattn/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNGPUFITREGISTERSPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

namespace {
/// What `ptxas -v` reports of one kernel.
struct Resources {
  int64_t registers = 0, staticShared = 0, stack = 0, spillStores = 0;
};

/// How a kernel is launched: threads per block (nullopt unless every
/// launch's are the same constant) and the most dynamic shared memory
/// (nullopt where a launch's is not a constant).
struct LaunchShape {
  bool seen = false;
  std::optional<int64_t> threads, dynamicShared;

  void add(std::optional<int64_t> launchThreads,
           std::optional<int64_t> launchShared) {
    if (!seen) {
      seen = true;
      threads = launchThreads;
      dynamicShared = launchShared;
      return;
    }
    if (threads != launchThreads)
      threads = std::nullopt;
    if (dynamicShared && launchShared)
      dynamicShared = std::max(*dynamicShared, *launchShared);
    else
      dynamicShared = std::nullopt;
  }
};

/// A kernel whose registers hold it below its other limits.
struct Candidate {
  LLVM::LLVMFuncOp func;
  int64_t threads, shared;
  Resources unbounded;
  int64_t blocks = 0; // per SM with ptxas's own registers
  int64_t most = 0;   // what shared memory, threads and the SM allow
  int64_t fitted = 0; // the most blocks ptxas met, 0 if none more
  int64_t fittedRegisters = 0;

  /// The blocks the next round asks for.
  int64_t asked() const { return std::max(blocks, fitted) + 1; }
};
} // namespace

/// Per kernel of `ptxas -v`'s report.
static llvm::StringMap<Resources> parsePtxasReport(StringRef log) {
  llvm::StringMap<Resources> result;
  llvm::Regex entry("Compiling entry function '([^']+)'");
  llvm::Regex frame("([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores");
  llvm::Regex used("Used ([0-9]+) registers");
  llvm::Regex smem("([0-9]+) bytes smem");
  Resources *current = nullptr;
  SmallVector<StringRef> lines, m;
  log.split(lines, '\n');
  for (StringRef line : lines) {
    if (entry.match(line, &m)) {
      current = &result[m[1]];
      continue;
    }
    if (!current)
      continue;
    if (frame.match(line, &m)) {
      m[1].getAsInteger(10, current->stack);
      m[2].getAsInteger(10, current->spillStores);
    }
    if (used.match(line, &m)) {
      m[1].getAsInteger(10, current->registers);
      if (smem.match(line, &m))
        m[1].getAsInteger(10, current->staticShared);
    }
  }
  return result;
}

/// The performance directives of the entry `kernel` of `ptx` (between its
/// parameter list and its body) as the offsets [first, last); nullopt where
/// the entry is missing, or has no `.maxntid` or `.reqntid` (ptxas needs the
/// block size to size registers for blocks) or has a `.maxnreg` (a bound of
/// its own).
static std::optional<std::pair<size_t, size_t>>
boundableDirectives(StringRef ptx, StringRef kernel) {
  size_t at = ptx.find((".entry " + kernel + "(").str());
  if (at == StringRef::npos)
    return std::nullopt;
  size_t body = ptx.find('{', at);
  size_t params = ptx.rfind(')', body);
  if (body == StringRef::npos || params == StringRef::npos || params < at)
    return std::nullopt;
  StringRef directives = ptx.slice(params + 1, body);
  if ((!directives.contains(".maxntid") && !directives.contains(".reqntid")) ||
      directives.contains(".maxnreg"))
    return std::nullopt;
  return std::make_pair(params + 1, body);
}

/// Sets `.minnctapersm` of the entry `kernel` of `ptx`, which
/// `boundableDirectives` accepts, to `blocks`, in place of its own.
static void setMinBlocksPerSM(std::string &ptx, StringRef kernel,
                              int64_t blocks) {
  auto [first, last] = *boundableDirectives(ptx, kernel);
  size_t own = StringRef(ptx).slice(first, last).find(".minnctapersm");
  if (own != StringRef::npos) {
    size_t end = ptx.find('\n', first + own);
    end = end < last ? end + 1 : last;
    ptx.erase(first + own, end - first - own);
    last -= end - first - own;
  }
  ptx.insert(last, ".minnctapersm " + std::to_string(blocks) + "\n");
}

/// The NVVM target of `module` where it has exactly one target, and that
/// one NVVM; null otherwise (the pass leaves such modules alone).
static NVVM::NVVMTargetAttr nvvmTargetOf(gpu::GPUModuleOp module) {
  std::optional<ArrayAttr> targets = module.getTargets();
  if (!targets || targets->size() != 1)
    return {};
  return dyn_cast<NVVM::NVVMTargetAttr>((*targets)[0]);
}

/// `value` if it is an integer constant.
static std::optional<int64_t> constantOf(Value value) {
  APInt constant;
  if (value && matchPattern(value, m_ConstantInt(&constant)))
    return constant.getSExtValue();
  return std::nullopt;
}

namespace {
struct LinAttnGPUFitRegistersPass
    : public linattn::impl::LinAttnGPUFitRegistersPassBase<
          LinAttnGPUFitRegistersPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult fitModule(gpu::GPUModuleOp module,
                          const llvm::DenseMap<Attribute, LaunchShape> &shapes,
                          StringRef ptxas);
  FailureOr<llvm::StringMap<Resources>> compile(gpu::GPUModuleOp module,
                                                StringRef ptxas, StringRef ptx,
                                                NVVM::NVVMTargetAttr target);
};
} // namespace

/// ptxas of `cudaPath`, else on PATH; empty if neither has one.
static std::string findPtxas(StringRef cudaPath) {
  if (!cudaPath.empty()) {
    SmallString<256> path(cudaPath);
    llvm::sys::path::append(path, "bin", "ptxas");
    if (llvm::sys::fs::can_execute(path))
      return std::string(path);
  }
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  return {};
}

FailureOr<llvm::StringMap<Resources>>
LinAttnGPUFitRegistersPass::compile(gpu::GPUModuleOp module, StringRef ptxas,
                                    StringRef ptx,
                                    NVVM::NVVMTargetAttr target) {
  SmallString<128> input, output, log;
  if (llvm::sys::fs::createTemporaryFile("linattn-fit", "ptx", input) ||
      llvm::sys::fs::createTemporaryFile("linattn-fit", "cubin", output) ||
      llvm::sys::fs::createTemporaryFile("linattn-fit", "log", log))
    return module.emitError("linattn-gpu-fit-registers: cannot create "
                            "temporary files");
  llvm::FileRemover removeInput(input), removeOutput(output), removeLog(log);
  {
    std::error_code error;
    llvm::raw_fd_ostream out(input, error);
    if (error)
      return module.emitError("linattn-gpu-fit-registers: cannot write ")
             << input << ": " << error.message();
    out << ptx;
  }
  std::string arch = ("-arch=" + target.getChip()).str();
  std::string opt = "-O" + std::to_string(std::min(target.getO(), 3));
  SmallVector<StringRef> args{ptxas, arch, opt, "-v"};
  if (std::optional<NamedAttribute> extra =
          target.getFlags() ? target.getCmdOptions() : std::nullopt)
    if (auto options = dyn_cast<ArrayAttr>(extra->getValue()))
      for (Attribute option : options)
        if (auto text = dyn_cast<StringAttr>(option))
          args.push_back(text.getValue());
  args.append({input, "-o", output});
  std::string message;
  int status = llvm::sys::ExecuteAndWait(
      ptxas, args, std::nullopt, {std::nullopt, StringRef(log), StringRef(log)},
      /*SecondsToWait=*/0,
      /*MemoryLimit=*/0, &message);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> report =
      llvm::MemoryBuffer::getFile(log);
  StringRef text = report ? (*report)->getBuffer() : StringRef();
  if (status != 0)
    return module.emitError("linattn-gpu-fit-registers: ")
           << ptxas << " failed" << (message.empty() ? "" : ": ") << message
           << "\n"
           << text;
  return parsePtxasReport(text);
}

LogicalResult LinAttnGPUFitRegistersPass::fitModule(
    gpu::GPUModuleOp module,
    const llvm::DenseMap<Attribute, LaunchShape> &shapes, StringRef ptxas) {
  NVVM::NVVMTargetAttr target = nvvmTargetOf(module);
  if (!target)
    return success();
  std::optional<SMLimits> sm = smLimits(target.getChip());
  if (!sm) {
    if (remarks)
      emitRemark(module.getLoc(),
                 "linattn-gpu-fit-registers: no occupancy table for ")
          << target.getChip() << "; registers left to ptxas";
    return success();
  }

  // The module's PTX, as gpu-module-to-binary would make it.
  auto serializer = cast<gpu::TargetAttrInterface>(Attribute(target));
  gpu::TargetOptions options(cudaPath, /*librariesToLink=*/{},
                             /*cmdOptions=*/{}, /*elfSection=*/{},
                             gpu::CompilationTarget::Assembly);
  // The serializer records its timings on the module: those go again.
  DictionaryAttr attributes = module->getAttrDictionary();
  std::optional<SmallVector<char, 0>> assembly;
  if (std::optional<std::string> fatal = catchLLVMFatalErrors(
          [&] { assembly = serializer.serializeToObject(module, options); }))
    return module.emitError("LLVM could not compile the GPU module: ")
           << *fatal;
  module->setAttrs(attributes);
  if (!assembly)
    return module.emitError("linattn-gpu-fit-registers: the module does not "
                            "translate to PTX");
  std::string ptx(assembly->begin(), assembly->end());
  while (!ptx.empty() && ptx.back() == '\0')
    ptx.pop_back();

  FailureOr<llvm::StringMap<Resources>> unbounded =
      compile(module, ptxas, ptx, target);
  if (failed(unbounded))
    return failure();

  SmallVector<Candidate> candidates;
  for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
    if (!func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
      continue;
    auto found = unbounded->find(func.getSymName());
    auto shape = shapes.find(SymbolRefAttr::get(
        module.getSymNameAttr(), {FlatSymbolRefAttr::get(func)}));
    if (found == unbounded->end() || shape == shapes.end() ||
        !shape->second.threads || !shape->second.dynamicShared) {
      if (remarks)
        emitRemark(func.getLoc(), "linattn-gpu-fit-registers: ")
            << func.getSymName() << ": "
            << (found == unbounded->end()
                    ? "not in ptxas's report"
                    : "no launch with constant threads and dynamic shared "
                      "memory");
      continue;
    }
    Candidate c;
    c.func = func;
    c.threads = *shape->second.threads;
    c.shared = found->second.staticShared + *shape->second.dynamicShared;
    c.unbounded = found->second;
    BlockLimits limits =
        blockLimits(*sm, c.unbounded.registers, c.shared, c.threads);
    c.blocks = limits.blocks();
    c.most = std::min({limits.sharedMemory, limits.threads, limits.sm});
    if (!limits.registerBound() ||
        !boundableDirectives(ptx, func.getSymName())) {
      if (remarks)
        emitRemark(func.getLoc(), "linattn-gpu-fit-registers: ")
            << func.getSymName() << ": " << c.unbounded.registers
            << " registers, " << c.blocks << " blocks per SM"
            << (limits.registerBound() ? " (no block size in its PTX)"
                                       : ", not held by registers");
      continue;
    }
    candidates.push_back(c);
  }

  // One block more at a time, every kernel still searching in one ptxas run.
  SmallVector<Candidate *> searching;
  for (Candidate &c : candidates)
    searching.push_back(&c);
  while (!searching.empty()) {
    std::string bounded = ptx;
    for (Candidate *c : searching)
      setMinBlocksPerSM(bounded, c->func.getSymName(), c->asked());
    FailureOr<llvm::StringMap<Resources>> report =
        compile(module, ptxas, bounded, target);
    if (failed(report))
      return failure();
    SmallVector<Candidate *> next;
    for (Candidate *c : searching) {
      int64_t asked = c->asked();
      auto found = report->find(c->func.getSymName());
      if (found == report->end())
        continue;
      const Resources &r = found->second;
      if (r.spillStores > c->unbounded.spillStores ||
          r.stack > c->unbounded.stack ||
          blockLimits(*sm, r.registers, c->shared, c->threads).blocks() < asked)
        continue;
      c->fitted = asked;
      c->fittedRegisters = r.registers;
      if (asked < c->most)
        next.push_back(c);
    }
    searching = std::move(next);
  }

  Builder builder(module.getContext());
  for (Candidate &c : candidates) {
    if (c.fitted)
      c.func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                      builder.getI32IntegerAttr(c.fitted));
    if (!remarks)
      continue;
    InFlightDiagnostic remark =
        emitRemark(c.func.getLoc(), "linattn-gpu-fit-registers: ")
        << c.func.getSymName() << ": " << c.unbounded.registers
        << " registers, " << c.blocks << " blocks per SM";
    if (c.fitted)
      remark << "; bounded: " << c.fittedRegisters << " registers, " << c.fitted
             << " blocks";
    else
      remark << "; no more blocks fit without spilling";
  }
  return success();
}

void LinAttnGPUFitRegistersPass::runOnOperation() {
  ModuleOp top = getOperation();
  // Threads and dynamic shared memory of every kernel, over its launches.
  llvm::DenseMap<Attribute, LaunchShape> shapes;
  top.walk([&](gpu::LaunchFuncOp launch) {
    std::optional<int64_t> x = constantOf(launch.getBlockSizeX()),
                           y = constantOf(launch.getBlockSizeY()),
                           z = constantOf(launch.getBlockSizeZ());
    Value dynamic = launch.getDynamicSharedMemorySize();
    shapes[launch.getKernel()].add(
        x && y && z ? std::optional<int64_t>(*x * *y * *z) : std::nullopt,
        dynamic ? constantOf(dynamic) : std::optional<int64_t>(0));
  });
  // ptxas is needed only where there is something to compile for it.
  if (shapes.empty() ||
      llvm::none_of(top.getOps<gpu::GPUModuleOp>(),
                    [](gpu::GPUModuleOp m) { return bool(nvvmTargetOf(m)); }))
    return;

  std::string ptxas = findPtxas(cudaPath);
  if (ptxas.empty()) {
    top.emitError("linattn-gpu-fit-registers: no ptxas in ")
        << (cudaPath.empty() ? std::string("PATH") : cudaPath + "/bin or PATH");
    return signalPassFailure();
  }
  for (auto module : top.getOps<gpu::GPUModuleOp>())
    if (failed(fitModule(module, shapes, ptxas)))
      return signalPassFailure();
}
