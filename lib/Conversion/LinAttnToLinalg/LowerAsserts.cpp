//===- LowerAsserts.cpp - cf.assert to a message on stderr ----------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "linattn/Conversion/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNLOWERASSERTSPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

namespace {

struct LinAttnLowerAssertsPass
    : linattn::impl::LinAttnLowerAssertsPassBase<LinAttnLowerAssertsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<cf::AssertOp> asserts;
    module.walk([&](cf::AssertOp op) {
      if (op->getParentWithTrait<OpTrait::SymbolTable>() == module)
        asserts.push_back(op);
    });
    if (asserts.empty())
      return;

    MLIRContext *ctx = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
    auto write = declare(
        "write", LLVM::LLVMFunctionType::get(i64, {i32, ptr, i64}, false));
    auto abort = declare("abort", LLVM::LLVMFunctionType::get(
                                      LLVM::LLVMVoidType::get(ctx), {}, false));
    if (!write || !abort)
      return signalPassFailure();

    SymbolTable symbols(module);
    OpBuilder b(ctx);
    for (cf::AssertOp op : asserts) {
      Location loc = op.getLoc();
      // The message, newline-terminated, in a private constant.
      std::string text = op.getMsg().str() + "\n";
      b.setInsertionPointToStart(module.getBody());
      auto arrayType =
          LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), text.size());
      auto global = LLVM::GlobalOp::create(
          b, loc, arrayType, /*isConstant=*/true, LLVM::Linkage::Private,
          "linattn_assert_message", b.getStringAttr(text));
      symbols.insert(global);

      // before: cond_br %ok, ^continue, ^fail
      Block *before = op->getBlock();
      Block *after = before->splitBlock(op->getIterator());
      Block *fail = new Block();
      fail->insertBefore(after);
      b.setInsertionPointToEnd(before);
      cf::CondBranchOp::create(b, loc, op.getArg(), after, fail);
      b.setInsertionPointToEnd(fail);
      Value message = LLVM::AddressOfOp::create(b, loc, global);
      Value stderrFd = LLVM::ConstantOp::create(b, loc, i32, 2);
      Value length = LLVM::ConstantOp::create(
          b, loc, i64, static_cast<int64_t>(text.size()));
      LLVM::CallOp::create(b, loc, write,
                           ValueRange{stderrFd, message, length});
      LLVM::CallOp::create(b, loc, abort, ValueRange{});
      LLVM::UnreachableOp::create(b, loc);
      op.erase();
    }
  }

  /// The module's declaration of the C function `name`, made when missing;
  /// null (after an error) when the module has `name` of another type.
  LLVM::LLVMFuncOp declare(StringRef name, LLVM::LLVMFunctionType type) {
    ModuleOp module = getOperation();
    Operation *existing = SymbolTable::lookupSymbolIn(module, name);
    if (!existing) {
      OpBuilder b(module.getBodyRegion());
      return LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
    }
    auto function = dyn_cast<LLVM::LLVMFuncOp>(existing);
    if (!function || function.getFunctionType() != type) {
      existing->emitError() << "'" << name << "' is not the C function " << type
                            << " that the lowered cf.assert calls";
      return {};
    }
    return function;
  }
};

} // namespace
