//===- FuseElementwise.cpp - elementwise fusion that repeats no work ------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "linattn/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNFUSEELEMENTWISEPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

/// Fuses when the producer has no other use (it would be computed anyway)
/// and the consumer visits each element of the operand exactly once: its
/// indexing map is a permutation, with no loop the operand does not depend
/// on (a reduction or a broadcast would re-run the producer's body).
static bool fusesWithoutRepeating(OpOperand *fusedOperand) {
  Operation *producer = fusedOperand->get().getDefiningOp();
  if (!producer || !producer->hasOneUse())
    return false;
  auto consumer = dyn_cast<linalg::LinalgOp>(fusedOperand->getOwner());
  return consumer &&
         consumer.getMatchingIndexingMap(fusedOperand).isPermutation();
}

namespace {
struct LinAttnFuseElementwisePass
    : linattn::impl::LinAttnFuseElementwisePassBase<
          LinAttnFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns,
                                                 fusesWithoutRepeating);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
