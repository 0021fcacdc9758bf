//===- LinAttnToLinalg.h - linattn to linalg on tensors ---------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_CONVERSION_LINATTNTOLINALG_LINATTNTOLINALG_H
#define LINATTN_CONVERSION_LINATTNTOLINALG_LINATTNTOLINALG_H

namespace mlir {
class RewritePatternSet;

namespace linattn {

/// Adds the patterns that lower every linattn op to linalg, tensor, arith,
/// math and scf on tensors:
///
/// - `feature_map`: one elementwise `linalg.generic` (elu, relu), nothing
///   (identity), three slices inserted into one tensor (poly2: the constant,
///   the input and the collapsed outer product), or a projection contraction,
///   a squared-norm reduction and an elementwise exp (favor);
/// - `scores`, `apply_scores`, `kv_summary`, `query_readout`: contractions
///   and row sums accumulated in a zero-filled tensor, then one elementwise
///   op for the mask, scale, normalization and final truncation;
/// - `step`: the state update, then the readout of the new state;
/// - `scan`: an `scf.for` over the sequence applying the `step` lowering;
/// - `attention`: the `linattn-decompose` rewrite, whose results the other
///   patterns lower.
void populateLinAttnToLinalgConversionPatterns(RewritePatternSet &patterns);

} // namespace linattn
} // namespace mlir

#endif // LINATTN_CONVERSION_LINATTNTOLINALG_LINATTNTOLINALG_H
