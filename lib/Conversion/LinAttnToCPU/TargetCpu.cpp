//===- TargetCpu.cpp - CPUs and features code is generated for ------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "linattn/Conversion/LinAttnToCPU/TargetCpu.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/TargetParser/X86TargetParser.h"

using namespace mlir;
using namespace mlir::linattn;

static bool hostIsX86_64() {
  return llvm::Triple(llvm::sys::getProcessTriple()).getArch() ==
         llvm::Triple::x86_64;
}

std::optional<std::string> mlir::linattn::unknownTargetCpu(StringRef cpu) {
  if (cpu.empty() || cpu == "generic" || !hostIsX86_64() ||
      llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) != llvm::X86::CK_None)
    return std::nullopt;
  std::string message = "unknown target CPU '" + cpu.str() +
                        "': not an x86-64 CPU or level LLVM knows (e.g. "
                        "znver4, sapphirerapids, x86-64-v3, generic)";
  if (cpu == "native" || cpu == "host")
    message += "; leave target-cpu empty for the host's";
  return message;
}

std::optional<llvm::StringMap<bool>>
mlir::linattn::targetFeatures(StringRef cpu, StringRef features) {
  llvm::StringMap<bool> enabled;
  if (cpu.empty()) {
    enabled = llvm::sys::getHostCPUFeatures();
  } else if (hostIsX86_64()) {
    SmallVector<StringRef> implied;
    llvm::X86::getFeaturesForCPU(cpu, implied);
    for (StringRef feature : implied)
      enabled[feature] = true;
  }
  SmallVector<StringRef> parts;
  features.split(parts, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    part = part.trim();
    bool on = part.consume_front("+");
    if (!on && !part.consume_front("-"))
      return std::nullopt;
    enabled[part] = on;
    // What the feature implies (+avx512bw: avx512f, ...), or what needs it
    // (-avx512f: every AVX-512 extension).
    if (hostIsX86_64())
      llvm::X86::updateImpliedFeatures(part, on, enabled);
  }
  return enabled;
}

/// Whether `feature` selects instructions that arithmetic and vector code
/// may use (rather than system instructions or tuning, which a virtual
/// machine's CPU often reports differently from its model's).
static bool isInstructionSetFeature(StringRef feature) {
  static constexpr StringRef prefixes[] = {
      "sse",    "ssse3", "avx", "fma",  "f16c", "bmi",        "lzcnt",
      "popcnt", "movbe", "amx", "gfni", "vaes", "vpclmulqdq", "pclmul",
      "aes",    "sha",   "adx", "xop",  "tbm",  "evex512"};
  return llvm::any_of(
      prefixes, [&](StringRef prefix) { return feature.starts_with(prefix); });
}

LogicalResult mlir::linattn::verifyRunsOnHost(ModuleOp module) {
  if (!hostIsX86_64())
    return success();
  llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
  llvm::StringSet<> checked;
  WalkResult result = module.walk([&](LLVM::LLVMFuncOp func) {
    StringRef cpu = func.getTargetCpu().value_or("");
    std::string features;
    if (auto attr = func.getTargetFeatures())
      features = attr->getFeaturesString();
    if ((cpu.empty() && features.empty()) ||
        !checked.insert((cpu + "|" + features).str()).second)
      return WalkResult::advance();
    std::optional<llvm::StringMap<bool>> wanted = targetFeatures(cpu, features);
    if (!wanted) {
      func.emitError() << "malformed target features '" << features << "'";
      return WalkResult::interrupt();
    }
    SmallVector<StringRef> missing;
    for (const auto &feature : *wanted)
      if (feature.second && isInstructionSetFeature(feature.first()) &&
          !host.lookup(feature.first()))
        missing.push_back(feature.first());
    if (missing.empty())
      return WalkResult::advance();
    llvm::sort(missing);
    InFlightDiagnostic diag = func.emitError() << "code generated for ";
    if (!cpu.empty())
      diag << "target CPU '" << cpu << "'"
           << (features.empty() ? "" : " with ");
    if (!features.empty())
      diag << "target features '" << features << "'";
    diag << " may use instructions this host's CPU ("
         << llvm::sys::getHostCPUName()
         << ") does not have: " << llvm::join(missing, ", ")
         << "; run it on such a CPU, or compile for this host (no target-cpu "
            "or target-features)";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}
