//===- ShapeSignature.h - which sizes of a linattn op agree -----*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Every linattn op relates the shapes of its operands and results in the same
// way: all share the same leading batch dimensions, and their trailing one or
// two dimensions are sequence lengths and feature sizes that must agree. A
// `ShapeSignature` describes which: the verifiers check the static sizes
// against it, and `linattn-check-sizes` the dynamic ones at run time.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_IR_SHAPESIGNATURE_H
#define LINATTN_IR_SHAPESIGNATURE_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <utility>

namespace mlir::linattn {

/// One trailing dimension of a tensor in a signature. Dimensions that carry
/// the same symbol must be equal; `role` names the dimension in diagnostics
/// ("sequence length").
struct DimSpec {
  char symbol;
  StringRef role;
};

/// A tensor operand or result in a signature: the value (null for an
/// optional operand the op does not have), the name used in diagnostics
/// ("key") and its trailing dimensions. Unbatched tensors (the random-feature
/// projection) have no leading batch dimensions.
struct TensorSpec {
  Value value;
  StringRef name;
  SmallVector<DimSpec, 2> dims;
  bool batched = true;
};

/// The shape signature of an op: its tensors, and pairs of symbols that must
/// agree as well (a causal mask pairs query i with key i: N and M).
struct ShapeSignature {
  SmallVector<TensorSpec, 8> tensors;
  SmallVector<std::pair<char, char>, 1> equalSymbols = {};
};

/// The signature of `op` if it is a linattn op with one, else std::nullopt.
std::optional<ShapeSignature> getShapeSignature(Operation *op);

} // namespace mlir::linattn

#endif // LINATTN_IR_SHAPESIGNATURE_H
