//===- Decompose.cpp - linattn.attention, scan_grad into primitives -------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "linattn/IR/LinAttnOps.h"
#include "linattn/Transforms/Passes.h"
#include "linattn/Transforms/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineMap.h"
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
/// values dO). Normalized, a fourth scan first recomputes the numerators and
/// denominators (values [V, 1]), elementwise generics make g = dO / D and
/// h = -(dO·N) / D², and [g, h] and [V, 1] stand in for dO and V where they
/// are queries or keys, g for dO where it is dV's values.
struct DecomposeScanGrad : OpRewritePattern<ScanGradOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ScanGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
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
    Type data = types.front().getElementType();
    Type state = getAccumulatorType(data);

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
                 rewriter, loc,
                 TypeRange{resultType, RankedTensorType::get(stateShape, state),
                           RankedTensorType::get(normalizerShape, state)},
                 direction, queries, keys, values,
                 /*initial_state=*/Value(),
                 /*initial_normalizer=*/Value(), /*eps=*/FloatAttr(),
                 /*chunk_size=*/IntegerAttr())
          .getResult();
    };
    Type queryGradType = op.getQueryFeaturesGrad().getType(),
         keyGradType = op.getKeyFeaturesGrad().getType(),
         valueGradType = op.getValuesGrad().getType();
    std::optional<APFloat> eps = op.getEps();
    if (!eps) {
      rewriter.replaceOp(op, {scan(same, dout, v, fk, queryGradType, dv, f),
                              scan(other, v, dout, fq, keyGradType, dv, f),
                              scan(other, fk, fq, dout, valueGradType, f, dv)});
      return success();
    }

    // Sizes [batch..., N, X] from V's, X replaced.
    SmallVector<OpFoldResult> valueSizes =
        tensor::getMixedSizes(rewriter, loc, v);
    auto withLast = [&](OpFoldResult last) {
      SmallVector<OpFoldResult> sizes(valueSizes);
      sizes.back() = last;
      return sizes;
    };
    OpFoldResult zero = rewriter.getIndexAttr(0),
                 one = rewriter.getIndexAttr(1);
    SmallVector<OpFoldResult> origin(rank, zero), unit(rank, one);
    OpFoldResult last = valueSizes.back();
    OpFoldResult lastPlusOne =
        ShapedType::isDynamic(dv)
            ? OpFoldResult(
                  arith::AddIOp::create(
                      rewriter, loc,
                      getValueOrCreateConstantIndexOp(rewriter, loc, last),
                      arith::ConstantIndexOp::create(rewriter, loc, 1))
                      .getResult())
            : OpFoldResult(rewriter.getIndexAttr(dv + 1));
    SmallVector<OpFoldResult> wideSizes = withLast(lastPlusOne),
                              columnSizes = withLast(one);
    SmallVector<OpFoldResult> lastColumn(origin);
    lastColumn.back() = last;
    int64_t wide = ShapedType::isDynamic(dv) ? dv : dv + 1;

    // [V, 1], and the scan that gives [N, D - eps] with it.
    Value valuesAndOne = createInsertSlice(
        rewriter, loc, v, filledTensor(rewriter, loc, wideSizes, data, 1.0),
        origin, valueSizes, unit);
    Value sums = scan(same, fq, fk, valuesAndOne, tensorTypeOf(wideSizes, data),
                      f, wide);
    Value numerators =
        createExtractSlice(rewriter, loc, tensorTypeOf(valueSizes, data), sums,
                           origin, valueSizes, unit);
    Value denominators =
        createExtractSlice(rewriter, loc, tensorTypeOf(columnSizes, data), sums,
                           lastColumn, columnSizes, unit);

    // Loops (batch..., i, d): rows (batch..., i) and the denominators'
    // column (batch..., i, 0).
    MLIRContext *ctx = rewriter.getContext();
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap rows = identity.dropResult(rank - 1);
    SmallVector<AffineExpr> columnExprs(identity.getResults());
    columnExprs.back() = getAffineConstantExpr(0, ctx);
    AffineMap column = AffineMap::get(rank, 0, columnExprs, ctx);
    SmallVector<utils::IteratorType> parallel(rank,
                                              utils::IteratorType::parallel);
    SmallVector<utils::IteratorType> reduceLast(parallel);
    reduceLast.back() = utils::IteratorType::reduction;
    Value epsConstant = arith::ConstantOp::create(
        rewriter, loc, state,
        rewriter.getFloatAttr(state, eps->convertToDouble()));
    auto generic =
        [&](Type resultType, ValueRange inputs, Value init,
            ArrayRef<AffineMap> maps, ArrayRef<utils::IteratorType> iterators,
            function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
          return linalg::GenericOp::create(
                     rewriter, loc, TypeRange{resultType}, inputs,
                     ValueRange{init}, maps, iterators,
                     [&](OpBuilder &b, Location l, ValueRange args) {
                       SmallVector<Value> wideArgs;
                       for (Value arg : args)
                         wideArgs.push_back(convertFloat(b, l, arg, state));
                       Value result = body(b, l, wideArgs);
                       linalg::YieldOp::create(
                           b, l,
                           convertFloat(b, l, result,
                                        cast<RankedTensorType>(resultType)
                                            .getElementType()));
                     })
              .getResult(0);
        };
    // dO·N per row, in the state type.
    SmallVector<OpFoldResult> rowSizes(valueSizes.begin(),
                                       valueSizes.end() - 1);
    Value dots =
        generic(tensorTypeOf(rowSizes, state), ValueRange{dout, numerators},
                filledTensor(rewriter, loc, rowSizes, state, 0.0),
                {identity, identity, rows}, reduceLast,
                [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                  Value product = arith::MulFOp::create(b, l, args[0], args[1]);
                  return arith::AddFOp::create(b, l, args[2], product);
                });
    // g = dO / D, h = -(dO·N) / D² (the loops' last dimension of size 1).
    Value g =
        generic(tensorTypeOf(valueSizes, data), ValueRange{dout, denominators},
                tensor::EmptyOp::create(rewriter, loc, valueSizes, data),
                {identity, column, identity}, parallel,
                [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                  Value den = arith::AddFOp::create(b, l, args[1], epsConstant);
                  return arith::DivFOp::create(b, l, args[0], den);
                });
    Value h =
        generic(tensorTypeOf(columnSizes, data), ValueRange{dots, denominators},
                tensor::EmptyOp::create(rewriter, loc, columnSizes, data),
                {rows, identity, identity}, parallel,
                [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                  Value den = arith::AddFOp::create(b, l, args[1], epsConstant);
                  Value square = arith::MulFOp::create(b, l, den, den);
                  Value quotient = arith::DivFOp::create(b, l, args[0], square);
                  return arith::NegFOp::create(b, l, quotient);
                });
    Value gh = createInsertSlice(
        rewriter, loc, g,
        tensor::EmptyOp::create(rewriter, loc, wideSizes, data), origin,
        valueSizes, unit);
    gh = createInsertSlice(rewriter, loc, h, gh, lastColumn, columnSizes, unit);

    rewriter.replaceOp(
        op, {scan(same, gh, valuesAndOne, fk, queryGradType, wide, f),
             scan(other, valuesAndOne, gh, fq, keyGradType, wide, f),
             scan(other, fk, fq, g, valueGradType, f, dv)});
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
