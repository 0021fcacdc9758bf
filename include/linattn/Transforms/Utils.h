//===- Utils.h - helpers shared by the linattn rewrites ---------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_TRANSFORMS_UTILS_H
#define LINATTN_TRANSFORMS_UTILS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
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

/// A tensor type of `elementType` whose sizes are the constant entries of
/// `sizes` and dynamic elsewhere.
RankedTensorType tensorTypeOf(ArrayRef<OpFoldResult> sizes, Type elementType);

/// `value` transposed by `permutation` (its dimension d is value's
/// dimension permutation[d]) into a tensor.empty: a linalg.transpose.
Value createTranspose(OpBuilder &builder, Location loc, Value value,
                      ArrayRef<int64_t> permutation);

/// True when a transpose by `permutation` keeps the last dimension last
/// (moves only the leading ones), so that rows stay contiguous: the
/// transposes between token-major [B, N, H, D] and heads-first
/// [B, H, N, D] tensors.
bool keepsLastDimension(ArrayRef<int64_t> permutation);

/// A tensor of the given sizes with every element `value` (linalg.fill of a
/// tensor.empty).
Value filledTensor(OpBuilder &builder, Location loc,
                   ArrayRef<OpFoldResult> sizes, Type elementType,
                   double value);

/// Builds `tensor.extract_slice %source[offsets] [sizes] [strides]` of type
/// `type` (the inferred type when null), or `tensor.empty` of that type when
/// the slice or `source` has a static size of 0. Upstream's verifier rejects
/// every static offset into a dimension of size 0, and an offset at a
/// dimension's end even for an empty slice, though such slices read nothing.
Value createExtractSlice(OpBuilder &builder, Location loc,
                         RankedTensorType type, Value source,
                         ArrayRef<OpFoldResult> offsets,
                         ArrayRef<OpFoldResult> sizes,
                         ArrayRef<OpFoldResult> strides);

/// Builds `tensor.insert_slice %source into %dest[offsets] [sizes]
/// [strides]`, or returns `dest` when the slice, `source` or `dest` has a
/// static size of 0 (see createExtractSlice).
Value createInsertSlice(OpBuilder &builder, Location loc, Value source,
                        Value dest, ArrayRef<OpFoldResult> offsets,
                        ArrayRef<OpFoldResult> sizes,
                        ArrayRef<OpFoldResult> strides);

/// Token `index` of `sequence`, a [batch..., N, X] tensor, as a
/// [batch..., X] tensor: a slice that keeps the token dimension, collapsed
/// into X. A rank-reducing slice would be ambiguous where a batch size of 1
/// sits next to it, and the canonicalizer may resolve it differently once
/// dynamic sizes turn static.
Value extractToken(OpBuilder &builder, Location loc, Value sequence,
                   OpFoldResult index);

/// `token`, a [batch..., X] tensor, as a [batch..., 1, X] one.
Value expandToken(OpBuilder &builder, Location loc, Value token);

/// Writes `token`, a [batch..., X] tensor, into `sequence`, a [batch..., N, X]
/// tensor, at `index`: the inverse of extractToken.
Value insertToken(OpBuilder &builder, Location loc, Value token, Value sequence,
                  OpFoldResult index);

/// Reports every linattn op in `module` that is not in a func.func directly
/// inside it (the only functions the lowerings rewrite and whose calls
/// resolve to what they declare in `module`); `lowering` names the pass or
/// pipeline in the diagnostics.
LogicalResult checkPlacement(Operation *module, StringRef lowering);

/// Converts the scalar float `value` to the float type `to` (between two
/// 16-bit types through f32).
Value convertFloat(OpBuilder &builder, Location loc, Value value, Type to);

/// 1 + D + D², the poly2 feature count, for the index `inputSize` D known
/// at run time.
Value createPoly2FeatureCount(OpBuilder &builder, Location loc,
                              Value inputSize);

} // namespace mlir::linattn

#endif // LINATTN_TRANSFORMS_UTILS_H
