//===- LinAttnDialect.cpp - linattn dialect -------------------------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "linattn/IR/LinAttnDialect.h"
#include "linattn/IR/LinAttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::linattn;

#include "linattn/IR/LinAttnOpsDialect.cpp.inc"

#include "linattn/IR/LinAttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "linattn/IR/LinAttnAttrs.cpp.inc"

void LinAttnDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "linattn/IR/LinAttnAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "linattn/IR/LinAttnOps.cpp.inc"
      >();
}
