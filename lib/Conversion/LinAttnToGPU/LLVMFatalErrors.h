//===- LLVMFatalErrors.h - LLVM's fatal errors as failures ------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The NVPTX backend reports what it cannot compile (an intrinsic call it
// has no instruction for, "Cannot select: ...") by LLVM's fatal error,
// which prints a stack dump and aborts the process: a Python interpreter
// or any other program that compiles kernels in-process with it.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_CONVERSION_LINATTNTOGPU_LLVMFATALERRORS_H
#define LINATTN_CONVERSION_LINATTNTOGPU_LLVMFATALERRORS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>

namespace mlir::linattn {

/// Runs `fn` with LLVM's fatal errors caught, on a thread of its own that
/// this one waits for: returns the reason of the first fatal error `fn`
/// raised, nullopt if it returned. A fatal error ends `fn` there: its
/// thread is parked for the rest of the process, and what it holds is
/// leaked. Fatal errors of other threads end the process as LLVM ends it.
/// LLVM's fatal error handler is process-wide: the first call installs one
/// for the rest of the process, in place of any other the program had.
std::optional<std::string> catchLLVMFatalErrors(llvm::function_ref<void()> fn);

} // namespace mlir::linattn

#endif // LINATTN_CONVERSION_LINATTNTOGPU_LLVMFATALERRORS_H
