//===- LinAttnToLinalg.cpp - linattn to linalg on tensors -----------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The reference lowering of the linattn ops: exact on every input, with any
// number of leading batch dimensions and dynamic sizes. Every product is one
// `linalg.generic` over all batch dimensions whose indexing maps say which
// operand dimensions meet; the fast CPU paths replace individual patterns.
//
// Values accumulate in the state element type where the op has a state, and
// in f32 for 16-bit inputs where it has none; results are converted to their
// element type in the last elementwise op.
//
//===----------------------------------------------------------------------===//

#include "linattn/Conversion/LinAttnToLinalg/LinAttnToLinalg.h"
#include "linattn/Conversion/Passes.h"
#include "linattn/IR/LinAttnDialect.h"
#include "linattn/IR/LinAttnOps.h"
#include "linattn/Transforms/Passes.h"
#include "linattn/Transforms/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>
#include <optional>
#include <utility>

namespace mlir::linattn {
#define GEN_PASS_DEF_CONVERTLINATTNTOLINALGPASS
#define GEN_PASS_DEF_LINATTNCHECKLOWEREDPASS
#define GEN_PASS_DEF_LINATTNCHECKPLACEMENTPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static RankedTensorType tensorTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

static Type elementTypeOf(Value value) {
  return tensorTypeOf(value).getElementType();
}

static Value floatConstant(OpBuilder &b, Location loc, Type type,
                           double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

/// A dimension of a result: the operand dimension it has the size of.
struct DimSource {
  Value tensor;
  int64_t dim;
};

/// The sizes of a tensor of type `type` whose dimension i has the size of
/// `sources[i]`. Static sizes of `type` win over the sources, so the tensors
/// built from them have exactly `type`.
static SmallVector<OpFoldResult> sizesFor(OpBuilder &b, Location loc,
                                          RankedTensorType type,
                                          ArrayRef<DimSource> sources) {
  SmallVector<OpFoldResult> sizes;
  for (auto [i, source] : llvm::enumerate(sources)) {
    if (type && !type.isDynamicDim(i))
      sizes.push_back(b.getIndexAttr(type.getDimSize(i)));
    else
      sizes.push_back(tensor::getMixedSize(b, loc, source.tensor, source.dim));
  }
  return sizes;
}

/// The first `count` sizes of `tensor` as dimension sources.
static SmallVector<DimSource> leadingDims(Value tensor, int64_t count) {
  SmallVector<DimSource> dims;
  for (int64_t i = 0; i < count; ++i)
    dims.push_back({tensor, i});
  return dims;
}

/// Concatenates dimension sources.
static SmallVector<DimSource> dimsOf(ArrayRef<DimSource> batch,
                                     ArrayRef<DimSource> trailing) {
  SmallVector<DimSource> dims(batch);
  dims.append(trailing.begin(), trailing.end());
  return dims;
}

static Value emptyTensor(OpBuilder &b, Location loc,
                         ArrayRef<OpFoldResult> sizes, Type elementType) {
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}

/// A tensor of the given sizes filled with zeros of `elementType`.
static Value zeroTensor(OpBuilder &b, Location loc,
                        ArrayRef<OpFoldResult> sizes, Type elementType) {
  Value empty = emptyTensor(b, loc, sizes, elementType);
  Value zero = floatConstant(b, loc, elementType, 0.0);
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

/// The indexing map of a tensor with `batchRank` leading batch dimensions
/// (the first loops) followed by the loops `trailing`, numbered after the
/// batch loops.
static AffineMap batchedMap(MLIRContext *ctx, int64_t batchRank,
                            int64_t numLoops, ArrayRef<int64_t> trailing) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < batchRank; ++i)
    exprs.push_back(getAffineDimExpr(i, ctx));
  for (int64_t loop : trailing)
    exprs.push_back(getAffineDimExpr(batchRank + loop, ctx));
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

/// Iterator types: the batch loops and `parallel` trailing loops are
/// parallel, the rest reductions.
static SmallVector<utils::IteratorType>
iteratorsOf(int64_t batchRank, int64_t numLoops, int64_t numParallel) {
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  for (int64_t i = batchRank + numParallel; i < numLoops; ++i)
    iterators[i] = utils::IteratorType::reduction;
  return iterators;
}

/// init += lhs * rhs over the loops of `maps` (lhs, rhs, init), in the
/// element type of `init`.
static Value contract(OpBuilder &b, Location loc, Value lhs, Value rhs,
                      Value init, ArrayRef<AffineMap> maps,
                      ArrayRef<utils::IteratorType> iterators) {
  Type acc = elementTypeOf(init);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{lhs, rhs}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = convertFloat(nb, nl, args[0], acc);
        Value y = convertFloat(nb, nl, args[1], acc);
        Value product = arith::MulFOp::create(nb, nl, x, y);
        Value sum = arith::AddFOp::create(nb, nl, args[2], product);
        linalg::YieldOp::create(nb, nl, sum);
      });
  return generic.getResult(0);
}

/// init += input over the loops of `maps` (input, init).
static Value accumulate(OpBuilder &b, Location loc, Value input, Value init,
                        ArrayRef<AffineMap> maps,
                        ArrayRef<utils::IteratorType> iterators) {
  Type acc = elementTypeOf(init);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{input}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = convertFloat(nb, nl, args[0], acc);
        Value sum = arith::AddFOp::create(nb, nl, args[1], x);
        linalg::YieldOp::create(nb, nl, sum);
      });
  return generic.getResult(0);
}

/// Writes num / (den + eps) into `init`, converted to its element type. `den`
/// has the dimensions of `num` but the last one; without `den`, `num` is only
/// converted. Returns `num` itself when there is nothing to do.
static Value finalizeRows(OpBuilder &b, Location loc, Value num, Value den,
                          std::optional<double> eps, Value init) {
  Type outType = elementTypeOf(init);
  if (!den && elementTypeOf(num) == outType)
    return num;
  MLIRContext *ctx = b.getContext();
  int64_t rank = tensorTypeOf(num).getRank();
  SmallVector<AffineMap> maps;
  SmallVector<Value> inputs{num};
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  if (den) {
    inputs.push_back(den);
    // getMajorSubMap(0) is a null map: spell the projection out.
    SmallVector<AffineExpr> rowExprs;
    for (int64_t i = 0; i + 1 < rank; ++i)
      rowExprs.push_back(getAffineDimExpr(i, ctx));
    maps.push_back(AffineMap::get(rank, 0, rowExprs, ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  Value epsValue;
  if (den)
    epsValue = floatConstant(b, loc, elementTypeOf(den), eps.value_or(0.0));
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value value = args[0];
        if (den) {
          Value denominator = arith::AddFOp::create(nb, nl, args[1], epsValue);
          value = arith::DivFOp::create(nb, nl, value, denominator);
        }
        linalg::YieldOp::create(nb, nl, convertFloat(nb, nl, value, outType));
      });
  return generic.getResult(0);
}

static std::optional<double> epsOf(std::optional<APFloat> eps) {
  if (!eps)
    return std::nullopt;
  return eps->convertToDouble();
}

/// Replaces `op` with `values`, casting each to the op's result type where
/// the two differ in which sizes are static.
static void replaceWithCasts(PatternRewriter &rewriter, Operation *op,
                             ArrayRef<Value> values) {
  SmallVector<Value> replacements;
  for (auto [value, result] : llvm::zip_equal(values, op->getResults())) {
    if (value.getType() == result.getType())
      replacements.push_back(value);
    else
      replacements.push_back(tensor::CastOp::create(rewriter, op->getLoc(),
                                                    result.getType(), value));
  }
  rewriter.replaceOp(op, replacements);
}

/// Checks that every tensor operand of `op` has a float element type the
/// lowering computes in (the verifier admits f16, bf16, f32 and f64).
static LogicalResult checkElementTypes(PatternRewriter &rewriter,
                                       Operation *op) {
  for (Type type :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
    auto tensorType = dyn_cast<RankedTensorType>(type);
    if (!tensorType || !isa<FloatType>(tensorType.getElementType()))
      return rewriter.notifyMatchFailure(
          op, "operands and results must be ranked float tensors");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Recurrent step (shared by step and scan)
//===----------------------------------------------------------------------===//

namespace {
struct StepValues {
  Value result, state, normalizer;
};
} // namespace

/// One token of the recurrence on tensors without a sequence dimension:
/// q, k [batch..., F], v [batch..., Dv], s [batch..., F, Dv], z [batch..., F].
/// The new state has the types of `s` and `z`; the output [batch..., Dv] has
/// the element type of `q` and the sizes of `q` and `v`.
static StepValues buildStep(OpBuilder &b, Location loc, Value q, Value k,
                            Value v, Value s, Value z,
                            std::optional<double> eps) {
  MLIRContext *ctx = b.getContext();
  int64_t batchRank = tensorTypeOf(q).getRank() - 1;
  Type acc = elementTypeOf(s);

  // S' = S + k vᵀ over loops (batch..., f, d).
  Value state = contract(b, loc, k, v, s,
                         {batchedMap(ctx, batchRank, batchRank + 2, {0}),
                          batchedMap(ctx, batchRank, batchRank + 2, {1}),
                          batchedMap(ctx, batchRank, batchRank + 2, {0, 1})},
                         iteratorsOf(batchRank, batchRank + 2, 2));
  // z' = z + k over loops (batch..., f).
  AffineMap identity = AffineMap::getMultiDimIdentityMap(batchRank + 1, ctx);
  Value normalizer = accumulate(b, loc, k, z, {identity, identity},
                                iteratorsOf(batchRank, batchRank + 1, 1));

  // o = qᵀ S' over loops (batch..., d, f).
  SmallVector<DimSource> batch = leadingDims(q, batchRank);
  SmallVector<OpFoldResult> outSizes =
      sizesFor(b, loc, nullptr, dimsOf(batch, {{v, batchRank}}));
  Value num = contract(b, loc, q, state, zeroTensor(b, loc, outSizes, acc),
                       {batchedMap(ctx, batchRank, batchRank + 2, {1}),
                        batchedMap(ctx, batchRank, batchRank + 2, {1, 0}),
                        batchedMap(ctx, batchRank, batchRank + 2, {0})},
                       iteratorsOf(batchRank, batchRank + 2, 1));
  Value den;
  if (eps) {
    // qᵀ z' over loops (batch..., f).
    SmallVector<OpFoldResult> denSizes = sizesFor(b, loc, nullptr, batch);
    den = contract(
        b, loc, q, normalizer, zeroTensor(b, loc, denSizes, acc),
        {identity, identity, batchedMap(ctx, batchRank, batchRank + 1, {})},
        iteratorsOf(batchRank, batchRank + 1, 0));
  }
  Value result = finalizeRows(b, loc, num, den, eps,
                              emptyTensor(b, loc, outSizes, elementTypeOf(q)));
  return {result, state, normalizer};
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {

/// feature_map -> elementwise generic (elu, relu), the input (identity),
/// inserted slices (poly2), or contraction + reduction + elementwise (favor).
struct LowerFeatureMap : OpRewritePattern<FeatureMapOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FeatureMapOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkElementTypes(rewriter, op)))
      return failure();
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = op.getInput();
    RankedTensorType resultType = op.getType();
    int64_t rank = resultType.getRank();
    int64_t batchRank = rank - 1;
    Type type = resultType.getElementType();
    Type acc = getAccumulatorType(type);
    SmallVector<DimSource> batch = leadingDims(input, batchRank);

    switch (op.getKind()) {
    case FeatureMapKind::Identity:
      replaceWithCasts(rewriter, op, {input});
      return success();
    case FeatureMapKind::Elu:
    case FeatureMapKind::Relu: {
      bool elu = op.getKind() == FeatureMapKind::Elu;
      Value init = emptyTensor(
          rewriter, loc,
          sizesFor(rewriter, loc, resultType, leadingDims(input, rank)), type);
      AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
      Value zero = floatConstant(rewriter, loc, acc, 0.0);
      Value one = floatConstant(rewriter, loc, acc, 1.0);
      auto generic = linalg::GenericOp::create(
          rewriter, loc, init.getType(), ValueRange{input}, ValueRange{init},
          SmallVector<AffineMap>{identity, identity},
          SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
          [&](OpBuilder &b, Location l, ValueRange args) {
            Value x = convertFloat(b, l, args[0], acc);
            Value y;
            if (elu) {
              // elu(x) + 1 is x + 1 for x > 0 and exp(x) otherwise.
              Value positive = arith::CmpFOp::create(
                  b, l, arith::CmpFPredicate::OGT, x, zero);
              Value shifted = arith::AddFOp::create(b, l, x, one);
              Value exp = math::ExpOp::create(b, l, x);
              y = arith::SelectOp::create(b, l, positive, shifted, exp);
            } else {
              y = arith::MaximumFOp::create(b, l, x, zero);
            }
            linalg::YieldOp::create(b, l, convertFloat(b, l, y, type));
          });
      replaceWithCasts(rewriter, op, {generic.getResult(0)});
      return success();
    }
    case FeatureMapKind::Poly2:
      return lowerPoly2(op, rewriter, batch);
    case FeatureMapKind::Favor:
      return lowerFavor(op, rewriter, batch);
    }
    return rewriter.notifyMatchFailure(op, "unknown feature map kind");
  }

private:
  /// [1, x, vec(x xᵀ)/√2]: three slices inserted into the result.
  static LogicalResult lowerPoly2(FeatureMapOp op, PatternRewriter &rewriter,
                                  ArrayRef<DimSource> batch) {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = op.getInput();
    RankedTensorType resultType = op.getType();
    int64_t rank = resultType.getRank();
    int64_t batchRank = rank - 1;
    Type type = resultType.getElementType();
    Type acc = getAccumulatorType(type);

    // Sizes of the three parts and where they start.
    SmallVector<OpFoldResult> batchSizes =
        sizesFor(rewriter, loc, nullptr, batch);
    OpFoldResult d = tensor::getMixedSize(rewriter, loc, input, batchRank);
    std::optional<int64_t> staticD = getConstantIntValue(d);
    auto indexValue = [&](OpFoldResult size) -> Value {
      if (std::optional<int64_t> c = getConstantIntValue(size))
        return arith::ConstantIndexOp::create(rewriter, loc, *c);
      return cast<Value>(size);
    };
    OpFoldResult onePlusD, features;
    if (staticD) {
      onePlusD = rewriter.getIndexAttr(1 + *staticD);
      features = rewriter.getIndexAttr(1 + *staticD + *staticD * *staticD);
    } else {
      Value dv = indexValue(d);
      Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
      Value square = arith::MulIOp::create(rewriter, loc, dv, dv);
      Value shifted = arith::AddIOp::create(rewriter, loc, one, dv);
      onePlusD = shifted;
      features =
          arith::AddIOp::create(rewriter, loc, shifted, square).getResult();
    }

    // The result: its static sizes, else the batch sizes and 1 + D + D².
    SmallVector<OpFoldResult> resultSizes;
    for (int64_t i = 0; i < rank; ++i) {
      if (!resultType.isDynamicDim(i))
        resultSizes.push_back(rewriter.getIndexAttr(resultType.getDimSize(i)));
      else
        resultSizes.push_back(i < batchRank ? batchSizes[i] : features);
    }
    Value result = emptyTensor(rewriter, loc, resultSizes, type);

    auto insertAt = [&](Value part, OpFoldResult offset) {
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      offsets.back() = offset;
      SmallVector<OpFoldResult> sizes =
          tensor::getMixedSizes(rewriter, loc, part);
      SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
      result = createInsertSlice(rewriter, loc, part, result, offsets, sizes,
                                 strides);
    };

    // Feature 0: the constant 1.
    SmallVector<OpFoldResult> onesSizes(batchSizes);
    onesSizes.push_back(rewriter.getIndexAttr(1));
    Value ones = linalg::FillOp::create(
                     rewriter, loc, floatConstant(rewriter, loc, type, 1.0),
                     emptyTensor(rewriter, loc, onesSizes, type))
                     .getResult(0);
    insertAt(ones, rewriter.getIndexAttr(0));
    // Features 1 .. D: the input.
    insertAt(input, rewriter.getIndexAttr(1));

    // Features 1 + D + i·D + j: xᵢxⱼ/√2, the outer product collapsed
    // row-major.
    SmallVector<OpFoldResult> outerSizes(batchSizes);
    outerSizes.push_back(d);
    outerSizes.push_back(d);
    Value outerInit = emptyTensor(rewriter, loc, outerSizes, type);
    Value invSqrt2 = floatConstant(rewriter, loc, acc, 1.0 / std::sqrt(2.0));
    auto outer = linalg::GenericOp::create(
        rewriter, loc, outerInit.getType(), ValueRange{input, input},
        ValueRange{outerInit},
        SmallVector<AffineMap>{batchedMap(ctx, batchRank, rank + 1, {0}),
                               batchedMap(ctx, batchRank, rank + 1, {1}),
                               batchedMap(ctx, batchRank, rank + 1, {0, 1})},
        SmallVector<utils::IteratorType>(rank + 1,
                                         utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = convertFloat(b, l, args[0], acc);
          Value y = convertFloat(b, l, args[1], acc);
          Value product = arith::MulFOp::create(b, l, x, y);
          Value scaled = arith::MulFOp::create(b, l, product, invSqrt2);
          linalg::YieldOp::create(b, l, convertFloat(b, l, scaled, type));
        });
    SmallVector<ReassociationIndices> reassociation;
    for (int64_t i = 0; i < batchRank; ++i)
      reassociation.push_back({i});
    reassociation.push_back({batchRank, batchRank + 1});
    Value collapsed = tensor::CollapseShapeOp::create(
        rewriter, loc, outer.getResult(0), reassociation);
    insertAt(collapsed, onePlusD);

    replaceWithCasts(rewriter, op, {result});
    return success();
  }

  /// exp(xP − ‖x‖²/2)/√m: a contraction with P, a squared norm, then one
  /// elementwise op.
  static LogicalResult lowerFavor(FeatureMapOp op, PatternRewriter &rewriter,
                                  ArrayRef<DimSource> batch) {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = op.getInput();
    Value projection = op.getProjection();
    if (!projection)
      return rewriter.notifyMatchFailure(op, "favor without a projection");
    RankedTensorType resultType = op.getType();
    int64_t rank = resultType.getRank();
    int64_t batchRank = rank - 1;
    Type type = resultType.getElementType();
    Type acc = getAccumulatorType(type);

    // xP over loops (batch..., f, d): P has no batch dimensions.
    SmallVector<OpFoldResult> projSizes =
        sizesFor(rewriter, loc, resultType, dimsOf(batch, {{projection, 1}}));
    AffineMap projectionMap =
        AffineMap::get(rank + 1, 0,
                       {getAffineDimExpr(batchRank + 1, ctx),
                        getAffineDimExpr(batchRank, ctx)},
                       ctx);
    Value projected =
        contract(rewriter, loc, input, projection,
                 zeroTensor(rewriter, loc, projSizes, acc),
                 {batchedMap(ctx, batchRank, rank + 1, {1}), projectionMap,
                  batchedMap(ctx, batchRank, rank + 1, {0})},
                 iteratorsOf(batchRank, rank + 1, 1));

    // ‖x‖² over loops (batch..., d).
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    Value norm = contract(
        rewriter, loc, input, input,
        zeroTensor(rewriter, loc, sizesFor(rewriter, loc, nullptr, batch), acc),
        {identity, identity, batchedMap(ctx, batchRank, rank, {})},
        iteratorsOf(batchRank, rank, 0));

    // 1/√m with m read from P at run time when dynamic.
    Value m = tensor::DimOp::create(rewriter, loc, projection, 1);
    Value mInt =
        arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(), m);
    Value mFloat = arith::SIToFPOp::create(rewriter, loc, acc, mInt);
    Value invSqrtM = math::RsqrtOp::create(rewriter, loc, mFloat);
    Value half = floatConstant(rewriter, loc, acc, 0.5);

    Value init = emptyTensor(rewriter, loc, projSizes, type);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init.getType(), ValueRange{projected, norm},
        ValueRange{init},
        SmallVector<AffineMap>{identity, batchedMap(ctx, batchRank, rank, {}),
                               identity},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value halfNorm = arith::MulFOp::create(b, l, args[1], half);
          Value exponent = arith::SubFOp::create(b, l, args[0], halfNorm);
          Value exp = math::ExpOp::create(b, l, exponent);
          Value scaled = arith::MulFOp::create(b, l, exp, invSqrtM);
          linalg::YieldOp::create(b, l, convertFloat(b, l, scaled, type));
        });
    replaceWithCasts(rewriter, op, {generic.getResult(0)});
    return success();
  }
};

/// scores -> contraction over F, then the causal mask and scale.
struct LowerScores : OpRewritePattern<ScoresOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ScoresOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkElementTypes(rewriter, op)))
      return failure();
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value q = op.getQueryFeatures(), k = op.getKeyFeatures();
    RankedTensorType resultType = op.getType();
    int64_t batchRank = resultType.getRank() - 2;
    Type type = resultType.getElementType();
    Type acc = getAccumulatorType(type);
    SmallVector<OpFoldResult> sizes = sizesFor(
        rewriter, loc, resultType,
        dimsOf(leadingDims(q, batchRank), {{q, batchRank}, {k, batchRank}}));

    // Loops (batch..., n, m, f).
    int64_t loops = batchRank + 3;
    Value scores =
        contract(rewriter, loc, q, k, zeroTensor(rewriter, loc, sizes, acc),
                 {batchedMap(ctx, batchRank, loops, {0, 2}),
                  batchedMap(ctx, batchRank, loops, {1, 2}),
                  batchedMap(ctx, batchRank, loops, {0, 1})},
                 iteratorsOf(batchRank, loops, 2));

    bool causal = op.getCausal();
    double scale = op.getScaleValue();
    if (!causal && scale == 1.0 && acc == type) {
      replaceWithCasts(rewriter, op, {scores});
      return success();
    }
    Value init = emptyTensor(rewriter, loc, sizes, type);
    AffineMap identity = AffineMap::getMultiDimIdentityMap(batchRank + 2, ctx);
    Value scaleValue = floatConstant(rewriter, loc, acc, scale);
    Value zero = floatConstant(rewriter, loc, acc, 0.0);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init.getType(), ValueRange{scores}, ValueRange{init},
        SmallVector<AffineMap>{identity, identity},
        SmallVector<utils::IteratorType>(batchRank + 2,
                                         utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value value = args[0];
          if (scale != 1.0)
            value = arith::MulFOp::create(b, l, value, scaleValue);
          if (causal) {
            // Token i sees keys j <= i.
            Value i = linalg::IndexOp::create(b, l, batchRank);
            Value j = linalg::IndexOp::create(b, l, batchRank + 1);
            Value visible =
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::ule, j, i);
            value = arith::SelectOp::create(b, l, visible, value, zero);
          }
          linalg::YieldOp::create(b, l, convertFloat(b, l, value, type));
        });
    replaceWithCasts(rewriter, op, {generic.getResult(0)});
    return success();
  }
};

/// The product of rows shared by apply_scores and query_readout:
/// O = L R for L [batch..., n, k] and R [batch..., k, d], accumulated in
/// `acc`. When `eps` is set every row is divided by its denominator plus eps:
/// L w with the vector `weights` [batch..., k], or the row sums of L when
/// `weights` is null.
static Value lowerRowProduct(PatternRewriter &rewriter, Location loc, Value lhs,
                             Value rhs, Value weights,
                             std::optional<double> eps,
                             RankedTensorType resultType, Type acc) {
  MLIRContext *ctx = rewriter.getContext();
  int64_t batchRank = resultType.getRank() - 2;
  SmallVector<DimSource> batch = leadingDims(lhs, batchRank);
  SmallVector<OpFoldResult> sizes =
      sizesFor(rewriter, loc, resultType,
               dimsOf(batch, {{lhs, batchRank}, {rhs, batchRank + 1}}));

  // Loops (batch..., n, d, k).
  int64_t loops = batchRank + 3;
  Value num =
      contract(rewriter, loc, lhs, rhs, zeroTensor(rewriter, loc, sizes, acc),
               {batchedMap(ctx, batchRank, loops, {0, 2}),
                batchedMap(ctx, batchRank, loops, {2, 1}),
                batchedMap(ctx, batchRank, loops, {0, 1})},
               iteratorsOf(batchRank, loops, 2));
  Value den;
  if (eps) {
    // Denominators over loops (batch..., n, k).
    int64_t rowLoops = batchRank + 2;
    SmallVector<OpFoldResult> rowSizes =
        sizesFor(rewriter, loc, nullptr, dimsOf(batch, {{lhs, batchRank}}));
    Value init = zeroTensor(rewriter, loc, rowSizes, acc);
    AffineMap lhsMap = batchedMap(ctx, batchRank, rowLoops, {0, 1});
    AffineMap rowMap = batchedMap(ctx, batchRank, rowLoops, {0});
    SmallVector<utils::IteratorType> iterators =
        iteratorsOf(batchRank, rowLoops, 1);
    den = weights ? contract(rewriter, loc, lhs, weights, init,
                             {lhsMap, batchedMap(ctx, batchRank, rowLoops, {1}),
                              rowMap},
                             iterators)
                  : accumulate(rewriter, loc, lhs, init, {lhsMap, rowMap},
                               iterators);
  }
  return finalizeRows(
      rewriter, loc, num, den, eps,
      emptyTensor(rewriter, loc, sizes, resultType.getElementType()));
}

/// apply_scores -> A V, divided by the row sums of A plus eps when
/// normalized.
struct LowerApplyScores : OpRewritePattern<ApplyScoresOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ApplyScoresOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkElementTypes(rewriter, op)))
      return failure();
    RankedTensorType resultType = op.getType();
    Value result =
        lowerRowProduct(rewriter, op.getLoc(), op.getScores(), op.getValues(),
                        /*weights=*/nullptr, epsOf(op.getEps()), resultType,
                        getAccumulatorType(resultType.getElementType()));
    replaceWithCasts(rewriter, op, {result});
    return success();
  }
};

/// kv_summary -> S = φ(K)ᵀV and z = Σⱼ φ(kⱼ) in the state type.
struct LowerKvSummary : OpRewritePattern<KvSummaryOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(KvSummaryOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkElementTypes(rewriter, op)))
      return failure();
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value k = op.getKeyFeatures(), v = op.getValues();
    auto stateType = cast<RankedTensorType>(op.getState().getType());
    auto normalizerType = cast<RankedTensorType>(op.getNormalizer().getType());
    int64_t batchRank = stateType.getRank() - 2;
    Type acc = stateType.getElementType();
    SmallVector<DimSource> batch = leadingDims(k, batchRank);

    // S over loops (batch..., f, d, m).
    int64_t loops = batchRank + 3;
    SmallVector<OpFoldResult> stateSizes =
        sizesFor(rewriter, loc, stateType,
                 dimsOf(batch, {{k, batchRank + 1}, {v, batchRank + 1}}));
    Value state = contract(rewriter, loc, k, v,
                           zeroTensor(rewriter, loc, stateSizes, acc),
                           {batchedMap(ctx, batchRank, loops, {2, 0}),
                            batchedMap(ctx, batchRank, loops, {2, 1}),
                            batchedMap(ctx, batchRank, loops, {0, 1})},
                           iteratorsOf(batchRank, loops, 2));
    // z over loops (batch..., f, m).
    SmallVector<OpFoldResult> normalizerSizes = sizesFor(
        rewriter, loc, normalizerType, dimsOf(batch, {{k, batchRank + 1}}));
    Value normalizer = accumulate(
        rewriter, loc, k, zeroTensor(rewriter, loc, normalizerSizes, acc),
        {batchedMap(ctx, batchRank, batchRank + 2, {1, 0}),
         batchedMap(ctx, batchRank, batchRank + 2, {0})},
        iteratorsOf(batchRank, batchRank + 2, 1));
    replaceWithCasts(rewriter, op, {state, normalizer});
    return success();
  }
};

/// query_readout -> φ(Q) S, divided by φ(Q) z + eps when normalized.
struct LowerQueryReadout : OpRewritePattern<QueryReadoutOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QueryReadoutOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkElementTypes(rewriter, op)))
      return failure();
    Value z = op.getNormalizer();
    std::optional<double> eps = epsOf(op.getEps());
    if (static_cast<bool>(z) != eps.has_value())
      return rewriter.notifyMatchFailure(op, "normalizer without eps");
    Value result = lowerRowProduct(rewriter, op.getLoc(), op.getQueryFeatures(),
                                   op.getState(), z, eps, op.getType(),
                                   elementTypeOf(op.getState()));
    replaceWithCasts(rewriter, op, {result});
    return success();
  }
};

/// step -> the state update and the readout of the new state.
struct LowerStep : OpRewritePattern<StepOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(StepOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkElementTypes(rewriter, op)))
      return failure();
    StepValues step = buildStep(
        rewriter, op.getLoc(), op.getQueryFeatures(), op.getKeyFeatures(),
        op.getValues(), op.getState(), op.getNormalizer(), epsOf(op.getEps()));
    replaceWithCasts(rewriter, op, {step.result, step.state, step.normalizer});
    return success();
  }
};

/// scan -> scf.for over the sequence carrying (O, S, z), one step per token.
struct LowerScan : OpRewritePattern<ScanOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ScanOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkElementTypes(rewriter, op)))
      return failure();
    Location loc = op.getLoc();
    Value q = op.getQueryFeatures(), k = op.getKeyFeatures(),
          v = op.getValues();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    auto stateType = cast<RankedTensorType>(op.getFinalState().getType());
    auto normalizerType =
        cast<RankedTensorType>(op.getFinalNormalizer().getType());
    int64_t rank = resultType.getRank();
    int64_t batchRank = rank - 2;
    int64_t seqDim = batchRank;
    Type acc = stateType.getElementType();
    SmallVector<DimSource> batch = leadingDims(q, batchRank);
    std::optional<double> eps = epsOf(op.getEps());

    Value state0 = op.getInitialState(),
          normalizer0 = op.getInitialNormalizer();
    if (!state0) {
      state0 = zeroTensor(
          rewriter, loc,
          sizesFor(rewriter, loc, stateType,
                   dimsOf(batch, {{k, batchRank + 1}, {v, batchRank + 1}})),
          acc);
      normalizer0 = zeroTensor(rewriter, loc,
                               sizesFor(rewriter, loc, normalizerType,
                                        dimsOf(batch, {{k, batchRank + 1}})),
                               acc);
    }
    // Every output row is written by one iteration.
    Value output =
        emptyTensor(rewriter, loc,
                    sizesFor(rewriter, loc, resultType,
                             dimsOf(batch, {{q, seqDim}, {v, batchRank + 1}})),
                    resultType.getElementType());

    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value length = tensor::DimOp::create(rewriter, loc, q, seqDim);
    Value last = arith::SubIOp::create(rewriter, loc, length, one);
    bool reverse = op.isReverse();

    auto loop = scf::ForOp::create(
        rewriter, loc, zero, length, one,
        ValueRange{output, state0, normalizer0},
        [&](OpBuilder &b, Location l, Value iv, ValueRange iterArgs) {
          Value index = iv;
          if (reverse)
            index = arith::SubIOp::create(b, l, last, iv);
          StepValues step = buildStep(
              b, l, extractToken(b, l, q, index), extractToken(b, l, k, index),
              extractToken(b, l, v, index), iterArgs[1], iterArgs[2], eps);
          Value updated = insertToken(b, l, step.result, iterArgs[0], index);
          scf::YieldOp::create(
              b, l, ValueRange{updated, step.state, step.normalizer});
        });
    replaceWithCasts(rewriter, op, SmallVector<Value>(loop.getResults()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Passes
//===----------------------------------------------------------------------===//

struct ConvertLinAttnToLinalgPass
    : linattn::impl::ConvertLinAttnToLinalgPassBase<
          ConvertLinAttnToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalDialect<LinAttnDialect>();
    // The kernels' reads of their operands, which bufferization resolves.
    target.addLegalOp<ReadBufferOp>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect>();
    RewritePatternSet patterns(ctx);
    populateLinAttnToLinalgConversionPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

struct LinAttnCheckPlacementPass
    : linattn::impl::LinAttnCheckPlacementPassBase<LinAttnCheckPlacementPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(checkPlacement(getOperation(), lowering)))
      signalPassFailure();
  }
};

struct LinAttnCheckLoweredPass
    : linattn::impl::LinAttnCheckLoweredPassBase<LinAttnCheckLoweredPass> {
  void runOnOperation() override {
    bool left = false;
    getOperation()->walk([&](Operation *op) {
      if (!isa_and_nonnull<LinAttnDialect>(op->getDialect()))
        return;
      op->emitError() << "'" << op->getName()
                      << "' was not lowered by the pipeline";
      left = true;
    });
    if (left)
      signalPassFailure();
  }
};

} // namespace

void mlir::linattn::populateLinAttnToLinalgConversionPatterns(
    RewritePatternSet &patterns) {
  populateDecomposePatterns(patterns);
  patterns.add<LowerFeatureMap, LowerScores, LowerApplyScores, LowerKvSummary,
               LowerQueryReadout, LowerStep, LowerScan>(patterns.getContext());
}
