//===- ParallelizeLinalg.cpp - the host's linalg ops over threads ---------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "linattn/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNPARALLELIZELINALGPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

namespace {

/// Tile sizes that make rows of `op` over threads: 1 for each leading
/// parallel loop but the last loop, 0 for the rest; empty when `op` should
/// stay serial.
SmallVector<int64_t> rowTiles(linalg::LinalgOp op, int64_t minIterations) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  int64_t loops = ranges.size();
  int64_t rowLoops = 0;
  while (rowLoops < loops - 1 &&
         iterators[rowLoops] == utils::IteratorType::parallel)
    ++rowLoops;
  if (rowLoops == 0)
    return {};
  bool dynamic = llvm::is_contained(ranges, ShapedType::kDynamic);
  if (!dynamic) {
    int64_t points = 1, rows = 1;
    for (int64_t i = 0; i < loops; ++i) {
      points *= ranges[i];
      if (i < rowLoops)
        rows *= ranges[i];
    }
    if (points < minIterations || rows < 2)
      return {};
  }
  SmallVector<int64_t> tiles(loops, 0);
  for (int64_t i = 0; i < rowLoops; ++i)
    tiles[i] = 1;
  return tiles;
}

struct LinAttnParallelizeLinalgPass
    : linattn::impl::LinAttnParallelizeLinalgPassBase<
          LinAttnParallelizeLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics() ||
          op->getParentOfType<scf::ParallelOp>() ||
          op->getParentOfType<scf::ForallOp>() ||
          op->getParentOfType<omp::ParallelOp>())
        return;
      ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      SmallVector<int64_t> tiles = rowTiles(op, minIterations);
      if (tiles.empty())
        continue;
      linalg::LinalgTilingOptions options;
      options.setTileSizes(tiles).setLoopType(
          linalg::LinalgTilingLoopType::ParallelLoops);
      rewriter.setInsertionPoint(op);
      if (failed(linalg::tileLinalgOp(rewriter, op, options)))
        continue; // Left serial: correct, only slower.
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
