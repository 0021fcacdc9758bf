//===- ScanToSteps.cpp - unroll short scans into recurrent steps ----------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// A scan over N tokens is N recurrent steps threading the state: token t is
// sliced out of the sequence, `linattn.step` adds it to the state and reads
// the state out, and the outputs are concatenated back along the sequence.
// Forward scans visit t = 0..N-1, reverse scans t = N-1..0.
//
//===----------------------------------------------------------------------===//

#include "linattn/IR/LinAttnOps.h"
#include "linattn/Transforms/Passes.h"
#include "linattn/Transforms/Utils.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNSCANTOSTEPSPASS
#include "linattn/Transforms/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

/// Returns `type` without dimension `dim`.
static RankedTensorType dropDim(RankedTensorType type, int64_t dim) {
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + dim);
  return type.clone(shape);
}

namespace {
struct UnrollScan : OpRewritePattern<ScanOp> {
  UnrollScan(MLIRContext *context, int64_t maxLength)
      : OpRewritePattern(context), maxLength(maxLength) {}

  LogicalResult matchAndRewrite(ScanOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    int64_t rank = resultType.getRank();
    int64_t seqDim = rank - 2;
    int64_t length = ShapedType::kDynamic;
    for (Value operand :
         {op.getQueryFeatures(), op.getKeyFeatures(), op.getValues()}) {
      int64_t size =
          cast<RankedTensorType>(operand.getType()).getDimSize(seqDim);
      if (ShapedType::isDynamic(size))
        return rewriter.notifyMatchFailure(op, "sequence length is dynamic");
      length = size;
    }
    if (length == 0)
      return rewriter.notifyMatchFailure(op, "empty sequence");
    if (length > maxLength)
      return rewriter.notifyMatchFailure(op,
                                         "sequence is longer than max-length");

    Location loc = op.getLoc();
    auto [state, normalizer] = op.buildInitialState(rewriter);
    Type stateType = op.getFinalState().getType();
    Type normalizerType = op.getFinalNormalizer().getType();

    auto token = [&](Value sequence, int64_t t) {
      return extractToken(rewriter, loc, sequence, rewriter.getIndexAttr(t));
    };

    RankedTensorType outputTokenType = dropDim(resultType, seqDim);

    SmallVector<Value> outputs(length);
    for (int64_t i = 0; i < length; ++i) {
      int64_t t = op.isReverse() ? length - 1 - i : i;
      auto step = StepOp::create(
          rewriter, loc, TypeRange{outputTokenType, stateType, normalizerType},
          token(op.getQueryFeatures(), t), token(op.getKeyFeatures(), t),
          token(op.getValues(), t), state, normalizer, op.getEpsAttr());
      state = step.getNewState();
      normalizer = step.getNewNormalizer();
      outputs[t] = expandToken(rewriter, loc, step.getResult());
    }

    Value result = outputs.front();
    if (llvm::is_contained(outputTokenType.getShape(), 0)) {
      // No elements to concatenate; upstream bufferizes a tensor.concat of
      // empty pieces into invalid subviews.
      SmallVector<OpFoldResult> sizes =
          tensor::getMixedSizes(rewriter, loc, result);
      sizes[seqDim] = rewriter.getIndexAttr(length);
      result = tensor::EmptyOp::create(rewriter, loc, sizes,
                                       resultType.getElementType());
    } else if (length > 1) {
      result = tensor::ConcatOp::create(rewriter, loc, seqDim, outputs);
    }
    if (result.getType() != resultType)
      result = tensor::CastOp::create(rewriter, loc, resultType, result);
    rewriter.replaceOp(op, {result, state, normalizer});
    return success();
  }

private:
  int64_t maxLength;
};

struct LinAttnScanToStepsPass
    : linattn::impl::LinAttnScanToStepsPassBase<LinAttnScanToStepsPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateScanToStepsPatterns(patterns, maxLength);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace

void mlir::linattn::populateScanToStepsPatterns(RewritePatternSet &patterns,
                                                int64_t maxLength) {
  patterns.add<UnrollScan>(patterns.getContext(), maxLength);
}
