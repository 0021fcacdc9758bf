/*===-- linattn-c/IR.h - C API helpers for modules ----------------*- C -*-===*\
|*                                                                            *|
|* Part of the linattn project.                                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef LINATTN_C_IR_H
#define LINATTN_C_IR_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Parses (and verifies) a module from `source`, like `mlirModuleCreateParse`,
/// but names the buffer `sourceName`, so that locations and diagnostics read
/// `sourceName:line:col` instead of `-:line:col`. Returns a null module on
/// failure; the diagnostics go to the context's handlers.
MLIR_CAPI_EXPORTED MlirModule linattnModuleCreateParseWithName(
    MlirContext context, MlirStringRef source, MlirStringRef sourceName);

/// Fails, with an error diagnostic at the first function concerned, when the
/// target CPU and features of the module's LLVM-dialect functions (the CPU
/// pipeline's `target-cpu` and `target-features`) ask for instruction-set
/// features the host CPU lacks: code the JIT generates for them may stop the
/// process at an illegal instruction. Call it before
/// `mlirExecutionEngineCreate`. Checks x86-64 hosts only.
MLIR_CAPI_EXPORTED MlirLogicalResult linattnVerifyRunsOnHost(MlirModule module);

#ifdef __cplusplus
}
#endif

#endif // LINATTN_C_IR_H
