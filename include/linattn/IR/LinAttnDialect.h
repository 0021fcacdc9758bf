//===- LinAttnDialect.h - linattn dialect -----------------------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_IR_LINATTNDIALECT_H
#define LINATTN_IR_LINATTNDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dialect.h"

#include "linattn/IR/LinAttnOpsDialect.h.inc"

#include "linattn/IR/LinAttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "linattn/IR/LinAttnAttrs.h.inc"

#endif // LINATTN_IR_LINATTNDIALECT_H
