//===- LinAttnToNVVM.cpp - the linattn-lower-to-nvvm pipeline -------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// linattn on tensors -> host code calling GPU kernels, the kernels compiled to
// an NVIDIA binary embedded in the module. The host side follows the CPU
// pipeline (same bufferization, same calling convention: functions take and
// return host buffers); the kernels come from convert-linattn-to-gpu and go
// through NVVM and gpu-module-to-binary; the host's GPU ops through
// gpu-to-llvm, which calls the mgpu* functions of a runtime library
// (lib/Runtime). With `emulate`, the kernels are embedded as MLIR text
// instead, for the GPU emulator (liblinattn_gpu_emulator.so) to interpret.
//
//===----------------------------------------------------------------------===//

#include "PipelineStages.h"

#include "linattn/Conversion/LinAttnToGPU/LinAttnToGPU.h"
#include "linattn/Conversion/Passes.h"
#include "linattn/Pipelines/Pipelines.h"
#include "linattn/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/RequestCWrappers.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::linattn;

std::string mlir::linattn::getDefaultCudaPath() {
  return LINATTN_DEFAULT_CUDA_PATH;
}

/// The options of `convert-linattn-to-gpu` in the pipeline.
static ConvertLinAttnToGPUPassOptions
kernelOptions(const LinAttnLowerToNVVMOptions &options) {
  ConvertLinAttnToGPUPassOptions kernels;
  kernels.chip = options.chip;
  kernels.scanTile = options.scanTile;
  kernels.scanFeatureLanes = options.scanFeatureLanes;
  kernels.scanThreadColumns = options.scanThreadColumns;
  kernels.blockSize = options.blockSize;
  kernels.hostFallback = options.hostFallback;
  kernels.scanKernel = options.scanKernel;
  kernels.linearKernel = options.linearKernel;
  kernels.chunkSize = options.chunkSize;
  kernels.valueTile = options.valueTile;
  kernels.smallGridValueTile = options.smallGridValueTile;
  kernels.rowTileWarps = options.rowTileWarps;
  kernels.minBlocksPerSM = options.minBlocksPerSM;
  kernels.statesMinBlocksPerSM = options.statesMinBlocksPerSM;
  kernels.sequenceParallelBlocks = options.sequenceParallelBlocks;
  kernels.minSegmentTokens = options.minSegmentTokens;
  kernels.simtChunks = options.simtChunks;
  kernels.tf32 = options.tf32;
  kernels.tf32x3 = options.tf32x3;
  kernels.vectorLoads = options.vectorLoads;
  kernels.asyncCopies = options.asyncCopies;
  kernels.copyStages = options.copyStages;
  kernels.statesCopyStages = options.statesCopyStages;
  kernels.statesFeatureSplit = options.statesFeatureSplit;
  kernels.bulkCopies = options.bulkCopies;
  kernels.wgmma = options.wgmma;
  kernels.wgmmaChunks = options.wgmmaChunks;
  kernels.scoresInRegisters = options.scoresInRegisters;
  kernels.wgmmaOutputs = options.wgmmaOutputs;
  kernels.unrollStaging = options.unrollStaging;
  kernels.phaseClocks = options.phaseClocks;
  kernels.prefetchChunks = options.prefetchChunks;
  kernels.narrowOffsetLimit = options.narrowOffsetLimit;
  return kernels;
}

void mlir::linattn::buildLinAttnLowerToNVVMPipeline(
    OpPassManager &pm, const LinAttnLowerToNVVMOptions &options) {
  pm.addPass(createLinAttnCheckPlacementPass({"linattn-lower-to-nvvm"}));
  // Dimension indices no pattern may meet out of range.
  pm.addPass(createLinAttnCheckDimIndicesPass());
  // Sizes that must agree and that only the arguments fix, checked per call.
  pm.addPass(createLinAttnCheckSizesPass());
  // The fast forms. The GPU has kernels for the linear and scan forms only,
  // so every non-causal product is reassociated.
  // The gradients through elu, relu and identity have a kernel: kept as
  // ops until the conversion. The normalized gradients' [V, 1] and [g, h]
  // are padded to a multiple of 16 columns, so that the scans that take
  // them as queries and keys run on the tensor-core kernels (which need
  // multiples of 16 features) rather than the recurrent one.
  LinAttnDecomposePassOptions decompose;
  decompose.keepElementwiseGrads = true;
  decompose.columnMultiple = 16;
  decompose.columnMultipleF32 = options.tf32 || options.tf32x3;
  if (options.rewriteForms)
    addRewriteFormsStage(pm, ReassociateMode::Always, decompose);

  // Kernels for what has one (linattn.attention decomposed first, so that its
  // parts get kernels too); the rest to linalg for the host.
  pm.addPass(createLinAttnDecomposePass(decompose));
  pm.addPass(createConvertLinAttnToGPUPass(kernelOptions(options)));
  // The kernels as built, simplified once here, bottom-up (top-down, the
  // worklist over their nested loops took three times as long: 0.20 s of a
  // 0.56 s pipeline for a chunked scan). The linalg stage then runs on the
  // host functions alone: the kernels have nothing for it, and each of its
  // passes walked their thousands of ops again.
  {
    OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
    GreedyRewriteConfig bottomUp;
    bottomUp.setUseTopDownTraversal(false);
    kernels.addPass(createCanonicalizerPass(bottomUp));
    kernels.addPass(createCSEPass());
  }
  addLinalgStage(pm.nest<func::FuncOp>(), /*fuseElementwise=*/true);

  // Bufferize as the CPU pipeline does, then give every kernel launch its
  // device buffers and copies, on one stream per function; or, with
  // device-buffers, launch on the caller's buffers and stream (no
  // deallocation pipeline: only stream-ordered temporaries are freed).
  if (options.deviceBuffers) {
    addBufferizeStage(pm, /*deallocate=*/false);
    // What the host computed between kernels becomes kernels too.
    pm.addPass(createLinAttnGPULinalgKernelsPass());
    LinAttnGPUStageBuffersPassOptions stage;
    stage.deviceBuffers = true;
    pm.addPass(createLinAttnGPUStageBuffersPass(stage));
  } else {
    addBufferizeStage(pm);
    pm.addPass(createLinAttnGPUStageBuffersPass());
    pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  }

  // Emulation: the kernels, still structured (scf), cleaned up as the
  // compiled path cleans them, embedded as MLIR text; the host side is
  // lowered as below.
  if (options.emulate) {
    pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
    pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
    LinAttnGPUEmbedKernelIRPassOptions embed;
    embed.chip = options.chip;
    pm.addPass(createLinAttnGPUEmbedKernelIRPass(embed));
  }

  // Host loops; the kernels' scf.
  pm.addPass(createLinAttnStridedCopyToLinalgPass());
  pm.addPass(createConvertLinalgToLoopsPass());
  addBranchesStage(pm, options.cInterface);

  if (options.emulate) {
    addHostToLLVMStage(pm);
    pm.addPass(createGpuToLLVMConversionPass());
    pm.addPass(createReconcileUnrealizedCastsPass());
    pm.addPass(createLinAttnCheckLoweredPass());
    return;
  }

  // Kernels -> NVVM; workgroup buffers above CUDA's 48 KiB of static shared
  // memory (the double-buffered chunked kernels) first become dynamic shared
  // memory.
  LinAttnGPUDynamicSharedMemoryPassOptions shared;
  shared.chip = options.chip;
  pm.addPass(createLinAttnGPUDynamicSharedMemoryPass(shared));
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  // wgmma exists only in sm_90a, the architecture-specific form of sm_90
  // (for the same GPUs); on other chips the kernels do not use it. Modules
  // without a wgmma kernel get sm_90 back once they are in NVVM.
  bool archSpecific = options.wgmma && target.chip == "sm_90";
  if (archSpecific)
    target.chip = "sm_90a";
  target.optLevel = options.optLevel;
  target.features = options.features;
  // Bulk copies and mbarrier transaction counts need PTX 8.0, above the
  // minimum of sm_90 (7.8), which modules given back the portable chip get.
  if (options.bulkCopies && target.features.empty() &&
      StringRef(target.chip).starts_with("sm_90"))
    target.features = "+ptx80";
  target.cmdOptions = options.ptxasOptions;
  pm.addPass(createGpuNVVMAttachTarget(target));
  // nvgpu.ldmatrix of the chunked kernels first: it reads memrefs the GPU
  // lowering then converts.
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertNVGPUToNVVMPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(nvvm));
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  // sm_90a only where wgmma needs it (when the pipeline chose it); PTX 8.0
  // where bulk copies do; intrinsic calls as LLVM names and types them.
  LinAttnGPUPortableTargetPassOptions portable;
  portable.portableChips = archSpecific;
  pm.addPass(createLinAttnGPUPortableTargetPass(portable));

  // Host -> LLVM, GPU ops -> mgpu* calls.
  addHostToLLVMStage(pm);
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());

  // Register bounds where ptxas says they buy blocks: the kernels as
  // gpu-module-to-binary compiles them (their NVVM ops in inline PTX), the
  // launches still gpu.launch_func with each kernel's block size and
  // dynamic shared memory.
  if (options.fitRegisters) {
    LinAttnGPUFitRegistersPassOptions fit;
    fit.cudaPath = options.cudaPath;
    pm.addPass(createLinAttnGPUFitRegistersPass(fit));
  }

  // Kernels -> embedded binary, where LLVM cannot compile them an error
  // rather than an abort.
  LinAttnGPUModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.cudaPath;
  binary.compilationTarget = options.format;
  pm.addPass(createLinAttnGPUModuleToBinaryPass(binary));
  pm.addPass(createLinAttnCheckLoweredPass());
}

LogicalResult mlir::linattn::verifyLinAttnLowerToNVVMOptions(
    const LinAttnLowerToNVVMOptions &options,
    function_ref<LogicalResult(const Twine &)> emitError) {
  // The kernels' options (the chip among them) as the conversion checks
  // them, here before anything runs.
  if (std::optional<std::string> invalid =
          checkConvertLinAttnToGPUPassOptions(kernelOptions(options)))
    return emitError("linattn-lower-to-nvvm: " + *invalid);
  // gpu-module-to-binary reports another format without failing, then
  // uses an unset target.
  if (!llvm::is_contained({"bin", "fatbin", "isa"}, options.format.getValue()))
    return emitError("linattn-lower-to-nvvm: format '" + options.format +
                     "' is not bin, fatbin or isa");
  return success();
}

void mlir::linattn::registerLinAttnNVVMPipeline() {
  registerPassPipeline(
      "linattn-lower-to-nvvm",
      "Lower linattn on tensors to host code in the LLVM dialect that "
      "launches NVIDIA GPU kernels embedded as a binary",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> emitError) {
        LinAttnLowerToNVVMOptions options;
        if (failed(options.parseFromString(text)) ||
            failed(verifyLinAttnLowerToNVVMOptions(options, emitError)))
          return failure();
        buildLinAttnLowerToNVVMPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> printOptions) {
        printOptions(LinAttnLowerToNVVMOptions());
      });
}
