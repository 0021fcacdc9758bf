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

#define GEN_PASS_REGISTRATION
#include "linattn/Transforms/Passes.h.inc"

} // namespace linattn
} // namespace mlir

#endif // LINATTN_TRANSFORMS_PASSES_H
