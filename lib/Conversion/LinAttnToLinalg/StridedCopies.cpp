//===- StridedCopies.cpp - memref.copy of strided views to linalg.copy ----===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "linattn/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Builders.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNSTRIDEDCOPYTOLINALGPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

namespace {

/// Whether upstream's memref.copy lowering copies `type` with memcpy (the
/// test of MemRefCopyOpLowering).
bool copiesWithMemcpy(MemRefType type) {
  return type.getLayout().isIdentity() ||
         memref::isStaticShapeAndContiguousRowMajor(type);
}

struct LinAttnStridedCopyToLinalgPass
    : linattn::impl::LinAttnStridedCopyToLinalgPassBase<
          LinAttnStridedCopyToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp op) {
      auto source = dyn_cast<MemRefType>(op.getSource().getType());
      auto target = dyn_cast<MemRefType>(op.getTarget().getType());
      if (source && target &&
          !(copiesWithMemcpy(source) && copiesWithMemcpy(target)))
        copies.push_back(op);
    });
    for (memref::CopyOp op : copies) {
      OpBuilder builder(op);
      linalg::CopyOp::create(builder, op.getLoc(), op.getSource(),
                             op.getTarget());
      op.erase();
    }
  }
};

} // namespace
