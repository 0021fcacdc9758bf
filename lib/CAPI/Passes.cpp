//===- Passes.cpp - C API for the linattn passes --------------------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "linattn-c/Passes.h"

#include "linattn/InitAll.h"

#include "mlir/CAPI/Pass.h"
#include "mlir/Pass/Pass.h"

// Must include the declarations as they carry the important visibility
// attributes.
#include "linattn/Transforms/Passes.capi.h.inc"

using namespace mlir;
using namespace mlir::linattn;

#ifdef __cplusplus
extern "C" {
#endif

#include "linattn/Transforms/Passes.capi.cpp.inc"

#ifdef __cplusplus
}
#endif

void linattnRegisterAllPasses() { mlir::linattn::registerAllPasses(); }
