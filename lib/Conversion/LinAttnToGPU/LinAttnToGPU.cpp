//===- LinAttnToGPU.cpp - linattn to GPU kernels --------------------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Generates one `gpu.func` per linattn op of the linear and scan forms and
// replaces the op by a launch of it. Kernels read and write flattened
// row-major buffers (every leading batch dimension folded into one, b);
// sizes the types leave open are kernel arguments, the feature size F is a
// compile-time constant of each kernel.
//
// - scan (causal, recurrent, fp32 or wider state): one block per batch element
//   and tile of value columns, one thread per value column d holding the
//   column S[:, d] in registers; the features of a block of tokens are staged
//   in shared memory (with the fused feature map applied once), the
//   normalizer z and the denominators are computed there cooperatively.
// - step (decoding): one thread per value column of each batch element, the
//   state streamed from global memory.
// - kv_summary: one thread per state element S[b, f, d], a loop over keys.
// - query_readout: one block per token and tile of value columns, the query
//   features staged in shared memory.
//
//===----------------------------------------------------------------------===//

#include "linattn/Conversion/LinAttnToGPU/LinAttnToGPU.h"
#include "linattn/Conversion/Passes.h"
#include "linattn/IR/LinAttnDialect.h"
#include "linattn/IR/LinAttnOps.h"
#include "linattn/Transforms/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

#include <optional>
#include <string>

namespace mlir::linattn {
#define GEN_PASS_DEF_CONVERTLINATTNTOGPUPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

/// The gpu.module every kernel goes to.
static constexpr StringLiteral kKernelModuleName = "linattn_kernels";

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static RankedTensorType tensorTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

namespace {
/// Where a kernel reads query or key features from: the features themselves,
/// or the input of an elementwise feature map it applies as it loads.
struct FeatureSource {
  Value tensor;
  std::optional<FeatureMapKind> map;
  /// The element type of the features (φ is rounded to it, as the
  /// feature_map op would).
  Type featureType;
};
} // namespace

static FeatureSource featureSourceOf(Value features) {
  Type featureType = tensorTypeOf(features).getElementType();
  auto map = features.getDefiningOp<FeatureMapOp>();
  if (!map || map.getProjection())
    return {features, std::nullopt, featureType};
  switch (map.getKind()) {
  case FeatureMapKind::Elu:
  case FeatureMapKind::Relu:
  case FeatureMapKind::Identity:
    if (tensorTypeOf(map.getInput()).getShape().back() !=
        tensorTypeOf(features).getShape().back())
      return {features, std::nullopt, featureType};
    return {map.getInput(), map.getKind(), featureType};
  default:
    return {features, std::nullopt, featureType};
  }
}

static StringRef mapName(const FeatureSource &source) {
  if (!source.map)
    return "features";
  return stringifyFeatureMapKind(*source.map);
}

//===----------------------------------------------------------------------===//
// Kernel bodies
//===----------------------------------------------------------------------===//

namespace {
/// Builds kernel bodies: index arithmetic, loads with conversions and fused
/// feature maps, loops.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, Type stateType)
      : b(b), loc(loc), stateType(stateType) {}

  Value idx(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value divU(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value remU(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value minU(Value x, Value y) { return arith::MinUIOp::create(b, loc, x, y); }
  Value ult(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value eq(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value fconst(double value) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(stateType, value));
  }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value fdiv(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  /// x * y + acc, contractible: NVPTX emits one fma.rn (math.fma would
  /// become a libdevice call).
  Value fma(Value x, Value y, Value acc) {
    auto contract = arith::FastMathFlagsAttr::get(
        b.getContext(), arith::FastMathFlags::contract);
    Value product = arith::MulFOp::create(b, loc, x, y, contract);
    return arith::AddFOp::create(b, loc, product, acc, contract);
  }
  Value threadId() {
    return gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  }
  Value blockId(gpu::Dimension dim) {
    return gpu::BlockIdOp::create(b, loc, dim);
  }
  void barrier() { gpu::BarrierOp::create(b, loc); }

  /// Loads element `index` of the flat buffer and converts it to the state
  /// type.
  Value load(Value buffer, Value index) {
    Value value = memref::LoadOp::create(b, loc, buffer, ValueRange{index});
    return convertFloat(b, loc, value, stateType);
  }
  /// Loads element `index` of the buffer when `cond` holds (the index may be
  /// out of bounds otherwise), zero when it does not.
  Value loadIf(Value cond, Value buffer, Value index) {
    auto branch = scf::IfOp::create(
        b, loc, cond,
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(b, loc, load(buffer, index));
        },
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(b, loc, fconst(0.0));
        });
    return branch.getResult(0);
  }
  /// Loads a feature: applies the source's feature map, rounds to the
  /// feature type, converts to the state type.
  Value loadFeature(Value buffer, Value index, const FeatureSource &source) {
    Value x = load(buffer, index);
    if (!source.map)
      return x;
    Value y = x;
    switch (*source.map) {
    case FeatureMapKind::Elu: {
      // elu(x) + 1 is x + 1 for x > 0 and exp(x) otherwise.
      Value zero = fconst(0.0);
      Value positive =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
      Value shifted = fadd(x, fconst(1.0));
      Value exp = math::ExpOp::create(b, loc, x);
      y = select(positive, shifted, exp);
      break;
    }
    case FeatureMapKind::Relu:
      y = arith::MaximumFOp::create(b, loc, x, fconst(0.0));
      break;
    default:
      break;
    }
    return convertFloat(b, loc, convertFloat(b, loc, y, source.featureType),
                        stateType);
  }
  /// Stores the state-typed `value` into the buffer, converted to its element
  /// type.
  void store(Value value, Value buffer, Value index) {
    Type elementType = cast<MemRefType>(buffer.getType()).getElementType();
    memref::StoreOp::create(b, loc, convertFloat(b, loc, value, elementType),
                            buffer, ValueRange{index});
  }
  /// `for (i = lb; i < ub; i += step) body(i)` without loop-carried values.
  void forLoop(Value lb, Value ub, Value step, function_ref<void(Value)> body) {
    scf::ForOp::create(b, loc, lb, ub, step, ValueRange{},
                       [&](OpBuilder &, Location, Value i, ValueRange) {
                         body(i);
                         scf::YieldOp::create(b, loc);
                       });
  }
  /// A loop that carries `init` and yields what `body` returns.
  SmallVector<Value>
  forLoop(Value lb, Value ub, Value step, ValueRange init,
          function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    auto loop = scf::ForOp::create(
        b, loc, lb, ub, step, init,
        [&](OpBuilder &, Location, Value i, ValueRange args) {
          scf::YieldOp::create(b, loc, body(i, args));
        });
    return SmallVector<Value>(loop.getResults());
  }
  void ifThen(Value cond, function_ref<void()> body) {
    scf::IfOp::create(b, loc, cond, [&](OpBuilder &, Location) {
      body();
      scf::YieldOp::create(b, loc);
    });
  }

  OpBuilder &b;
  Location loc;
  Type stateType;
};
} // namespace

/// A flat, dynamically sized buffer of `elementType` (what kernels take).
static MemRefType flatBufferType(Type elementType) {
  return MemRefType::get({ShapedType::kDynamic}, elementType);
}

static MemRefType workgroupBufferType(Type elementType, int64_t size) {
  MLIRContext *ctx = elementType.getContext();
  return MemRefType::get(
      {size}, elementType, MemRefLayoutAttrInterface{},
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
}

/// Creates an empty kernel `name` in `kernels` with the given arguments and
/// workgroup buffers; the builder is left at the start of its body.
static gpu::GPUFuncOp createKernel(OpBuilder &b, Location loc,
                                   gpu::GPUModuleOp kernels, StringRef name,
                                   TypeRange args, TypeRange workgroup) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(kernels.getBody());
  auto func =
      gpu::GPUFuncOp::create(b, loc, name, b.getFunctionType(args, TypeRange{}),
                             workgroup, TypeRange{});
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  SymbolTable(kernels).insert(func);
  b.setInsertionPointToEnd(&func.getBody().front());
  gpu::ReturnOp::create(b, loc);
  return func;
}

static void setInsertionPointToKernelBody(OpBuilder &b, gpu::GPUFuncOp func) {
  b.setInsertionPoint(func.getBody().front().getTerminator());
}

//===----------------------------------------------------------------------===//
// Host side: buffers, launch stubs
//===----------------------------------------------------------------------===//

namespace {
/// Emits, in the host function, the buffers of one kernel launch and the
/// call of its launch stub.
class LaunchBuilder {
public:
  LaunchBuilder(RewriterBase &rewriter, Location loc, ModuleOp module)
      : b(rewriter), loc(loc), module(module) {}

  /// A read-only flat buffer of `tensor`.
  Value input(Value tensor) {
    RankedTensorType type = tensorTypeOf(tensor);
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    Value buffer = bufferization::ToBufferOp::create(b, loc, memrefType, tensor,
                                                     /*read_only=*/true);
    args.push_back(flatten(buffer));
    return args.back();
  }

  /// A fresh buffer for a result of type `type` whose dynamic sizes are
  /// taken from `sizes` (one per dimension).
  void output(RankedTensorType type, ArrayRef<OpFoldResult> sizes) {
    SmallVector<Value> dynamic;
    for (auto [i, size] : llvm::enumerate(sizes))
      if (type.isDynamicDim(i))
        dynamic.push_back(getValueOrCreateConstantIndexOp(b, loc, size));
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    Value buffer = memref::AllocOp::create(b, loc, memrefType, dynamic);
    outputIndices.push_back(args.size());
    outputs.push_back({buffer, type});
    args.push_back(flatten(buffer));
  }

  void scalar(Value value) { args.push_back(value); }

  /// Calls the launch stub of `kernel` with the grid and block sizes and
  /// returns the result tensors.
  SmallVector<Value> launch(gpu::GPUFuncOp kernel, ArrayRef<Value> grid,
                            ArrayRef<Value> block) {
    SmallVector<Value> operands(grid.begin(), grid.end());
    llvm::append_range(operands, block);
    llvm::append_range(operands, args);
    // The stub: a private declaration the bufferization passes see as an
    // opaque call on buffers.
    OpBuilder::InsertPoint callPoint = b.saveInsertionPoint();
    b.setInsertionPointToEnd(module.getBody());
    auto stub = func::FuncOp::create(
        b, loc, ("__linattn_launch_" + kernel.getName()).str(),
        b.getFunctionType(ValueRange(operands).getTypes(), TypeRange{}));
    stub.setPrivate();
    auto kernels = kernel->getParentOfType<gpu::GPUModuleOp>();
    stub->setAttr(
        kKernelAttrName,
        SymbolRefAttr::get(kernels.getNameAttr(),
                           {FlatSymbolRefAttr::get(kernel.getNameAttr())}));
    stub->setAttr(kOutputsAttrName, b.getDenseI64ArrayAttr(outputIndices));
    SymbolTable(module).insert(stub);
    b.restoreInsertionPoint(callPoint);
    func::CallOp::create(b, loc, stub, operands);
    SmallVector<Value> results;
    for (auto [buffer, type] : outputs)
      results.push_back(bufferization::ToTensorOp::create(
          b, loc, type, buffer, /*restrict=*/true, /*writable=*/true));
    return results;
  }

private:
  Value flatten(Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    Value flat = buffer;
    if (type.getRank() != 1) {
      SmallVector<ReassociationIndices> all(1);
      for (int64_t i = 0; i < type.getRank(); ++i)
        all.front().push_back(i);
      flat = memref::CollapseShapeOp::create(b, loc, buffer, all);
    }
    // Kernels take dynamically sized buffers.
    MemRefType dynamic = flatBufferType(type.getElementType());
    if (flat.getType() != dynamic)
      flat = memref::CastOp::create(b, loc, dynamic, flat);
    return flat;
  }

  RewriterBase &b;
  Location loc;
  ModuleOp module;
  SmallVector<Value> args;
  SmallVector<int64_t> outputIndices;
  SmallVector<std::pair<Value, RankedTensorType>> outputs;
};
} // namespace

/// The product of the first `count` sizes of `value`, as an index.
static Value batchProduct(OpBuilder &b, Location loc, Value value,
                          int64_t count) {
  Value product = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t i = 0; i < count; ++i) {
    Value size = getValueOrCreateConstantIndexOp(
        b, loc, tensor::getMixedSize(b, loc, value, i));
    product = arith::MulIOp::create(b, loc, product, size);
  }
  return product;
}

static OpFoldResult sizeOf(OpBuilder &b, Location loc, Value value,
                           int64_t dim) {
  if (dim < 0)
    dim += tensorTypeOf(value).getRank();
  return tensor::getMixedSize(b, loc, value, dim);
}

/// `sizes` of the leading `count` dimensions of `value` followed by `rest`.
static SmallVector<OpFoldResult> leadingThen(OpBuilder &b, Location loc,
                                             Value value, int64_t count,
                                             ArrayRef<OpFoldResult> rest) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < count; ++i)
    sizes.push_back(tensor::getMixedSize(b, loc, value, i));
  llvm::append_range(sizes, rest);
  return sizes;
}

static Value ceilDiv(OpBuilder &b, Location loc, Value x, int64_t tile) {
  return arith::CeilDivUIOp::create(
      b, loc, x, arith::ConstantIndexOp::create(b, loc, tile));
}

/// Threads per block for `columns` value columns (static or not).
static int64_t blockSizeFor(int64_t columns, int64_t maxBlock) {
  if (ShapedType::isDynamic(columns))
    return maxBlock;
  int64_t rounded = std::max<int64_t>(32, (columns + 31) / 32 * 32);
  return std::min(rounded, maxBlock);
}

//===----------------------------------------------------------------------===//
// The converter
//===----------------------------------------------------------------------===//

namespace {
class Converter {
public:
  Converter(ModuleOp module, const LinAttnToGPUKernelOptions &options)
      : module(module), options(options), rewriter(module.getContext()) {}

  LogicalResult run();

private:
  gpu::GPUModuleOp kernels();
  std::string kernelName(StringRef base) {
    return (base + "_" + Twine(counter++)).str();
  }

  /// Each returns a reason when the op has no kernel (and leaves the IR
  /// alone), nothing when it was replaced.
  std::optional<std::string> convert(ScanOp op);
  /// The chunked tensor-core kernel of a scan (f16/bf16 data, f32 state).
  std::optional<std::string> convertChunked(ScanOp op);
  std::optional<std::string> convert(StepOp op);
  std::optional<std::string> convert(KvSummaryOp op);
  std::optional<std::string> convert(QueryReadoutOp op);
  std::optional<std::string> convert(ScoresOp op);
  std::optional<std::string> convert(ApplyScoresOp op);
  /// Launches a scan kernel in place of `op` (see the definition).
  void launchScan(ScanOp op, gpu::GPUFuncOp kernel, Value queries, Value keys,
                  int64_t features, int64_t dvTile, int64_t threads);

  std::optional<std::string> checkFeatureSize(int64_t features) {
    if (ShapedType::isDynamic(features))
      return std::string("the feature size must be static");
    return std::nullopt;
  }

  ModuleOp module;
  const LinAttnToGPUKernelOptions &options;
  IRRewriter rewriter;
  gpu::GPUModuleOp kernelModule;
  unsigned counter = 0;
};
} // namespace

gpu::GPUModuleOp Converter::kernels() {
  if (kernelModule)
    return kernelModule;
  kernelModule = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
  if (!kernelModule) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToEnd(module.getBody());
    kernelModule =
        gpu::GPUModuleOp::create(rewriter, module.getLoc(), kKernelModuleName);
  }
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  rewriter.getUnitAttr());
  return kernelModule;
}

/// Size of the token block the scan stages in shared memory: the query and
/// key features and the normalizer partial products of TT tokens, about 8 KiB
/// each.
static int64_t scanTokensPerBlock(int64_t features, Type stateType) {
  int64_t bytes = features * (stateType.getIntOrFloatBitWidth() / 8);
  return std::clamp<int64_t>(8192 / std::max<int64_t>(bytes, 1), 1, 64);
}

//===----------------------------------------------------------------------===//
// The chunked scan on tensor cores
//===----------------------------------------------------------------------===//

namespace {
/// Tile sizes of the chunked scan kernel.
struct ChunkedScanShape {
  int64_t chunk;  // C tokens per chunk, 16 per warp
  int64_t warps;  // W = C / 16
  int64_t dvTile; // DT value columns per block
};
} // namespace

/// Picks the chunk and value tile of the chunked scan for F features: the
/// largest chunk up to `maxChunk`, then the widest value tile, such that the
/// shared memory (φ(Q_c), φ(K_c), V_c, the masked scores and the state, in
/// the 16-bit data type) fits the 48 KiB of static shared memory and the
/// state fragments each thread accumulates fit 64 registers.
static std::optional<ChunkedScanShape> chunkedScanShape(int64_t features,
                                                        int64_t maxChunk) {
  for (int64_t chunk = 64; chunk >= 16; chunk /= 2) {
    if (chunk > maxChunk)
      continue;
    int64_t warps = chunk / 16;
    for (int64_t dvTile = 64; dvTile >= 8 * warps; dvTile /= 2) {
      int64_t elements = 2 * chunk * features + chunk * dvTile + chunk * chunk +
                         features * dvTile;
      int64_t bytes = 2 * elements + 4 * features;
      int64_t registers = (features / 16) * (dvTile / 8 / warps) * 4;
      if (bytes <= 48 * 1024 && registers <= 64)
        return ChunkedScanShape{chunk, warps, dvTile};
    }
  }
  return std::nullopt;
}

/// Why the chunked kernel does not apply to `op`, nothing when it does.
static std::optional<std::string> chunkedScanUnsupported(ScanOp op) {
  Type data = tensorTypeOf(op.getValues()).getElementType();
  if (!data.isF16() && !data.isBF16())
    return std::string("the data type is not f16 or bf16");
  for (Value operand : {op.getQueryFeatures(), op.getKeyFeatures()})
    if (tensorTypeOf(operand).getElementType() != data ||
        tensorTypeOf(featureSourceOf(operand).tensor).getElementType() != data)
      return std::string("query, key and value types differ");
  if (!tensorTypeOf(op.getResult()).getElementType().isF32() &&
      tensorTypeOf(op.getResult()).getElementType() != data)
    return std::string("the result type is neither the data type nor f32");
  auto sType = cast<RankedTensorType>(op.getFinalState().getType());
  if (!sType.getElementType().isF32())
    return std::string("the state is not f32");
  int64_t features = tensorTypeOf(op.getQueryFeatures()).getShape().back();
  if (ShapedType::isDynamic(features) || features % 16 != 0)
    return std::string("the feature size is not a multiple of 16");
  return std::nullopt;
}

namespace {
/// m16n8k16 tensor-core products of 16-bit operands with f32 accumulators,
/// on fragments gathered from shared memory.
class MmaBuilder {
public:
  MmaBuilder(KernelBuilder &kb, Type dataType, Value lane)
      : kb(kb), b(kb.b), loc(kb.loc), dataType(dataType) {
    group = kb.divU(lane, kb.idx(4));
    pair = kb.mul(kb.remU(lane, kb.idx(4)), kb.idx(2));
  }

  /// Element (row, col) of a matrix, as a 16-bit value.
  using Element = function_ref<Value(Value row, Value col)>;

  /// acc + A[r0:r0+16, k0:k0+16] · B[k0:k0+16, n0:n0+8], `acc` and the
  /// result in the accumulator layout (rows g and g+8, columns 2t and 2t+1
  /// of lane 4g+t).
  SmallVector<Value> mma(Element a, Element bm, Value r0, Value k0, Value n0,
                         ValueRange acc) {
    Value rowLo = kb.add(r0, group), rowHi = kb.add(rowLo, kb.idx(8));
    Value kLo = kb.add(k0, pair), kHi = kb.add(kLo, kb.idx(8));
    Value col = kb.add(n0, group);
    auto aPair = [&](Value row, Value k) {
      return pack(a(row, k), a(row, kb.add(k, kb.idx(1))));
    };
    auto bPair = [&](Value k) {
      return pack(bm(k, col), bm(kb.add(k, kb.idx(1)), col));
    };
    SmallVector<Value> aRegs = {aPair(rowLo, kLo), aPair(rowHi, kLo),
                                aPair(rowLo, kHi), aPair(rowHi, kHi)};
    SmallVector<Value> bRegs = {bPair(kLo), bPair(kHi)};
    Type f32 = b.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(4, f32));
    NVVM::MMATypes ptxType =
        dataType.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
    auto op =
        NVVM::MmaOp::create(b, loc, resultType, aRegs, bRegs, acc, {16, 8, 16},
                            /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
                            std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
                            std::array<NVVM::MMALayout, 2>{
                                NVVM::MMALayout::row, NVVM::MMALayout::col});
    SmallVector<Value> result;
    for (int64_t i = 0; i < 4; ++i)
      result.push_back(LLVM::ExtractValueOp::create(b, loc, op.getRes(), i));
    return result;
  }

  /// Row and column of accumulator element `i` (0..3) of the tile at
  /// (r0, n0).
  std::pair<Value, Value> position(Value r0, Value n0, int64_t i) {
    Value row = kb.add(r0, group);
    if (i >= 2)
      row = kb.add(row, kb.idx(8));
    Value col = kb.add(n0, pair);
    if (i % 2)
      col = kb.add(col, kb.idx(1));
    return {row, col};
  }

  Value group, pair;

private:
  /// Two 16-bit values in one 32-bit register (bf16 goes as i32).
  Value pack(Value lo, Value hi) {
    auto vectorType = VectorType::get({2}, dataType);
    Value v =
        vector::FromElementsOp::create(b, loc, vectorType, ValueRange{lo, hi});
    if (dataType.isF16())
      return v;
    auto i32x1 = VectorType::get({1}, b.getI32Type());
    Value cast = vector::BitCastOp::create(b, loc, i32x1, v);
    return vector::ExtractOp::create(b, loc, cast, ArrayRef<int64_t>{0});
  }

  KernelBuilder &kb;
  OpBuilder &b;
  Location loc;
  Type dataType;
};
} // namespace

namespace {
/// The arguments of a scan kernel, in the order `launchScan` passes them:
/// q, k, v, the initial state (when there is one), O, S, z, N, Dv.
struct ScanKernelArgs {
  Value q, k, v, s0, z0, o, s, z, n, dv;
};
} // namespace

static ScanKernelArgs scanKernelArgs(gpu::GPUFuncOp kernel, bool hasInit) {
  ArrayRef<BlockArgument> args = kernel.getArguments();
  ScanKernelArgs bound;
  unsigned a = 0;
  bound.q = args[a++];
  bound.k = args[a++];
  bound.v = args[a++];
  if (hasInit) {
    bound.s0 = args[a++];
    bound.z0 = args[a++];
  }
  bound.o = args[a++];
  bound.s = args[a++];
  bound.z = args[a++];
  bound.n = args[a++];
  bound.dv = args[a++];
  return bound;
}

/// Launches the scan kernel `kernel` in place of `op`: inputs φ(Q) or Q, φ(K)
/// or K (`queries`, `keys`), V and the initial state, outputs O, S and z,
/// scalars N and Dv; grid (batch, Dv tiles of `dvTile`, at least one so that
/// z is written when Dv = 0), `threads` threads per block.
void Converter::launchScan(ScanOp op, gpu::GPUFuncOp kernel, Value queries,
                           Value keys, int64_t features, int64_t dvTile,
                           int64_t threads) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  LaunchBuilder launch(rewriter, loc, module);
  Value values = op.getValues();
  int64_t batchDims = tensorTypeOf(values).getRank() - 2;
  launch.input(queries);
  launch.input(keys);
  launch.input(values);
  if (op.hasInitialState()) {
    launch.input(op.getInitialState());
    launch.input(op.getInitialNormalizer());
  }
  OpFoldResult seq = sizeOf(rewriter, loc, values, -2);
  OpFoldResult dvSize = sizeOf(rewriter, loc, values, -1);
  OpFoldResult fSize = rewriter.getIndexAttr(features);
  launch.output(tensorTypeOf(op.getResult()),
                leadingThen(rewriter, loc, values, batchDims, {seq, dvSize}));
  launch.output(cast<RankedTensorType>(op.getFinalState().getType()),
                leadingThen(rewriter, loc, values, batchDims, {fSize, dvSize}));
  launch.output(cast<RankedTensorType>(op.getFinalNormalizer().getType()),
                leadingThen(rewriter, loc, values, batchDims, {fSize}));
  Value nValue = getValueOrCreateConstantIndexOp(rewriter, loc, seq);
  Value dvValue = getValueOrCreateConstantIndexOp(rewriter, loc, dvSize);
  launch.scalar(nValue);
  launch.scalar(dvValue);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value tiles = arith::MaxUIOp::create(
      rewriter, loc, ceilDiv(rewriter, loc, dvValue, dvTile), one);
  SmallVector<Value> results = launch.launch(
      kernel, {batchProduct(rewriter, loc, values, batchDims), tiles, one},
      {arith::ConstantIndexOp::create(rewriter, loc, threads), one, one});
  rewriter.replaceOp(op, results);
}

std::optional<std::string> Converter::convertChunked(ScanOp op) {
  RankedTensorType qType = tensorTypeOf(op.getQueryFeatures());
  RankedTensorType vType = tensorTypeOf(op.getValues());
  RankedTensorType sType = cast<RankedTensorType>(op.getFinalState().getType());
  int64_t features = qType.getShape().back();
  int64_t maxChunk = options.chunkSize;
  if (auto hint = op.getChunkSize())
    maxChunk = std::min<int64_t>(maxChunk, *hint);
  std::optional<ChunkedScanShape> shape = chunkedScanShape(features, maxChunk);
  if (!shape)
    return std::string("no chunk shape fits F = ") + std::to_string(features);
  int64_t chunk = shape->chunk, warps = shape->warps, dvTile = shape->dvTile;
  int64_t threads = 32 * warps;
  int64_t fTiles = features / 16;
  int64_t nTilesPerWarp = dvTile / 8 / warps;

  FeatureSource q = featureSourceOf(op.getQueryFeatures());
  FeatureSource k = featureSourceOf(op.getKeyFeatures());
  bool normalized = op.isNormalized();
  bool reverse = op.isReverse();
  bool hasInit = op.hasInitialState();
  double eps = normalized ? op.getEps()->convertToDouble() : 0.0;
  Type stateType = sType.getElementType();
  Type dataType = vType.getElementType();
  Location loc = op.getLoc();

  SmallVector<Type> argTypes = {flatBufferType(dataType),
                                flatBufferType(dataType),
                                flatBufferType(dataType)};
  if (hasInit) {
    argTypes.push_back(flatBufferType(stateType));
    argTypes.push_back(flatBufferType(stateType));
  }
  argTypes.push_back(
      flatBufferType(tensorTypeOf(op.getResult()).getElementType()));
  argTypes.push_back(flatBufferType(stateType));
  argTypes.push_back(flatBufferType(stateType));
  Type indexType = rewriter.getIndexType();
  argTypes.push_back(indexType); // N
  argTypes.push_back(indexType); // Dv
  SmallVector<Type> shared = {
      workgroupBufferType(dataType, chunk * features),  // φ(Q_c)
      workgroupBufferType(dataType, chunk * features),  // φ(K_c)
      workgroupBufferType(dataType, chunk * dvTile),    // V_c
      workgroupBufferType(dataType, chunk * chunk),     // masked scores
      workgroupBufferType(dataType, features * dvTile), // S at the chunk start
      workgroupBufferType(stateType, features)};        // z at the chunk start
  std::string name = kernelName((Twine("linattn_scan_chunked_") +
                                 (reverse ? "reverse" : "forward") + "_" +
                                 mapName(q) + (normalized ? "_normalized" : ""))
                                    .str());
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels(), name, argTypes, shared);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    setInsertionPointToKernelBody(rewriter, kernel);
    KernelBuilder kb(rewriter, loc, stateType);
    ScanKernelArgs bound = scanKernelArgs(kernel, hasInit);
    Value qBuf = bound.q, kBuf = bound.k, vBuf = bound.v, s0Buf = bound.s0,
          z0Buf = bound.z0, oBuf = bound.o, sBuf = bound.s, zBuf = bound.z,
          n = bound.n, dv = bound.dv;
    ArrayRef<BlockArgument> wg = kernel.getWorkgroupAttributions();
    Value qs = wg[0], ks = wg[1], vs = wg[2], ps = wg[3], ss = wg[4],
          zs = wg[5];

    Value c0 = kb.idx(0), c1 = kb.idx(1), cF = kb.idx(features),
          cC = kb.idx(chunk), cDT = kb.idx(dvTile), cT = kb.idx(threads);
    Value batch = kb.blockId(gpu::Dimension::x);
    Value colBase = kb.mul(kb.blockId(gpu::Dimension::y), cDT);
    Value tid = kb.threadId();
    Value warp = kb.divU(tid, kb.idx(32));
    Value lane = kb.remU(tid, kb.idx(32));
    Value stateBase = kb.mul(batch, cF);
    MmaBuilder mb(kb, dataType, lane);

    auto loadShared = [&](Value buffer, Value index) {
      return memref::LoadOp::create(rewriter, loc, buffer, ValueRange{index})
          .getResult();
    };
    auto storeShared = [&](Value value, Value buffer, Value index) {
      memref::StoreOp::create(rewriter, loc,
                              convertFloat(rewriter, loc, value, dataType),
                              buffer, ValueRange{index});
    };
    // Row-major views of the shared tiles.
    auto qAt = [&](Value r, Value c) {
      return loadShared(qs, kb.add(kb.mul(r, cF), c));
    };
    auto kAt = [&](Value r, Value c) {
      return loadShared(ks, kb.add(kb.mul(r, cF), c));
    };
    auto kTransposedAt = [&](Value f, Value t) { return kAt(t, f); };
    auto vAt = [&](Value r, Value c) {
      return loadShared(vs, kb.add(kb.mul(r, cDT), c));
    };
    auto pAt = [&](Value r, Value c) {
      return loadShared(ps, kb.add(kb.mul(r, cC), c));
    };
    auto sAt = [&](Value r, Value c) {
      return loadShared(ss, kb.add(kb.mul(r, cDT), c));
    };
    // The state tiles this warp accumulates: every feature tile, value tiles
    // warp + j·W.
    auto stateTile = [&](int64_t fi, int64_t j) {
      Value n0 = kb.mul(kb.add(warp, kb.idx(j * warps)), kb.idx(8));
      return std::make_pair(kb.idx(16 * fi), n0);
    };
    auto stateIndex = [&](Value f, Value col) {
      return kb.add(kb.mul(kb.add(stateBase, f), dv), col);
    };

    // The state fragments, in registers.
    SmallVector<Value> state;
    for (int64_t fi = 0; fi < fTiles; ++fi)
      for (int64_t j = 0; j < nTilesPerWarp; ++j) {
        auto [r0, n0] = stateTile(fi, j);
        for (int64_t i = 0; i < 4; ++i) {
          if (!hasInit) {
            state.push_back(kb.fconst(0.0));
            continue;
          }
          auto [f, c] = mb.position(r0, n0, i);
          Value col = kb.add(colBase, c);
          state.push_back(
              kb.loadIf(kb.ult(col, dv), s0Buf, stateIndex(f, col)));
        }
      }
    kb.forLoop(tid, cF, cT, [&](Value f) {
      Value init =
          hasInit ? kb.load(z0Buf, kb.add(stateBase, f)) : kb.fconst(0.0);
      memref::StoreOp::create(rewriter, loc, init, zs, ValueRange{f});
    });

    auto tokenAt = [&](Value i) {
      return reverse ? kb.sub(kb.sub(n, c1), i) : i;
    };

    state = kb.forLoop(c0, n, cC, state, [&](Value t0, ValueRange carried) {
      Value count = kb.minU(cC, kb.sub(n, t0));
      // Phase 1: stage φ(Q_c), φ(K_c) and V_c, zeros past the sequence.
      kb.barrier();
      kb.forLoop(tid, kb.idx(chunk * features), cT, [&](Value i) {
        Value t = kb.divU(i, cF), f = kb.remU(i, cF);
        Value valid = kb.ult(t, count);
        Value row = kb.add(kb.mul(batch, n), tokenAt(kb.add(t0, t)));
        Value at = kb.add(kb.mul(row, cF), f);
        auto feature = [&](Value buffer, const FeatureSource &source) {
          auto branch = scf::IfOp::create(
              rewriter, loc, valid,
              [&](OpBuilder &, Location) {
                scf::YieldOp::create(rewriter, loc,
                                     kb.loadFeature(buffer, at, source));
              },
              [&](OpBuilder &, Location) {
                scf::YieldOp::create(rewriter, loc, kb.fconst(0.0));
              });
          return branch.getResult(0);
        };
        storeShared(feature(qBuf, q), qs, i);
        storeShared(feature(kBuf, k), ks, i);
      });
      kb.forLoop(tid, kb.idx(chunk * dvTile), cT, [&](Value i) {
        Value t = kb.divU(i, cDT), d = kb.remU(i, cDT);
        Value col = kb.add(colBase, d);
        Value valid = arith::AndIOp::create(rewriter, loc, kb.ult(t, count),
                                            kb.ult(col, dv));
        Value row = kb.add(kb.mul(batch, n), tokenAt(kb.add(t0, t)));
        storeShared(kb.loadIf(valid, vBuf, kb.add(kb.mul(row, dv), col)), vs,
                    i);
      });
      kb.barrier();

      // Phase 2: this warp's 16 rows of tril(φ(Q_c)φ(K_c)ᵀ), their row sums
      // in f32, the denominators; the carried state to shared memory.
      Value r0 = kb.mul(warp, kb.idx(16));
      Value sumLo = kb.fconst(0.0), sumHi = kb.fconst(0.0);
      for (int64_t j = 0; j < chunk / 8; ++j) {
        Value n0 = kb.idx(8 * j);
        SmallVector<Value> acc(4, kb.fconst(0.0));
        for (int64_t f0 = 0; f0 < features; f0 += 16)
          acc = mb.mma(qAt, kTransposedAt, r0, kb.idx(f0), n0, acc);
        for (int64_t i = 0; i < 4; ++i) {
          auto [row, col] = mb.position(r0, n0, i);
          Value causal = arith::CmpIOp::create(
              rewriter, loc, arith::CmpIPredicate::ule, col, row);
          Value masked = kb.select(causal, acc[i], kb.fconst(0.0));
          storeShared(masked, ps, kb.add(kb.mul(row, cC), col));
          if (i < 2)
            sumLo = kb.fadd(sumLo, masked);
          else
            sumHi = kb.fadd(sumHi, masked);
        }
      }
      Value denLo, denHi;
      if (normalized) {
        // φ(q_t)ᵀ z_prev, four lanes per row, then the sums over the quad.
        Value rowLo = kb.add(r0, mb.group);
        Value rowHi = kb.add(rowLo, kb.idx(8));
        Value quadLane = kb.remU(lane, kb.idx(4));
        for (int64_t f = 0; f < features; f += 4) {
          Value feature = kb.add(kb.idx(f), quadLane);
          Value z = loadShared(zs, feature);
          sumLo = kb.fma(
              convertFloat(rewriter, loc, qAt(rowLo, feature), stateType), z,
              sumLo);
          sumHi = kb.fma(
              convertFloat(rewriter, loc, qAt(rowHi, feature), stateType), z,
              sumHi);
        }
        Value width = arith::ConstantIntOp::create(rewriter, loc, 32, 32);
        for (int64_t offset : {1, 2}) {
          Value o = arith::ConstantIntOp::create(rewriter, loc, offset, 32);
          sumLo = kb.fadd(sumLo,
                          gpu::ShuffleOp::create(rewriter, loc, sumLo, o, width,
                                                 gpu::ShuffleMode::XOR)
                              .getShuffleResult());
          sumHi = kb.fadd(sumHi,
                          gpu::ShuffleOp::create(rewriter, loc, sumHi, o, width,
                                                 gpu::ShuffleMode::XOR)
                              .getShuffleResult());
        }
        denLo = kb.fadd(sumLo, kb.fconst(eps));
        denHi = kb.fadd(sumHi, kb.fconst(eps));
      }
      {
        unsigned s = 0;
        for (int64_t fi = 0; fi < fTiles; ++fi)
          for (int64_t j = 0; j < nTilesPerWarp; ++j) {
            auto [sr0, n0] = stateTile(fi, j);
            for (int64_t i = 0; i < 4; ++i) {
              auto [f, c] = mb.position(sr0, n0, i);
              storeShared(carried[s++], ss, kb.add(kb.mul(f, cDT), c));
            }
          }
      }
      kb.barrier();

      // Phase 3: O_c = tril(φ(Q_c)φ(K_c)ᵀ) V_c + φ(Q_c) S_prev for this
      // warp's rows, divided by the denominators.
      for (int64_t j = 0; j < dvTile / 8; ++j) {
        Value n0 = kb.idx(8 * j);
        SmallVector<Value> acc(4, kb.fconst(0.0));
        for (int64_t t = 0; t < chunk; t += 16)
          acc = mb.mma(pAt, vAt, r0, kb.idx(t), n0, acc);
        for (int64_t f0 = 0; f0 < features; f0 += 16)
          acc = mb.mma(qAt, sAt, r0, kb.idx(f0), n0, acc);
        for (int64_t i = 0; i < 4; ++i) {
          auto [tok, c] = mb.position(r0, n0, i);
          Value t = tok;
          Value value = acc[i];
          if (normalized)
            value = kb.fdiv(value, i < 2 ? denLo : denHi);
          Value col = kb.add(colBase, c);
          Value valid = arith::AndIOp::create(rewriter, loc, kb.ult(t, count),
                                              kb.ult(col, dv));
          kb.ifThen(valid, [&] {
            Value row = kb.add(kb.mul(batch, n), tokenAt(kb.add(t0, t)));
            kb.store(value, oBuf, kb.add(kb.mul(row, dv), col));
          });
        }
      }
      // S += φ(K_c)ᵀ V_c in the fragments; z += Σ φ(k_t).
      SmallVector<Value> next;
      {
        unsigned s = 0;
        for (int64_t fi = 0; fi < fTiles; ++fi)
          for (int64_t j = 0; j < nTilesPerWarp; ++j) {
            auto [sr0, n0] = stateTile(fi, j);
            SmallVector<Value> acc(carried.begin() + s,
                                   carried.begin() + s + 4);
            s += 4;
            for (int64_t t = 0; t < chunk; t += 16)
              acc = mb.mma(kTransposedAt, vAt, sr0, kb.idx(t), n0, acc);
            llvm::append_range(next, acc);
          }
      }
      kb.forLoop(tid, cF, cT, [&](Value f) {
        Value z0 = loadShared(zs, f);
        Value z = kb.forLoop(c0, count, c1, ValueRange{z0},
                             [&](Value t, ValueRange zc) -> SmallVector<Value> {
                               Value kf = convertFloat(rewriter, loc, kAt(t, f),
                                                       stateType);
                               return {kb.fadd(zc[0], kf)};
                             })[0];
        memref::StoreOp::create(rewriter, loc, z, zs, ValueRange{f});
      });
      return next;
    });

    // The final state and normalizer.
    {
      unsigned s = 0;
      for (int64_t fi = 0; fi < fTiles; ++fi)
        for (int64_t j = 0; j < nTilesPerWarp; ++j) {
          auto [r0, n0] = stateTile(fi, j);
          for (int64_t i = 0; i < 4; ++i) {
            auto [feature, c] = mb.position(r0, n0, i);
            Value f = feature;
            Value col = kb.add(colBase, c);
            Value value = state[s++];
            kb.ifThen(kb.ult(col, dv),
                      [&] { kb.store(value, sBuf, stateIndex(f, col)); });
          }
        }
    }
    kb.barrier();
    kb.ifThen(kb.eq(kb.blockId(gpu::Dimension::y), c0), [&] {
      kb.forLoop(tid, cF, cT, [&](Value f) {
        kb.store(loadShared(zs, f), zBuf, kb.add(stateBase, f));
      });
    });
  }

  // The launch: grid (batch, value tiles), four warps or fewer.
  launchScan(op, kernel, q.tensor, k.tensor, features, dvTile, threads);
  return std::nullopt;
}

std::optional<std::string> Converter::convert(ScanOp op) {
  if (options.chunkedScan && !chunkedScanUnsupported(op) && !convertChunked(op))
    return std::nullopt;
  RankedTensorType qType = tensorTypeOf(op.getQueryFeatures());
  RankedTensorType vType = tensorTypeOf(op.getValues());
  RankedTensorType sType = cast<RankedTensorType>(op.getFinalState().getType());
  int64_t features = qType.getShape().back();
  if (auto reason = checkFeatureSize(features))
    return reason;
  Type stateType = sType.getElementType();
  int64_t registers =
      features * std::max<int64_t>(1, stateType.getIntOrFloatBitWidth() / 32);
  if (registers > options.maxRegisterState)
    return "the state column (F = " + std::to_string(features) +
           ") does not fit the scan's register budget of " +
           std::to_string(options.maxRegisterState) + " registers";

  FeatureSource q = featureSourceOf(op.getQueryFeatures());
  FeatureSource k = featureSourceOf(op.getKeyFeatures());
  bool normalized = op.isNormalized();
  bool reverse = op.isReverse();
  bool hasInit = op.hasInitialState();
  double eps = normalized ? op.getEps()->convertToDouble() : 0.0;
  int64_t tile = options.scanTile;
  int64_t tokens = scanTokensPerBlock(features, stateType);
  Location loc = op.getLoc();

  // The kernel.
  Type dataType = vType.getElementType();
  SmallVector<Type> argTypes = {
      flatBufferType(tensorTypeOf(q.tensor).getElementType()),
      flatBufferType(tensorTypeOf(k.tensor).getElementType()),
      flatBufferType(dataType)};
  if (hasInit) {
    argTypes.push_back(flatBufferType(stateType));
    argTypes.push_back(flatBufferType(stateType));
  }
  argTypes.push_back(
      flatBufferType(tensorTypeOf(op.getResult()).getElementType()));
  argTypes.push_back(flatBufferType(stateType));
  argTypes.push_back(flatBufferType(stateType));
  Type indexType = rewriter.getIndexType();
  argTypes.push_back(indexType); // N
  argTypes.push_back(indexType); // Dv
  SmallVector<Type> shared = {
      workgroupBufferType(stateType, tokens * features), // φ(q) of the block
      workgroupBufferType(stateType, tokens * features), // φ(k) of the block
      workgroupBufferType(stateType, tokens * features), // φ(q)ᵢ zᵢ partials
      workgroupBufferType(stateType, tokens),            // denominators
      workgroupBufferType(stateType, features)};         // running z
  std::string name =
      kernelName((Twine("linattn_scan_") + (reverse ? "reverse" : "forward") +
                  "_" + mapName(q) + (normalized ? "_normalized" : ""))
                     .str());
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels(), name, argTypes, shared);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    setInsertionPointToKernelBody(rewriter, kernel);
    KernelBuilder kb(rewriter, loc, stateType);
    ScanKernelArgs bound = scanKernelArgs(kernel, hasInit);
    Value qBuf = bound.q, kBuf = bound.k, vBuf = bound.v, s0Buf = bound.s0,
          z0Buf = bound.z0, oBuf = bound.o, sBuf = bound.s, zBuf = bound.z,
          n = bound.n, dv = bound.dv;
    ArrayRef<BlockArgument> wg = kernel.getWorkgroupAttributions();
    Value qs = wg[0], ks = wg[1], pz = wg[2], den = wg[3], zs = wg[4];

    Value c0 = kb.idx(0), c1 = kb.idx(1), cF = kb.idx(features),
          cTT = kb.idx(tokens), cTile = kb.idx(tile);
    Value batch = kb.blockId(gpu::Dimension::x);
    Value tid = kb.threadId();
    Value col = kb.add(kb.mul(kb.blockId(gpu::Dimension::y), cTile), tid);
    // Threads past the last column compute on zeros and store nothing: every
    // thread takes part in the barriers.
    Value active = kb.ult(col, dv);
    Value stateBase = kb.mul(batch, cF); // row b*F of S and z

    // The state column in registers, the normalizer in shared memory.
    SmallVector<Value> column;
    for (int64_t f = 0; f < features; ++f) {
      if (hasInit)
        column.push_back(
            kb.loadIf(active, s0Buf,
                      kb.add(kb.mul(kb.add(stateBase, kb.idx(f)), dv), col)));
      else
        column.push_back(kb.fconst(0.0));
    }
    kb.forLoop(tid, cF, cTile, [&](Value f) {
      Value init =
          hasInit ? kb.load(z0Buf, kb.add(stateBase, f)) : kb.fconst(0.0);
      memref::StoreOp::create(rewriter, loc, init, zs, ValueRange{f});
    });

    // Position of token t of the block starting at t0 in the sequence.
    auto tokenAt = [&](Value t0, Value t) {
      Value i = kb.add(t0, t);
      return reverse ? kb.sub(kb.sub(n, c1), i) : i;
    };

    column = kb.forLoop(c0, n, cTT, column, [&](Value t0, ValueRange carried) {
      Value count = kb.minU(cTT, kb.sub(n, t0));
      kb.barrier();
      // Stage φ(q) and φ(k) of the block's tokens.
      kb.forLoop(tid, kb.mul(count, cF), cTile, [&](Value i) {
        Value t = kb.divU(i, cF), f = kb.remU(i, cF);
        Value row = kb.add(kb.mul(batch, n), tokenAt(t0, t));
        Value at = kb.add(kb.mul(row, cF), f);
        memref::StoreOp::create(rewriter, loc, kb.loadFeature(qBuf, at, q), qs,
                                ValueRange{i});
        memref::StoreOp::create(rewriter, loc, kb.loadFeature(kBuf, at, k), ks,
                                ValueRange{i});
      });
      kb.barrier();
      // The running normalizer, one feature per thread, and the partial
      // products of the denominators φ(qᵢ)ᵀzᵢ.
      kb.forLoop(tid, cF, cTile, [&](Value f) {
        Value z0 = memref::LoadOp::create(rewriter, loc, zs, ValueRange{f});
        Value z = kb.forLoop(
            c0, count, c1, ValueRange{z0},
            [&](Value t, ValueRange zc) -> SmallVector<Value> {
              Value i = kb.add(kb.mul(t, cF), f);
              Value kf =
                  memref::LoadOp::create(rewriter, loc, ks, ValueRange{i});
              Value next = kb.fadd(zc[0], kf);
              if (normalized) {
                Value qf =
                    memref::LoadOp::create(rewriter, loc, qs, ValueRange{i});
                memref::StoreOp::create(rewriter, loc, kb.fmul(qf, next), pz,
                                        ValueRange{i});
              }
              return {next};
            })[0];
        memref::StoreOp::create(rewriter, loc, z, zs, ValueRange{f});
      });
      if (normalized) {
        kb.barrier();
        kb.forLoop(tid, count, cTile, [&](Value t) {
          Value sum = kb.forLoop(
              c0, cF, c1, ValueRange{kb.fconst(eps)},
              [&](Value f, ValueRange acc) -> SmallVector<Value> {
                Value p = memref::LoadOp::create(
                    rewriter, loc, pz, ValueRange{kb.add(kb.mul(t, cF), f)});
                return {kb.fadd(acc[0], p)};
              })[0];
          memref::StoreOp::create(rewriter, loc, sum, den, ValueRange{t});
        });
        kb.barrier();
      }
      // The recurrence over the block's tokens, S[:, d] in registers.
      return kb.forLoop(
          c0, count, c1, carried,
          [&](Value t, ValueRange s) -> SmallVector<Value> {
            Value row = kb.add(kb.mul(batch, n), tokenAt(t0, t));
            Value vt = kb.loadIf(active, vBuf, kb.add(kb.mul(row, dv), col));
            Value rowBase = kb.mul(t, cF);
            SmallVector<Value> next;
            Value acc = kb.fconst(0.0);
            for (int64_t f = 0; f < features; ++f) {
              Value i = kb.add(rowBase, kb.idx(f));
              Value kf =
                  memref::LoadOp::create(rewriter, loc, ks, ValueRange{i});
              Value qf =
                  memref::LoadOp::create(rewriter, loc, qs, ValueRange{i});
              next.push_back(kb.fma(kf, vt, s[f]));
              acc = kb.fma(qf, next.back(), acc);
            }
            if (normalized)
              acc = kb.fdiv(acc, memref::LoadOp::create(rewriter, loc, den,
                                                        ValueRange{t}));
            kb.ifThen(active, [&] {
              kb.store(acc, oBuf, kb.add(kb.mul(row, dv), col));
            });
            return next;
          });
    });

    // The final state.
    kb.ifThen(active, [&] {
      for (int64_t f = 0; f < features; ++f)
        kb.store(column[f], sBuf,
                 kb.add(kb.mul(kb.add(stateBase, kb.idx(f)), dv), col));
    });
    kb.ifThen(kb.eq(kb.blockId(gpu::Dimension::y), c0), [&] {
      kb.forLoop(tid, cF, cTile, [&](Value f) {
        Value z = memref::LoadOp::create(rewriter, loc, zs, ValueRange{f});
        kb.store(z, zBuf, kb.add(stateBase, f));
      });
    });
  }

  // The launch: grid (batch, value tiles), one thread per value column.
  launchScan(op, kernel, q.tensor, k.tensor, features, tile, tile);
  return std::nullopt;
}

std::optional<std::string> Converter::convert(StepOp op) {
  RankedTensorType qType = tensorTypeOf(op.getQueryFeatures());
  RankedTensorType vType = tensorTypeOf(op.getValues());
  RankedTensorType sType = tensorTypeOf(op.getState());
  int64_t rank = qType.getRank();
  int64_t features = qType.getShape().back();
  if (auto reason = checkFeatureSize(features))
    return reason;
  Type stateType = sType.getElementType();
  FeatureSource q = featureSourceOf(op.getQueryFeatures());
  FeatureSource k = featureSourceOf(op.getKeyFeatures());
  bool normalized = op.isNormalized();
  double eps = normalized ? op.getEps()->convertToDouble() : 0.0;
  int64_t block = blockSizeFor(vType.getShape().back(), options.blockSize);
  Location loc = op.getLoc();

  Type indexType = rewriter.getIndexType();
  SmallVector<Type> argTypes = {
      flatBufferType(tensorTypeOf(q.tensor).getElementType()),
      flatBufferType(tensorTypeOf(k.tensor).getElementType()),
      flatBufferType(vType.getElementType()),
      flatBufferType(stateType),
      flatBufferType(tensorTypeOf(op.getNormalizer()).getElementType()),
      flatBufferType(tensorTypeOf(op.getResult()).getElementType()),
      flatBufferType(stateType),
      flatBufferType(cast<RankedTensorType>(op.getNewNormalizer().getType())
                         .getElementType()),
      indexType};
  SmallVector<Type> shared = {workgroupBufferType(stateType, features),
                              workgroupBufferType(stateType, features)};
  std::string name = kernelName(
      (Twine("linattn_step_") + mapName(q) + (normalized ? "_normalized" : ""))
          .str());
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels(), name, argTypes, shared);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    setInsertionPointToKernelBody(rewriter, kernel);
    KernelBuilder kb(rewriter, loc, stateType);
    ArrayRef<BlockArgument> args = kernel.getArguments();
    Value qBuf = args[0], kBuf = args[1], vBuf = args[2], sIn = args[3],
          zIn = args[4], oBuf = args[5], sOut = args[6], zOut = args[7],
          dv = args[8];
    ArrayRef<BlockArgument> wg = kernel.getWorkgroupAttributions();
    Value qs = wg[0], ks = wg[1];
    Value c0 = kb.idx(0), c1 = kb.idx(1), cF = kb.idx(features),
          cBlock = kb.idx(block);
    Value batch = kb.blockId(gpu::Dimension::x);
    Value tid = kb.threadId();
    Value col = kb.add(kb.mul(kb.blockId(gpu::Dimension::y), cBlock), tid);
    Value active = kb.ult(col, dv);
    Value base = kb.mul(batch, cF);
    kb.forLoop(tid, cF, cBlock, [&](Value f) {
      Value at = kb.add(base, f);
      memref::StoreOp::create(rewriter, loc, kb.loadFeature(qBuf, at, q), qs,
                              ValueRange{f});
      memref::StoreOp::create(rewriter, loc, kb.loadFeature(kBuf, at, k), ks,
                              ValueRange{f});
    });
    kb.barrier();
    Value vt = kb.loadIf(active, vBuf, kb.add(kb.mul(batch, dv), col));
    SmallVector<Value> sums = kb.forLoop(
        c0, cF, c1, ValueRange{kb.fconst(0.0), kb.fconst(eps)},
        [&](Value f, ValueRange acc) -> SmallVector<Value> {
          Value qf = memref::LoadOp::create(rewriter, loc, qs, ValueRange{f});
          Value kf = memref::LoadOp::create(rewriter, loc, ks, ValueRange{f});
          Value rowAt = kb.mul(kb.add(base, f), dv);
          Value s = kb.fma(kf, vt, kb.loadIf(active, sIn, kb.add(rowAt, col)));
          kb.ifThen(active, [&] { kb.store(s, sOut, kb.add(rowAt, col)); });
          SmallVector<Value> next = {kb.fma(qf, s, acc[0]), acc[1]};
          if (normalized) {
            Value z = kb.fadd(kb.load(zIn, kb.add(base, f)), kf);
            next[1] = kb.fma(qf, z, acc[1]);
          }
          return next;
        });
    Value out = normalized ? kb.fdiv(sums[0], sums[1]) : sums[0];
    kb.ifThen(active,
              [&] { kb.store(out, oBuf, kb.add(kb.mul(batch, dv), col)); });
    kb.ifThen(kb.eq(kb.blockId(gpu::Dimension::y), c0), [&] {
      kb.forLoop(tid, cF, cBlock, [&](Value f) {
        Value kf = memref::LoadOp::create(rewriter, loc, ks, ValueRange{f});
        Value z = kb.fadd(kb.load(zIn, kb.add(base, f)), kf);
        kb.store(z, zOut, kb.add(base, f));
      });
    });
  }

  rewriter.setInsertionPoint(op);
  LaunchBuilder launch(rewriter, loc, module);
  Value values = op.getValues();
  int64_t batchDims = rank - 1;
  launch.input(q.tensor);
  launch.input(k.tensor);
  launch.input(values);
  launch.input(op.getState());
  launch.input(op.getNormalizer());
  OpFoldResult dvSize = sizeOf(rewriter, loc, values, -1);
  OpFoldResult fSize = rewriter.getIndexAttr(features);
  launch.output(tensorTypeOf(op.getResult()),
                leadingThen(rewriter, loc, values, batchDims, {dvSize}));
  launch.output(cast<RankedTensorType>(op.getNewState().getType()),
                leadingThen(rewriter, loc, values, batchDims, {fSize, dvSize}));
  launch.output(cast<RankedTensorType>(op.getNewNormalizer().getType()),
                leadingThen(rewriter, loc, values, batchDims, {fSize}));
  Value dvValue = getValueOrCreateConstantIndexOp(rewriter, loc, dvSize);
  launch.scalar(dvValue);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value tiles = arith::MaxUIOp::create(
      rewriter, loc, ceilDiv(rewriter, loc, dvValue, block), one);
  SmallVector<Value> results = launch.launch(
      kernel, {batchProduct(rewriter, loc, values, batchDims), tiles, one},
      {arith::ConstantIndexOp::create(rewriter, loc, block), one, one});
  rewriter.replaceOp(op, results);
  return std::nullopt;
}

std::optional<std::string> Converter::convert(KvSummaryOp op) {
  RankedTensorType kType = tensorTypeOf(op.getKeyFeatures());
  RankedTensorType vType = tensorTypeOf(op.getValues());
  RankedTensorType sType = cast<RankedTensorType>(op.getState().getType());
  int64_t rank = kType.getRank();
  int64_t features = kType.getShape().back();
  if (auto reason = checkFeatureSize(features))
    return reason;
  Type stateType = sType.getElementType();
  FeatureSource k = featureSourceOf(op.getKeyFeatures());
  int64_t block = blockSizeFor(vType.getShape().back(), options.blockSize);
  Location loc = op.getLoc();

  Type indexType = rewriter.getIndexType();
  SmallVector<Type> argTypes = {
      flatBufferType(tensorTypeOf(k.tensor).getElementType()),
      flatBufferType(vType.getElementType()),
      flatBufferType(stateType),
      flatBufferType(cast<RankedTensorType>(op.getNormalizer().getType())
                         .getElementType()),
      indexType,
      indexType};
  std::string name =
      kernelName((Twine("linattn_kv_summary_") + mapName(k)).str());
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels(), name, argTypes, {});
  {
    OpBuilder::InsertionGuard guard(rewriter);
    setInsertionPointToKernelBody(rewriter, kernel);
    KernelBuilder kb(rewriter, loc, stateType);
    ArrayRef<BlockArgument> args = kernel.getArguments();
    Value kBuf = args[0], vBuf = args[1], sOut = args[2], zOut = args[3],
          m = args[4], dv = args[5];
    Value c0 = kb.idx(0), c1 = kb.idx(1), cF = kb.idx(features),
          cBlock = kb.idx(block);
    Value col =
        kb.add(kb.mul(kb.blockId(gpu::Dimension::x), cBlock), kb.threadId());
    Value f = kb.blockId(gpu::Dimension::y);
    Value batch = kb.blockId(gpu::Dimension::z);
    Value active = kb.ult(col, dv);
    SmallVector<Value> sums = kb.forLoop(
        c0, m, c1, ValueRange{kb.fconst(0.0), kb.fconst(0.0)},
        [&](Value j, ValueRange acc) -> SmallVector<Value> {
          Value row = kb.add(kb.mul(batch, m), j);
          Value kf = kb.loadFeature(kBuf, kb.add(kb.mul(row, cF), f), k);
          Value vd = kb.loadIf(active, vBuf, kb.add(kb.mul(row, dv), col));
          return {kb.fma(kf, vd, acc[0]), kb.fadd(acc[1], kf)};
        });
    Value stateRow = kb.add(kb.mul(batch, cF), f);
    kb.ifThen(active, [&] {
      kb.store(sums[0], sOut, kb.add(kb.mul(stateRow, dv), col));
    });
    kb.ifThen(kb.eq(col, c0), [&] { kb.store(sums[1], zOut, stateRow); });
  }

  rewriter.setInsertionPoint(op);
  LaunchBuilder launch(rewriter, loc, module);
  Value values = op.getValues();
  int64_t batchDims = rank - 2;
  launch.input(k.tensor);
  launch.input(values);
  OpFoldResult mSize = sizeOf(rewriter, loc, values, -2);
  OpFoldResult dvSize = sizeOf(rewriter, loc, values, -1);
  OpFoldResult fSize = rewriter.getIndexAttr(features);
  launch.output(sType,
                leadingThen(rewriter, loc, values, batchDims, {fSize, dvSize}));
  launch.output(cast<RankedTensorType>(op.getNormalizer().getType()),
                leadingThen(rewriter, loc, values, batchDims, {fSize}));
  Value dvValue = getValueOrCreateConstantIndexOp(rewriter, loc, dvSize);
  launch.scalar(getValueOrCreateConstantIndexOp(rewriter, loc, mSize));
  launch.scalar(dvValue);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value tiles = arith::MaxUIOp::create(
      rewriter, loc, ceilDiv(rewriter, loc, dvValue, block), one);
  SmallVector<Value> results = launch.launch(
      kernel,
      {tiles, arith::ConstantIndexOp::create(rewriter, loc, features),
       batchProduct(rewriter, loc, values, batchDims)},
      {arith::ConstantIndexOp::create(rewriter, loc, block), one, one});
  rewriter.replaceOp(op, results);
  return std::nullopt;
}

std::optional<std::string> Converter::convert(QueryReadoutOp op) {
  RankedTensorType qType = tensorTypeOf(op.getQueryFeatures());
  RankedTensorType sType = tensorTypeOf(op.getState());
  int64_t rank = qType.getRank();
  int64_t features = qType.getShape().back();
  if (auto reason = checkFeatureSize(features))
    return reason;
  Type stateType = sType.getElementType();
  FeatureSource q = featureSourceOf(op.getQueryFeatures());
  bool normalized = op.isNormalized();
  double eps = normalized ? op.getEps()->convertToDouble() : 0.0;
  int64_t block = blockSizeFor(sType.getShape().back(), options.blockSize);
  Location loc = op.getLoc();

  Type indexType = rewriter.getIndexType();
  SmallVector<Type> argTypes = {
      flatBufferType(tensorTypeOf(q.tensor).getElementType()),
      flatBufferType(stateType)};
  if (normalized)
    argTypes.push_back(
        flatBufferType(tensorTypeOf(op.getNormalizer()).getElementType()));
  argTypes.push_back(
      flatBufferType(tensorTypeOf(op.getResult()).getElementType()));
  argTypes.push_back(indexType);
  argTypes.push_back(indexType);
  SmallVector<Type> shared = {workgroupBufferType(stateType, features)};
  std::string name = kernelName((Twine("linattn_query_readout_") + mapName(q) +
                                 (normalized ? "_normalized" : ""))
                                    .str());
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels(), name, argTypes, shared);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    setInsertionPointToKernelBody(rewriter, kernel);
    KernelBuilder kb(rewriter, loc, stateType);
    ArrayRef<BlockArgument> args = kernel.getArguments();
    unsigned a = 0;
    Value qBuf = args[a++], sBuf = args[a++];
    Value zBuf = normalized ? Value(args[a++]) : Value();
    Value oBuf = args[a++], n = args[a++], dv = args[a++];
    Value qs = kernel.getWorkgroupAttributions()[0];
    Value c0 = kb.idx(0), c1 = kb.idx(1), cF = kb.idx(features),
          cBlock = kb.idx(block);
    Value token = kb.blockId(gpu::Dimension::x);
    Value tid = kb.threadId();
    Value col = kb.add(kb.mul(kb.blockId(gpu::Dimension::y), cBlock), tid);
    Value batch = kb.blockId(gpu::Dimension::z);
    Value active = kb.ult(col, dv);
    Value row = kb.add(kb.mul(batch, n), token);
    kb.forLoop(tid, cF, cBlock, [&](Value f) {
      memref::StoreOp::create(
          rewriter, loc, kb.loadFeature(qBuf, kb.add(kb.mul(row, cF), f), q),
          qs, ValueRange{f});
    });
    kb.barrier();
    Value base = kb.mul(batch, cF);
    SmallVector<Value> sums = kb.forLoop(
        c0, cF, c1, ValueRange{kb.fconst(0.0), kb.fconst(eps)},
        [&](Value f, ValueRange acc) -> SmallVector<Value> {
          Value qf = memref::LoadOp::create(rewriter, loc, qs, ValueRange{f});
          Value s =
              kb.loadIf(active, sBuf, kb.add(kb.mul(kb.add(base, f), dv), col));
          SmallVector<Value> next = {kb.fma(qf, s, acc[0]), acc[1]};
          if (normalized)
            next[1] = kb.fma(qf, kb.load(zBuf, kb.add(base, f)), acc[1]);
          return next;
        });
    Value out = normalized ? kb.fdiv(sums[0], sums[1]) : sums[0];
    kb.ifThen(active,
              [&] { kb.store(out, oBuf, kb.add(kb.mul(row, dv), col)); });
  }

  rewriter.setInsertionPoint(op);
  LaunchBuilder launch(rewriter, loc, module);
  Value queries = q.tensor, state = op.getState();
  int64_t batchDims = rank - 2;
  launch.input(queries);
  launch.input(state);
  if (normalized)
    launch.input(op.getNormalizer());
  OpFoldResult nSize = sizeOf(rewriter, loc, queries, -2);
  OpFoldResult dvSize = sizeOf(rewriter, loc, state, -1);
  launch.output(
      tensorTypeOf(op.getResult()),
      leadingThen(rewriter, loc, queries, batchDims, {nSize, dvSize}));
  Value nValue = getValueOrCreateConstantIndexOp(rewriter, loc, nSize);
  Value dvValue = getValueOrCreateConstantIndexOp(rewriter, loc, dvSize);
  launch.scalar(nValue);
  launch.scalar(dvValue);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  SmallVector<Value> results = launch.launch(
      kernel,
      {nValue, ceilDiv(rewriter, loc, dvValue, block),
       batchProduct(rewriter, loc, queries, batchDims)},
      {arith::ConstantIndexOp::create(rewriter, loc, block), one, one});
  rewriter.replaceOp(op, results);
  return std::nullopt;
}

/// The largest grid y size CUDA launches.
static constexpr int64_t kMaxGridY = 65535;

std::optional<std::string> Converter::convert(ScoresOp op) {
  RankedTensorType qType = tensorTypeOf(op.getQueryFeatures());
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  int64_t rank = qType.getRank();
  int64_t features = qType.getShape().back();
  if (auto reason = checkFeatureSize(features))
    return reason;
  int64_t queries = qType.getShape()[rank - 2];
  if (!ShapedType::isDynamic(queries) && queries > kMaxGridY)
    return std::string("more than 65535 queries");
  Type computeType = getAccumulatorType(resultType.getElementType());
  FeatureSource q = featureSourceOf(op.getQueryFeatures());
  FeatureSource k = featureSourceOf(op.getKeyFeatures());
  int64_t block = blockSizeFor(resultType.getShape().back(), options.blockSize);
  bool causal = op.getCausal();
  double scale = op.getScaleValue();
  Location loc = op.getLoc();

  // One thread per score: grid (key tiles, queries, batch).
  Type indexType = rewriter.getIndexType();
  SmallVector<Type> argTypes = {
      flatBufferType(tensorTypeOf(q.tensor).getElementType()),
      flatBufferType(tensorTypeOf(k.tensor).getElementType()),
      flatBufferType(resultType.getElementType()), indexType, indexType};
  std::string name = kernelName(
      (Twine("linattn_scores_") + mapName(q) + (causal ? "_causal" : ""))
          .str());
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels(), name, argTypes, {});
  {
    OpBuilder::InsertionGuard guard(rewriter);
    setInsertionPointToKernelBody(rewriter, kernel);
    KernelBuilder kb(rewriter, loc, computeType);
    ArrayRef<BlockArgument> args = kernel.getArguments();
    Value qBuf = args[0], kBuf = args[1], out = args[2], n = args[3],
          m = args[4];
    Value c0 = kb.idx(0), c1 = kb.idx(1), cF = kb.idx(features);
    Value j = kb.add(kb.mul(kb.blockId(gpu::Dimension::x), kb.idx(block)),
                     kb.threadId());
    Value i = kb.blockId(gpu::Dimension::y);
    Value batch = kb.blockId(gpu::Dimension::z);
    kb.ifThen(kb.ult(j, m), [&] {
      Value qRow = kb.mul(kb.add(kb.mul(batch, n), i), cF);
      Value kRow = kb.mul(kb.add(kb.mul(batch, m), j), cF);
      Value dot =
          kb.forLoop(c0, cF, c1, ValueRange{kb.fconst(0.0)},
                     [&](Value f, ValueRange acc) -> SmallVector<Value> {
                       Value qf = kb.loadFeature(qBuf, kb.add(qRow, f), q);
                       Value kf = kb.loadFeature(kBuf, kb.add(kRow, f), k);
                       return {kb.fma(qf, kf, acc[0])};
                     })[0];
      Value value = scale == 1.0 ? dot : kb.fmul(dot, kb.fconst(scale));
      // The causal mask keeps the keys j <= i.
      if (causal)
        value = kb.select(kb.ult(i, j), kb.fconst(0.0), value);
      kb.store(value, out, kb.add(kb.mul(kb.add(kb.mul(batch, n), i), m), j));
    });
  }

  rewriter.setInsertionPoint(op);
  LaunchBuilder launch(rewriter, loc, module);
  int64_t batchDims = rank - 2;
  launch.input(q.tensor);
  launch.input(k.tensor);
  OpFoldResult nSize = sizeOf(rewriter, loc, q.tensor, -2);
  OpFoldResult mSize = sizeOf(rewriter, loc, k.tensor, -2);
  launch.output(resultType, leadingThen(rewriter, loc, q.tensor, batchDims,
                                        {nSize, mSize}));
  Value nValue = getValueOrCreateConstantIndexOp(rewriter, loc, nSize);
  Value mValue = getValueOrCreateConstantIndexOp(rewriter, loc, mSize);
  launch.scalar(nValue);
  launch.scalar(mValue);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value tiles = arith::MaxUIOp::create(
      rewriter, loc, ceilDiv(rewriter, loc, mValue, block), one);
  SmallVector<Value> results = launch.launch(
      kernel, {tiles, nValue, batchProduct(rewriter, loc, q.tensor, batchDims)},
      {arith::ConstantIndexOp::create(rewriter, loc, block), one, one});
  rewriter.replaceOp(op, results);
  return std::nullopt;
}

std::optional<std::string> Converter::convert(ApplyScoresOp op) {
  RankedTensorType aType = tensorTypeOf(op.getScores());
  RankedTensorType vType = tensorTypeOf(op.getValues());
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  int64_t rank = aType.getRank();
  int64_t queries = aType.getShape()[rank - 2];
  if (!ShapedType::isDynamic(queries) && queries > kMaxGridY)
    return std::string("more than 65535 queries");
  Type computeType = getAccumulatorType(resultType.getElementType());
  int64_t block = blockSizeFor(vType.getShape().back(), options.blockSize);
  std::optional<double> eps;
  if (op.getEps())
    eps = op.getEps()->convertToDouble();
  Location loc = op.getLoc();

  // One thread per output element: grid (value tiles, queries, batch).
  Type indexType = rewriter.getIndexType();
  SmallVector<Type> argTypes = {flatBufferType(aType.getElementType()),
                                flatBufferType(vType.getElementType()),
                                flatBufferType(resultType.getElementType()),
                                indexType,
                                indexType,
                                indexType};
  std::string name = kernelName(
      (Twine("linattn_apply_scores") + (eps ? "_normalized" : "")).str());
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels(), name, argTypes, {});
  {
    OpBuilder::InsertionGuard guard(rewriter);
    setInsertionPointToKernelBody(rewriter, kernel);
    KernelBuilder kb(rewriter, loc, computeType);
    ArrayRef<BlockArgument> args = kernel.getArguments();
    Value aBuf = args[0], vBuf = args[1], out = args[2], n = args[3],
          m = args[4], dv = args[5];
    Value c0 = kb.idx(0), c1 = kb.idx(1);
    Value d = kb.add(kb.mul(kb.blockId(gpu::Dimension::x), kb.idx(block)),
                     kb.threadId());
    Value i = kb.blockId(gpu::Dimension::y);
    Value batch = kb.blockId(gpu::Dimension::z);
    kb.ifThen(kb.ult(d, dv), [&] {
      Value aRow = kb.mul(kb.add(kb.mul(batch, n), i), m);
      SmallVector<Value> sums = kb.forLoop(
          c0, m, c1, ValueRange{kb.fconst(0.0), kb.fconst(0.0)},
          [&](Value j, ValueRange acc) -> SmallVector<Value> {
            Value a = kb.load(aBuf, kb.add(aRow, j));
            Value v = kb.load(
                vBuf, kb.add(kb.mul(kb.add(kb.mul(batch, m), j), dv), d));
            return {kb.fma(a, v, acc[0]), kb.fadd(acc[1], a)};
          });
      Value value = sums[0];
      if (eps)
        value = kb.fdiv(value, kb.fadd(sums[1], kb.fconst(*eps)));
      kb.store(value, out, kb.add(kb.mul(kb.add(kb.mul(batch, n), i), dv), d));
    });
  }

  rewriter.setInsertionPoint(op);
  LaunchBuilder launch(rewriter, loc, module);
  Value scores = op.getScores(), values = op.getValues();
  int64_t batchDims = rank - 2;
  launch.input(scores);
  launch.input(values);
  OpFoldResult nSize = sizeOf(rewriter, loc, scores, -2);
  OpFoldResult mSize = sizeOf(rewriter, loc, scores, -1);
  OpFoldResult dvSize = sizeOf(rewriter, loc, values, -1);
  launch.output(resultType,
                leadingThen(rewriter, loc, scores, batchDims, {nSize, dvSize}));
  Value nValue = getValueOrCreateConstantIndexOp(rewriter, loc, nSize);
  Value dvValue = getValueOrCreateConstantIndexOp(rewriter, loc, dvSize);
  launch.scalar(nValue);
  launch.scalar(getValueOrCreateConstantIndexOp(rewriter, loc, mSize));
  launch.scalar(dvValue);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value tiles = arith::MaxUIOp::create(
      rewriter, loc, ceilDiv(rewriter, loc, dvValue, block), one);
  SmallVector<Value> results = launch.launch(
      kernel, {tiles, nValue, batchProduct(rewriter, loc, scores, batchDims)},
      {arith::ConstantIndexOp::create(rewriter, loc, block), one, one});
  rewriter.replaceOp(op, results);
  return std::nullopt;
}

LogicalResult Converter::run() {
  SmallVector<Operation *> candidates;
  module.walk([&](Operation *op) {
    if (isa<ScanOp, StepOp, KvSummaryOp, QueryReadoutOp, ScoresOp,
            ApplyScoresOp>(op))
      candidates.push_back(op);
  });
  bool failed = false;
  for (Operation *op : candidates) {
    std::optional<std::string> reason =
        TypeSwitch<Operation *, std::optional<std::string>>(op)
            .Case<ScanOp, StepOp, KvSummaryOp, QueryReadoutOp, ScoresOp,
                  ApplyScoresOp>([&](auto typed) { return convert(typed); });
    if (reason && !options.hostFallback) {
      op->emitError() << "has no GPU kernel: " << *reason;
      failed = true;
    }
  }
  // Feature maps a kernel applies itself are dead now.
  SmallVector<Operation *> dead;
  module.walk([&](FeatureMapOp op) {
    if (op->use_empty())
      dead.push_back(op);
  });
  for (Operation *op : dead)
    rewriter.eraseOp(op);
  if (!options.hostFallback) {
    module.walk([&](Operation *op) {
      if (op->getDialect() && isa<LinAttnDialect>(op->getDialect()) &&
          !isa<ScanOp, StepOp, KvSummaryOp, QueryReadoutOp, ScoresOp,
               ApplyScoresOp>(op)) {
        op->emitError() << "has no GPU kernel (only scan, step, kv_summary, "
                           "query_readout, scores and apply_scores do, with "
                           "elu, relu and identity feature maps fused into "
                           "them)";
        failed = true;
      }
    });
  }
  return failure(failed);
}

LogicalResult mlir::linattn::convertLinAttnToGPUKernels(
    ModuleOp module, const LinAttnToGPUKernelOptions &opts) {
  return Converter(module, opts).run();
}

//===----------------------------------------------------------------------===//
// Passes
//===----------------------------------------------------------------------===//

namespace {
struct ConvertLinAttnToGPUPass
    : public linattn::impl::ConvertLinAttnToGPUPassBase<
          ConvertLinAttnToGPUPass> {
  using Base::Base;
  void runOnOperation() override {
    LinAttnToGPUKernelOptions opts;
    opts.scanTile = scanTile;
    opts.blockSize = blockSize;
    opts.maxRegisterState = maxRegisterState;
    opts.hostFallback = hostFallback;
    opts.chunkSize = chunkSize;
    if (scanKernel != "chunked" && scanKernel != "recurrent") {
      getOperation().emitError("scan-kernel must be 'chunked' or 'recurrent'");
      return signalPassFailure();
    }
    opts.chunkedScan = scanKernel == "chunked";
    if (opts.chunkSize != 16 && opts.chunkSize != 32 && opts.chunkSize != 64) {
      getOperation().emitError("chunk-size must be 16, 32 or 64");
      return signalPassFailure();
    }
    if (opts.scanTile <= 0 || opts.scanTile > 1024 || opts.blockSize <= 0 ||
        opts.blockSize > 1024) {
      getOperation().emitError(
          "scan-tile and block-size must be between 1 and 1024");
      return signalPassFailure();
    }
    if (failed(convertLinAttnToGPUKernels(getOperation(), opts)))
      signalPassFailure();
  }
};

} // namespace
