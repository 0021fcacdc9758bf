//===- EmbedKernelIR.cpp - kernels as MLIR text for the GPU emulator ------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The emulation mode of linattn-lower-to-nvvm: instead of compiling the
// kernels to PTX and a cubin, every gpu.module becomes a gpu.binary whose
// object is the module's MLIR text. The host side does not notice: it loads
// the "binary" with mgpuModuleLoad, and liblinattn_gpu_emulator.so parses
// and interprets it.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilders.h"
#include "linattn/Conversion/LinAttnToGPU/LinAttnToGPU.h"
#include "linattn/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNGPUEMBEDKERNELIRPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

namespace {
struct LinAttnGPUEmbedKernelIRPass
    : public linattn::impl::LinAttnGPUEmbedKernelIRPassBase<
          LinAttnGPUEmbedKernelIRPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    std::optional<int64_t> limit = maxSharedBytesPerBlock(chip);
    if (!limit) {
      module.emitError("linattn-gpu-embed-kernel-ir: chip '")
          << chip << "' is not sm_ followed by a number";
      return signalPassFailure();
    }
    SmallVector<gpu::GPUModuleOp> kernels(module.getOps<gpu::GPUModuleOp>());
    // The kernels' shared memory as the compiled path checks it
    // (linattn-gpu-dynamic-shared-memory): what the chip cannot launch is an
    // error here too, not at the emulator's launch, whose limit is its own.
    bool fits = true;
    for (gpu::GPUModuleOp kernelModule : kernels)
      for (auto func : kernelModule.getOps<gpu::GPUFuncOp>()) {
        FailureOr<SmallVector<gpukernels::WorkgroupBufferLayout>> layout =
            gpukernels::workgroupBufferLayouts(func);
        fits &= succeeded(layout) &&
                succeeded(gpukernels::checkSharedMemoryFits(
                    func, gpukernels::layOutWorkgroupBuffers(*layout), chip,
                    *limit));
      }
    if (!fits)
      return signalPassFailure();
    for (gpu::GPUModuleOp kernelModule : kernels) {
      // Printed inside a module of its own, so that the text is a complete
      // MLIR file (location aliases included) the emulator parses as is.
      OwningOpRef<ModuleOp> holder = ModuleOp::create(kernelModule.getLoc());
      holder->getBody()->push_back(kernelModule->clone());
      std::string text;
      {
        llvm::raw_string_ostream os(text);
        OpPrintingFlags flags;
        flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
        holder->print(os, flags);
      }
      auto target = NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/0,
                                              "nvptx64-nvidia-cuda", chip);
      auto object =
          gpu::ObjectAttr::get(ctx, target, gpu::CompilationTarget::Binary,
                               StringAttr::get(ctx, text),
                               /*properties=*/nullptr,
                               /*kernels=*/nullptr);
      OpBuilder b(kernelModule);
      gpu::BinaryOp::create(b, kernelModule.getLoc(), kernelModule.getName(),
                            /*offloadingHandler=*/Attribute(),
                            ArrayRef<Attribute>{object});
      kernelModule.erase();
    }
  }
};
} // namespace
