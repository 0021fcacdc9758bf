//===- IR.cpp - C API helpers for modules ---------------------------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "linattn-c/IR.h"

#include "linattn/Conversion/LinAttnToCPU/TargetCpu.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;

MlirModule linattnModuleCreateParseWithName(MlirContext context,
                                            MlirStringRef source,
                                            MlirStringRef sourceName) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      unwrap(source), ParserConfig(unwrap(context)), unwrap(sourceName));
  if (!module)
    return MlirModule{nullptr};
  return MlirModule{module.release().getOperation()};
}

MlirLogicalResult linattnVerifyRunsOnHost(MlirModule module) {
  return wrap(linattn::verifyRunsOnHost(unwrap(module)));
}
