//===- Reassociate.cpp - quadratic form into the linear form --------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// (φ(Q)φ(K)ᵀ)V = φ(Q)(φ(K)ᵀV): the product of three matrices is associative,
// so the N×M score matrix never has to exist. The rewrite is legal only when
// nothing but a constant scale sits between the two products; see
// docs/Rationale.md, "Reassociation: when it is legal and when it pays".
//
//===----------------------------------------------------------------------===//

#include "linattn/IR/LinAttnOps.h"
#include "linattn/Transforms/Passes.h"
#include "linattn/Transforms/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <cmath>

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNREASSOCIATEPASS
#include "linattn/Transforms/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

//===----------------------------------------------------------------------===//
// Cost model
//===----------------------------------------------------------------------===//

/// Dynamic sizes count as this long: unknown sequences are assumed long,
/// which is when the linear form pays.
static constexpr double kUnknownSize = 65536.0;

static double sizeOrLong(int64_t size) {
  return ShapedType::isDynamic(size) ? kUnknownSize : static_cast<double>(size);
}

/// Per batch element operation counts of both forms (a multiply-add counts
/// as one operation; so do an addition and a division).
struct FormCosts {
  double quadratic = 0;
  double linear = 0;
};

static FormCosts estimateCosts(double n, double m, double f, double dv,
                               bool normalized, bool scaled,
                               bool scaleInSummary, bool scoresShared) {
  FormCosts costs;
  // Scores, and their scale, are only saved when nothing else needs them.
  if (!scoresShared)
    costs.quadratic += n * m * f + (scaled ? n * m : 0);
  costs.quadratic += n * m * dv;
  if (normalized)
    costs.quadratic += n * m + n * dv; // row sums, divisions
  costs.linear = m * f * dv + n * f * dv;
  if (normalized)
    costs.linear += m * f + n * f + n * dv; // z, φ(qᵢ)ᵀz, divisions
  if (scaleInSummary)
    costs.linear += f * dv + (normalized ? f : 0);
  return costs;
}

//===----------------------------------------------------------------------===//
// The rewrite
//===----------------------------------------------------------------------===//

LogicalResult mlir::linattn::reassociateScores(RewriterBase &rewriter,
                                               ApplyScoresOp op,
                                               ReassociateMode mode,
                                               double linearSpeedup) {
  if (mode == ReassociateMode::Never)
    return rewriter.notifyMatchFailure(op, "reassociation disabled (never)");
  auto scores = op.getScores().getDefiningOp<ScoresOp>();
  if (!scores)
    return rewriter.notifyMatchFailure(
        op, "scores are not produced directly by linattn.scores: whatever "
            "sits in between may not be linear");
  if (scores.getCausal())
    return rewriter.notifyMatchFailure(
        op, "causal masks are handled by linattn-masked-to-scan");

  Value queryFeatures = scores.getQueryFeatures();
  Value keyFeatures = scores.getKeyFeatures();
  Value values = op.getValues();
  auto queryType = cast<RankedTensorType>(queryFeatures.getType());
  auto keyType = cast<RankedTensorType>(keyFeatures.getType());
  auto valueType = cast<RankedTensorType>(values.getType());
  auto resultType = cast<RankedTensorType>(op.getType());
  auto scoresType = cast<RankedTensorType>(scores.getType());
  int64_t rank = resultType.getRank();
  // The verifiers guarantee equal ranks; check anyway rather than index
  // out of bounds on IR that was never verified.
  if (rank < 2 || queryType.getRank() != rank || keyType.getRank() != rank ||
      valueType.getRank() != rank || scoresType.getRank() != rank)
    return rewriter.notifyMatchFailure(op, "operand ranks do not agree");

  double scale = scores.getScaleValue();
  bool scaled = scale != 1.0;
  bool normalized = op.isNormalized();
  // Normalized attention is invariant under a positive scale of the
  // scores if eps is divided by it; otherwise the scale goes into S (and
  // z), which is exact for every finite scale.
  std::optional<double> eps;
  if (normalized)
    eps = op.getEps()->convertToDouble();
  bool scaleInSummary = false;
  if (scaled) {
    double scaledEps = eps ? *eps / scale : 0.0;
    if (normalized && scale > 0.0 && std::isnormal(scaledEps))
      eps = scaledEps;
    else
      scaleInSummary = true;
  }

  int64_t n = getFirstStaticSize({queryType, scoresType, resultType}, -2);
  int64_t m = getFirstStaticSize({keyType, scoresType, valueType}, -2);
  int64_t f = getFirstStaticSize({queryType, keyType}, -1);
  int64_t dv = getFirstStaticSize({valueType, resultType}, -1);
  if (mode == ReassociateMode::Auto) {
    bool shared = !scores->hasOneUse();
    FormCosts costs = estimateCosts(sizeOrLong(n), sizeOrLong(m), sizeOrLong(f),
                                    sizeOrLong(dv), normalized, scaled,
                                    scaleInSummary, shared);
    if (costs.linear >= costs.quadratic * linearSpeedup)
      return rewriter.notifyMatchFailure(
          op, "the linear form does not take less time by operation count");
  }

  // The summary shapes: the batch dimensions, statically known where any
  // operand knows them, then [F, Dv] and [F].
  SmallVector<int64_t> stateShape;
  for (int64_t i = 0; i < rank - 2; ++i)
    stateShape.push_back(getFirstStaticSize(
        {queryType, keyType, valueType, resultType, scoresType}, i));
  SmallVector<int64_t> normalizerShape(stateShape);
  stateShape.append({f, dv});
  normalizerShape.push_back(f);
  // 16-bit data sums into an f32 summary, as a scan's state does.
  Type elementType = getAccumulatorType(resultType.getElementType());
  auto stateType = RankedTensorType::get(stateShape, elementType);
  auto normalizerType = RankedTensorType::get(normalizerShape, elementType);

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  auto summary = KvSummaryOp::create(rewriter, loc, stateType, normalizerType,
                                     keyFeatures, values);
  Value state = summary.getState();
  Value normalizer = summary.getNormalizer();
  if (scaleInSummary) {
    state = scaleTensor(rewriter, loc, state, scale);
    if (normalized)
      normalizer = scaleTensor(rewriter, loc, normalizer, scale);
  }
  FloatAttr epsAttr = eps ? rewriter.getF64FloatAttr(*eps) : FloatAttr();
  rewriter.replaceOpWithNewOp<QueryReadoutOp>(
      op, resultType, queryFeatures, state, normalized ? normalizer : Value(),
      epsAttr);
  // The walk driver does no dead-code elimination: drop the N×M scores
  // when this was their only use.
  if (scores->use_empty())
    rewriter.eraseOp(scores);
  return success();
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
/// apply_scores(scores(%fq, %fk scale(s)), %v [normalize(eps)])
///   -> %s, %z = kv_summary(%fk, %v)
///      query_readout(%fq, %s [normalize(%z, eps / s)])
struct ReassociateScores : OpRewritePattern<ApplyScoresOp> {
  ReassociateScores(MLIRContext *context, ReassociateMode mode)
      : OpRewritePattern(context), mode(mode) {}

  LogicalResult matchAndRewrite(ApplyScoresOp op,
                                PatternRewriter &rewriter) const override {
    return reassociateScores(rewriter, op, mode);
  }

  ReassociateMode mode;
};

struct LinAttnReassociatePass
    : linattn::impl::LinAttnReassociatePassBase<LinAttnReassociatePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateReassociatePatterns(patterns, mode);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace

void mlir::linattn::populateReassociatePatterns(RewritePatternSet &patterns,
                                                ReassociateMode mode) {
  patterns.add<ReassociateScores>(patterns.getContext(), mode);
}
