/*===-- linattn-c/Dialects.h - C API for the linattn dialect ------*- C -*-===*\
|*                                                                            *|
|* Part of the linattn project.                                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef LINATTN_C_DIALECTS_H
#define LINATTN_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Declares `mlirGetDialectHandle__linattn__()`, to be used with
/// `mlirDialectHandleInsertDialect`, `mlirDialectHandleRegisterDialect` and
/// `mlirDialectHandleLoadDialect`.
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(LinAttn, linattn);

/// Adds every dialect linattn provides to `registry`.
MLIR_CAPI_EXPORTED void
linattnRegisterAllDialects(MlirDialectRegistry registry);

#ifdef __cplusplus
}
#endif

#endif // LINATTN_C_DIALECTS_H
