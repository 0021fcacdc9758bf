//===- SetLLVMTarget.cpp - target CPU and features on llvm.func ops -------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "linattn/Conversion/LinAttnToCPU/TargetCpu.h"
#include "linattn/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNSETLLVMTARGETPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

namespace {
struct LinAttnSetLLVMTargetPass
    : linattn::impl::LinAttnSetLLVMTargetPassBase<LinAttnSetLLVMTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    if (std::optional<std::string> unknown = unknownTargetCpu(cpu)) {
      emitError(getOperation()->getLoc()) << *unknown;
      return signalPassFailure();
    }
    StringAttr cpuAttr = cpu.empty() ? StringAttr() : StringAttr::get(ctx, cpu);
    LLVM::TargetFeaturesAttr featuresAttr;
    if (!features.empty()) {
      SmallVector<StringRef> parts;
      StringRef(features).split(parts, ',', /*MaxSplit=*/-1,
                                /*KeepEmpty=*/false);
      bool wellFormed = !parts.empty();
      for (StringRef part : parts)
        wellFormed &=
            part.trim().starts_with("+") || part.trim().starts_with("-");
      if (wellFormed)
        featuresAttr = LLVM::TargetFeaturesAttr::get(ctx, features);
      if (!featuresAttr) {
        emitError(getOperation()->getLoc())
            << "malformed target features '" << features
            << "': expected a comma-separated list of +feature or -feature";
        return signalPassFailure();
      }
    }
    getOperation()->walk([&](LLVM::LLVMFuncOp func) {
      if (cpuAttr)
        func.setTargetCpuAttr(cpuAttr);
      if (featuresAttr)
        func.setTargetFeaturesAttr(featuresAttr);
    });
  }
};
} // namespace
