//===- ModuleToBinary.cpp - gpu-module-to-binary without aborts -----------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Upstream's gpu-module-to-binary, run with LLVM's fatal errors caught: what
// the NVPTX backend cannot compile fails the pass with the backend's reason
// on the module it was compiling, instead of aborting the process.
//
//===----------------------------------------------------------------------===//

#include "LLVMFatalErrors.h"

#include "linattn/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNGPUMODULETOBINARYPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

namespace {
struct LinAttnGPUModuleToBinaryPass
    : public linattn::impl::LinAttnGPUModuleToBinaryPassBase<
          LinAttnGPUModuleToBinaryPass> {
  using Base::Base;

  void runOnOperation() override {
    GpuModuleToBinaryPassOptions options;
    options.toolkitPath = toolkitPath;
    options.cmdOptions = cmdOptions;
    options.compilationTarget = compilationTarget;
    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(createGpuModuleToBinaryPass(options));
    LogicalResult result = success();
    std::optional<std::string> fatal =
        catchLLVMFatalErrors([&] { result = runPipeline(pm, getOperation()); });
    if (fatal) {
      // The modules are compiled in order, each replaced by its binary: the
      // first one left is the one that failed.
      auto modules = getOperation().getOps<gpu::GPUModuleOp>();
      InFlightDiagnostic diag = modules.empty()
                                    ? getOperation().emitError()
                                    : (*modules.begin()).emitError();
      diag << "LLVM could not compile the GPU module: " << *fatal;
      return signalPassFailure();
    }
    if (failed(result))
      signalPassFailure();
  }
};
} // namespace
