//===- LinAttnOps.h - linattn operations ------------------------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_IR_LINATTNOPS_H
#define LINATTN_IR_LINATTNOPS_H

#include "linattn/IR/LinAttnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "linattn/IR/LinAttnOps.h.inc"

namespace mlir::linattn {
/// The type products of `type` values accumulate in when an op gives no
/// state type (the gradients' decompositions, the rewrites that introduce
/// states): f32 for 16-bit floats, the type itself otherwise.
Type getAccumulatorType(Type type);
} // namespace mlir::linattn

#endif // LINATTN_IR_LINATTNOPS_H
