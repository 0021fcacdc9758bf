//===- DynamicSharedMemory.cpp - workgroup buffers above 48 KiB -----------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// CUDA gives a kernel at most 48 KiB of static shared memory; beyond that it
// must use dynamic shared memory, sized at launch. Kernels are generated
// with workgroup attributions (what the GPU emulator runs); this pass moves
// those of kernels above 48 KiB into views of gpu.dynamic_shared_memory and
// sizes their launches.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilders.h"
#include "linattn/Conversion/LinAttnToGPU/LinAttnToGPU.h"
#include "linattn/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_LINATTNGPUDYNAMICSHAREDMEMORYPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

/// Static shared memory CUDA allows per kernel.
static constexpr int64_t kStaticSharedBytes = 48 * 1024;

FailureOr<SmallVector<gpukernels::WorkgroupBufferLayout>>
gpukernels::workgroupBufferLayouts(gpu::GPUFuncOp func) {
  auto space = gpu::AddressSpaceAttr::get(func.getContext(),
                                          gpu::AddressSpace::Workgroup);
  SmallVector<WorkgroupBufferLayout> layout;
  for (auto [i, buffer] : llvm::enumerate(func.getWorkgroupAttributions())) {
    auto type = dyn_cast<MemRefType>(buffer.getType());
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity() ||
        !type.getElementType().isIntOrIndexOrFloat() ||
        type.getElementType().isIndex() || type.getMemorySpace() != space) {
      func.emitError("workgroup buffer #")
          << i << " of " << func.getName()
          << " is not a static memref of integers or floats in "
             "#gpu.address_space<workgroup>";
      return failure();
    }
    int64_t elementBytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
    int64_t align = elementBytes;
    if (auto attr =
            dyn_cast_or_null<IntegerAttr>(func.getWorkgroupAttributionAttr(
                i, LLVM::LLVMDialect::getAlignAttrName())))
      align = std::max<int64_t>(align, attr.getInt());
    layout.push_back({type.getNumElements() * elementBytes, align});
  }
  return layout;
}

LogicalResult gpukernels::checkSharedMemoryFits(gpu::GPUFuncOp func,
                                                int64_t bytes, StringRef chip,
                                                int64_t limitBytes) {
  if (bytes <= limitBytes)
    return success();
  return func.emitError("kernel ")
         << func.getName() << " needs " << bytes << " bytes of shared memory; "
         << chip << " allows at most " << limitBytes << " per block";
}

namespace {
struct LinAttnGPUDynamicSharedMemoryPass
    : public linattn::impl::LinAttnGPUDynamicSharedMemoryPassBase<
          LinAttnGPUDynamicSharedMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<int64_t> limit = maxSharedBytesPerBlock(chip);
    if (!limit) {
      module.emitError("linattn-gpu-dynamic-shared-memory: chip '")
          << chip << "' is not sm_ followed by a number";
      return signalPassFailure();
    }
    limitBytes = *limit;
    // Kernels moved, by symbol, and their shared memory in bytes.
    llvm::DenseMap<SymbolRefAttr, int64_t> moved;
    for (auto kernels : module.getOps<gpu::GPUModuleOp>())
      for (auto func : kernels.getOps<gpu::GPUFuncOp>()) {
        std::optional<int64_t> bytes = convert(func, kernels);
        if (!bytes)
          return signalPassFailure();
        if (*bytes > 0)
          moved[SymbolRefAttr::get(
              kernels.getNameAttr(),
              {FlatSymbolRefAttr::get(func.getNameAttr())})] = *bytes;
      }
    if (moved.empty())
      return;
    WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = moved.find(launch.getKernel());
      if (it == moved.end())
        return WalkResult::advance();
      if (launch.getDynamicSharedMemorySize()) {
        launch.emitError("a launch of ")
            << launch.getKernel()
            << ", whose workgroup buffers move to dynamic shared memory, "
               "already has a dynamic shared memory size";
        return WalkResult::interrupt();
      }
      OpBuilder b(launch);
      Value size = arith::ConstantIntOp::create(b, launch.getLoc(), it->second,
                                                /*width=*/32);
      launch.getDynamicSharedMemorySizeMutable().assign(size);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  /// Moves the workgroup attributions of `func` to dynamic shared memory if
  /// they take more than 48 KiB: returns their bytes, 0 when left alone, or
  /// nullopt after an error.
  std::optional<int64_t> convert(gpu::GPUFuncOp func,
                                 gpu::GPUModuleOp kernels) {
    ArrayRef<BlockArgument> buffers = func.getWorkgroupAttributions();
    FailureOr<SmallVector<gpukernels::WorkgroupBufferLayout>> layout =
        gpukernels::workgroupBufferLayouts(func);
    if (failed(layout))
      return std::nullopt;
    SmallVector<int64_t> offsets;
    int64_t end = gpukernels::layOutWorkgroupBuffers(*layout, &offsets);
    if (end <= kStaticSharedBytes)
      return 0;
    if (failed(gpukernels::checkSharedMemoryFits(func, end, chip, limitBytes)))
      return std::nullopt;
    auto space = gpu::AddressSpaceAttr::get(func.getContext(),
                                            gpu::AddressSpace::Workgroup);
    Block &entry = func.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    Location loc = func.getLoc();
    auto bytesType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                     MemRefLayoutAttrInterface{}, space);
    memref::GlobalOp global = dynamicSharedGlobal(kernels);
    // The offsets hold their alignments only from an address that holds
    // the largest (wgmma's swizzled tiles: 1024 bytes).
    int64_t maxAlign = 16;
    for (const gpukernels::WorkgroupBufferLayout &buffer : *layout)
      maxAlign = std::max(maxAlign, buffer.align);
    if (global.getAlignment().value_or(1) < static_cast<uint64_t>(maxAlign))
      global.setAlignmentAttr(b.getI64IntegerAttr(maxAlign));
    Value declared = memref::GetGlobalOp::create(b, loc, global.getType(),
                                                 global.getSymName());
    Value base = memref::CastOp::create(b, loc, bytesType, declared);
    for (auto [buffer, offset] : llvm::zip_equal(buffers, offsets)) {
      BlockArgument attribution = buffer;
      Value at = arith::ConstantIndexOp::create(b, loc, offset);
      auto type = cast<MemRefType>(buffer.getType());
      Value view = memref::ViewOp::create(b, loc, type, base, at, ValueRange{});
      attribution.replaceAllUsesWith(view);
    }
    unsigned first = func.getFirstWorkgroupAttributionIndex();
    entry.eraseArguments(first, buffers.size());
    func->setAttr(gpu::GPUFuncOp::getNumWorkgroupAttributionsAttrName(),
                  b.getI64IntegerAttr(0));
    func.removeWorkgroupAttribAttrsAttr();
    return end;
  }

  /// The module's declaration of the dynamic shared memory: an external
  /// memref.global of no elements in workgroup memory, 16-byte aligned (or
  /// as its kernels' buffers need), which NVPTX emits as
  /// `.extern .shared .align 16 .b8 name[]`.
  /// (gpu.dynamic_shared_memory becomes an internal zero-length global,
  /// which ptxas allocates as one byte of static shared memory that the
  /// dynamic part then follows.)
  memref::GlobalOp dynamicSharedGlobal(gpu::GPUModuleOp kernels) {
    auto it = globals.find(kernels);
    if (it != globals.end())
      return it->second;
    MLIRContext *ctx = kernels.getContext();
    auto type = MemRefType::get(
        {0}, IntegerType::get(ctx, 8), MemRefLayoutAttrInterface{},
        gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
    OpBuilder b = OpBuilder::atBlockBegin(kernels.getBody());
    auto global = memref::GlobalOp::create(
        b, kernels.getLoc(), "linattn_dynamic_shared",
        /*sym_visibility=*/StringAttr(), type, /*initial_value=*/Attribute(),
        /*constant=*/false, b.getI64IntegerAttr(16));
    SymbolTable(kernels).insert(global);
    globals[kernels] = global;
    return global;
  }

  /// What the chip allows per block, in bytes.
  int64_t limitBytes = 0;
  llvm::DenseMap<Operation *, memref::GlobalOp> globals;
};
} // namespace
