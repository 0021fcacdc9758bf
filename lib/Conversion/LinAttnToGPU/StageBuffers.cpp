//===- StageBuffers.cpp - device buffers around GPU kernel launches -------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// After bufferization, turns the launch stubs convert-linattn-to-gpu leaves on
// the host into device buffers, copies and `gpu.launch_func`.
//
//===----------------------------------------------------------------------===//

#include "linattn/Conversion/LinAttnToGPU/LinAttnToGPU.h"
#include "linattn/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNGPUSTAGEBUFFERSPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

LogicalResult mlir::linattn::stageLinAttnGPUBuffers(ModuleOp module) {
  SmallVector<func::CallOp> calls;
  module.walk([&](func::CallOp call) {
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCalleeAttr());
    if (callee && callee->hasAttr(kKernelAttrName))
      calls.push_back(call);
  });
  IRRewriter rewriter(module.getContext());
  for (func::CallOp call : calls) {
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCalleeAttr());
    auto kernelRef = callee->getAttrOfType<SymbolRefAttr>(kKernelAttrName);
    auto outputs = callee->getAttrOfType<DenseI64ArrayAttr>(kOutputsAttrName);
    if (!kernelRef || !outputs || call.getNumOperands() < 6)
      return call.emitError("malformed GPU launch stub @") << callee.getName();
    Location loc = call.getLoc();
    rewriter.setInsertionPoint(call);
    ValueRange operands = call.getOperands();
    gpu::KernelDim3 grid{operands[0], operands[1], operands[2]};
    gpu::KernelDim3 block{operands[3], operands[4], operands[5]};
    SmallVector<Value> args, device;
    SmallVector<std::pair<Value, Value>> copyBack;
    for (auto [i, arg] : llvm::enumerate(operands.drop_front(6))) {
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type) {
        args.push_back(arg);
        continue;
      }
      if (!type.getLayout().isIdentity() || type.getRank() != 1)
        return call.emitError("GPU launch stub operand #")
               << i << " is not a flat buffer: " << type;
      SmallVector<Value> sizes;
      if (type.isDynamicDim(0))
        sizes.push_back(memref::DimOp::create(rewriter, loc, arg, 0));
      Value buffer =
          gpu::AllocOp::create(rewriter, loc, type, /*asyncToken=*/Type(),
                               ValueRange{}, sizes, ValueRange{})
              .getMemref();
      bool isOutput =
          llvm::is_contained(outputs.asArrayRef(), static_cast<int64_t>(i));
      if (isOutput)
        copyBack.push_back({arg, buffer});
      else
        gpu::MemcpyOp::create(rewriter, loc, Type(), ValueRange{}, buffer, arg);
      device.push_back(buffer);
      args.push_back(buffer);
    }
    gpu::LaunchFuncOp::create(rewriter, loc, kernelRef, grid, block,
                              /*dynamicSharedMemorySize=*/Value(), args,
                              /*asyncObject=*/Value());
    for (auto [host, buffer] : copyBack)
      gpu::MemcpyOp::create(rewriter, loc, Type(), ValueRange{}, host, buffer);
    for (Value buffer : device)
      gpu::DeallocOp::create(rewriter, loc, Type(), ValueRange{}, buffer);
    rewriter.eraseOp(call);
  }
  SmallVector<func::FuncOp> stubs;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(kKernelAttrName))
      stubs.push_back(func);
  for (func::FuncOp stub : stubs) {
    if (!SymbolTable::symbolKnownUseEmpty(stub, module))
      return stub.emitError("GPU launch stub still in use");
    rewriter.eraseOp(stub);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct LinAttnGPUStageBuffersPass
    : public linattn::impl::LinAttnGPUStageBuffersPassBase<
          LinAttnGPUStageBuffersPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(stageLinAttnGPUBuffers(getOperation())))
      signalPassFailure();
  }
};
} // namespace
