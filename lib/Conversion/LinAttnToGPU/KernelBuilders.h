//===- KernelBuilders.h - GPU kernels and their launches --------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// What the kernel generators of convert-linattn-to-gpu share: the builder of
// kernel bodies (index arithmetic, loads with fused feature maps, loops), the
// builder of launches on the host (buffers and the launch stub), and the
// converter that owns the kernel module. Internal to the conversion.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_LIB_CONVERSION_LINATTNTOGPU_KERNELBUILDERS_H
#define LINATTN_LIB_CONVERSION_LINATTNTOGPU_KERNELBUILDERS_H

#include "linattn/Conversion/LinAttnToGPU/LinAttnToGPU.h"
#include "linattn/IR/LinAttnOps.h"
#include "linattn/Transforms/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

#include <optional>
#include <string>

namespace mlir::linattn::gpukernels {

/// The gpu.module every kernel goes to.
inline constexpr StringLiteral kKernelModuleName = "linattn_kernels";

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

inline RankedTensorType tensorTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Where a kernel reads query or key features from: the features themselves,
/// or the input of an elementwise feature map it applies as it loads.
struct FeatureSource {
  Value tensor;
  std::optional<FeatureMapKind> map;
  /// The element type of the features (φ is rounded to it, as the
  /// feature_map op would).
  Type featureType;
};

inline FeatureSource featureSourceOf(Value features) {
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

/// Where a scan kernel reads its values from: V, or the input of the
/// elementwise feature map that produces them when that input has V's
/// element type (the gradients' scans take φ(Q) and φ(K) as values; the
/// kernels apply the map as they stage them, so that φ is neither written
/// nor read back).
inline FeatureSource valueSourceOf(Value values) {
  FeatureSource source = featureSourceOf(values);
  if (source.map && tensorTypeOf(source.tensor).getElementType() !=
                        tensorTypeOf(values).getElementType())
    return {values, std::nullopt, source.featureType};
  return source;
}

/// Whether async copies of `source` need its feature map applied after
/// they land: elu and relu (features and identity maps of the data type are
/// copied as they are).
inline bool mapsOnCopy(const FeatureSource &source) {
  return source.map && *source.map != FeatureMapKind::Identity;
}

inline StringRef mapName(const FeatureSource &source) {
  if (!source.map)
    return "features";
  return stringifyFeatureMapKind(*source.map);
}

//===----------------------------------------------------------------------===//
// Kernel bodies
//===----------------------------------------------------------------------===//

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
  /// The address of `buffer`'s first element (its memref has the identity
  /// layout: no offset): in the shared window for workgroup buffers.
  Value pointerOf(Value buffer) {
    return memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  }
  /// Whether the first element of `buffer` is aligned to `bytes`.
  Value alignedTo(Value buffer, int64_t bytes) {
    return eq(remU(pointerOf(buffer), idx(bytes)), idx(0));
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
  /// The sum of `values` (at least one) added pairwise: ((v0 + v1) + (v2 +
  /// v3)), so that no chain of dependent adds is longer than log2 of their
  /// number.
  Value pairwiseSum(SmallVector<Value> values) {
    while (values.size() > 1) {
      SmallVector<Value> halved;
      for (size_t j = 0; j + 1 < values.size(); j += 2)
        halved.push_back(fadd(values[j], values[j + 1]));
      if (values.size() % 2)
        halved.push_back(values.back());
      values = std::move(halved);
    }
    return values.front();
  }
  /// `value` summed over each group of `lanes` adjacent lanes of a warp (a
  /// power of two up to 32) by butterfly shuffles: every lane of the group
  /// gets the sum, and every lane of the warp must take part. A value of
  /// fewer than 32 bits is added in f32 (shuffles move 32 or 64 bits).
  Value sumOverLanes(Value value, int64_t lanes) {
    return reduceOverLanes(value, lanes,
                           [&](Value x, Value y) { return fadd(x, y); });
  }
  /// The sums of `values` (a power of two of them, one per value column) over
  /// each group of `lanes` lanes `stride` apart (a power of two; lanes·stride
  /// at most 32), `position` the lane's index in its group. While a lane
  /// holds more than one value, each round of the butterfly halves them:
  /// the lane whose position has bit i set keeps the upper half of its
  /// values and sends the lower one to its partner, which keeps the lower
  /// half, so that one shuffle and one add serve two values of the group.
  /// Returns the lane's `values.size() / min(values.size(), lanes)` sums, of
  /// the values from `transposedSumFirst(position, ...)` on; every lane of
  /// the warp must take part. Values of fewer than 32 bits are added in f32.
  SmallVector<Value> transposedSumOverLanes(SmallVector<Value> values,
                                            int64_t lanes, int64_t stride,
                                            Value position) {
    Type type = values.front().getType();
    bool widen = lanes > 1 && type.getIntOrFloatBitWidth() < 32;
    if (widen)
      for (Value &v : values)
        v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    Value width = arith::ConstantIntOp::create(b, loc, 32, 32);
    int64_t round = 0;
    for (int64_t offset = stride; offset < lanes * stride;
         offset *= 2, ++round) {
      Value o = arith::ConstantIntOp::create(b, loc, offset, 32);
      auto shuffle = [&](Value x) {
        return gpu::ShuffleOp::create(b, loc, x, o, width,
                                      gpu::ShuffleMode::XOR)
            .getShuffleResult();
      };
      if (values.size() == 1) {
        values.front() = fadd(values.front(), shuffle(values.front()));
        continue;
      }
      Value upper = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne,
          arith::AndIOp::create(b, loc, position, idx(int64_t(1) << round)),
          idx(0));
      size_t half = values.size() / 2;
      SmallVector<Value> kept;
      for (size_t j = 0; j < half; ++j) {
        Value send = select(upper, values[j], values[j + half]);
        Value keep = select(upper, values[j + half], values[j]);
        kept.push_back(fadd(keep, shuffle(send)));
      }
      values = std::move(kept);
    }
    if (widen)
      for (Value &v : values)
        v = arith::TruncFOp::create(b, loc, type, v);
    return values;
  }
  /// The index of the first of the sums `transposedSumOverLanes` leaves the
  /// lane at `position` of `count` values over `lanes` lanes.
  Value transposedSumFirst(Value position, int64_t count, int64_t lanes) {
    Value first = idx(0);
    for (int64_t bit = 0; (int64_t(1) << bit) < std::min(count, lanes); ++bit) {
      Value set =
          divU(remU(position, idx(int64_t(2) << bit)), idx(int64_t(1) << bit));
      first = add(first, mul(set, idx(count >> (bit + 1))));
    }
    return first;
  }
  /// The largest `value` of each group of `lanes` lanes `stride` apart (a
  /// power of two; lanes·stride at most 32), as `sumOverLanes` (NaN wins).
  Value maxOverLanes(Value value, int64_t lanes, int64_t stride = 1) {
    return reduceOverLanes(
        value, lanes,
        [&](Value x, Value y) {
          return arith::MaximumFOp::create(b, loc, x, y).getResult();
        },
        stride);
  }
  /// `value` combined by `combine` (associative and commutative) over each
  /// group of `lanes` lanes `stride` apart (powers of two; lanes·stride at
  /// most 32) by butterfly shuffles: every lane of the group gets the
  /// result, and every lane of the warp must take part. A float of fewer
  /// than 32 bits is combined in f32.
  Value reduceOverLanes(Value value, int64_t lanes,
                        function_ref<Value(Value, Value)> combine,
                        int64_t stride = 1) {
    Type type = value.getType();
    bool widen = lanes > 1 && type.getIntOrFloatBitWidth() < 32;
    if (widen)
      value = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    Value width = arith::ConstantIntOp::create(b, loc, 32, 32);
    for (int64_t offset = stride; offset < lanes * stride; offset *= 2) {
      Value o = arith::ConstantIntOp::create(b, loc, offset, 32);
      value = combine(value, gpu::ShuffleOp::create(b, loc, value, o, width,
                                                    gpu::ShuffleMode::XOR)
                                 .getShuffleResult());
    }
    return widen ? arith::TruncFOp::create(b, loc, type, value) : value;
  }
  Value threadId() {
    return gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  }
  Value blockId(gpu::Dimension dim) {
    return gpu::BlockIdOp::create(b, loc, dim);
  }
  void barrier() { gpu::BarrierOp::create(b, loc); }

  /// cp.async of `elements` elements (4, 8 or 16 bytes) at `srcIndex` of the
  /// global buffer `src` to `dstIndex` of the workgroup buffer `dst` (sm_80
  /// and later): `srcElements` of them read, the rest zero-filled (null:
  /// all), through L1 unless `bypassL1` (16 bytes only). Visible to this
  /// thread after `waitAsyncCopies`, to the block after a barrier that
  /// follows it.
  void asyncCopy(Value src, Value srcIndex, Value dst, Value dstIndex,
                 int64_t elements = 1, Value srcElements = Value(),
                 bool bypassL1 = false) {
    nvgpu::DeviceAsyncCopyOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst,
        ValueRange{dstIndex}, src, ValueRange{srcIndex},
        b.getIndexAttr(elements), srcElements,
        bypassL1 ? b.getUnitAttr() : UnitAttr());
  }
  /// Closes the group of this thread's async copies issued since the last
  /// one (cp.async.commit_group; nvgpu's create_group without tokens does
  /// not round-trip through its textual form).
  void commitAsyncCopies() { NVVM::CpAsyncCommitGroupOp::create(b, loc); }
  /// Waits for all but the `pending` most recent groups of this thread's
  /// async copies.
  void waitAsyncCopies(int64_t pending) {
    NVVM::CpAsyncWaitGroupOp::create(b, loc, pending);
  }

  /// The byte address `address` (an index) as an LLVM pointer in address
  /// space `space`: 3 for shared memory (`pointerOf` a workgroup buffer),
  /// 7 for the same as this block's shared memory in its cluster's, 1 for
  /// global memory (generic addresses, as `pointerOf` gives them for kernel
  /// arguments, cast to global).
  Value llvmPointer(Value address, unsigned space) {
    Value bits = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), address);
    auto pointerType = [&](unsigned s) {
      return LLVM::LLVMPointerType::get(b.getContext(), s);
    };
    bool shared = space == 3 || space == 7;
    Value pointer =
        LLVM::IntToPtrOp::create(b, loc, pointerType(shared ? 3 : 0), bits);
    if (space == 3)
      return pointer;
    return LLVM::AddrSpaceCastOp::create(b, loc, pointerType(space), pointer);
  }
  /// sm_90's bulk copy of `bytes` (a multiple of 16, both addresses 16-byte
  /// aligned) from global address `src` to shared address `dst`, which
  /// completes its bytes on the mbarrier at shared address `barrier`.
  void bulkCopy(Value dst, Value src, Value barrier, int64_t bytes) {
    // The shared::cluster form: PTX 8.0 (shared::cta needs 8.6).
    NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
        b, loc, llvmPointer(dst, 7), llvmPointer(src, 1),
        llvmPointer(barrier, 3),
        arith::ConstantIntOp::create(b, loc, bytes, 32),
        /*multicastMask=*/Value(), /*l2CacheHint=*/Value());
  }
  /// Initializes the mbarrier at shared address `barrier` for `arrivals`
  /// arrivals a phase.
  void initBarrier(Value barrier, int64_t arrivals) {
    NVVM::MBarrierInitOp::create(
        b, loc, llvmPointer(barrier, 3),
        arith::ConstantIntOp::create(b, loc, arrivals, 32),
        /*predicate=*/Value());
  }
  void invalidateBarrier(Value barrier) {
    NVVM::MBarrierInvalOp::create(b, loc, llvmPointer(barrier, 3));
  }
  /// This thread's arrival on the mbarrier at `barrier`, which first adds
  /// `bytes` (an i32) to the bytes its phase waits for.
  void arriveExpectingBytes(Value barrier, Value bytes) {
    NVVM::MBarrierArriveExpectTxOp::create(
        b, loc, /*res=*/Type(), llvmPointer(barrier, 3), bytes,
        NVVM::MemScopeKind::CTA, /*relaxed=*/false, /*predicate=*/Value());
  }
  /// Waits until the phase of parity `parity` (an i32, 0 or 1) of the
  /// mbarrier at `barrier` has completed (a loop of try_wait, each
  /// suspending the thread for at most 10 ms).
  void waitBarrier(Value barrier, Value parity) {
    constexpr int64_t kSuspendNanoseconds = 10'000'000;
    NVVM::MBarrierTryWaitParityOp::create(
        b, loc, llvmPointer(barrier, 3), parity,
        arith::ConstantIntOp::create(b, loc, kSuspendNanoseconds, 32));
  }

  /// Prefetches the line that holds device address `address` into L2, by
  /// inline PTX (`kPrefetchL2Asm`, a generic address): LLVM selects its
  /// prefetch intrinsic only for sm_90 with PTX 8.0, and the instruction
  /// exists on every chip.
  void prefetchL2(Value address) {
    LLVM::InlineAsmOp::create(b, loc, TypeRange{},
                              ValueRange{arith::IndexCastUIOp::create(
                                  b, loc, b.getI64Type(), address)},
                              kPrefetchL2Asm, "l", /*has_side_effects=*/true,
                              /*is_align_stack=*/false,
                              LLVM::tailcallkind::TailCallKind::None,
                              /*asm_dialect=*/LLVM::AsmDialectAttr(),
                              /*operand_attrs=*/ArrayAttr());
  }

  /// The `count` elements of the workgroup buffer from `base`, a multiple of
  /// min(count, 4): loads of up to 4 elements, so that a lane's group of 4
  /// is one 16-byte load for f32.
  SmallVector<Value> loadRun(Value buffer, Value base, int64_t count) {
    Type element = cast<MemRefType>(buffer.getType()).getElementType();
    int64_t width = std::min<int64_t>(count, 4);
    auto type = VectorType::get({width}, element);
    SmallVector<Value> elements;
    for (int64_t e = 0; e < count; e += width) {
      Value at = add(base, idx(e));
      if (width == 1) {
        elements.push_back(
            memref::LoadOp::create(b, loc, buffer, ValueRange{at}));
        continue;
      }
      Value run = vector::LoadOp::create(b, loc, type, buffer, ValueRange{at},
                                         /*nontemporal=*/false,
                                         runAlignment(element, width));
      for (int64_t j = 0; j < width; ++j)
        elements.push_back(
            vector::ExtractOp::create(b, loc, run, ArrayRef<int64_t>{j}));
    }
    return elements;
  }
  /// Stores `elements` to the workgroup buffer from `base`, as loadRun loads
  /// them.
  void storeRun(Value buffer, Value base, ArrayRef<Value> elements) {
    Type element = cast<MemRefType>(buffer.getType()).getElementType();
    int64_t count = elements.size();
    int64_t width = std::min<int64_t>(count, 4);
    auto type = VectorType::get({width}, element);
    for (int64_t e = 0; e < count; e += width) {
      Value at = add(base, idx(e));
      if (width == 1) {
        memref::StoreOp::create(b, loc, elements[e], buffer, ValueRange{at});
        continue;
      }
      Value run = vector::FromElementsOp::create(b, loc, type,
                                                 elements.slice(e, width));
      vector::StoreOp::create(b, loc, run, buffer, ValueRange{at},
                              /*nontemporal=*/false,
                              runAlignment(element, width));
    }
  }
  /// Applies `source`'s feature map in place to the `width` elements of the
  /// workgroup buffer from `at` (loaded and stored as loadRun and storeRun
  /// do): what staging by async copies, which convert nothing, does once
  /// the copies have landed.
  void mapRun(Value buffer, Value at, int64_t width,
              const FeatureSource &source) {
    SmallVector<Value> run = loadRun(buffer, at, width);
    for (Value &x : run)
      x = featureOf(x, source);
    storeRun(buffer, at, run);
  }
  /// Runs `body(4)` where `wide` (an i1) holds and `body(1)` elsewhere; only
  /// `body(1)` without `wide`: staging loops that copy 16 bytes at a time
  /// where a run-time test allows it and 4 elsewhere.
  void byWidth(Value wide, function_ref<void(int64_t)> body) {
    if (!wide)
      return body(1);
    ifElse(
        wide, [&] { body(4); }, [&] { body(1); });
  }
  /// The alignment loadRun and storeRun claim for `width` elements: theirs,
  /// at most the 16 bytes workgroup buffers are aligned to.
  static llvm::MaybeAlign runAlignment(Type element, int64_t width) {
    return llvm::MaybeAlign(
        std::min<int64_t>(width * element.getIntOrFloatBitWidth() / 8, 16));
  }

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
    return featureOf(load(buffer, index), source);
  }
  /// How a feature map computes exp.
  enum class Exp {
    /// math.exp: libdevice's expf (within 2 ulp, about ten instructions).
    Accurate,
    /// 2^(x·log2 e) by `ex2.approx.ftz.f32` (kEx2ApproxFtzIntrinsic), two
    /// instructions, for f32 features that are rounded to at most 11
    /// significant bits before any use (the tensor cores' bf16, f16 and
    /// tf32 operands). Its error, 2 + ⌊1.17·|x|⌋ ulp of f32 (CUDA's __expf),
    /// is below 2^-17 of the result for every x > -87.4, where the rounding
    /// to 11 bits is up to 2^-12, so it moves a feature by at most its last
    /// place, and only next to a tie. Smaller results, below 2^-126, flush to
    /// zero. Other types take math.exp.
    Approximate,
  };
  /// 2^x for f32 `x`, by the special-function unit (kEx2ApproxFtzIntrinsic).
  Value exp2Approx(Value x) {
    return LLVM::CallIntrinsicOp::create(b, loc, x.getType(),
                                         b.getStringAttr(kEx2ApproxFtzIntrinsic),
                                         ValueRange{x})
        .getResult(0);
  }
  /// e^x, as `how` says.
  Value exp(Value x, Exp how = Exp::Accurate) {
    if (how == Exp::Approximate && x.getType().isF32())
      return exp2Approx(fmul(x, fconst(1.4426950408889634))); // log2(e)
    return math::ExpOp::create(b, loc, x);
  }
  /// The source's feature map of `x` (an element of the source, in the state
  /// type), in the state type and not rounded to the feature type; exp as
  /// `how` says.
  Value mapFeature(Value x, const FeatureSource &source,
                   Exp how = Exp::Accurate) {
    if (!source.map)
      return x;
    switch (*source.map) {
    case FeatureMapKind::Elu: {
      // elu(x) + 1 is x + 1 for x > 0 and exp(x) otherwise.
      Value positive = arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::OGT, x, fconst(0.0));
      return select(positive, fadd(x, fconst(1.0)), exp(x, how));
    }
    case FeatureMapKind::Relu:
      return arith::MaximumFOp::create(b, loc, x, fconst(0.0));
    default:
      return x;
    }
  }
  /// The feature of `x` (an element of the source, in the state type): the
  /// source's feature map, rounded to the feature type, in the state type.
  Value featureOf(Value x, const FeatureSource &source) {
    if (!source.map)
      return x;
    return convertFloat(
        b, loc, convertFloat(b, loc, mapFeature(x, source), source.featureType),
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
  /// `for (i = blockIdx.dim; i < extent; i += gridDim.dim) body(i)`: the
  /// blocks along `dim` cover `extent` however few the launch has (grid y
  /// and z are clamped by `gridSizeYZ`). Uniform within a block, so `body`
  /// may hold barriers.
  void gridStrideLoop(gpu::Dimension dim, Value extent,
                      function_ref<void(Value)> body) {
    forLoop(blockId(dim), extent, gpu::GridDimOp::create(b, loc, dim), body);
  }
  void ifElse(Value cond, function_ref<void()> then,
              function_ref<void()> otherwise) {
    scf::IfOp::create(
        b, loc, cond,
        [&](OpBuilder &, Location) {
          then();
          scf::YieldOp::create(b, loc);
        },
        [&](OpBuilder &, Location) {
          otherwise();
          scf::YieldOp::create(b, loc);
        });
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

/// The rows of batch element `batch` in a kernel's q, k, v and O buffers
/// (rows of F or Dv elements, `n` of them an element): token t is row
/// b·N + t, or token-major, with the kernel's argument H as `heads`
/// (`TokenMajorRows`), row (b / H · N + t)·H + b mod H, consecutive tokens
/// H rows apart.
class TokenRows {
public:
  TokenRows(KernelBuilder &kb, Value batch, Value n, Value heads = Value())
      : kb(kb), batch(batch), n(n), heads(heads) {
    if (!heads)
      return;
    outer = kb.mul(kb.divU(batch, heads), n);
    head = kb.remU(batch, heads);
  }

  /// The row of token `t` (an index).
  Value operator()(Value t) const {
    if (!heads)
      return kb.add(kb.mul(batch, n), t);
    return kb.add(kb.mul(kb.add(outer, t), heads), head);
  }

  /// The row of the token `t` tokens after the one of row `row`.
  Value after(Value row, Value t) const {
    return kb.add(row, heads ? kb.mul(t, heads) : t);
  }

  /// Elements from one token's row to the next in rows of `width`.
  Value stride(Value width) const {
    return heads ? kb.mul(heads, width) : width;
  }

private:
  KernelBuilder &kb;
  Value batch, n, heads, outer, head;
};

/// The argument H of a kernel whose rows are token-major (`TokenRows`): the
/// one after its sizes, the last but for the records of `phaseClocks`;
/// null where the rows are not token-major.
inline Value headsArgument(gpu::GPUFuncOp kernel, bool tokenMajor,
                           bool phaseClocks) {
  if (!tokenMajor)
    return Value();
  return kernel.getArgument(kernel.getFunctionType().getNumInputs() -
                            (phaseClocks ? 2 : 1));
}

/// A flat, dynamically sized buffer of `elementType` (what kernels take).
inline MemRefType flatBufferType(Type elementType) {
  return MemRefType::get({ShapedType::kDynamic}, elementType);
}

inline MemRefType workgroupBufferType(Type elementType, int64_t size) {
  MLIRContext *ctx = elementType.getContext();
  return MemRefType::get(
      {size}, elementType, MemRefLayoutAttrInterface{},
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
}

/// A workgroup buffer's bytes and alignment.
struct WorkgroupBufferLayout {
  int64_t bytes, align;
};

/// Lays out workgroup buffers one after the other, each at the next multiple
/// of its alignment, as `linattn-gpu-dynamic-shared-memory` places them in
/// dynamic shared memory: returns the bytes they take and, with `offsets`,
/// where each starts.
inline int64_t
layOutWorkgroupBuffers(ArrayRef<WorkgroupBufferLayout> buffers,
                       SmallVectorImpl<int64_t> *offsets = nullptr) {
  int64_t end = 0;
  for (const WorkgroupBufferLayout &buffer : buffers) {
    end = llvm::alignTo(end, buffer.align);
    if (offsets)
      offsets->push_back(end);
    end += buffer.bytes;
  }
  return end;
}

/// The bytes and alignment of each of `func`'s workgroup buffers, in order
/// (their alignment: the element's bytes, or more with `llvm.align`); an
/// error on `func` where one is not a static memref of integers or floats in
/// workgroup memory.
FailureOr<SmallVector<WorkgroupBufferLayout>>
workgroupBufferLayouts(gpu::GPUFuncOp func);

/// Checks that `bytes` of shared memory fit a block of `chip` (whose limit
/// is `limitBytes`); an error on `func` where they do not.
LogicalResult checkSharedMemoryFits(gpu::GPUFuncOp func, int64_t bytes,
                                    StringRef chip, int64_t limitBytes);

/// Creates an empty kernel `name` in `kernels` with the given arguments and
/// workgroup buffers; the builder is left at the start of its body.
///
/// Every workgroup buffer starts 16-byte aligned (`llvm.align`; callers may
/// ask for more). The NVPTX backend merges adjacent scalar loads of a buffer
/// into 16-byte vector loads: from a buffer declared with the element's
/// alignment only, an H100 faults (CUDA_ERROR_MISALIGNED_ADDRESS; seen with
/// the step kernel's φ(q), φ(k) at F = 7, which the emulator, reading MLIR,
/// cannot see).
inline gpu::GPUFuncOp createKernel(OpBuilder &b, Location loc,
                                   gpu::GPUModuleOp kernels, StringRef name,
                                   TypeRange args, TypeRange workgroup) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(kernels.getBody());
  auto func =
      gpu::GPUFuncOp::create(b, loc, name, b.getFunctionType(args, TypeRange{}),
                             workgroup, TypeRange{});
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  for (unsigned i = 0; i < workgroup.size(); ++i)
    func.setWorkgroupAttributionAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                                     b.getI64IntegerAttr(16));
  SymbolTable(kernels).insert(func);
  b.setInsertionPointToEnd(&func.getBody().front());
  gpu::ReturnOp::create(b, loc);
  return func;
}

inline void setInsertionPointToKernelBody(OpBuilder &b, gpu::GPUFuncOp func) {
  b.setInsertionPoint(func.getBody().front().getTerminator());
}

//===----------------------------------------------------------------------===//
// Host side: buffers, launch stubs
//===----------------------------------------------------------------------===//

inline Value ceilDiv(OpBuilder &b, Location loc, Value x, int64_t tile) {
  return arith::CeilDivUIOp::create(
      b, loc, x, arith::ConstantIndexOp::create(b, loc, tile));
}

/// The number of blocks of `tile` that cover `x`, at least one: a launch over
/// an empty dimension still has a valid grid (its kernel then does nothing).
inline Value tileCount(OpBuilder &b, Location loc, Value x, int64_t tile) {
  return arith::MaxUIOp::create(b, loc, ceilDiv(b, loc, x, tile),
                                arith::ConstantIndexOp::create(b, loc, 1));
}

/// A kernel timed by `phase-clocks` (PhaseClocks.h) names its printer by
/// this attribute: each launch of it gets, as its last argument, a buffer
/// of `kPhaseClockRecord` i64 per block, which the printer, launched on it
/// right after, prints a line of per block.
inline constexpr llvm::StringLiteral kPhaseClocksAttrName =
    "linattn.phase_clocks";
inline constexpr int64_t kPhaseClockRecord = 20;

/// Emits, in the host function, the buffers of one kernel launch and the
/// call of its launch stub.
class LaunchBuilder {
public:
  LaunchBuilder(RewriterBase &rewriter, Location loc, ModuleOp module)
      : b(rewriter), loc(loc), module(module) {}

  /// A read-only flat buffer of `tensor`.
  Value input(Value tensor) {
    args.push_back(flatten(ReadBufferOp::create(b, loc, tensor)));
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

  /// A flat buffer the caller built, which the kernel reads or (`written`)
  /// writes; `kept`: it writes only some of its elements (a slice of it) and
  /// keeps the others, so that a copy to the device must precede the launch
  /// as well as follow it.
  void buffer(Value flat, bool written, bool kept) {
    if (written)
      outputIndices.push_back(args.size());
    if (written && kept)
      updatedIndices.push_back(args.size());
    args.push_back(flat);
  }

  void scalar(Value value) { args.push_back(value); }
  void scalars(ArrayRef<Value> values) { llvm::append_range(args, values); }

  /// Calls the launch stub of `kernel` with the grid and blocks of `threads`
  /// threads, and returns the result tensors. The kernel gets the block size
  /// as its `known_block_size` (ptxas's `.maxntid`: registers are allocated
  /// for blocks of that size, and thread ids have a known range).
  SmallVector<Value> launch(gpu::GPUFuncOp kernel, ArrayRef<Value> grid,
                            int64_t threads) {
    // A timed kernel: its blocks' records last, then its printer on them.
    auto printer =
        kernel->getAttrOfType<FlatSymbolRefAttr>(kPhaseClocksAttrName);
    Value blocks;
    if (printer) {
      blocks = arith::MulIOp::create(
          b, loc, arith::MulIOp::create(b, loc, grid[0], grid[1]), grid[2]);
      Value elements = arith::MulIOp::create(
          b, loc, blocks,
          arith::ConstantIndexOp::create(b, loc, kPhaseClockRecord));
      output(RankedTensorType::get({ShapedType::kDynamic}, b.getI64Type()),
             {elements});
    }
    kernel.setKnownBlockSizeAttr(
        b.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
    SmallVector<Value> operands(grid.begin(), grid.end());
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    operands.append(
        {arith::ConstantIndexOp::create(b, loc, threads), one, one});
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
    if (!updatedIndices.empty())
      stub->setAttr(kUpdatedAttrName, b.getDenseI64ArrayAttr(updatedIndices));
    SymbolTable(module).insert(stub);
    b.restoreInsertionPoint(callPoint);
    func::CallOp::create(b, loc, stub, operands);
    SmallVector<Value> results;
    for (auto [buffer, type] : outputs)
      results.push_back(bufferization::ToTensorOp::create(
          b, loc, type, buffer, /*restrict=*/true, /*writable=*/true));
    if (printer) {
      Value records = results.pop_back_val();
      auto print = kernel->getParentOfType<gpu::GPUModuleOp>()
                       .lookupSymbol<gpu::GPUFuncOp>(printer.getValue());
      LaunchBuilder lines(b, loc, module);
      lines.input(records);
      lines.scalar(blocks);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      lines.launch(print, {tileCount(b, loc, blocks, 128), one, one}, 128);
    }
    return results;
  }

private:
  /// `buffer`, of identity layout, as the flat dynamically sized buffer
  /// kernels take: a reinterpret cast to its element count. (A collapse_shape
  /// infers its type: the canonicalizer folds casts into it and may infer a
  /// static 0 beside a dynamic size, which the collapse's verifier rejects.)
  Value flatten(Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    MemRefType dynamic = flatBufferType(type.getElementType());
    if (type == dynamic)
      return buffer;
    Value count = arith::ConstantIndexOp::create(b, loc, 1);
    for (OpFoldResult size : memref::getMixedSizes(b, loc, buffer))
      count = b.createOrFold<arith::MulIOp>(
          loc, count, getValueOrCreateConstantIndexOp(b, loc, size));
    return memref::ReinterpretCastOp::create(
        b, loc, dynamic, buffer, b.getIndexAttr(0), {getAsOpFoldResult(count)},
        {b.getIndexAttr(1)});
  }

  RewriterBase &b;
  Location loc;
  ModuleOp module;
  SmallVector<Value> args;
  SmallVector<int64_t> outputIndices, updatedIndices;
  SmallVector<std::pair<Value, RankedTensorType>> outputs;
};

/// The product of the first `count` sizes of `value`, as an index.
inline Value batchProduct(OpBuilder &b, Location loc, Value value,
                          int64_t count) {
  Value product = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t i = 0; i < count; ++i) {
    Value size = getValueOrCreateConstantIndexOp(
        b, loc, tensor::getMixedSize(b, loc, value, i));
    product = arith::MulIOp::create(b, loc, product, size);
  }
  return product;
}

inline OpFoldResult sizeOf(OpBuilder &b, Location loc, Value value,
                           int64_t dim) {
  if (dim < 0)
    dim += tensorTypeOf(value).getRank();
  return tensor::getMixedSize(b, loc, value, dim);
}

/// `sizes` of the leading `count` dimensions of `value` followed by `rest`.
inline SmallVector<OpFoldResult> leadingThen(OpBuilder &b, Location loc,
                                             Value value, int64_t count,
                                             ArrayRef<OpFoldResult> rest) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < count; ++i)
    sizes.push_back(tensor::getMixedSize(b, loc, value, i));
  llvm::append_range(sizes, rest);
  return sizes;
}

/// The largest grid y and z sizes CUDA launches.
inline constexpr int64_t kMaxGridYZ = 65535;

/// Why a scan or step kernel cannot take `dv` value columns in blocks of
/// `columns` (one per block of grid y, which CUDA caps at `kMaxGridYZ`), if
/// it cannot; a dynamic Dv is left to the launch, which reports the failure.
inline std::optional<std::string> valueTilesUnsupported(int64_t dv,
                                                        int64_t columns) {
  if (ShapedType::isDynamic(dv))
    return std::nullopt;
  int64_t tiles = llvm::divideCeil(dv, columns);
  if (tiles <= kMaxGridYZ)
    return std::nullopt;
  return "Dv = " + std::to_string(dv) + " needs " + std::to_string(tiles) +
         " blocks of " + std::to_string(columns) +
         " value columns, more than the " + std::to_string(kMaxGridYZ) +
         " of CUDA's grid y";
}

/// The grid y or z size of a launch whose kernel walks `extent` blocks along
/// that dimension with `KernelBuilder::gridStrideLoop`.
inline Value gridSizeYZ(OpBuilder &b, Location loc, Value extent) {
  return arith::MinUIOp::create(
      b, loc, extent, arith::ConstantIndexOp::create(b, loc, kMaxGridYZ));
}

/// Threads per block for `columns` value columns (static or not).
inline int64_t blockSizeFor(int64_t columns, int64_t maxBlock) {
  if (ShapedType::isDynamic(columns))
    return maxBlock;
  int64_t rounded = std::max<int64_t>(32, (columns + 31) / 32 * 32);
  return std::min(rounded, maxBlock);
}

/// Host index arithmetic that folds to constants where the operands are
/// (static sizes), so that choices between kernels are made at compile time
/// where they can be and at run time otherwise.
struct HostIndex {
  RewriterBase &rewriter;
  Location loc;

  Value constant(int64_t value) {
    return arith::ConstantIndexOp::create(rewriter, loc, value).getResult();
  }
  Value mul(Value x, Value y) {
    return rewriter.createOrFold<arith::MulIOp>(loc, x, y);
  }
  Value minU(Value x, Value y) {
    return rewriter.createOrFold<arith::MinUIOp>(loc, x, y);
  }
  Value atLeastOne(Value x) {
    return rewriter.createOrFold<arith::MaxUIOp>(loc, x, constant(1));
  }
  Value divideCeil(Value x, Value y) {
    return rewriter.createOrFold<arith::CeilDivUIOp>(loc, x, y);
  }
  /// The size of dimension `dim` of `value`.
  Value size(Value value, int64_t dim) {
    return getValueOrCreateConstantIndexOp(rewriter, loc,
                                           sizeOf(rewriter, loc, value, dim));
  }
  /// The product of the `dims` leading dimensions of `value`.
  Value batch(Value value, int64_t dims) {
    Value product = constant(1);
    for (int64_t i = 0; i < dims; ++i)
      product = mul(product, size(value, i));
    return product;
  }

  /// Segments of whole chunks for a kernel of `blocks` blocks per segment
  /// over `chunks` chunks, returned as (chunks per segment, segments): one
  /// segment when the blocks reach half of `target` (by default one per
  /// SM), otherwise as many as reach `target` blocks (`atMostTarget`: as
  /// many as stay within it, for kernels of which `target` blocks is all an
  /// SM holds at once), at most one per `minPerSegment` chunks and CUDA's
  /// grid z limit; none of them empty. `target` 0: one segment.
  std::pair<Value, Value> segments(Value blocks, Value chunks, int64_t target,
                                   int64_t minPerSegment = 1,
                                   bool atMostTarget = false) {
    Value one = constant(1);
    if (target <= 0)
      return {atLeastOne(chunks), one};
    blocks = atLeastOne(blocks);
    Value fills = rewriter.createOrFold<arith::CmpIOp>(
        loc, arith::CmpIPredicate::uge, mul(blocks, constant(2)),
        constant(target));
    Value perBlock = atMostTarget ? rewriter.createOrFold<arith::DivUIOp>(
                                        loc, constant(target), blocks)
                                  : divideCeil(constant(target), blocks);
    Value wanted =
        rewriter.createOrFold<arith::SelectOp>(loc, fills, one, perBlock);
    Value most = rewriter.createOrFold<arith::DivUIOp>(
        loc, chunks, constant(std::max<int64_t>(minPerSegment, 1)));
    Value split = atLeastOne(minU(minU(wanted, most), constant(kMaxGridYZ)));
    Value perSegment = atLeastOne(divideCeil(chunks, split));
    return {perSegment, atLeastOne(divideCeil(chunks, perSegment))};
  }

  /// `then()` where `cond` (an i1) holds, `otherwise()` where not: decided
  /// here when `cond` is a constant, at run time by an scf.if otherwise.
  SmallVector<Value> choose(Value cond, function_ref<SmallVector<Value>()> then,
                            function_ref<SmallVector<Value>()> otherwise) {
    if (std::optional<int64_t> known = getConstantIntValue(cond))
      return *known ? then() : otherwise();
    auto branch = scf::IfOp::create(
        rewriter, loc, cond,
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(rewriter, loc, then());
        },
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(rewriter, loc, otherwise());
        });
    return SmallVector<Value>(branch.getResults());
  }
};

/// What the scan over segment states (`buildSegmentScan`) is specialized
/// for.
struct SegmentScanConfig {
  int64_t features;
  Type stateType;
  /// Whether the scan starts from an initial state and normalizer.
  bool hasInit;
  /// Whether it writes the final S and z.
  bool writesState;
  /// Whether it scans the normalizer z too.
  bool normalizer;
};

/// Pass 2 of a sequence-parallel scan: the scan over the segments' state
/// contributions (see the definition for its arguments and grid).
gpu::GPUFuncOp buildSegmentScan(RewriterBase &rewriter, Location loc,
                                gpu::GPUModuleOp kernels, StringRef name,
                                const SegmentScanConfig &c, bool prefixes);

/// Threads per block of `buildSegmentScan`'s kernels.
inline constexpr int64_t kSegmentScanThreads = 256;

//===----------------------------------------------------------------------===//
// The converter
//===----------------------------------------------------------------------===//

/// Where the chunked kernels of a scan read Q, K and V and write O when
/// transposes convert all four from and to the token-major layout
/// [..., N, H, W] (`ChunkedScanConfig::tokenMajor`): the transposes'
/// sources, and O's transpose, which the kernels' result replaces. Empty
/// (false) for contiguous rows.
struct TokenMajorRows {
  /// The sources of φ(Q) or Q, φ(K) or K (or their feature maps' inputs,
  /// as `FeatureSource::tensor`) and V (as `ChunkedScanConfig::v`).
  Value queries, keys, values;
  /// O's transpose into [..., N, H, Dv].
  linalg::TransposeOp result;
  /// H, on the host.
  Value heads;

  explicit operator bool() const { return static_cast<bool>(result); }
};

/// The token-major source of `tensor`: the input of the transpose of
/// [..., N, H, W] into [..., H, N, W] that produces it; null otherwise.
Value tokenMajorSource(Value tensor);

/// The transpose of `result` ([..., H, N, W]) into [..., N, H, W] where it
/// is its only user besides `tensor.dim`s of constant dimensions; null
/// otherwise.
linalg::TransposeOp tokenMajorUser(Value result);

/// The token-major rows of the kernels of the scan `op`, reading `q`, `k`
/// and `v` (`featureSourceOf`, `valueSourceOf`): where each of the three
/// has a `tokenMajorSource` and O a `tokenMajorUser`, the kernels read and
/// write the untransposed tensors, and the transposes (copies on the GPU)
/// go. Empty otherwise; `heads` is left to the caller.
TokenMajorRows tokenMajorRows(ScanOp op, const FeatureSource &q,
                              const FeatureSource &k, const FeatureSource &v);

/// Adds to `launch` the token-major result that replaces `transpose` (its
/// `tokenMajorUser`): of the transpose's type, sized as the token-major
/// input `source` ([..., N, H, ·]) but for `columns` columns.
void addTokenMajorOutput(OpBuilder &b, LaunchBuilder &launch,
                         linalg::TransposeOp transpose, Value source,
                         OpFoldResult columns);

/// Replaces `transpose`, the `tokenMajorUser` of `result`, by `tokenMajor`
/// (the result in its layout), and the `tensor.dim`s of `result` by those
/// of `tokenMajor`, the token and head dimensions swapped. `result` is then
/// unused.
void replaceByTokenMajor(RewriterBase &rewriter, Value result,
                         linalg::TransposeOp transpose, Value tokenMajor);

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
  /// The recurrent kernel of a scan, on CUDA cores in the state's type.
  std::optional<std::string> convertRecurrent(ScanOp op);
  std::optional<std::string> convert(StepOp op);
  /// The linear form's chunked tensor-core kernels (f16/bf16 data, f32
  /// state): the key-value summary as the sequence-parallel scan's segment
  /// sums, the readout as its chunk loop without scores.
  std::optional<std::string> convertChunked(KvSummaryOp op);
  std::optional<std::string> convertChunked(QueryReadoutOp op);
  std::optional<std::string> convert(KvSummaryOp op);
  std::optional<std::string> convert(QueryReadoutOp op);
  std::optional<std::string> convert(ScoresOp op);
  std::optional<std::string> convert(ApplyScoresOp op);
  void convert(FeatureMapOp op);
  /// The chain rule through an elementwise map (elu, relu, identity), one
  /// thread per element.
  void convert(FeatureMapGradOp op);
  /// A kernel over rows of elements, one thread per element of a row: grid
  /// (tiles of `block` elements, rows), the rows past the grid's limit by a
  /// grid-stride loop. Its arguments are flat buffers of `elementTypes`,
  /// then the row count, the elements per row and `scalars` more indices;
  /// `body(kb, args, row, column)` runs for each element in range.
  gpu::GPUFuncOp buildRowKernel(
      Location loc, StringRef name, ArrayRef<Type> elementTypes,
      unsigned scalars, int64_t block, Type computeType,
      function_ref<void(KernelBuilder &, ArrayRef<BlockArgument>, Value, Value)>
          body);
  /// Launches a kernel of `buildRowKernel` on `rows` rows of `columns`
  /// elements, with `scalars` after them; returns its results.
  SmallVector<Value> launchRows(LaunchBuilder &launch, Location loc,
                                gpu::GPUFuncOp kernel, Value rows,
                                Value columns, ArrayRef<Value> scalars,
                                int64_t block);
  /// Launches a scan kernel computing the results of `op` at the current
  /// insertion point (see the definition); returns O, then S and z when
  /// `scanWritesState(op)`.
  SmallVector<Value> launchScan(ScanOp op, gpu::GPUFuncOp kernel, Value queries,
                                Value keys, Value values, int64_t features,
                                int64_t dvTile, int64_t threads,
                                const TokenMajorRows &rows = {});
  /// The kernels of a sequence-parallel scan.
  struct SegmentKernels {
    gpu::GPUFuncOp states, prefix, outputs;
    /// The states kernel's blocks per batch element and segment where they
    /// are not the outputs kernel's `tiles` (`buildSegmentStates` with
    /// `featureSplit`).
    Value statesTiles = {};
  };
  /// Launches a sequence-parallel scan computing the results of `op` at the
  /// current insertion point (see the definition); returns what
  /// `launchScan` does.
  SmallVector<Value> launchSegments(ScanOp op, const SegmentKernels &kernels,
                                    Value queries, Value keys, Value values,
                                    Value batch, Value tiles, Value perSegment,
                                    Value segments, int64_t threads,
                                    const TokenMajorRows &rows = {});
  /// Its segment states and the scan over them (`kernels.states` and
  /// `kernels.prefix`): the starting states and normalizers, then S and z
  /// when `scanWritesState(op)`.
  SmallVector<Value>
  launchSegmentPrefixes(ScanOp op, const SegmentKernels &kernels, Value keys,
                        Value values, Value batch, Value tiles,
                        Value perSegment, Value segments, int64_t threads,
                        const TokenMajorRows &rows = {});
  /// Its segments' outputs by `outputs` from `prefixes`: O.
  Value launchSegmentOutputs(ScanOp op, gpu::GPUFuncOp outputs, Value queries,
                             Value keys, Value values, ValueRange prefixes,
                             Value batch, Value tiles, Value perSegment,
                             Value segments, int64_t threads,
                             const TokenMajorRows &rows = {});
  /// What `launchSegments` returns, from O and the prefixes.
  SmallVector<Value> withSegmentState(ScanOp op, Value o, ValueRange prefixes);
  /// Replaces `op` by `results`, as `launchScan` returns them: O, then S and
  /// z only when they have uses. With token-major `rows`, O is token-major
  /// and replaces O's transpose.
  void replaceScan(ScanOp op, ValueRange results,
                   const TokenMajorRows &rows = {});

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

/// Whether the lowering of `op` writes its final state: only when S or z has
/// uses. Attention lowered to a scan discards them, and its kernels then
/// neither take nor write them.
inline bool scanWritesState(ScanOp op) {
  return !op.getFinalState().use_empty() ||
         !op.getFinalNormalizer().use_empty();
}

/// The arguments of a scan kernel, in the order `launchScan` passes them:
/// q, k, v, the initial state (when there is one), O, S and z (when the
/// kernel writes the state), N, Dv.
struct ScanKernelArgs {
  Value q, k, v, s0, z0, o, s, z, n, dv;
};

inline ScanKernelArgs scanKernelArgs(gpu::GPUFuncOp kernel, bool hasInit,
                                     bool writesState) {
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
  if (writesState) {
    bound.s = args[a++];
    bound.z = args[a++];
  }
  bound.n = args[a++];
  bound.dv = args[a++];
  return bound;
}

/// Why the chunked tensor-core kernels do not apply to `op` (f32 data only
/// with `tf32`), nothing when they do.
std::optional<std::string> chunkedScanUnsupported(ScanOp op, bool tf32);
/// Why the linear form's chunked kernels do not apply to `op`, nothing when
/// they do.
std::optional<std::string> chunkedLinearUnsupported(KvSummaryOp op, bool tf32);
std::optional<std::string> chunkedLinearUnsupported(QueryReadoutOp op,
                                                    bool tf32);

} // namespace mlir::linattn::gpukernels

#endif // LINATTN_LIB_CONVERSION_LINATTNTOGPU_KERNELBUILDERS_H
