//===- Decompose.cpp - linattn.attention into primitives ------------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "linattn/IR/LinAttnOps.h"
#include "linattn/Transforms/Passes.h"

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

struct LinAttnDecomposePass
    : linattn::impl::LinAttnDecomposePassBase<LinAttnDecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeAttentionPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace

void mlir::linattn::populateDecomposeAttentionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeAttention>(patterns.getContext());
}
