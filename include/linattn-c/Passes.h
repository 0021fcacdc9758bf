/*===-- linattn-c/Passes.h - C API for the linattn passes ---------*- C -*-===*\
|*                                                                            *|
|* Part of the linattn project.                                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef LINATTN_C_PASSES_H
#define LINATTN_C_PASSES_H

#include "mlir-c/Pass.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Registers every linattn pass and pipeline with the global registry, so that
/// `mlirParsePassPipeline` and `mlirOpPassManagerAddPipeline` know them.
MLIR_CAPI_EXPORTED void linattnRegisterAllPasses(void);

#ifdef __cplusplus
}
#endif

/// Generated from Passes.td: `mlirCreateLinAttn<Pass>()` and
/// `mlirRegisterLinAttn<Pass>()` for every pass, `mlirRegisterLinAttnPasses()`.
#include "linattn/Transforms/Passes.capi.h.inc"

#endif // LINATTN_C_PASSES_H
