//===- Passes.h - linattn transformation passes -----------------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_TRANSFORMS_PASSES_H
#define LINATTN_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;

namespace linattn {

#define GEN_PASS_DECL
#include "linattn/Transforms/Passes.h.inc"

/// Adds the pattern that rewrites `linattn.attention` into
/// `linattn.feature_map`, `linattn.scores` and `linattn.apply_scores`.
void populateDecomposeAttentionPatterns(RewritePatternSet &patterns);

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

#define GEN_PASS_REGISTRATION
#include "linattn/Transforms/Passes.h.inc"

} // namespace linattn
} // namespace mlir

#endif // LINATTN_TRANSFORMS_PASSES_H
