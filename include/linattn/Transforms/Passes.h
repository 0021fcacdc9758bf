//===- Passes.h - linattn transformation passes -----------------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_TRANSFORMS_PASSES_H
#define LINATTN_TRANSFORMS_PASSES_H

#include "linattn/IR/LinAttnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
class RewriterBase;

namespace linattn {
class ApplyScoresOp;

/// When `linattn-reassociate` rewrites the quadratic form.
enum class ReassociateMode {
  /// When the linear form needs fewer operations (see the pass description).
  Auto,
  /// Whenever the rewrite is legal.
  Always,
  /// Never.
  Never,
};

#define GEN_PASS_DECL
#include "linattn/Transforms/Passes.h.inc"

/// Adds the patterns of `linattn-decompose`: `linattn.attention` into
/// `linattn.feature_map`, `linattn.scores` and `linattn.apply_scores`,
/// `linattn.scan_grad` into three `linattn.scan`s, `linattn.attention_grad`
/// into feature maps, feature gradients and `linattn.feature_map_grad`, and
/// that into `linalg.generic`s (but for the elementwise maps with
/// `keepElementwiseGrads`); the pass's options.
void populateDecomposePatterns(RewritePatternSet &patterns,
                               const LinAttnDecomposePassOptions &options = {});

/// Adds the pattern that rewrites `linattn.apply_scores` of a non-causal
/// `linattn.scores` into `linattn.kv_summary` + `linattn.query_readout`:
///
///   apply_scores(scores(%fq, %fk scale(s)), %v [normalize(eps)])
///     -> %s, %z = kv_summary(%fk, %v)
///        query_readout(%fq, %s [normalize(%z, eps')])
///
/// `mode` decides whether a legal rewrite is taken (see ReassociateMode).
void populateReassociatePatterns(RewritePatternSet &patterns,
                                 ReassociateMode mode = ReassociateMode::Auto);

/// The rewrite of `populateReassociatePatterns` applied to `op`; fails, with
/// a match-failure note, when it is illegal or `mode` declines it. In
/// `Auto` mode the cost model's operation counts are compared as times: the
/// linear form's divided by `linearSpeedup`, for a target that runs the
/// linear form that many times faster per operation (its kernels against
/// the quadratic form's generic loops).
LogicalResult reassociateScores(RewriterBase &rewriter, ApplyScoresOp op,
                                ReassociateMode mode,
                                double linearSpeedup = 1.0);

/// Adds the patterns that raise attention written in linalg/tensor/arith/math
/// to linattn ops:
///  - RaiseAttentionContractions: contraction(mask(scale(contraction(X, Yᵀ))),
///    V) -> apply_scores(scores(X, Y [causal] [scale]), V);
///  - RaiseRowSumNormalization: apply_scores(A, V) / (rowsum(A) + eps)
///    -> apply_scores(A, V normalize(eps));
///  - RaiseFeatureMaps: elementwise elu + 1 / relu generics feeding
///    linattn.scores -> linattn.feature_map.
void populateRaisePatterns(RewritePatternSet &patterns);

/// Adds the pattern that rewrites a causal quadratic form,
/// `linattn.apply_scores(linattn.scores(%fq, %fk causal), %v)`, into
/// `linattn.scan forward %fq, %fk, %v` with the same normalization; a score
/// scale is folded into eps (normalized) or into the output (unnormalized).
void populateMaskedToScanPatterns(RewritePatternSet &patterns);

/// Adds the pattern that rewrites `linattn.scan` into an `scf.for` over
/// chunks: intra-chunk causal scores applied to the values plus the readout
/// of the carried state, then the state update with the chunk's key-value
/// summary. Chunks have the scan's `chunk_size` hint, else
/// `defaultChunkSize` tokens.
void populateChunkScanPatterns(RewritePatternSet &patterns,
                               int64_t defaultChunkSize);

/// Adds the pattern that unrolls a `linattn.scan` whose static sequence
/// length is at most `maxLength` into a chain of `linattn.step` ops.
void populateScanToStepsPatterns(RewritePatternSet &patterns,
                                 int64_t maxLength);

#define GEN_PASS_REGISTRATION
#include "linattn/Transforms/Passes.h.inc"

} // namespace linattn
} // namespace mlir

#endif // LINATTN_TRANSFORMS_PASSES_H
