//===- Dialects.cpp - C API for the linattn dialect -----------------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "linattn-c/Dialects.h"

#include "linattn/IR/LinAttnDialect.h"
#include "linattn/InitAll.h"

#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LinAttn, linattn,
                                      mlir::linattn::LinAttnDialect)

void linattnRegisterAllDialects(MlirDialectRegistry registry) {
  mlir::linattn::registerAllDialects(*unwrap(registry));
}
