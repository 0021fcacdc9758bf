//===- MaskedToScan.cpp - causal quadratic form into a scan ---------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Rewrites apply_scores(scores(φQ, φK causal scale(s)), V [normalize(eps)])
// into `linattn.scan forward`. The causal mask of `scores` is the inclusive
// lower triangle (j ≤ i), which is exactly what an inclusive forward prefix
// scan with zero initial state computes:
//
//   Σ_{j≤i} s·φ(qᵢ)ᵀφ(kⱼ) vⱼ = s·φ(qᵢ)ᵀ Sᵢ,   Sᵢ = Σ_{j≤i} φ(kⱼ) vⱼᵀ.
//
// The scale s is kept exact: normalized, s > 0 cancels between numerator and
// denominator except against eps, so the scan takes eps/s; unnormalized, the
// output is multiplied by s.
//
//===----------------------------------------------------------------------===//

#include "linattn/IR/LinAttnOps.h"
#include "linattn/Transforms/Passes.h"
#include "linattn/Transforms/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNMASKEDTOSCANPASS
#include "linattn/Transforms/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

namespace {
/// apply_scores(scores(φQ, φK causal scale(s)), V [normalize(eps)])
///   -> scan forward φQ, φK, V [normalize(eps / s)]   (times s unnormalized).
struct CausalScoresToScan : OpRewritePattern<ApplyScoresOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ApplyScoresOp op,
                                PatternRewriter &rewriter) const override {
    auto scores = op.getScores().getDefiningOp<ScoresOp>();
    if (!scores)
      return rewriter.notifyMatchFailure(
          op, "scores are not produced by linattn.scores");
    if (!scores.getCausal())
      return rewriter.notifyMatchFailure(
          op, "scores are not causal: the unmasked form is reassociated, not "
              "scanned");
    // Rewriting one consumer while the score matrix stays live for another
    // would compute both the quadratic and the scan form. Every consumer
    // must be an apply_scores that this pattern can turn into a scan, so
    // that the N×N matrix dies once all of them are rewritten.
    for (Operation *user : scores->getUsers())
      if (!isa<ApplyScoresOp>(user))
        return rewriter.notifyMatchFailure(
            op, "scores have a use other than apply_scores: the quadratic "
                "matrix would stay live beside the scan");

    double scale = scores.getScaleValue();
    FloatAttr eps;
    if (std::optional<APFloat> epsValue = op.getEps()) {
      // Σ s·aᵢⱼvⱼ / (Σ s·aᵢⱼ + eps) = Σ aᵢⱼvⱼ / (Σ aᵢⱼ + eps/s) for s > 0.
      if (!(scale > 0.0))
        return rewriter.notifyMatchFailure(
            op, "normalized scores with a non-positive scale have no scan "
                "form with a positive eps");
      double scaledEps = epsValue->convertToDouble() / scale;
      if (!std::isfinite(scaledEps) || scaledEps <= 0.0)
        return rewriter.notifyMatchFailure(
            op, "eps divided by the scale is not a positive finite number");
      eps = rewriter.getF64FloatAttr(scaledEps);
    }

    Value queries = scores.getQueryFeatures(), keys = scores.getKeyFeatures(),
          values = op.getValues();
    auto queryType = cast<RankedTensorType>(queries.getType());
    auto keyType = cast<RankedTensorType>(keys.getType());
    auto valueType = cast<RankedTensorType>(values.getType());
    auto resultType = cast<RankedTensorType>(op.getType());

    // State [batch..., F, Dv] and normalizer [batch..., F], as static as the
    // operands allow.
    int64_t rank = queryType.getRank();
    SmallVector<int64_t> stateShape;
    for (int64_t i = 0; i < rank - 2; ++i)
      stateShape.push_back(
          getFirstStaticSize({queryType, keyType, valueType, resultType}, i));
    SmallVector<int64_t> normalizerShape(stateShape);
    int64_t features = getFirstStaticSize({queryType, keyType}, rank - 1);
    stateShape.push_back(features);
    stateShape.push_back(getFirstStaticSize({valueType, resultType}, rank - 1));
    normalizerShape.push_back(features);
    Type stateElement = getAccumulatorType(resultType.getElementType());
    auto stateType = RankedTensorType::get(stateShape, stateElement);
    auto normalizerType = RankedTensorType::get(normalizerShape, stateElement);

    Location loc = op.getLoc();
    auto scan = ScanOp::create(
        rewriter, loc, TypeRange{resultType, stateType, normalizerType},
        ScanDirection::Forward, queries, keys, values,
        /*initial_state=*/Value(), /*initial_normalizer=*/Value(), eps,
        /*chunk_size=*/IntegerAttr());
    Value result = scan.getResult();
    if (!op.isNormalized() && scale != 1.0)
      result = scaleTensor(rewriter, loc, result, scale);
    rewriter.replaceOp(op, result);
    if (scores->use_empty())
      rewriter.eraseOp(scores);
    return success();
  }
};

struct LinAttnMaskedToScanPass
    : linattn::impl::LinAttnMaskedToScanPassBase<LinAttnMaskedToScanPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMaskedToScanPatterns(patterns);
    // The greedy driver, because the rewrite erases the producer of the
    // matched op once its last consumer is gone.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     getRewriteOnlyConfig())))
      signalPassFailure();
  }
};
} // namespace

void mlir::linattn::populateMaskedToScanPatterns(RewritePatternSet &patterns) {
  patterns.add<CausalScoresToScan>(patterns.getContext());
}
