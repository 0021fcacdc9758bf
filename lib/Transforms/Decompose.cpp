//===- Decompose.cpp - attention and the gradients into primitives --------===//
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
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

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

/// φ of `kind` (with `projection` for favor) applied to `input`.
static Value mapFeatures(OpBuilder &builder, Location loc, FeatureMapKind kind,
                         Value input, Value projection) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t projectionSize =
      projection ? cast<RankedTensorType>(projection.getType()).getDimSize(1)
                 : ShapedType::kDynamic;
  int64_t features = FeatureMapOp::getFeatureSize(kind, type.getShape().back(),
                                                  projectionSize);
  return FeatureMapOp::create(builder, loc, withLastDim(type, features), kind,
                              input, projection);
}

/// φ of `kind` of `input` as `type` for `user`: a feature map of the same
/// operands that comes before `user` in its block where there is one (the
/// features a gradient was taken for), else a new one.
static Value featuresFor(OpBuilder &builder, Location loc, Operation *user,
                         FeatureMapKind kind, Value input, Value projection,
                         Type type) {
  for (Operation *other : input.getUsers()) {
    auto map = dyn_cast<FeatureMapOp>(other);
    if (map && map.getKind() == kind && map.getInput() == input &&
        map.getProjection() == projection && map.getType() == type &&
        map->getBlock() == user->getBlock() && map->isBeforeInBlock(user))
      return map;
  }
  return FeatureMapOp::create(builder, loc, type, kind, input, projection);
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

    Value queryFeatures =
        mapFeatures(rewriter, loc, kind, op.getQuery(), projection);
    Value keyFeatures =
        mapFeatures(rewriter, loc, kind, op.getKey(), projection);

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
} // namespace

namespace {
/// How wide the normalized gradients make [V, 1] and [g, h]: Dv + 1
/// columns, rounded up with zero columns to a multiple of `multiple` for
/// f16 and bf16 data (and f32 data with `f32`), where Dv is static. The
/// GPU's tensor-core scans take only multiples of 16 features; a zero
/// feature adds nothing to a score or a state.
struct WideColumns {
  int64_t multiple = 1;
  bool f32 = false;
};

/// What the gradients' decompositions build with: the rewriter and location,
/// the data type and the type sums are formed in (f32 for 16-bit data).
struct GradientBuilder {
  PatternRewriter &rewriter;
  Location loc;
  Type data, state;
  /// The width [V, 1] and [g, h] are padded to a multiple of (1: none).
  int64_t multiple;

  GradientBuilder(PatternRewriter &rewriter, Location loc, Type data,
                  WideColumns wide = {})
      : rewriter(rewriter), loc(loc), data(data),
        state(getAccumulatorType(data)),
        multiple(data.isF16() || data.isBF16() || (wide.f32 && data.isF32())
                     ? std::max<int64_t>(wide.multiple, 1)
                     : 1) {}

  /// The width of [x, 1] for x of static width `size` (dynamic: dynamic).
  int64_t wideSize(int64_t size) const {
    if (ShapedType::isDynamic(size))
      return size;
    return llvm::divideCeil(size + 1, multiple) * multiple;
  }

  /// The sizes of `value` with the last one widened (`wideSize`; plus 1
  /// where dynamic): room for a column of ones or of h, and zero columns.
  SmallVector<OpFoldResult> wideSizes(Value value) {
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, value);
    OpFoldResult last = sizes.back();
    if (std::optional<int64_t> size = getConstantIntValue(last))
      sizes.back() = rewriter.getIndexAttr(wideSize(*size));
    else
      sizes.back() = arith::AddIOp::create(
                         rewriter, loc, cast<Value>(last),
                         arith::ConstantIndexOp::create(rewriter, loc, 1))
                         .getResult();
    return sizes;
  }

  /// `wide` [..., W] with zeros in its columns from `from` on (none where
  /// W is dynamic or `from` reaches it).
  Value zeroColumnsFrom(Value wide, int64_t from) {
    auto type = cast<RankedTensorType>(wide.getType());
    int64_t width = type.getShape().back();
    if (ShapedType::isDynamic(width) || from >= width)
      return wide;
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, wide);
    int64_t rank = sizes.size();
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
        unit(rank, rewriter.getIndexAttr(1));
    offsets.back() = rewriter.getIndexAttr(from);
    sizes.back() = rewriter.getIndexAttr(width - from);
    // Filled where they stand (a slice of `wide`): a fill of a fresh tensor
    // would be one value wherever such columns are, which CSE merges, and
    // all but one of its insertions would then be copies.
    Value columns = createExtractSlice(
        rewriter, loc, tensorTypeOf(sizes, type.getElementType()), wide,
        offsets, sizes, unit);
    Value zero = arith::ConstantOp::create(
        rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
    Value filled =
        linalg::FillOp::create(rewriter, loc, zero, columns).getResult(0);
    return createInsertSlice(rewriter, loc, filled, wide, offsets, sizes, unit);
  }

  /// A linalg.generic whose body gets its arguments converted to the state
  /// type and whose yielded value is converted to `resultType`'s elements.
  Value generic(Type resultType, ValueRange inputs, Value init,
                ArrayRef<AffineMap> maps,
                ArrayRef<utils::IteratorType> iterators,
                function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    Type resultElement = cast<RankedTensorType>(resultType).getElementType();
    return linalg::GenericOp::create(
               rewriter, loc, TypeRange{resultType}, inputs, ValueRange{init},
               maps, iterators,
               [&](OpBuilder &b, Location l, ValueRange args) {
                 SmallVector<Value> wideArgs;
                 for (Value arg : args)
                   wideArgs.push_back(convertFloat(b, l, arg, state));
                 Value result = body(b, l, wideArgs);
                 linalg::YieldOp::create(
                     b, l, convertFloat(b, l, result, resultElement));
               })
        .getResult(0);
  }

  /// `value` elementwise converted to `element` (itself when it has it).
  Value convert(Value value, Type element) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getElementType() == element)
      return value;
    int64_t rank = type.getRank();
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    return generic(
        type.clone(element), value,
        tensor::EmptyOp::create(rewriter, loc,
                                tensor::getMixedSizes(rewriter, loc, value),
                                element),
        {identity, identity},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &, Location, ValueRange args) { return args[0]; });
  }

  /// [x, 1]: `x` [..., X] with a column of ones (then zero columns,
  /// `wideSize`): x copied into the wider tensor and only the other columns
  /// filled, so that the buffer is written once.
  Value withOnes(Value x) {
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, x);
    sizes.back() = rewriter.getIndexAttr(1);
    return appendColumn(x, filledTensor(rewriter, loc, sizes, data, 1.0));
  }

  /// [matrix, column]: `matrix` [..., R, X] with `column` [..., R, 1] as
  /// its column X, then zero columns ([..., R, wideSize(X)]).
  Value appendColumn(Value matrix, Value column) {
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, matrix);
    int64_t rank = sizes.size();
    Type element = cast<RankedTensorType>(matrix.getType()).getElementType();
    SmallVector<OpFoldResult> origin(rank, rewriter.getIndexAttr(0)),
        unit(rank, rewriter.getIndexAttr(1));
    Value wide = createInsertSlice(
        rewriter, loc, matrix,
        tensor::EmptyOp::create(rewriter, loc, wideSizes(matrix), element),
        origin, sizes, unit);
    return putColumn(wide, column, sizes.back());
  }

  /// `wide` [..., R, W] with `column` [..., R, 1] as its column `at` and
  /// zeros in the columns after it (when `at` is static).
  Value putColumn(Value wide, Value column, OpFoldResult at) {
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, column);
    int64_t rank = sizes.size();
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
        unit(rank, rewriter.getIndexAttr(1));
    offsets.back() = at;
    wide = createInsertSlice(rewriter, loc, column, wide, offsets, sizes, unit);
    std::optional<int64_t> index = getConstantIntValue(at);
    return index ? zeroColumnsFrom(wide, *index + 1) : wide;
  }

  /// [matrix, vector]: `matrix` [..., R, X] with `vector` [..., R] as its
  /// column X (then zero columns, `wideSize`), in `matrix`'s element type.
  Value withColumn(Value matrix, Value vector) {
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, matrix);
    int64_t rank = sizes.size();
    Type element = cast<RankedTensorType>(matrix.getType()).getElementType();
    sizes.back() = rewriter.getIndexAttr(1);
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    Value column = generic(
        tensorTypeOf(sizes, element), vector,
        tensor::EmptyOp::create(rewriter, loc, sizes, element),
        {identity.dropResult(rank - 1), identity},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    return appendColumn(matrix, column);
  }

  /// Row `index` of `matrix` [..., R, C], as [..., C].
  Value row(Value matrix, OpFoldResult index) {
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, matrix);
    int64_t rank = sizes.size();
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
        unit(rank, rewriter.getIndexAttr(1));
    offsets[rank - 2] = index;
    sizes[rank - 2] = rewriter.getIndexAttr(1);
    SmallVector<OpFoldResult> rowSizes(sizes);
    rowSizes.erase(rowSizes.end() - 2);
    Type element = cast<RankedTensorType>(matrix.getType()).getElementType();
    return createExtractSlice(rewriter, loc, tensorTypeOf(rowSizes, element),
                              matrix, offsets, sizes, unit);
  }

  /// `rows` [..., N, F] plus `vector` [..., F] on every row, in `rows`'
  /// element type (summed in the state type).
  Value addToRows(Value rows, Value vector) {
    auto type = cast<RankedTensorType>(rows.getType());
    int64_t rank = type.getRank();
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    return generic(
        type, ValueRange{rows, vector},
        tensor::EmptyOp::create(rewriter, loc,
                                tensor::getMixedSizes(rewriter, loc, rows),
                                type.getElementType()),
        {identity, identity.dropResult(rank - 2), identity},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &b, Location l, ValueRange args) -> Value {
          return arith::AddFOp::create(b, l, args[0], args[1]);
        });
  }

  /// The scaled result gradients of normalized attention: from dO
  /// [..., N, Dv] and `sums` [..., N, wideSize(Dv)] = [N, D − eps, 0...]
  /// (attention of [V, 1], unnormalized), g = dO / D (null unless `withG`)
  /// and [g, h] (then zero columns) with h = −(dO·N) / D².
  std::pair<Value, Value> scaledGradients(Value dout, Value sums, double eps,
                                          bool withG);

  /// `x` [..., A, B] as [..., B, A].
  Value transpose(Value x) {
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    SmallVector<int64_t> permutation =
        llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(permutation[rank - 2], permutation[rank - 1]);
    return createTranspose(rewriter, loc, x, permutation);
  }

  /// S = keysᵀ values, [..., F, X] in the state type, from keys [..., M, F]
  /// and values [..., M, X].
  Value summary(Value keys, Value values) {
    auto keyType = cast<RankedTensorType>(keys.getType());
    auto valueType = cast<RankedTensorType>(values.getType());
    int64_t rank = keyType.getRank();
    SmallVector<int64_t> stateShape;
    for (int64_t i = 0; i < rank - 2; ++i)
      stateShape.push_back(getFirstStaticSize({keyType, valueType}, i));
    SmallVector<int64_t> normalizerShape(stateShape);
    normalizerShape.push_back(keyType.getShape().back());
    stateShape.append({keyType.getShape().back(), valueType.getShape().back()});
    return KvSummaryOp::create(
               rewriter, loc, RankedTensorType::get(stateShape, state),
               RankedTensorType::get(normalizerShape, state), keys, values)
        .getState();
  }

  /// queries · S, [..., N, X] in the data type, from queries [..., N, F]
  /// and S [..., F, X].
  Value readout(Value queries, Value summary) {
    auto queryType = cast<RankedTensorType>(queries.getType());
    auto stateType = cast<RankedTensorType>(summary.getType());
    SmallVector<int64_t> shape(queryType.getShape());
    shape.back() = stateType.getShape().back();
    for (int64_t i = 0, e = shape.size() - 2; i < e; ++i)
      shape[i] = getFirstStaticSize({queryType, stateType}, i);
    return QueryReadoutOp::create(rewriter, loc,
                                  RankedTensorType::get(shape, data), queries,
                                  summary, /*normalizer=*/Value(),
                                  /*eps=*/FloatAttr());
  }
};
} // namespace

std::pair<Value, Value> GradientBuilder::scaledGradients(Value dout, Value sums,
                                                         double eps,
                                                         bool withG) {
  SmallVector<OpFoldResult> valueSizes =
      tensor::getMixedSizes(rewriter, loc, dout);
  int64_t rank = valueSizes.size();
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  SmallVector<OpFoldResult> origin(rank, zero), unit(rank, one);
  SmallVector<OpFoldResult> columnSizes(valueSizes);
  columnSizes.back() = one;
  SmallVector<OpFoldResult> lastColumn(origin);
  lastColumn.back() = valueSizes.back();
  SmallVector<OpFoldResult> rowSizes(valueSizes.begin(), valueSizes.end() - 1);

  Value numerators =
      createExtractSlice(rewriter, loc, tensorTypeOf(valueSizes, data), sums,
                         origin, valueSizes, unit);
  Value denominators =
      createExtractSlice(rewriter, loc, tensorTypeOf(columnSizes, data), sums,
                         lastColumn, columnSizes, unit);

  // Loops (batch..., i, d): rows (batch..., i) and the denominators' column
  // (batch..., i, 0).
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
      rewriter, loc, state, rewriter.getFloatAttr(state, eps));
  auto denominator = [&](OpBuilder &b, Location l, Value sum) -> Value {
    return arith::AddFOp::create(b, l, sum, epsConstant);
  };
  // g and h in the data type, saturated at its largest finite value where
  // that is below the state type's: with a denominator near eps they exceed
  // f16's range (dO / 1e-6), and an infinity would turn the products with a
  // zero state (no keys, or a feature map's zero derivative) into NaN where
  // the gradient is 0.
  APFloat largest =
      APFloat::getLargest(cast<FloatType>(data).getFloatSemantics());
  bool saturate =
      largest.compare(APFloat::getLargest(
          cast<FloatType>(state).getFloatSemantics())) == APFloat::cmpLessThan;
  auto toData = [&](OpBuilder &b, Location l, Value x) -> Value {
    if (saturate) {
      double bound = largest.convertToDouble();
      Value high =
          arith::ConstantOp::create(b, l, state, b.getFloatAttr(state, bound));
      Value low =
          arith::ConstantOp::create(b, l, state, b.getFloatAttr(state, -bound));
      x = arith::MinimumFOp::create(b, l, arith::MaximumFOp::create(b, l, x, low),
                                    high);
    }
    return convertFloat(b, l, x, data);
  };

  // dO·N per row, in the state type.
  Value dots =
      generic(tensorTypeOf(rowSizes, state), ValueRange{dout, numerators},
              filledTensor(rewriter, loc, rowSizes, state, 0.0),
              {identity, identity, rows}, reduceLast,
              [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                Value product = arith::MulFOp::create(b, l, args[0], args[1]);
                return arith::AddFOp::create(b, l, args[2], product);
              });
  // g = dO / D, written by one generic into the first Dv columns of [g, h]
  // (the queries' and keys' stand-in for dO) and, `withG`, alone (dV's
  // values), so that [g, h] needs no copy of g.
  Value wide = tensor::EmptyOp::create(rewriter, loc, wideSizes(dout), data);
  RankedTensorType valueType = tensorTypeOf(valueSizes, data);
  SmallVector<Value> inits{createExtractSlice(rewriter, loc, valueType, wide,
                                              origin, valueSizes, unit)};
  if (withG)
    inits.push_back(tensor::EmptyOp::create(rewriter, loc, valueSizes, data));
  SmallVector<AffineMap> maps{identity, column};
  maps.append(inits.size(), identity);
  auto scaled = linalg::GenericOp::create(
      rewriter, loc, TypeRange(ValueRange(inits)),
      ValueRange{dout, denominators}, inits, maps, parallel,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value quotient = arith::DivFOp::create(
            b, l, convertFloat(b, l, args[0], state),
            denominator(b, l, convertFloat(b, l, args[1], state)));
        linalg::YieldOp::create(
            b, l, SmallVector<Value>(inits.size(), toData(b, l, quotient)));
      });
  Value g = withG ? scaled.getResult(1) : Value();
  Value gh = createInsertSlice(rewriter, loc, scaled.getResult(0), wide, origin,
                               valueSizes, unit);
  // h = -(dO·N) / D² (the loops' last dimension of size 1).
  Value h =
      generic(tensorTypeOf(columnSizes, data), ValueRange{dots, denominators},
              tensor::EmptyOp::create(rewriter, loc, columnSizes, data),
              {rows, identity, identity}, parallel,
              [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                Value den = denominator(b, l, args[1]);
                Value square = arith::MulFOp::create(b, l, den, den);
                Value quotient = arith::DivFOp::create(b, l, args[0], square);
                return toData(b, l, arith::NegFOp::create(b, l, quotient));
              });
  return {g, putColumn(gh, h, valueSizes.back())};
}

namespace {
/// linattn.scan_grad -> three unnormalized scans with the operands' roles
/// exchanged (the op's description derives them): dφ(Q) by a scan in the
/// op's direction (queries dO, keys V, values φ(K)), dφ(K) and dV by scans
/// in the other (queries V, keys dO, values φ(Q); queries φ(K), keys φ(Q),
/// values dO). Normalized, a fourth scan first recomputes the numerators and
/// denominators (values [V, 1]), elementwise generics make g = dO / D and
/// h = -(dO·N) / D², and [g, h] and [V, 1] stand in for dO and V where they
/// are queries or keys, g for dO where it is dV's values. With `init` and
/// `final_grad`, the scans in the op's direction start from the initial
/// state (transposed for dφ(Q)), the others from the final state's gradient
/// (transposed for dφ(K)), and the initial state's gradients are final
/// states of the latter.
struct DecomposeScanGrad : OpRewritePattern<ScanGradOp> {
  DecomposeScanGrad(MLIRContext *context, WideColumns wide)
      : OpRewritePattern(context), wide(wide) {}

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
    auto lastOf = [&](std::initializer_list<Value> values) {
      SmallVector<RankedTensorType> some;
      for (Value value : values)
        some.push_back(cast<RankedTensorType>(value.getType()));
      return getFirstStaticSize(some, rank - 1);
    };
    int64_t f = lastOf(
                {fq, fk, op.getQueryFeaturesGrad(), op.getKeyFeaturesGrad()}),
            dv = lastOf({v, dout, op.getValuesGrad()});
    GradientBuilder builder(rewriter, loc, types.front().getElementType(),
                            wide);

    ScanDirection same = op.getDirection();
    ScanDirection other =
        op.isReverse() ? ScanDirection::Forward : ScanDirection::Reverse;
    // A scan from `init` ([batch..., features, valueSize]; zero when null,
    // with a zero normalizer either way).
    auto scan = [&](ScanDirection direction, Value queries, Value keys,
                    Value values, Type resultType, int64_t features,
                    int64_t valueSize, Value init = Value()) -> ScanOp {
      SmallVector<int64_t> stateShape(batch), normalizerShape(batch);
      stateShape.append({features, valueSize});
      normalizerShape.push_back(features);
      Value initNormalizer;
      if (init) {
        SmallVector<OpFoldResult> sizes =
            tensor::getMixedSizes(rewriter, loc, init);
        sizes.pop_back();
        initNormalizer = filledTensor(rewriter, loc, sizes, builder.state, 0.0);
      }
      return ScanOp::create(
          rewriter, loc,
          TypeRange{resultType,
                    RankedTensorType::get(stateShape, builder.state),
                    RankedTensorType::get(normalizerShape, builder.state)},
          direction, queries, keys, values, init, initNormalizer,
          /*eps=*/FloatAttr(), /*chunk_size=*/IntegerAttr());
    };
    auto transposed = [&](Value x) {
      return x ? builder.transpose(x) : Value();
    };
    // The results, cast to the op's types where the scans' are less static.
    auto replace = [&](SmallVector<Value> results) {
      for (auto [result, value] : llvm::zip(op->getResults(), results))
        if (value.getType() != result.getType())
          value =
              tensor::CastOp::create(rewriter, loc, result.getType(), value);
      rewriter.replaceOp(op, results);
    };
    Type queryGradType = op.getQueryFeaturesGrad().getType(),
         keyGradType = op.getKeyFeaturesGrad().getType(),
         valueGradType = op.getValuesGrad().getType();
    Value s0 = op.getInitialState(), z0 = op.getInitialNormalizer();
    Value ds = op.getFinalStateGrad(), dz = op.getFinalNormalizerGrad();
    std::optional<APFloat> eps = op.getEps();
    if (!eps) {
      // dS₀ is the dV scan's final state; z₀ reaches nothing but the final
      // normalizer, whose gradient dz also adds to every dφ(kⱼ).
      Value dfq = scan(same, dout, v, fk, queryGradType, dv, f, transposed(s0))
                      .getResult();
      Value dfk = scan(other, v, dout, fq, keyGradType, dv, f, transposed(ds))
                      .getResult();
      if (dz)
        dfk = builder.addToRows(dfk, dz);
      ScanOp dvScan = scan(other, fk, fq, dout, valueGradType, f, dv, ds);
      SmallVector<Value> results{dfq, dfk, dvScan.getResult()};
      if (s0) {
        results.push_back(dvScan.getFinalState());
        results.push_back(
            dz ? dz
               : filledTensor(rewriter, loc,
                              tensor::getMixedSizes(rewriter, loc, z0),
                              builder.state, 0.0));
      }
      replace(results);
      return success();
    }

    // [V, 1], and the scan that gives [N, D - eps] with it, from [S₀, z₀].
    int64_t width = builder.wideSize(dv);
    Value valuesAndOne = builder.withOnes(v);
    Value init = s0 ? builder.withColumn(s0, z0) : Value();
    Value sums =
        scan(same, fq, fk, valuesAndOne,
             tensorTypeOf(builder.wideSizes(v), builder.data), f, width, init)
            .getResult();
    auto [g, gh] = builder.scaledGradients(dout, sums, eps->convertToDouble(),
                                           /*withG=*/true);
    // The reversed scans start from [dS, dz]; dz₀ is the last row of dφ(K)'s
    // final state, dS₀ the dV scan's final state.
    Value finalGrad = ds ? builder.withColumn(ds, dz) : Value();
    Value dfq = scan(same, gh, valuesAndOne, fk, queryGradType, width, f,
                     transposed(init))
                    .getResult();
    ScanOp dfkScan = scan(other, valuesAndOne, gh, fq, keyGradType, width, f,
                          transposed(finalGrad));
    ScanOp dvScan = scan(other, fk, fq, g, valueGradType, f, dv, ds);
    SmallVector<Value> results{dfq, dfkScan.getResult(), dvScan.getResult()};
    if (s0) {
      results.push_back(dvScan.getFinalState());
      results.push_back(
          builder.row(dfkScan.getFinalState(),
                      tensor::getMixedSizes(rewriter, loc, v).back()));
    }
    replace(results);
    return success();
  }

private:
  WideColumns wide;
};

/// linattn.feature_map_grad -> the chain rule of its description: an
/// elementwise generic (elu, relu), the gradient itself (identity), slices
/// of it and a reduction (poly2), or the feature map and a reduction
/// (favor). Reductions are formed in the state type, then converted.
struct DecomposeFeatureMapGrad : OpRewritePattern<FeatureMapGradOp> {
  DecomposeFeatureMapGrad(MLIRContext *context, bool keepElementwise)
      : OpRewritePattern(context), keepElementwise(keepElementwise) {}

  LogicalResult matchAndRewrite(FeatureMapGradOp op,
                                PatternRewriter &rewriter) const override {
    FeatureMapKind kind = op.getKind();
    if (keepElementwise &&
        (kind == FeatureMapKind::Elu || kind == FeatureMapKind::Relu ||
         kind == FeatureMapKind::Identity))
      return rewriter.notifyMatchFailure(op, "left for a kernel");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = op.getInput(), dphi = op.getResultGrad();
    RankedTensorType resultType = op.getInputGrad().getType();
    int64_t rank = resultType.getRank();
    GradientBuilder builder(rewriter, loc, resultType.getElementType());
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, x);
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    SmallVector<utils::IteratorType> parallel(rank,
                                              utils::IteratorType::parallel);
    auto replace = [&](Value result) {
      if (result.getType() != resultType)
        result = tensor::CastOp::create(rewriter, loc, resultType, result);
      rewriter.replaceOp(op, result);
    };
    auto constant = [&](OpBuilder &b, Location l, double value) -> Value {
      return arith::ConstantOp::create(b, l, builder.state,
                                       b.getFloatAttr(builder.state, value));
    };

    switch (op.getKind()) {
    case FeatureMapKind::Identity:
      replace(dphi);
      return success();
    case FeatureMapKind::Elu:
    case FeatureMapKind::Relu: {
      // elu(x) + 1 has slope 1 for x > 0 and exp(x) otherwise, which is
      // φ(x) itself there: the map (which the lowerings compute
      // vectorized, and CSE merges with the features the gradient was
      // taken for) instead of an exp per element. relu has slopes 1 and 0,
      // selected: x ≤ 0 gets a gradient of 0 even where dφ overflowed
      // (inf · 0 would be NaN).
      bool elu = op.getKind() == FeatureMapKind::Elu;
      SmallVector<Value> inputs{x, dphi};
      SmallVector<AffineMap> maps{identity, identity, identity};
      if (elu) {
        inputs.push_back(featuresFor(rewriter, loc, op, FeatureMapKind::Elu, x,
                                     Value(), dphi.getType()));
        maps.push_back(identity);
      }
      replace(builder.generic(
          tensorTypeOf(sizes, builder.data), inputs,
          tensor::EmptyOp::create(rewriter, loc, sizes, builder.data), maps,
          parallel, [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value positive = arith::CmpFOp::create(
                b, l, arith::CmpFPredicate::OGT, args[0], constant(b, l, 0.0));
            Value otherwise =
                elu ? arith::MulFOp::create(b, l, args[1], args[2]).getResult()
                    : constant(b, l, 0.0);
            return arith::SelectOp::create(b, l, positive, args[1], otherwise);
          }));
      return success();
    }
    case FeatureMapKind::Poly2:
      replace(poly2(builder, x, dphi, sizes));
      return success();
    case FeatureMapKind::Favor: {
      // dxₐ = Σ_f (dφ ⊙ φ)_f (P_df − x_d) over loops (batch..., d, f).
      Value projection = op.getProjection();
      Value features = featuresFor(rewriter, loc, op, FeatureMapKind::Favor, x,
                                   projection, dphi.getType());
      int64_t batchRank = rank - 1;
      SmallVector<AffineExpr> batchExprs;
      for (int64_t i = 0; i < batchRank; ++i)
        batchExprs.push_back(getAffineDimExpr(i, ctx));
      auto map = [&](std::initializer_list<int64_t> trailing) {
        SmallVector<AffineExpr> exprs(batchExprs);
        for (int64_t dim : trailing)
          exprs.push_back(getAffineDimExpr(batchRank + dim, ctx));
        return AffineMap::get(rank + 1, 0, exprs, ctx);
      };
      AffineMap projectionMap =
          AffineMap::get(rank + 1, 0,
                         {getAffineDimExpr(batchRank, ctx),
                          getAffineDimExpr(batchRank + 1, ctx)},
                         ctx);
      SmallVector<utils::IteratorType> iterators(rank + 1,
                                                 utils::IteratorType::parallel);
      iterators.back() = utils::IteratorType::reduction;
      Value sums = builder.generic(
          tensorTypeOf(sizes, builder.state),
          ValueRange{dphi, features, projection, x},
          filledTensor(rewriter, loc, sizes, builder.state, 0.0),
          {map({1}), map({1}), projectionMap, map({0}), map({0})}, iterators,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value weight = arith::MulFOp::create(b, l, args[0], args[1]);
            Value slope = arith::SubFOp::create(b, l, args[2], args[3]);
            return math::FmaOp::create(b, l, weight, slope, args[4]);
          });
      replace(builder.convert(sums, builder.data));
      return success();
    }
    }
    return rewriter.notifyMatchFailure(op, "unknown feature map kind");
  }

private:
  bool keepElementwise;

  /// dφ₁..D + (G + Gᵀ) x / √2 with G the D×D block of dφ: a reduction over
  /// loops (batch..., m, j), then one elementwise generic.
  static Value poly2(GradientBuilder &builder, Value x, Value dphi,
                     ArrayRef<OpFoldResult> sizes) {
    PatternRewriter &rewriter = builder.rewriter;
    Location loc = builder.loc;
    MLIRContext *ctx = rewriter.getContext();
    int64_t rank = sizes.size(), batchRank = rank - 1;
    OpFoldResult d = sizes.back();
    // dφ's features 1 … D and the block's start, 1 + D.
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    offsets.back() = rewriter.getIndexAttr(1);
    Value linear = createExtractSlice(
        rewriter, loc, tensorTypeOf(sizes, builder.data), dphi, offsets, sizes,
        SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1)));
    Value dValue = getValueOrCreateConstantIndexOp(rewriter, loc, d);
    Value blockStart = arith::AddIOp::create(
        rewriter, loc, arith::ConstantIndexOp::create(rewriter, loc, 1),
        dValue);

    // Σ_j (G_mj + G_jm) x_j over loops (batch..., m, j), G's elements read
    // by index from dφ (an expand_shape of the block to [..., D, D] would
    // do without, but upstream's expand-strided-metadata crashes on its
    // dynamic sizes).
    SmallVector<AffineExpr> batchExprs;
    for (int64_t i = 0; i < batchRank; ++i)
      batchExprs.push_back(getAffineDimExpr(i, ctx));
    auto map = [&](std::initializer_list<int64_t> trailing) {
      SmallVector<AffineExpr> exprs(batchExprs);
      for (int64_t dim : trailing)
        exprs.push_back(getAffineDimExpr(batchRank + dim, ctx));
      return AffineMap::get(rank + 1, 0, exprs, ctx);
    };
    SmallVector<utils::IteratorType> iterators(rank + 1,
                                               utils::IteratorType::parallel);
    iterators.back() = utils::IteratorType::reduction;
    Value sums = builder.generic(
        tensorTypeOf(sizes, builder.state), ValueRange{x},
        filledTensor(rewriter, loc, sizes, builder.state, 0.0),
        {map({1}), map({0})}, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          SmallVector<Value> indices;
          for (int64_t i = 0; i <= batchRank; ++i)
            indices.push_back(linalg::IndexOp::create(b, l, i));
          Value m = indices.back();
          Value j = linalg::IndexOp::create(b, l, batchRank + 1);
          auto element = [&](Value row, Value column) {
            Value offset = arith::AddIOp::create(
                b, l, blockStart,
                arith::AddIOp::create(
                    b, l, arith::MulIOp::create(b, l, row, dValue), column));
            indices.back() = offset;
            return convertFloat(b, l,
                                tensor::ExtractOp::create(b, l, dphi, indices),
                                builder.state);
          };
          Value both =
              arith::AddFOp::create(b, l, element(m, j), element(j, m));
          return math::FmaOp::create(b, l, both, args[0], args[1]);
        });
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    SmallVector<utils::IteratorType> parallel(rank,
                                              utils::IteratorType::parallel);
    return builder.generic(
        tensorTypeOf(sizes, builder.data), ValueRange{linear, sums},
        tensor::EmptyOp::create(rewriter, loc, sizes, builder.data),
        {identity, identity, identity}, parallel,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value invSqrt2 = arith::ConstantOp::create(
              b, l, builder.state,
              b.getFloatAttr(builder.state, 1.0 / std::sqrt(2.0)));
          return math::FmaOp::create(b, l, args[1], invSqrt2, args[0]);
        });
  }
};

/// linattn.attention_grad -> the feature maps of Q and K, the gradients with
/// respect to the features (a scan_grad with `causal`, the linear form's
/// otherwise: see the op's description), and feature_map_grad for Q and K.
struct DecomposeAttentionGrad : OpRewritePattern<AttentionGradOp> {
  DecomposeAttentionGrad(MLIRContext *context, WideColumns wide)
      : OpRewritePattern(context), wide(wide) {}

  LogicalResult matchAndRewrite(AttentionGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FeatureMapKind kind = op.getFeatureMap();
    Value projection = op.getProjection();
    Value fq = mapFeatures(rewriter, loc, kind, op.getQuery(), projection);
    Value fk = mapFeatures(rewriter, loc, kind, op.getKey(), projection);
    Value v = op.getValues(), dout = op.getResultGrad();
    Type valueGradType = op.getValuesGrad().getType();

    Value dfq, dfk, dv;
    if (op.getCausal()) {
      auto scanGrad = ScanGradOp::create(
          rewriter, loc, fq.getType(), fk.getType(), valueGradType,
          /*initial_state_grad=*/Type(), /*initial_normalizer_grad=*/Type(),
          ScanDirection::Forward, fq, fk, v, dout, /*initial_state=*/Value(),
          /*initial_normalizer=*/Value(), /*final_state_grad=*/Value(),
          /*final_normalizer_grad=*/Value(), op.getEpsAttr());
      dfq = scanGrad.getQueryFeaturesGrad();
      dfk = scanGrad.getKeyFeaturesGrad();
      dv = scanGrad.getValuesGrad();
    } else {
      GradientBuilder builder(
          rewriter, loc, cast<RankedTensorType>(v.getType()).getElementType(),
          wide);
      std::optional<APFloat> eps = op.getEps();
      // Normalized: [V, 1] for V and [g, h] for dO (scan_grad's reasoning
      // without the mask); dV takes dS's columns of g alone.
      Value values = eps ? builder.withOnes(v) : v;
      Value summary = builder.summary(fk, values);
      Value scaled = dout;
      if (eps)
        scaled = builder
                     .scaledGradients(dout, builder.readout(fq, summary),
                                      eps->convertToDouble(), /*withG=*/false)
                     .second;
      dfq = builder.readout(scaled, builder.transpose(summary));
      Value gradSummary = builder.summary(fq, scaled);
      dfk = builder.readout(values, builder.transpose(gradSummary));
      if (eps) {
        // dS without its last column (h's).
        SmallVector<OpFoldResult> sizes =
            tensor::getMixedSizes(rewriter, loc, gradSummary);
        int64_t rank = sizes.size();
        sizes.back() = tensor::getMixedSize(rewriter, loc, v, rank - 1);
        gradSummary = createExtractSlice(
            rewriter, loc, tensorTypeOf(sizes, builder.state), gradSummary,
            SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(0)), sizes,
            SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1)));
      }
      dv = builder.readout(fk, gradSummary);
      if (dv.getType() != valueGradType)
        dv = tensor::CastOp::create(rewriter, loc, valueGradType, dv);
    }
    Value dq =
        FeatureMapGradOp::create(rewriter, loc, op.getQueryGrad().getType(),
                                 kind, op.getQuery(), dfq, projection);
    Value dk =
        FeatureMapGradOp::create(rewriter, loc, op.getKeyGrad().getType(), kind,
                                 op.getKey(), dfk, projection);
    rewriter.replaceOp(op, {dq, dk, dv});
    return success();
  }

private:
  WideColumns wide;
};

struct LinAttnDecomposePass
    : linattn::impl::LinAttnDecomposePassBase<LinAttnDecomposePass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposePatterns(
        patterns, {keepElementwiseGrads, columnMultiple, columnMultipleF32});
    // Gradients decompose into ops that decompose further.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     getRewriteOnlyConfig())))
      signalPassFailure();
  }
};
} // namespace

void mlir::linattn::populateDecomposePatterns(
    RewritePatternSet &patterns, const LinAttnDecomposePassOptions &options) {
  WideColumns wide{options.columnMultiple, options.columnMultipleF32};
  patterns.add<DecomposeAttention>(patterns.getContext());
  patterns.add<DecomposeAttentionGrad, DecomposeScanGrad>(patterns.getContext(),
                                                          wide);
  patterns.add<DecomposeFeatureMapGrad>(patterns.getContext(),
                                        options.keepElementwiseGrads);
}
