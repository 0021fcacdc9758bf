//===- PortableTarget.cpp - sm_XYa only where a kernel needs it -----------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// PTX for an architecture-specific chip (sm_90a) runs on that architecture
// alone, where PTX for sm_90 can be JIT-compiled by the driver for any later
// GPU. The pipeline targets sm_90a when its kernels may use wgmma; this pass
// gives back the portable chip to every module none of whose ops needs the
// architecture-specific one.
//
//===----------------------------------------------------------------------===//

#include "linattn/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNGPUPORTABLETARGETPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

/// The chip `chip` names without its architecture-specific suffix ("sm_90"
/// for "sm_90a"); nullopt if it is not sm_, a number and "a".
static std::optional<StringRef> portableChip(StringRef chip) {
  StringRef number = chip;
  if (!number.consume_front("sm_") || !number.consume_back("a") ||
      number.empty() || !llvm::all_of(number, llvm::isDigit))
    return std::nullopt;
  return chip.drop_back();
}

/// Whether `op` compiles on `chip`: NVVM ops say which chips have their
/// instruction; nvgpu's warpgroup ops become wgmma, which only sm_90a has.
static bool runsOn(Operation *op, StringRef chip) {
  if (auto needs = dyn_cast<NVVM::RequiresSMInterface>(op))
    return needs.getRequiredMinSMVersion().isCompatibleWith(
        NVVM::NVVMCheckSMVersion::getTargetSMVersionFromStr(chip));
  return !op->getName().getStringRef().starts_with("nvgpu.warpgroup.");
}

namespace {
struct LinAttnGPUPortableTargetPass
    : public linattn::impl::LinAttnGPUPortableTargetPassBase<
          LinAttnGPUPortableTargetPass> {
  void runOnOperation() override {
    getOperation().walk([&](gpu::GPUModuleOp module) {
      std::optional<ArrayAttr> targets = module.getTargets();
      if (!targets)
        return;
      SmallVector<Attribute> rewritten;
      bool changed = false;
      for (Attribute attr : *targets) {
        auto target = dyn_cast<NVVM::NVVMTargetAttr>(attr);
        std::optional<StringRef> chip =
            target ? portableChip(target.getChip()) : std::nullopt;
        bool portable = chip && !module
                                     .walk([&](Operation *op) {
                                       return runsOn(op, *chip)
                                                  ? WalkResult::advance()
                                                  : WalkResult::interrupt();
                                     })
                                     .wasInterrupted();
        if (!portable) {
          rewritten.push_back(attr);
          continue;
        }
        rewritten.push_back(NVVM::NVVMTargetAttr::get(
            &getContext(), target.getO(), target.getTriple(), *chip,
            target.getFeatures(), target.getFlags(), target.getLink(),
            target.getVerifyTarget()));
        changed = true;
      }
      if (changed)
        module.setTargetsAttr(ArrayAttr::get(&getContext(), rewritten));
    });
  }
};
} // namespace
