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
    SmallVector<gpu::GPUModuleOp> kernels(module.getOps<gpu::GPUModuleOp>());
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
