//===- PipelineStages.cpp - stages shared by the lowering pipelines -------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "PipelineStages.h"

#include "linattn/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/Transforms/RequestCWrappers.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::linattn;

void mlir::linattn::addRewriteFormsStage(
    OpPassManager &pm, ReassociateMode mode,
    const LinAttnDecomposePassOptions &decompose) {
  pm.addPass(createLinAttnRaisePass());
  pm.addPass(createLinAttnDecomposePass(decompose));
  pm.addPass(createLinAttnMaskedToScanPass());
  LinAttnReassociatePassOptions reassociate;
  reassociate.mode = mode;
  pm.addPass(createLinAttnReassociatePass(reassociate));
  pm.addPass(createCanonicalizerPass());
}

void mlir::linattn::addLinalgStage(OpPassManager &pm, bool fuseElementwise) {
  pm.addPass(createLinAttnDecomposePass());
  pm.addPass(createConvertLinAttnToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (fuseElementwise)
    pm.addPass(createLinAttnFuseElementwisePass());
}

void mlir::linattn::addBufferizeStage(OpPassManager &pm, bool deallocate) {
  // A tensor.empty that is only computed into and then inserted into a
  // larger tensor becomes a slice of it, so that the computation writes the
  // larger buffer in place instead of a buffer of its own and a copy (the
  // columns of [V, 1] and [g, h] in the normalized gradients).
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // What was written in place leaves copies of a subview onto an equal
  // subview: CSE makes them self-copies, which canonicalization erases.
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  if (deallocate)
    bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
}

void mlir::linattn::addBranchesStage(OpPassManager &pm, bool cInterface) {
  if (cInterface)
    pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::linattn::addHostToLLVMStage(OpPassManager &pm) {
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  // The size checks' messages to stderr (upstream: stdout, lost on abort).
  pm.addPass(createLinAttnLowerAssertsPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
}
