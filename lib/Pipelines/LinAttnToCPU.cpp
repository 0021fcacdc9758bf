//===- LinAttnToCPU.cpp - the linattn-lower-to-cpu pipeline ---------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "PipelineStages.h"

#include "linattn/Conversion/Passes.h"
#include "linattn/Pipelines/Pipelines.h"
#include "linattn/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/Transforms/RequestCWrappers.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::linattn;

void mlir::linattn::buildLinAttnLowerToCPUPipeline(
    OpPassManager &pm, const LinAttnLowerToCPUOptions &options) {
  pm.addPass(createLinAttnCheckPlacementPass({"linattn-lower-to-cpu"}));
  // Dimension indices no pattern may meet out of range.
  pm.addPass(createLinAttnCheckDimIndicesPass());
  // Sizes that must agree and that only the arguments fix, checked per call.
  pm.addPass(createLinAttnCheckSizesPass());
  if (options.rewriteForms)
    addRewriteFormsStage(pm, ReassociateMode::Auto);
  if (options.chunkSize > 0) {
    LinAttnChunkScanPassOptions chunk;
    chunk.chunkSize = options.chunkSize;
    pm.addPass(createLinAttnDecomposePass());
    pm.addPass(createLinAttnMaskedToScanPass());
    pm.addPass(createLinAttnChunkScanPass(chunk));
  }

  // Scans and steps -> vectorized kernels on buffers, wrapped in tensors.
  if (options.kernels) {
    pm.addPass(createLinAttnDecomposePass());
    ConvertLinAttnToCPUKernelsPassOptions kernels;
    kernels.targetCpu = options.targetCpu;
    kernels.targetFeatures = options.targetFeatures;
    kernels.vectorWidth = options.vectorWidth;
    kernels.tokensPerBlock = options.tokensPerBlock;
    kernels.columnVectors = options.columnVectors;
    kernels.threads = options.numThreads;
    if (!options.rewriteForms)
      kernels.reassociateSpeedup = 0.0;
    pm.addPass(createConvertLinAttnToCPUKernelsPass(kernels));
  }
  addLinalgStage(pm, options.fuseElementwise);
  addBufferizeStage(pm);

  // Buffers -> loops -> OpenMP -> LLVM.
  pm.addPass(createLinAttnStridedCopyToLinalgPass());
  if (options.numThreads != 1 && options.parallelizeLinalg)
    pm.addPass(createLinAttnParallelizeLinalgPass());
  pm.addPass(createConvertLinalgToLoopsPass());
  if (options.numThreads != 1) {
    ConvertSCFToOpenMPPassOptions openmp;
    openmp.numThreads = options.numThreads;
    pm.addPass(createConvertSCFToOpenMPPass(openmp));
    // Drops the alloca scopes the conversion wraps loop bodies in when they
    // hold no alloca: their region must stay one block, which lowering the
    // loops inside to branches would break.
    pm.addPass(createCanonicalizerPass());
  }
  addBranchesStage(pm, options.cInterface);
  pm.addPass(createConvertVectorToLLVMPass());
  addHostToLLVMStage(pm);
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (!options.targetCpu.empty() || !options.targetFeatures.empty()) {
    LinAttnSetLLVMTargetPassOptions target;
    target.cpu = options.targetCpu;
    target.features = options.targetFeatures;
    pm.addPass(createLinAttnSetLLVMTargetPass(target));
  }
  pm.addPass(createLinAttnCheckLoweredPass());
}

void mlir::linattn::registerLinAttnPipelines() {
  PassPipelineRegistration<LinAttnLowerToCPUOptions>(
      "linattn-lower-to-cpu",
      "Lower linattn on tensors to the LLVM dialect for the host CPU",
      buildLinAttnLowerToCPUPipeline);
}
