#include "linattn/IR/LinAttnOps.h"
#include "linattn/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNRAISEPASS
#include "linattn/Transforms/Passes.h.inc"
} // namespace mlir::linattn
using namespace mlir;
using namespace mlir::linattn;
namespace {
struct LinAttnRaisePass : linattn::impl::LinAttnRaisePassBase<LinAttnRaisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaisePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
void mlir::linattn::populateRaisePatterns(RewritePatternSet &) {}
