//===- CheckDimIndices.cpp - dim ops whose index is not a dimension -------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// `tensor.dim` and `memref.dim` take their index as an SSA value, so the
// verifiers cannot reject one outside the operand's rank: it is undefined
// behavior at run time. Folding and canonicalization meet such indices as
// constants, and not every upstream pattern checks them (the GPU dialect's
// dim-of-alloc pattern indexes the shape by a negative index). This pass
// finds them before any pattern runs.
//
//===----------------------------------------------------------------------===//

#include "linattn/Transforms/Passes.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/Utils.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNCHECKDIMINDICESPASS
#include "linattn/Transforms/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

namespace {

/// The constant `index` is known to take, if any: its constant op's, or what
/// constant propagation folded it to.
static std::optional<APInt> constantIndex(DataFlowSolver &solver, Value index) {
  auto *lattice =
      solver.lookupState<dataflow::Lattice<dataflow::ConstantValue>>(index);
  if (!lattice || lattice->getValue().isUninitialized())
    return std::nullopt;
  auto attr =
      dyn_cast_or_null<IntegerAttr>(lattice->getValue().getConstantValue());
  if (!attr)
    return std::nullopt;
  return attr.getValue();
}

struct LinAttnCheckDimIndicesPass
    : linattn::impl::LinAttnCheckDimIndicesPassBase<
          LinAttnCheckDimIndicesPass> {
  void runOnOperation() override {
    Operation *root = getOperation();
    SmallVector<Operation *> dims;
    root->walk([&](Operation *op) {
      if (isa<tensor::DimOp, memref::DimOp>(op))
        dims.push_back(op);
    });
    if (dims.empty())
      return;

    DataFlowSolver solver;
    dataflow::loadBaselineAnalyses(solver);
    if (failed(solver.initializeAndRun(root))) {
      root->emitError("constant propagation failed on the operation whose "
                      "dimension indices are to be checked");
      return signalPassFailure();
    }

    bool outOfRange = false;
    for (Operation *op : dims) {
      Value source = op->getOperand(0), index = op->getOperand(1);
      std::optional<APInt> value = constantIndex(solver, index);
      if (!value)
        continue;
      auto type = cast<ShapedType>(source.getType());
      // Indices are at most 64 bits wide; a wider constant is out of range
      // when it does not fit.
      std::optional<int64_t> dim = value->trySExtValue();
      if (dim && *dim >= 0 && (!type.hasRank() || *dim < type.getRank()))
        continue;
      InFlightDiagnostic diag = op->emitError()
                                << "dimension index "
                                << llvm::toString(*value, 10, /*Signed=*/true)
                                << " is out of range for " << type;
      if (type.hasRank())
        diag << " (rank " << type.getRank() << ")";
      outOfRange = true;
    }
    if (outOfRange)
      signalPassFailure();
  }
};

} // namespace
