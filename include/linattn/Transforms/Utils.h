//===- Utils.h - helpers shared by the linattn rewrites ---------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_TRANSFORMS_UTILS_H
#define LINATTN_TRANSFORMS_UTILS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::linattn {

/// Returns the size of dimension `index` (negative indices count from the
/// back) in the first of `types` that knows it statically, or
/// ShapedType::kDynamic when none does.
int64_t getFirstStaticSize(ArrayRef<RankedTensorType> types, int64_t index);

/// Multiplies every element of the float tensor `value` by `factor` with an
/// elementwise linalg.generic that updates `value` in place (no init tensor,
/// so dynamic sizes need no tensor.dim).
Value scaleTensor(OpBuilder &builder, Location loc, Value value, double factor);

/// The greedy driver configuration of the linattn rewrites: no folding, no
/// constant CSE and no region simplification, so IR that no pattern matches
/// comes out as it went in.
GreedyRewriteConfig getRewriteOnlyConfig();

/// The type products of `type` values accumulate in when an op gives no
/// state type: f32 for 16-bit floats, the type itself otherwise.
Type getAccumulatorType(Type type);

/// Converts the scalar float `value` to the float type `to` (between two
/// 16-bit types through f32).
Value convertFloat(OpBuilder &builder, Location loc, Value value, Type to);

} // namespace mlir::linattn

#endif // LINATTN_TRANSFORMS_UTILS_H
