/*===-- linattn-c/IR.h - C API helpers for modules ----------------*- C -*-===*\
|*                                                                            *|
|* Part of the linattn project.                                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef LINATTN_C_IR_H
#define LINATTN_C_IR_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Parses (and verifies) a module from `source`, like `mlirModuleCreateParse`,
/// but names the buffer `sourceName`, so that locations and diagnostics read
/// `sourceName:line:col` instead of `-:line:col`. Returns a null module on
/// failure; the diagnostics go to the context's handlers.
MLIR_CAPI_EXPORTED MlirModule linattnModuleCreateParseWithName(
    MlirContext context, MlirStringRef source, MlirStringRef sourceName);

#ifdef __cplusplus
}
#endif

#endif // LINATTN_C_IR_H
