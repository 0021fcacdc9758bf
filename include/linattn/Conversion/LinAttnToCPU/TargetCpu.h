//===- TargetCpu.h - CPUs and features code is generated for ---*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The CPU pipeline's `target-cpu` and `target-features`: which names LLVM
// knows, which features they give the kernels, and whether code generated
// for them can run on the host. LLVM itself only warns about a CPU it does
// not know (and then generates code for none), and a JIT-compiled function
// that uses an instruction the host lacks stops the process at it.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_CONVERSION_LINATTNTOCPU_TARGETCPU_H
#define LINATTN_CONVERSION_LINATTNTOCPU_TARGETCPU_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace mlir {
class ModuleOp;

namespace linattn {

/// Why `cpu` is not an x86-64 CPU or level LLVM generates code for; nothing
/// when it is, or when the host is not an x86-64 one (LLVM's target then
/// decides).
std::optional<std::string> unknownTargetCpu(StringRef cpu);

/// The features (LLVM's names, enabled or not) of code for `cpu` (empty: the
/// host's CPU) with `features` ("+avx2,-avx512f") added to or removed from
/// the CPU's, as code generation combines them. Nothing when `features` is
/// malformed.
std::optional<llvm::StringMap<bool>> targetFeatures(StringRef cpu,
                                                    StringRef features);

/// Fails, with an error naming them at the first function concerned, when the
/// `target_cpu` and `target_features` of the module's `llvm.func` ops ask for
/// instruction-set features (SSE, AVX, AVX-512, AMX, FMA, ...) that the host
/// CPU does not have: code generated for them may stop the process at an
/// illegal instruction. For JIT compilers (linattn-run, the Python package),
/// before code generation; x86-64 hosts only.
LogicalResult verifyRunsOnHost(ModuleOp module);

} // namespace linattn
} // namespace mlir

#endif // LINATTN_CONVERSION_LINATTNTOCPU_TARGETCPU_H
