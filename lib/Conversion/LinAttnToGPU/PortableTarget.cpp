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
// architecture-specific one, and checks what the NVPTX backend would abort
// on rather than report: modules with bulk copies below the PTX version they
// need, and calls of LLVM intrinsics whose names or types do not match.
//
//===----------------------------------------------------------------------===//

#include "linattn/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/TypeToLLVM.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/LLVMContext.h"

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

/// Whether `op` needs PTX 8.0: the bulk copies and mbarrier transaction
/// counts of the chunked kernels' `bulk-copies`.
static bool needsPtx80(Operation *op) {
  return isa<NVVM::CpAsyncBulkGlobalToSharedClusterOp,
             NVVM::MBarrierArriveExpectTxOp, NVVM::MBarrierTryWaitParityOp>(op);
}

/// The PTX ISA version (times ten) a target emits: the `+ptxNN` of its
/// features, else the minimum of its chip (7.8 for sm_90, 8.0 for sm_90a;
/// what NVPTX takes for other chips is at least 8.0 from sm_90 on, and
/// chips before sm_90 have no bulk copies either way).
static unsigned ptxVersion(NVVM::NVVMTargetAttr target) {
  StringRef features = target.getFeatures();
  size_t at = features.find("+ptx");
  unsigned version = 0;
  if (at != StringRef::npos && !features.drop_front(at + 4)
                                    .take_while(llvm::isDigit)
                                    .getAsInteger(10, version))
    return version;
  return target.getChip() == "sm_90" ? 78 : 80;
}

/// Checks that `call` names an LLVM intrinsic, that its operand and result
/// types are the intrinsic's, and, for an overloaded one, that its name's
/// type suffix is the one those types give: LLVM takes the intrinsic from
/// the name, and a call it cannot select (`llvm.nvvm.ex2.approx.ftz.f32` on
/// an f64) aborts the NVPTX backend instead of failing the pass.
static LogicalResult checkIntrinsicCall(LLVM::CallIntrinsicOp call,
                                        llvm::LLVMContext &context) {
  StringRef name = call.getIntrin();
  llvm::Intrinsic::ID id = llvm::Intrinsic::lookupIntrinsicID(name);
  if (id == llvm::Intrinsic::not_intrinsic)
    return call.emitError("'") << name << "' is not an LLVM intrinsic";
  LLVM::TypeToLLVMIRTranslator translate(context);
  SmallVector<llvm::Type *> operands;
  for (Type type : call.getArgs().getTypes())
    operands.push_back(translate.translateType(type));
  llvm::Type *result = call.getNumResults()
                           ? translate.translateType(call.getResultTypes()[0])
                           : llvm::Type::getVoidTy(context);
  auto *type = llvm::FunctionType::get(result, operands, /*isVarArg=*/false);
  SmallVector<llvm::Intrinsic::IITDescriptor> table;
  llvm::Intrinsic::getIntrinsicInfoTableEntries(id, table);
  ArrayRef<llvm::Intrinsic::IITDescriptor> rest = table;
  SmallVector<llvm::Type *> overloads;
  if (llvm::Intrinsic::matchIntrinsicSignature(type, rest, overloads) !=
          llvm::Intrinsic::MatchIntrinsicTypes_Match ||
      llvm::Intrinsic::matchIntrinsicVarArg(false, rest))
    return call.emitError("the operand and result types of '")
           << name << "' are not the intrinsic's";
  if (llvm::Intrinsic::isOverloaded(id)) {
    std::string expected =
        llvm::Intrinsic::getNameNoUnnamedTypes(id, overloads);
    if (expected != name)
      return call.emitError("'")
             << name << "' on these types is '" << expected << "'";
  }
  return success();
}

namespace {
struct LinAttnGPUPortableTargetPass
    : public linattn::impl::LinAttnGPUPortableTargetPassBase<
          LinAttnGPUPortableTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    llvm::LLVMContext context;
    WalkResult result = getOperation().walk([&](gpu::GPUModuleOp module) {
      std::optional<ArrayAttr> targets = module.getTargets();
      if (!targets)
        return WalkResult::advance();
      if (module
              .walk([&](LLVM::CallIntrinsicOp call) {
                return failed(checkIntrinsicCall(call, context))
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              })
              .wasInterrupted())
        return WalkResult::interrupt();
      Operation *bulk = nullptr;
      module.walk([&](Operation *op) {
        if (!needsPtx80(op))
          return WalkResult::advance();
        bulk = op;
        return WalkResult::interrupt();
      });
      SmallVector<Attribute> rewritten;
      bool changed = false;
      for (Attribute attr : *targets) {
        auto target = dyn_cast<NVVM::NVVMTargetAttr>(attr);
        if (!target) {
          rewritten.push_back(attr);
          continue;
        }
        unsigned ptx = ptxVersion(target);
        if (bulk && ptx < 80) {
          bulk->emitError("kernels with bulk copies (")
              << bulk->getName() << ") need PTX 8.0 or later; the target "
              << target << " emits PTX " << ptx / 10 << "." << ptx % 10;
          return WalkResult::interrupt();
        }
        std::optional<StringRef> chip =
            portableChips ? portableChip(target.getChip()) : std::nullopt;
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
        // The portable chip's minimum PTX is older (sm_90: 7.8): bulk
        // copies keep the 8.0 the architecture-specific one had.
        StringRef features = target.getFeatures();
        if (bulk && features.empty())
          features = "+ptx80";
        rewritten.push_back(NVVM::NVVMTargetAttr::get(
            &getContext(), target.getO(), target.getTriple(), *chip, features,
            target.getFlags(), target.getLink(), target.getVerifyTarget()));
        changed = true;
      }
      if (changed)
        module.setTargetsAttr(ArrayAttr::get(&getContext(), rewritten));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
