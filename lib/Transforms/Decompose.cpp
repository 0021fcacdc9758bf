//===- Decompose.cpp - linattn.attention, scan_grad into primitives -------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "linattn/IR/LinAttnOps.h"
#include "linattn/Transforms/Passes.h"
#include "linattn/Transforms/Utils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNDECOMPOSEPASS
#include "linattn/Transforms/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

/// Returns `type` with its last dimension replaced by `size`.
static RankedTensorType withLastDim(RankedTensorType type, int64_t size) {
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = size;
  return type.clone(shape);
}

namespace {
/// linattn.attention -> feature_map(q), feature_map(k), scores, apply_scores.
struct DecomposeAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto queryType = cast<RankedTensorType>(op.getQuery().getType());
    auto keyType = cast<RankedTensorType>(op.getKey().getType());
    FeatureMapKind kind = op.getFeatureMap();
    Value projection = op.getProjection();
    int64_t projectionSize =
        projection ? cast<RankedTensorType>(projection.getType()).getDimSize(1)
                   : ShapedType::kDynamic;

    auto mapFeatures = [&](Value input, RankedTensorType type) -> Value {
      int64_t features = FeatureMapOp::getFeatureSize(
          kind, type.getShape().back(), projectionSize);
      return FeatureMapOp::create(rewriter, loc, withLastDim(type, features),
                                  kind, input, projection);
    };
    Value queryFeatures = mapFeatures(op.getQuery(), queryType);
    Value keyFeatures = mapFeatures(op.getKey(), keyType);

    // Scores are [batch..., N, M]: the query type with the key length last.
    int64_t keyLength = keyType.getDimSize(keyType.getRank() - 2);
    Value scores = ScoresOp::create(
        rewriter, loc, withLastDim(queryType, keyLength), queryFeatures,
        keyFeatures, op.getCausal(), /*scale=*/nullptr);
    rewriter.replaceOpWithNewOp<ApplyScoresOp>(op, op.getType(), scores,
                                               op.getValues(), op.getEpsAttr());
    return success();
  }
};

/// linattn.scan_grad -> three unnormalized scans with the operands' roles
/// exchanged (the op's description derives them): dφ(Q) by a scan in the
/// op's direction (queries dO, keys V, values φ(K)), dφ(K) and dV by scans
/// in the other (queries V, keys dO, values φ(Q); queries φ(K), keys φ(Q),
/// values dO).
struct DecomposeScanGrad : OpRewritePattern<ScanGradOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ScanGradOp op,
                                PatternRewriter &rewriter) const override {
    Value fq = op.getQueryFeatures(), fk = op.getKeyFeatures(),
          v = op.getValues(), dout = op.getResultGrad();
    SmallVector<RankedTensorType> types;
    for (Value value : op->getOperands())
      types.push_back(cast<RankedTensorType>(value.getType()));
    for (Value value : op->getResults())
      types.push_back(cast<RankedTensorType>(value.getType()));
    int64_t rank = types.front().getRank();
    // The sizes as static as any operand or result has them: batch
    // dimensions, F (query and key features and their gradients) and Dv.
    SmallVector<int64_t> batch;
    for (int64_t i = 0; i < rank - 2; ++i)
      batch.push_back(getFirstStaticSize(types, i));
    auto lastOf = [&](std::initializer_list<int> indices) {
      SmallVector<RankedTensorType> some;
      for (int index : indices)
        some.push_back(types[index]);
      return getFirstStaticSize(some, rank - 1);
    };
    int64_t f = lastOf({0, 1, 4, 5}), dv = lastOf({2, 3, 6});
    Type state = getAccumulatorType(types.front().getElementType());

    ScanDirection same = op.getDirection();
    ScanDirection other =
        op.isReverse() ? ScanDirection::Forward : ScanDirection::Reverse;
    auto scan = [&](ScanDirection direction, Value queries, Value keys,
                    Value values, Type resultType, int64_t features,
                    int64_t valueSize) -> Value {
      SmallVector<int64_t> stateShape(batch), normalizerShape(batch);
      stateShape.append({features, valueSize});
      normalizerShape.push_back(features);
      return ScanOp::create(
                 rewriter, op.getLoc(),
                 TypeRange{resultType, RankedTensorType::get(stateShape, state),
                           RankedTensorType::get(normalizerShape, state)},
                 direction, queries, keys, values,
                 /*initial_state=*/Value(),
                 /*initial_normalizer=*/Value(), /*eps=*/FloatAttr(),
                 /*chunk_size=*/IntegerAttr())
          .getResult();
    };
    Value queryGrad =
        scan(same, dout, v, fk, op.getQueryFeaturesGrad().getType(), dv, f);
    Value keyGrad =
        scan(other, v, dout, fq, op.getKeyFeaturesGrad().getType(), dv, f);
    Value valueGrad =
        scan(other, fk, fq, dout, op.getValuesGrad().getType(), f, dv);
    rewriter.replaceOp(op, {queryGrad, keyGrad, valueGrad});
    return success();
  }
};

struct LinAttnDecomposePass
    : linattn::impl::LinAttnDecomposePassBase<LinAttnDecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposePatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace

void mlir::linattn::populateDecomposePatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeAttention, DecomposeScanGrad>(patterns.getContext());
}
