//===- StageBuffers.cpp - device buffers around GPU kernel launches -------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// After bufferization, turns the launch stubs convert-linattn-to-gpu leaves on
// the host into `gpu.launch_func`: either with device buffers and copies
// around each launch (host buffers in and out, the CPU pipeline's calling
// convention), or, with device-buffers, on the caller's device buffers and
// stream (results as out-params, no copies, nothing that synchronizes: a call
// can be captured in a CUDA graph).
//
//===----------------------------------------------------------------------===//

#include "linattn/Conversion/LinAttnToGPU/LinAttnToGPU.h"
#include "linattn/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNGPUSTAGEBUFFERSPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

/// Erases the launch stubs once no call is left.
static LogicalResult eraseLaunchStubs(ModuleOp module, RewriterBase &rewriter) {
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

/// The kernel, grid and block of a call to a launch stub.
struct StubLaunch {
  SymbolRefAttr kernel;
  gpu::KernelDim3 grid, block;
  ValueRange args;
};

static FailureOr<StubLaunch> getStubLaunch(func::CallOp call,
                                           func::FuncOp callee) {
  auto kernelRef = callee->getAttrOfType<SymbolRefAttr>(kKernelAttrName);
  if (!kernelRef || call.getNumOperands() < 6)
    return call.emitError("malformed GPU launch stub @") << callee.getName();
  ValueRange operands = call.getOperands();
  return StubLaunch{kernelRef,
                    {operands[0], operands[1], operands[2]},
                    {operands[3], operands[4], operands[5]},
                    operands.drop_front(6)};
}

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
    auto updated = callee->getAttrOfType<DenseI64ArrayAttr>(kUpdatedAttrName);
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
      bool isUpdated =
          updated &&
          llvm::is_contained(updated.asArrayRef(), static_cast<int64_t>(i));
      if (isOutput)
        copyBack.push_back({arg, buffer});
      if (!isOutput || isUpdated)
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
  return eraseLaunchStubs(module, rewriter);
}

//===----------------------------------------------------------------------===//
// Device buffers: the caller's device memory and stream
//===----------------------------------------------------------------------===//

/// The argument attribute buffer-results-to-out-params puts on out-params.
static constexpr llvm::StringLiteral kResultArgAttrName = "bufferize.result";

namespace {
/// Rewrites the public functions of a module to the device-buffer calling
/// convention (see stageLinAttnGPUDeviceBuffers).
class DeviceBufferStager {
public:
  DeviceBufferStager(ModuleOp module)
      : module(module), symbols(module), rewriter(module.getContext()) {}

  LogicalResult run();

private:
  func::FuncOp stubOf(func::CallOp call) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    return callee && callee->hasAttr(kKernelAttrName) ? callee : nullptr;
  }
  bool usedOnlyByLaunches(Value buffer, Operation *except, bool throughIfs);
  /// Whether `value` is an out-param of a public function (an argument
  /// buffer-results-to-out-params added).
  bool isOutParam(Value value) {
    auto arg = dyn_cast_if_present<BlockArgument>(value);
    auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                    : func::FuncOp();
    return func && arg.getOwner() == &func.front() &&
           func.getArgAttr(arg.getArgNumber(), kResultArgAttrName);
  }
  void forwardOutParams(func::FuncOp func);
  Value launchOnStream(Block &block, Value token);
  LogicalResult launchOnStream(func::FuncOp func);
  LogicalResult checkNoHostCompute(func::FuncOp func);

  ModuleOp module;
  SymbolTable symbols;
  IRRewriter rewriter;
  /// Allocations that branches of an `scf.if` yield (the run-time choice
  /// between kernels) to kernels after it: device allocations that the
  /// block around the `scf.if` frees, not their own.
  llvm::SmallPtrSet<Operation *, 8> yieldedAllocs;
};
} // namespace

/// Whether every use of `buffer`, through casts and reshapes (and, with
/// `throughIfs`, the results of the `scf.if`s that yield it), is an operand of
/// a kernel launch (or `except`, or a size query): a buffer the host never
/// touches.
bool DeviceBufferStager::usedOnlyByLaunches(Value buffer, Operation *except,
                                            bool throughIfs) {
  SmallVector<Value> worklist{buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user == except || isa<memref::DimOp>(user))
        continue;
      // Views of it (the base buffer is the first result of
      // extract_strided_metadata; the others are sizes).
      if (isa<memref::CastOp, memref::CollapseShapeOp, memref::ExpandShapeOp,
              memref::ReinterpretCastOp, memref::SubViewOp,
              memref::ExtractStridedMetadataOp>(user)) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      if (throughIfs && isa<scf::YieldOp>(user) &&
          isa<scf::IfOp>(user->getParentOp())) {
        worklist.push_back(
            user->getParentOp()->getResult(use.getOperandNumber()));
        continue;
      }
      auto call = dyn_cast<func::CallOp>(user);
      if (!call || !stubOf(call))
        return false;
    }
  }
  return true;
}

/// The allocations `value` may be: through casts and the branches of
/// `scf.if`s (the run-time choice between kernels). Fails on anything else.
static LogicalResult collectAllocs(Value value,
                                   SmallVectorImpl<memref::AllocOp> &allocs) {
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  if (auto alloc = value.getDefiningOp<memref::AllocOp>()) {
    allocs.push_back(alloc);
    return success();
  }
  auto result = dyn_cast<OpResult>(value);
  auto branch = result ? dyn_cast<scf::IfOp>(result.getOwner()) : nullptr;
  if (!branch || branch.getElseRegion().empty())
    return failure();
  for (Region *region : {&branch.getThenRegion(), &branch.getElseRegion()}) {
    auto yield = cast<scf::YieldOp>(region->front().getTerminator());
    if (failed(
            collectAllocs(yield.getOperand(result.getResultNumber()), allocs)))
      return failure();
  }
  return success();
}

/// buffer-results-to-out-params copied each returned buffer into its
/// out-param. When that buffer is only written (and read) by kernels, the
/// kernels get the out-param itself: no copy, no buffer (in every branch,
/// when the kernels are chosen at run time).
void DeviceBufferStager::forwardOutParams(func::FuncOp func) {
  SmallVector<memref::CopyOp> copies;
  func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies) {
    auto out = dyn_cast<BlockArgument>(copy.getTarget());
    if (!isOutParam(out))
      continue;
    SmallVector<memref::AllocOp> allocs;
    if (failed(collectAllocs(copy.getSource(), allocs)) ||
        llvm::any_of(allocs, [&](memref::AllocOp alloc) {
          return !usedOnlyByLaunches(alloc, copy, /*throughIfs=*/true) ||
                 (out.getType() != alloc.getType() &&
                  !memref::CastOp::areCastCompatible(out.getType(),
                                                     alloc.getType()));
        }))
      continue;
    rewriter.eraseOp(copy);
    for (memref::AllocOp alloc : allocs) {
      Value replacement = out;
      if (out.getType() != alloc.getType()) {
        rewriter.setInsertionPoint(alloc);
        replacement = memref::CastOp::create(rewriter, alloc.getLoc(),
                                             alloc.getType(), out);
      }
      rewriter.replaceOp(alloc, replacement);
    }
  }
}

/// Launches the stubs of `block` (and of the blocks nested in it) on the
/// stream `token` stands for, turns its buffers between kernels into
/// stream-ordered allocations freed at the end of the block; returns the
/// token of the block's last operation. (A nested block continues from the
/// token before its op: all are the same stream, in program order.)
Value DeviceBufferStager::launchOnStream(Block &block, Value token) {
  auto tokenType = gpu::AsyncTokenType::get(module.getContext());
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    ops.push_back(&op);
  SmallVector<Value> temporaries;
  for (Operation *op : ops) {
    // A result that no kernel wrote into its out-param (an argument returned
    // as it is, or passed through unchanged): a copy on the stream, device
    // to device, where both buffers are contiguous.
    if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (isOutParam(copy.getTarget()) && source && target &&
          source.getLayout().isIdentity() && target.getLayout().isIdentity()) {
        rewriter.setInsertionPoint(copy);
        Value from = copy.getSource();
        if (source != target)
          from = memref::CastOp::create(rewriter, copy.getLoc(), target, from);
        token = gpu::MemcpyOp::create(rewriter, copy.getLoc(), tokenType,
                                      ValueRange{token}, copy.getTarget(), from)
                    .getAsyncToken();
        rewriter.eraseOp(copy);
      }
      continue;
    }
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      bool yielded = yieldedAllocs.contains(alloc);
      if (!yielded && !usedOnlyByLaunches(alloc, nullptr, /*throughIfs=*/false))
        continue;
      rewriter.setInsertionPoint(alloc);
      auto deviceAlloc = gpu::AllocOp::create(
          rewriter, alloc.getLoc(), alloc.getType(), tokenType,
          ValueRange{token}, alloc.getDynamicSizes(), ValueRange{});
      token = deviceAlloc.getAsyncToken();
      if (!yielded)
        temporaries.push_back(deviceAlloc.getMemref());
      rewriter.replaceOp(alloc, deviceAlloc.getMemref());
      continue;
    }
    // A buffer the branches of an scf.if allocate for kernels after it (a
    // scan's output, the sequence-parallel variant chosen at run time, read
    // by the next kernel): device memory, freed at the end of this block,
    // unless this block yields it to an scf.if around it (a choice nested in
    // a branch of another), whose result it then is.
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      for (OpResult result : branch->getResults()) {
        SmallVector<memref::AllocOp> allocs;
        if (!isa<MemRefType>(result.getType()) ||
            llvm::is_contained(result.getUsers(), block.getTerminator()) ||
            failed(collectAllocs(result, allocs)) ||
            !usedOnlyByLaunches(result, nullptr, /*throughIfs=*/true) ||
            llvm::any_of(allocs, [&](memref::AllocOp alloc) {
              return !usedOnlyByLaunches(alloc, nullptr, /*throughIfs=*/true);
            }))
          continue;
        for (memref::AllocOp alloc : allocs)
          yieldedAllocs.insert(alloc);
        temporaries.push_back(result);
      }
    }
    auto call = dyn_cast<func::CallOp>(op);
    func::FuncOp stub = call ? stubOf(call) : nullptr;
    if (!stub) {
      for (Region &region : op->getRegions())
        for (Block &nested : region)
          launchOnStream(nested, token);
      continue;
    }
    FailureOr<StubLaunch> launch = getStubLaunch(call, stub);
    if (failed(launch))
      continue; // reported; the stub call is left and fails the check
    rewriter.setInsertionPoint(call);
    token =
        gpu::LaunchFuncOp::create(rewriter, call.getLoc(), launch->kernel,
                                  launch->grid, launch->block,
                                  /*dynamicSharedMemorySize=*/Value(),
                                  launch->args, tokenType, ValueRange{token})
            .getAsyncToken();
    rewriter.eraseOp(call);
  }
  if (Operation *terminator = block.getTerminator())
    rewriter.setInsertionPoint(terminator);
  else
    rewriter.setInsertionPointToEnd(&block);
  for (Value buffer : temporaries)
    token = gpu::DeallocOp::create(rewriter, buffer.getLoc(), tokenType,
                                   ValueRange{token}, buffer)
                .getAsyncToken();
  return token;
}

/// Appends the stream argument; every launch becomes asynchronous on the
/// token chain that starts at it.
LogicalResult DeviceBufferStager::launchOnStream(func::FuncOp func) {
  MLIRContext *context = module.getContext();
  Location loc = func.getLoc();
  auto streamType = LLVM::LLVMPointerType::get(context);
  if (failed(func.insertArgument(func.getNumArguments(), streamType,
                                 DictionaryAttr::get(context), loc)))
    return func.emitError("cannot add the stream argument");
  Block &body = func.front();
  Value stream = body.getArguments().back();

  // gpu-to-llvm lowers an async token to the stream it is ordered on (and
  // takes a launch's stream from its dependency, not from an async object),
  // so the chain starts at the caller's stream.
  rewriter.setInsertionPointToStart(&body);
  Value token = UnrealizedConversionCastOp::create(
                    rewriter, loc, gpu::AsyncTokenType::get(context), stream)
                    .getResult(0);
  launchOnStream(body, token);
  return success();
}

/// Anything left that touches a buffer's elements would run on the host on
/// device memory: the first such op is an error. (Host allocations are only
/// reported through their uses.)
LogicalResult DeviceBufferStager::checkNoHostCompute(func::FuncOp func) {
  auto isBuffer = [](Type type) { return isa<BaseMemRefType>(type); };
  WalkResult result = func.walk([&](Operation *op) {
    if (op == func.getOperation() ||
        isa<gpu::LaunchFuncOp, gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp,
            func::ReturnOp, UnrealizedConversionCastOp, memref::AllocOp,
            memref::CastOp, memref::CollapseShapeOp, memref::ExpandShapeOp,
            memref::ReinterpretCastOp, memref::SubViewOp, memref::DimOp,
            memref::ExtractStridedMetadataOp, scf::IfOp, scf::YieldOp>(op))
      return WalkResult::advance();
    if (auto call = dyn_cast<func::CallOp>(op)) {
      // A stub call left is a malformed stub, already reported.
      if (!stubOf(call))
        op->emitError("device-buffers: @")
            << func.getName() << " calls @" << call.getCallee()
            << ", which would run on the host";
      return WalkResult::interrupt();
    }
    if (llvm::none_of(op->getOperandTypes(), isBuffer) &&
        llvm::none_of(op->getResultTypes(), isBuffer))
      return WalkResult::advance();
    if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      if (isOutParam(copy.getTarget())) {
        copy.emitError("device-buffers: a result of @")
            << func.getName()
            << " is not the output of a GPU kernel (it would be copied into "
               "its out-param on the host)";
        return WalkResult::interrupt();
      }
    }
    InFlightDiagnostic error = op->emitError("device-buffers: '")
                               << op->getName()
                               << "' would run on the host on device memory "
                                  "(every computation must be a GPU kernel: "
                                  "no host fallback, copies or constants)";
    if (auto reason = op->getAttrOfType<StringAttr>(kNoKernelAttrName))
      error << ": no kernel runs it because " << reason.getValue();
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

LogicalResult DeviceBufferStager::run() {
  SmallVector<func::FuncOp> entries;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isDeclaration() ||
        func->hasAttr(kKernelAttrName))
      continue;
    for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
      if (!isa<MemRefType>(type))
        return func.emitError("device-buffers: result #")
               << i << " of @" << func.getName()
               << " is not a tensor: results are returned in device buffers";
    entries.push_back(func);
  }

  bufferization::BufferResultsToOutParamsOpts outParams;
  outParams.addResultAttribute = true;
  outParams.modifyPublicFunctions = true;
  outParams.filterFn = [&](func::FuncOp *func) {
    return llvm::is_contained(entries, *func);
  };
  if (failed(bufferization::promoteBufferResultsToOutParams(module, outParams)))
    return failure();

  bool bad = false;
  for (func::FuncOp func : entries) {
    forwardOutParams(func);
    if (failed(launchOnStream(func)) || failed(checkNoHostCompute(func))) {
      bad = true;
      continue;
    }
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      func.removeArgAttr(i, kResultArgAttrName);
  }
  if (bad)
    return failure();
  module->setAttr(kDeviceBuffersAttrName, UnitAttr::get(module.getContext()));
  return eraseLaunchStubs(module, rewriter);
}

LogicalResult mlir::linattn::stageLinAttnGPUDeviceBuffers(ModuleOp module) {
  return DeviceBufferStager(module).run();
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
    if (failed(deviceBuffers ? stageLinAttnGPUDeviceBuffers(getOperation())
                             : stageLinAttnGPUBuffers(getOperation())))
      signalPassFailure();
  }
};
} // namespace
