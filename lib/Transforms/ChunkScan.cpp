//===- ChunkScan.cpp - linattn.scan into the chunkwise form ---------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Rewrites `linattn.scan` into a loop over chunks of C tokens. For chunk c
// (tokens t..t+L-1, L = min(C, N - t)) entering with state (S, z):
//
//   Aᶜ     = φ(Q_c)φ(K_c)ᵀ ⊙ L        intra-chunk causal scores (L×L)
//   num_c  = Aᶜ V_c + φ(Q_c) S          intra plus inter-chunk numerator
//   den_c  = rowsum(Aᶜ) + φ(Q_c) z      the same for the denominator
//   O_c    = num_c                      or num_c / (den_c + eps) normalized
//   S     += φ(K_c)ᵀ V_c,  z += Σ φ(k)  the state the next chunk enters with
//
// A reverse scan visits the chunks from the end and masks with the upper
// triangle (j ≥ i), which is the transpose of the causal scores of keys
// against queries. Everything inside a chunk is computed in the state's
// element type and truncated to the data type when the output is written.
//
//===----------------------------------------------------------------------===//

#include "linattn/IR/LinAttnOps.h"
#include "linattn/Transforms/Passes.h"
#include "linattn/Transforms/Utils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNCHUNKSCANPASS
#include "linattn/Transforms/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

/// `sizes` followed by `tail`.
static SmallVector<OpFoldResult> concatSizes(ArrayRef<OpFoldResult> sizes,
                                             ArrayRef<OpFoldResult> tail) {
  SmallVector<OpFoldResult> result(sizes);
  llvm::append_range(result, tail);
  return result;
}

/// Casts `value` to `type` when the two differ (they are cast compatible).
static Value castIfNeeded(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return tensor::CastOp::create(b, loc, type, value);
}

/// Widens a float tensor to `elementType` (a no-op when it already has it),
/// as a linalg.map: every pipeline bufferizes it (arith.extf on tensors
/// needs convert-elementwise-to-linalg first).
static Value extendTo(OpBuilder &b, Location loc, Value value,
                      Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementType() == elementType)
    return value;
  Value init = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, value), elementType);
  auto map = linalg::MapOp::create(
      b, loc, ValueRange{value}, init,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value wide = arith::ExtFOp::create(nb, nloc, elementType, args[0]);
        linalg::YieldOp::create(nb, nloc, wide);
      });
  return map->getResult(0);
}

namespace {
/// The sizes of one scan, each static when any operand or result has it
/// static, else read from the operand that always has it.
struct ScanSizes {
  SmallVector<OpFoldResult> batch;
  OpFoldResult length, features, valueSize;
};

/// linattn.scan -> scf.for over chunks of the intra-chunk quadratic form and
/// the inter-chunk state recurrence.
struct ChunkScan : OpRewritePattern<ScanOp> {
  ChunkScan(MLIRContext *context, int64_t defaultChunkSize)
      : OpRewritePattern(context), defaultChunkSize(defaultChunkSize) {}

  LogicalResult matchAndRewrite(ScanOp op,
                                PatternRewriter &rewriter) const override {
    int64_t chunk = op.getChunkSize().value_or(defaultChunkSize);
    if (chunk <= 0)
      return rewriter.notifyMatchFailure(op, "chunk size is not positive");

    Location loc = op.getLoc();
    ScanSizes sizes = computeSizes(rewriter, loc, op);
    auto finalStateType = cast<RankedTensorType>(op.getFinalState().getType());
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type dataElement = resultType.getElementType();
    Type stateElement = finalStateType.getElementType();

    SmallVector<OpFoldResult> stateSizes =
        concatSizes(sizes.batch, {sizes.features, sizes.valueSize});
    SmallVector<OpFoldResult> normalizerSizes =
        concatSizes(sizes.batch, {sizes.features});
    SmallVector<OpFoldResult> outputSizes =
        concatSizes(sizes.batch, {sizes.length, sizes.valueSize});
    RankedTensorType stateType = tensorTypeOf(stateSizes, stateElement);
    RankedTensorType normalizerType =
        tensorTypeOf(normalizerSizes, stateElement);

    Value state, normalizer;
    if (op.hasInitialState()) {
      state = castIfNeeded(rewriter, loc, op.getInitialState(), stateType);
      normalizer = castIfNeeded(rewriter, loc, op.getInitialNormalizer(),
                                normalizerType);
    } else {
      state = filledTensor(rewriter, loc, stateSizes, stateElement, 0.0);
      normalizer =
          filledTensor(rewriter, loc, normalizerSizes, stateElement, 0.0);
    }
    Value output =
        tensor::EmptyOp::create(rewriter, loc, outputSizes, dataElement);

    // A static sequence shorter than a chunk is one chunk of its own length;
    // a static length that the chunk size divides gets static chunk tiles.
    std::optional<int64_t> staticLength = getConstantIntValue(sizes.length);
    if (staticLength && *staticLength > 0 && *staticLength < chunk)
      chunk = *staticLength;
    bool evenChunks = staticLength && *staticLength % chunk == 0;

    Value length = getValueOrCreateConstantIndexOp(rewriter, loc, sizes.length);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value step = arith::ConstantIndexOp::create(rewriter, loc, chunk);
    auto loop = scf::ForOp::create(
        rewriter, loc, zero, length, step,
        ValueRange{output, state, normalizer},
        [&](OpBuilder &b, Location bodyLoc, Value iv, ValueRange iterArgs) {
          SmallVector<Value> next =
              buildChunk(b, bodyLoc, op, sizes, chunk, evenChunks, length, iv,
                         iterArgs, stateType, normalizerType);
          scf::YieldOp::create(b, bodyLoc, next);
        });

    rewriter.replaceOp(
        op, {castIfNeeded(rewriter, loc, loop.getResult(0), resultType),
             castIfNeeded(rewriter, loc, loop.getResult(1), finalStateType),
             castIfNeeded(rewriter, loc, loop.getResult(2),
                          op.getFinalNormalizer().getType())});
    return success();
  }

private:
  static ScanSizes computeSizes(OpBuilder &b, Location loc, ScanOp op) {
    auto typeOf = [](Value value) {
      return value ? cast<RankedTensorType>(value.getType())
                   : RankedTensorType();
    };
    RankedTensorType q = typeOf(op.getQueryFeatures()),
                     k = typeOf(op.getKeyFeatures()),
                     v = typeOf(op.getValues()), o = typeOf(op.getResult()),
                     s = typeOf(op.getFinalState()),
                     z = typeOf(op.getFinalNormalizer()),
                     s0 = typeOf(op.getInitialState()),
                     z0 = typeOf(op.getInitialNormalizer());
    int64_t rank = q.getRank();
    // The first static size among (type, dim) pairs, or a tensor.dim of
    // `source` at `sourceDim`.
    auto pick = [&](ArrayRef<std::pair<RankedTensorType, int64_t>> candidates,
                    Value source, int64_t sourceDim) -> OpFoldResult {
      for (auto [type, dim] : candidates)
        if (type && !type.isDynamicDim(dim))
          return b.getIndexAttr(type.getDimSize(dim));
      return tensor::DimOp::create(b, loc, source, sourceDim).getResult();
    };
    ScanSizes sizes;
    for (int64_t i = 0; i < rank - 2; ++i)
      sizes.batch.push_back(pick(
          {{q, i}, {k, i}, {v, i}, {o, i}, {s, i}, {z, i}, {s0, i}, {z0, i}},
          op.getQueryFeatures(), i));
    sizes.length =
        pick({{q, rank - 2}, {k, rank - 2}, {v, rank - 2}, {o, rank - 2}},
             op.getQueryFeatures(), rank - 2);
    sizes.features = pick({{q, rank - 1},
                           {k, rank - 1},
                           {s, rank - 2},
                           {z, rank - 2},
                           {s0, rank - 2},
                           {z0, rank - 2}},
                          op.getQueryFeatures(), rank - 1);
    sizes.valueSize =
        pick({{v, rank - 1}, {o, rank - 1}, {s, rank - 1}, {s0, rank - 1}},
             op.getValues(), rank - 1);
    return sizes;
  }

  /// Builds the body for the chunk at loop index `iv` and returns the values
  /// to yield: the output with the chunk inserted and the updated state.
  static SmallVector<Value> buildChunk(OpBuilder &b, Location loc, ScanOp op,
                                       const ScanSizes &sizes, int64_t chunk,
                                       bool evenChunks, Value length, Value iv,
                                       ValueRange iterArgs,
                                       RankedTensorType stateType,
                                       RankedTensorType normalizerType) {
    MLIRContext *context = b.getContext();
    Value output = iterArgs[0], state = iterArgs[1], normalizer = iterArgs[2];
    Type stateElement = stateType.getElementType();
    Type dataElement =
        cast<RankedTensorType>(op.getResult().getType()).getElementType();
    int64_t batchRank = sizes.batch.size();

    // Chunk length L = min(C, N - iv), and where the chunk starts: at iv
    // going forward, at N - iv - L going backward.
    OpFoldResult chunkLength;
    if (evenChunks) {
      chunkLength = b.getIndexAttr(chunk);
    } else {
      AffineExpr d0 = getAffineDimExpr(0, context);
      AffineExpr s0 = getAffineSymbolExpr(0, context);
      auto map = AffineMap::get(
          1, 1, {getAffineConstantExpr(chunk, context), s0 - d0}, context);
      chunkLength =
          affine::AffineMinOp::create(b, loc, map, ValueRange{iv, length})
              .getResult();
    }
    OpFoldResult start = iv;
    if (op.isReverse()) {
      AffineExpr d0 = getAffineDimExpr(0, context),
                 d1 = getAffineDimExpr(1, context),
                 d2 = getAffineDimExpr(2, context);
      start = affine::makeComposedFoldedAffineApply(
          b, loc, d0 - d1 - d2,
          {OpFoldResult(length), OpFoldResult(iv), chunkLength});
    }

    // Tiles of the chunk's tokens, widened to the state type.
    SmallVector<OpFoldResult> offsets(batchRank, b.getIndexAttr(0));
    offsets.push_back(start);
    offsets.push_back(b.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(batchRank + 2, b.getIndexAttr(1));
    SmallVector<OpFoldResult> featureTileSizes =
        concatSizes(sizes.batch, {chunkLength, sizes.features});
    SmallVector<OpFoldResult> valueTileSizes =
        concatSizes(sizes.batch, {chunkLength, sizes.valueSize});
    auto tile = [&](Value source, ArrayRef<OpFoldResult> tileSizes) {
      Value slice = createExtractSlice(b, loc, /*type=*/nullptr, source,
                                       offsets, tileSizes, strides);
      return extendTo(b, loc, slice, stateElement);
    };
    Value queries = tile(op.getQueryFeatures(), featureTileSizes);
    Value keys = tile(op.getKeyFeatures(), featureTileSizes);
    Value values = tile(op.getValues(), valueTileSizes);

    // Intra-chunk scores: lower triangle forward; backward, the upper
    // triangle, which is the transpose of the keys' causal scores against
    // the queries.
    RankedTensorType scoresType = tensorTypeOf(
        concatSizes(sizes.batch, {chunkLength, chunkLength}), stateElement);
    Value scores;
    if (!op.isReverse()) {
      scores = ScoresOp::create(b, loc, scoresType, queries, keys,
                                /*causal=*/true, /*scale=*/nullptr);
    } else {
      Value transposed = ScoresOp::create(b, loc, scoresType, keys, queries,
                                          /*causal=*/true, /*scale=*/nullptr);
      Value init = tensor::EmptyOp::create(
          b, loc, concatSizes(sizes.batch, {chunkLength, chunkLength}),
          stateElement);
      SmallVector<int64_t> permutation =
          llvm::to_vector(llvm::seq<int64_t>(0, batchRank + 2));
      std::swap(permutation[batchRank], permutation[batchRank + 1]);
      scores =
          linalg::TransposeOp::create(b, loc, transposed, init, permutation)
              ->getResult(0);
    }

    RankedTensorType tileType = tensorTypeOf(valueTileSizes, stateElement);
    Value intra = ApplyScoresOp::create(b, loc, tileType, scores, values,
                                        /*eps=*/nullptr);
    Value inter =
        QueryReadoutOp::create(b, loc, tileType, queries, state,
                               /*normalizer=*/Value(), /*eps=*/nullptr);

    // Loops over (batch..., i, j) for the output tile.
    int64_t loopRank = batchRank + 2;
    AffineMap identity = b.getMultiDimIdentityMap(loopRank);
    AffineMap rows = identity.dropResult(loopRank - 1);
    SmallVector<utils::IteratorType> parallel(loopRank,
                                              utils::IteratorType::parallel);
    SmallVector<utils::IteratorType> reduceLast(parallel);
    reduceLast.back() = utils::IteratorType::reduction;

    Value outputInit =
        tensor::EmptyOp::create(b, loc, valueTileSizes, dataElement);
    RankedTensorType outputTileType = tensorTypeOf(valueTileSizes, dataElement);
    auto truncate = [&](OpBuilder &nb, Location nloc, Value value) {
      if (dataElement == stateElement)
        return value;
      return arith::TruncFOp::create(nb, nloc, dataElement, value).getResult();
    };
    Value chunkOutput;
    if (std::optional<APFloat> eps = op.getEps()) {
      // den = rowsum(A) + φ(Q_c) z, accumulated into one vector.
      SmallVector<OpFoldResult> rowSizes =
          concatSizes(sizes.batch, {chunkLength});
      Value denominator = filledTensor(b, loc, rowSizes, stateElement, 0.0);
      RankedTensorType rowType = tensorTypeOf(rowSizes, stateElement);
      denominator = linalg::GenericOp::create(
                        b, loc, TypeRange{rowType}, ValueRange{scores},
                        ValueRange{denominator},
                        ArrayRef<AffineMap>{identity, rows}, reduceLast,
                        [&](OpBuilder &nb, Location nloc, ValueRange args) {
                          Value sum =
                              arith::AddFOp::create(nb, nloc, args[1], args[0]);
                          linalg::YieldOp::create(nb, nloc, sum);
                        })
                        .getResult(0);
      AffineMap features = identity.dropResult(loopRank - 2);
      denominator =
          linalg::GenericOp::create(
              b, loc, TypeRange{rowType}, ValueRange{queries, normalizer},
              ValueRange{denominator},
              ArrayRef<AffineMap>{identity, features, rows}, reduceLast,
              [&](OpBuilder &nb, Location nloc, ValueRange args) {
                Value product =
                    arith::MulFOp::create(nb, nloc, args[0], args[1]);
                Value sum = arith::AddFOp::create(nb, nloc, args[2], product);
                linalg::YieldOp::create(nb, nloc, sum);
              })
              .getResult(0);
      Value epsConstant = arith::ConstantOp::create(
          b, loc, stateElement,
          b.getFloatAttr(stateElement, eps->convertToDouble()));
      chunkOutput =
          linalg::GenericOp::create(
              b, loc, TypeRange{outputTileType},
              ValueRange{intra, inter, denominator}, ValueRange{outputInit},
              ArrayRef<AffineMap>{identity, identity, rows, identity}, parallel,
              [&](OpBuilder &nb, Location nloc, ValueRange args) {
                Value num = arith::AddFOp::create(nb, nloc, args[0], args[1]);
                Value den =
                    arith::AddFOp::create(nb, nloc, args[2], epsConstant);
                Value quotient = arith::DivFOp::create(nb, nloc, num, den);
                linalg::YieldOp::create(nb, nloc, truncate(nb, nloc, quotient));
              })
              .getResult(0);
    } else {
      chunkOutput =
          linalg::GenericOp::create(
              b, loc, TypeRange{outputTileType}, ValueRange{intra, inter},
              ValueRange{outputInit},
              ArrayRef<AffineMap>{identity, identity, identity}, parallel,
              [&](OpBuilder &nb, Location nloc, ValueRange args) {
                Value sum = arith::AddFOp::create(nb, nloc, args[0], args[1]);
                linalg::YieldOp::create(nb, nloc, truncate(nb, nloc, sum));
              })
              .getResult(0);
    }
    Value newOutput = createInsertSlice(b, loc, chunkOutput, output, offsets,
                                        valueTileSizes, strides);

    // The state the next chunk enters with: S + φ(K_c)ᵀV_c, z + Σ φ(k).
    auto summary =
        KvSummaryOp::create(b, loc, stateType, normalizerType, keys, values);
    Value newState =
        linalg::AddOp::create(b, loc, TypeRange{stateType},
                              ValueRange{state, summary.getState()},
                              ValueRange{state})
            .getResult(0);
    Value newNormalizer =
        linalg::AddOp::create(b, loc, TypeRange{normalizerType},
                              ValueRange{normalizer, summary.getNormalizer()},
                              ValueRange{normalizer})
            .getResult(0);
    return {newOutput, newState, newNormalizer};
  }

  int64_t defaultChunkSize;
};

struct LinAttnChunkScanPass
    : linattn::impl::LinAttnChunkScanPassBase<LinAttnChunkScanPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t size = chunkSize;
    if (size <= 0) {
      emitError(getOperation()->getLoc())
          << "linattn-chunk-scan: chunk-size must be positive, got " << size;
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateChunkScanPatterns(patterns, size);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace

void mlir::linattn::populateChunkScanPatterns(RewritePatternSet &patterns,
                                              int64_t defaultChunkSize) {
  patterns.add<ChunkScan>(patterns.getContext(), defaultChunkSize);
}
