//===- LinAttnToCPUKernels.cpp - vectorized scan and step kernels ---------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The causal recurrence is the one part of linear attention where generic
// loop lowering is far from the machine: per token and head it does 4·F·Dv
// flops on an F×Dv state that a scalar loop reloads and stores for every
// token. The kernel emitted here
//
//   - walks the tokens of one batch element in blocks of P, with the feature
//     maps, the normalizer z and the denominators φ(q)ᵀz of the block computed
//     once, vectorized over F, into a stack buffer of P×F features;
//   - for each W-wide column tile of the state, loads every state row once,
//     applies the P rank-1 updates s += φ(k_t)[i]·v_t and the P readouts
//     acc_t += φ(q_t)[i]·s while the row is in a register, and stores it
//     once: 2·P vector FMAs per row load and store;
//   - runs the batch elements in an `scf.parallel`, which the CPU pipeline
//     turns into OpenMP threads.
//
//===----------------------------------------------------------------------===//

#include "linattn/Conversion/Passes.h"
#include "linattn/IR/LinAttnOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/TargetParser/Host.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_CONVERTLINATTNTOCPUKERNELSPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;

/// Marks the exps of the kernels for the polynomial approximation.
static constexpr StringLiteral kKernelExpAttr = "linattn.kernel_exp";

//===----------------------------------------------------------------------===//
// Kernel description
//===----------------------------------------------------------------------===//

namespace {

/// The buffers of one scan or step, and how the kernel treats them. q, k and
/// v are [batch..., N, X] for a scan and [batch..., X] for a step.
struct KernelOperands {
  /// The raw inputs of the fused feature maps (the features themselves when
  /// nothing is fused), and the values.
  Value q, k, v;
  /// The feature map applied on load and the element type its result is
  /// rounded to (the type `linattn.feature_map` would have produced).
  FeatureMapKind qMap = FeatureMapKind::Identity,
                 kMap = FeatureMapKind::Identity;
  Type qFeatureType, kFeatureType;
  /// Initial state (null when it starts at zero), state and normalizer
  /// updated in place, and the outputs.
  Value s0, z0, s, z, out;
  bool hasSequence = true;
  bool reverse = false;
  std::optional<double> eps;
  int64_t batchRank = 0;
};

/// Vector width and register blocking.
struct KernelShape {
  int64_t width;
  int64_t block;
};

/// Emits the loop nest of one scan or step on buffers.
class KernelEmitter {
public:
  KernelEmitter(OpBuilder &builder, Location loc, const KernelOperands &ops,
                KernelShape shape)
      : b(builder), loc(loc), ops(ops), shape(shape), f32(builder.getF32Type()),
        vecType(VectorType::get({shape.width}, builder.getF32Type())) {}

  /// Emits the whole kernel at the builder's insertion point.
  void emit();

private:
  using VectorBody = function_ref<SmallVector<Value>(Value offset, Value mask,
                                                     ValueRange iterArgs)>;

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value dim(Value memref, int64_t d) {
    return memref::DimOp::create(b, loc, memref, d);
  }
  Value zeroVector() {
    return arith::ConstantOp::create(b, loc, vecType,
                                     DenseElementsAttr::get(vecType, 0.0f));
  }

  /// Calls `body` for every W-wide slice [offset, offset + W) of [0, n):
  /// an scf.for over the full slices, then one masked slice for the rest.
  /// The values `body` returns are carried from slice to slice.
  SmallVector<Value> forEachVector(Value n, ValueRange inits, VectorBody body);

  /// Loads W elements at `indices` (the last one the offset) as f32, zero
  /// in the lanes `mask` turns off.
  Value loadVector(Value memref, ValueRange indices, Value mask);
  /// Stores the f32 vector `value` in the element type of `memref`.
  void storeVector(Value value, Value memref, ValueRange indices, Value mask);

  /// Indices of column `offset` of the token at `position` in q, k, v or the
  /// outputs, and of row `row` of the state.
  SmallVector<Value> tokenIndices(Value position, Value offset) {
    SmallVector<Value> indices(batch);
    if (ops.hasSequence)
      indices.push_back(position);
    indices.push_back(offset);
    return indices;
  }
  SmallVector<Value> stateIndices(Value row, Value offset) {
    SmallVector<Value> indices(batch);
    if (row)
      indices.push_back(row);
    indices.push_back(offset);
    return indices;
  }

  /// The [P, F] slice of a [batch..., P, F] scratch buffer for the current
  /// batch element.
  Value scratchFor(Value all) {
    if (ops.batchRank == 0)
      return all;
    int64_t rank = ops.batchRank + 2;
    SmallVector<OpFoldResult> offsets(batch.begin(), batch.end());
    offsets.append({b.getIndexAttr(0), b.getIndexAttr(0)});
    SmallVector<OpFoldResult> sizes(ops.batchRank, b.getIndexAttr(1));
    sizes.append({b.getIndexAttr(shape.block), features});
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    auto type = memref::SubViewOp::inferRankReducedResultType(
        {shape.block, ShapedType::kDynamic}, cast<MemRefType>(all.getType()),
        offsets, sizes, strides);
    return memref::SubViewOp::create(b, loc, cast<MemRefType>(type), all,
                                     offsets, sizes, strides);
  }

  Value applyFeatureMap(FeatureMapKind kind, Type featureType, Value x,
                        Value mask);
  void emitInitialState();
  /// Processes the `count` tokens from logical position `start` on.
  void emitBlock(int64_t count, Value start);

  OpBuilder &b;
  Location loc;
  const KernelOperands &ops;
  KernelShape shape;
  Type f32;
  VectorType vecType;
  // Set by emit(): batch indices of the current element, the sizes.
  SmallVector<Value> batch;
  Value length, features, valueSize;
  // Per-element scratch: the features of a block, [P, F].
  Value qScratch, kScratch;
};

} // namespace

SmallVector<Value> KernelEmitter::forEachVector(Value n, ValueRange inits,
                                                VectorBody body) {
  Value width = index(shape.width);
  Value rest = arith::RemUIOp::create(b, loc, n, width);
  Value full = arith::SubIOp::create(b, loc, n, rest);
  auto loop = scf::ForOp::create(
      b, loc, index(0), full, width, inits,
      [&](OpBuilder &nb, Location, Value offset, ValueRange iterArgs) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        scf::YieldOp::create(b, loc, body(offset, Value(), iterArgs));
      });
  Value hasRest =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, rest, index(0));
  auto tail = scf::IfOp::create(b, loc, TypeRange(ValueRange(inits)), hasRest,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&tail.getThenRegion().front());
    Value mask = vector::CreateMaskOp::create(
        b, loc, VectorType::get({shape.width}, b.getI1Type()),
        ValueRange{rest});
    SmallVector<Value> results = body(full, mask, loop.getResults());
    if (!inits.empty())
      scf::YieldOp::create(b, loc, results);
    b.setInsertionPointToStart(&tail.getElseRegion().front());
    if (!inits.empty())
      scf::YieldOp::create(b, loc, loop.getResults());
  }
  return SmallVector<Value>(tail.getResults());
}

Value KernelEmitter::loadVector(Value memref, ValueRange indices, Value mask) {
  Type type = cast<MemRefType>(memref.getType()).getElementType();
  auto loadType = VectorType::get({shape.width}, type);
  Value loaded;
  if (mask) {
    Value zero = arith::ConstantOp::create(
        b, loc, loadType,
        DenseElementsAttr::get(loadType, b.getFloatAttr(type, 0.0)));
    loaded = vector::MaskedLoadOp::create(b, loc, loadType, memref, indices,
                                          mask, zero);
  } else {
    loaded = vector::LoadOp::create(b, loc, loadType, memref, indices);
  }
  if (type != f32)
    loaded = arith::ExtFOp::create(b, loc, vecType, loaded);
  return loaded;
}

void KernelEmitter::storeVector(Value value, Value memref, ValueRange indices,
                                Value mask) {
  Type type = cast<MemRefType>(memref.getType()).getElementType();
  if (type != f32)
    value = arith::TruncFOp::create(
        b, loc, VectorType::get({shape.width}, type), value);
  if (mask)
    vector::MaskedStoreOp::create(b, loc, memref, indices, mask, value);
  else
    vector::StoreOp::create(b, loc, value, memref, indices);
}

Value KernelEmitter::applyFeatureMap(FeatureMapKind kind, Type featureType,
                                     Value x, Value mask) {
  Value zero = zeroVector();
  Value y = x;
  switch (kind) {
  case FeatureMapKind::Elu: {
    // elu(x) + 1 is x + 1 for x > 0 and exp(x) otherwise.
    Value one = arith::ConstantOp::create(
        b, loc, vecType, DenseElementsAttr::get(vecType, 1.0f));
    Value positive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
    Value shifted = arith::AddFOp::create(b, loc, x, one);
    auto exp = math::ExpOp::create(b, loc, x);
    exp->setAttr(kKernelExpAttr, b.getUnitAttr());
    y = arith::SelectOp::create(b, loc, positive, shifted, exp);
    break;
  }
  case FeatureMapKind::Relu:
    y = arith::MaximumFOp::create(b, loc, x, zero);
    break;
  default:
    break;
  }
  // Round as the unfused feature map would have.
  if (kind != FeatureMapKind::Identity && featureType != f32) {
    auto narrow = VectorType::get({shape.width}, featureType);
    Value rounded = arith::TruncFOp::create(b, loc, narrow, y);
    y = arith::ExtFOp::create(b, loc, vecType, rounded);
  }
  // Lanes past the end must not reach z or the denominators: φ(0) = 1 for
  // elu.
  if (mask)
    y = arith::SelectOp::create(b, loc, mask, y, zero);
  return y;
}

void KernelEmitter::emitInitialState() {
  // Every row of S and z starts from the initial state or from zero.
  auto copyRow = [&](Value row) {
    Value n = row ? valueSize : features;
    Value source = row ? ops.s0 : ops.z0;
    Value target = row ? ops.s : ops.z;
    forEachVector(n, {}, [&](Value offset, Value mask, ValueRange) {
      Value value = source ? loadVector(source, stateIndices(row, offset), mask)
                           : zeroVector();
      storeVector(value, target, stateIndices(row, offset), mask);
      return SmallVector<Value>();
    });
  };
  scf::ForOp::create(b, loc, index(0), features, index(1), ValueRange(),
                     [&](OpBuilder &nb, Location, Value row, ValueRange) {
                       OpBuilder::InsertionGuard guard(b);
                       b.setInsertionPoint(nb.getInsertionBlock(),
                                           nb.getInsertionPoint());
                       copyRow(row);
                       scf::YieldOp::create(b, loc);
                     });
  copyRow(Value());
}

void KernelEmitter::emitBlock(int64_t count, Value start) {
  // Token positions in the sequence: forward from `start`, or backwards from
  // the end for a reverse scan.
  SmallVector<Value> positions;
  for (int64_t t = 0; t < count; ++t) {
    Value logical = arith::AddIOp::create(b, loc, start, index(t));
    if (ops.reverse)
      logical = arith::SubIOp::create(
          b, loc, arith::SubIOp::create(b, loc, length, index(1)), logical);
    positions.push_back(logical);
  }

  // Features, normalizer and denominators of the block, vectorized over F.
  SmallVector<Value> inits;
  if (ops.eps)
    inits.assign(count, zeroVector());
  SmallVector<Value> dots = forEachVector(
      features, inits, [&](Value offset, Value mask, ValueRange dotArgs) {
        Value z = loadVector(ops.z, stateIndices(Value(), offset), mask);
        SmallVector<Value> next;
        for (int64_t t = 0; t < count; ++t) {
          Value kx =
              loadVector(ops.k, tokenIndices(positions[t], offset), mask);
          Value kf = applyFeatureMap(ops.kMap, ops.kFeatureType, kx, mask);
          storeVector(kf, kScratch, {index(t), offset}, mask);
          Value qx =
              loadVector(ops.q, tokenIndices(positions[t], offset), mask);
          Value qf = applyFeatureMap(ops.qMap, ops.qFeatureType, qx, mask);
          storeVector(qf, qScratch, {index(t), offset}, mask);
          z = arith::AddFOp::create(b, loc, z, kf);
          if (ops.eps)
            next.push_back(vector::FMAOp::create(b, loc, qf, z, dotArgs[t]));
        }
        storeVector(z, ops.z, stateIndices(Value(), offset), mask);
        return next;
      });
  SmallVector<Value> scales;
  if (ops.eps) {
    Value eps = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(static_cast<float>(*ops.eps)));
    for (Value dot : dots) {
      Value sum =
          vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, dot);
      Value denominator = arith::AddFOp::create(b, loc, sum, eps);
      scales.push_back(
          vector::BroadcastOp::create(b, loc, vecType, denominator));
    }
  }

  // State update and readout, one column tile at a time: each state row is
  // loaded once for the whole block.
  forEachVector(valueSize, {}, [&](Value offset, Value mask, ValueRange) {
    SmallVector<Value> values, accs;
    for (int64_t t = 0; t < count; ++t) {
      values.push_back(
          loadVector(ops.v, tokenIndices(positions[t], offset), mask));
      accs.push_back(zeroVector());
    }
    auto rows = scf::ForOp::create(
        b, loc, index(0), features, index(1), accs,
        [&](OpBuilder &nb, Location, Value row, ValueRange accArgs) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value s = loadVector(ops.s, stateIndices(row, offset), mask);
          SmallVector<Value> next;
          for (int64_t t = 0; t < count; ++t) {
            Value kf = memref::LoadOp::create(b, loc, kScratch,
                                              ValueRange{index(t), row});
            s = vector::FMAOp::create(
                b, loc, vector::BroadcastOp::create(b, loc, vecType, kf),
                values[t], s);
            Value qf = memref::LoadOp::create(b, loc, qScratch,
                                              ValueRange{index(t), row});
            next.push_back(vector::FMAOp::create(
                b, loc, vector::BroadcastOp::create(b, loc, vecType, qf), s,
                accArgs[t]));
          }
          storeVector(s, ops.s, stateIndices(row, offset), mask);
          scf::YieldOp::create(b, loc, next);
        });
    for (int64_t t = 0; t < count; ++t) {
      Value o = rows.getResult(t);
      if (ops.eps)
        o = arith::DivFOp::create(b, loc, o, scales[t]);
      storeVector(o, ops.out, tokenIndices(positions[t], offset), mask);
    }
    return SmallVector<Value>();
  });
}

void KernelEmitter::emit() {
  SmallVector<Value> lower, upper, steps;
  for (int64_t d = 0; d < ops.batchRank; ++d) {
    lower.push_back(index(0));
    upper.push_back(dim(ops.v, d));
    steps.push_back(index(1));
  }
  int64_t featureDim = ops.batchRank + (ops.hasSequence ? 1 : 0);
  length = ops.hasSequence ? dim(ops.v, ops.batchRank) : index(1);
  features = dim(ops.s, ops.batchRank);
  valueSize = dim(ops.v, featureDim);

  // Scratch for the features of one block, [batch..., P, F]: one slice per
  // batch element, so the threads share nothing. (A stack buffer would need
  // an alloca scope, whose region must stay a single block.)
  SmallVector<int64_t> scratchShape(ops.batchRank, ShapedType::kDynamic);
  scratchShape.append({shape.block, ShapedType::kDynamic});
  SmallVector<Value> scratchSizes(upper);
  scratchSizes.push_back(features);
  auto scratchType = MemRefType::get(scratchShape, f32);
  Value qScratchAll = memref::AllocOp::create(b, loc, scratchType, scratchSizes,
                                              b.getI64IntegerAttr(64));
  Value kScratchAll = memref::AllocOp::create(b, loc, scratchType, scratchSizes,
                                              b.getI64IntegerAttr(64));

  auto body = [&]() {
    qScratch = scratchFor(qScratchAll);
    kScratch = scratchFor(kScratchAll);
    emitInitialState();
    if (!ops.hasSequence) {
      emitBlock(1, index(0));
      return;
    }
    // Full blocks of P tokens, then the rest one token at a time.
    Value block = index(shape.block);
    Value full = arith::SubIOp::create(
        b, loc, length, arith::RemUIOp::create(b, loc, length, block));
    for (auto [from, to, count] :
         {std::tuple<Value, Value, int64_t>{index(0), full, shape.block},
          std::tuple<Value, Value, int64_t>{full, length, 1}}) {
      scf::ForOp::create(
          b, loc, from, to, index(count), ValueRange(),
          [&, count = count](OpBuilder &nb, Location, Value start, ValueRange) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
            emitBlock(count, start);
            scf::YieldOp::create(b, loc);
          });
      if (shape.block == 1)
        break;
    }
  };

  if (ops.batchRank == 0) {
    OpBuilder::InsertionGuard guard(b);
    body();
    return;
  }
  scf::ParallelOp::create(b, loc, lower, upper, steps,
                          [&](OpBuilder &nb, Location, ValueRange ivs) {
                            OpBuilder::InsertionGuard guard(b);
                            b.setInsertionPoint(nb.getInsertionBlock(),
                                                nb.getInsertionPoint());
                            batch.assign(ivs.begin(), ivs.end());
                            body();
                          });
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

static bool isKernelInputType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor &&
         isa<Float32Type, Float16Type, BFloat16Type>(tensor.getElementType());
}

static bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

/// Reads `tensor` as a buffer with an identity layout (bufferization copies
/// when the tensor's buffer has another layout).
static Value toBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
}

/// A fresh 64-byte aligned buffer of `type`, with the sizes `type` leaves
/// open read from `sources` (tensor, dim) pairs, one per dimension.
static Value allocate(OpBuilder &b, Location loc, RankedTensorType type,
                      ArrayRef<std::pair<Value, int64_t>> sources) {
  SmallVector<Value> sizes;
  for (auto [d, size] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(size))
      sizes.push_back(
          tensor::DimOp::create(b, loc, sources[d].first, sources[d].second));
  return memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), sizes,
      b.getI64IntegerAttr(64));
}

static Value toTensor(OpBuilder &b, Location loc, Value buffer, Type type) {
  return bufferization::ToTensorOp::create(b, loc, type, buffer,
                                           b.getUnitAttr(), b.getUnitAttr());
}

/// Looks through a fusable `linattn.feature_map` producing `features`: sets
/// the raw input, the map and the feature element type in `ops`.
static void fuseFeatureMap(Value features, bool enabled, Value &raw,
                           FeatureMapKind &kind, Type &featureType) {
  raw = features;
  kind = FeatureMapKind::Identity;
  featureType = cast<RankedTensorType>(features.getType()).getElementType();
  auto map = features.getDefiningOp<FeatureMapOp>();
  if (!enabled || !map || map.getProjection())
    return;
  if (map.getKind() != FeatureMapKind::Elu &&
      map.getKind() != FeatureMapKind::Relu &&
      map.getKind() != FeatureMapKind::Identity)
    return;
  if (!isKernelInputType(map.getInput().getType()))
    return;
  raw = map.getInput();
  kind = map.getKind();
}

/// Emits the kernel for `ops` before `op`, replaces the results of `op`
/// (outputs, state, normalizer) by the kernel's buffers as tensors, and
/// erases the feature maps the kernel fused when nothing else uses them.
static void replaceWithKernel(RewriterBase &rewriter, Operation *op,
                              const KernelOperands &ops, KernelShape shape) {
  Location loc = op->getLoc();
  KernelEmitter(rewriter, loc, ops, shape).emit();
  SmallVector<Value> buffers = {ops.out, ops.s, ops.z}, results;
  for (auto [buffer, result] : llvm::zip_equal(buffers, op->getResults()))
    results.push_back(toTensor(rewriter, loc, buffer, result.getType()));
  Value qf = op->getOperand(0), kf = op->getOperand(1);
  rewriter.replaceOp(op, results);
  for (Value features : {qf, kf})
    if (auto map = features.getDefiningOp<FeatureMapOp>())
      if (map->use_empty())
        rewriter.eraseOp(map);
}

/// The dimension sources of a [batch..., X, Y]-shaped result whose batch
/// dims come from `batchSource`.
static SmallVector<std::pair<Value, int64_t>>
dimSources(Value batchSource, int64_t batchRank,
           ArrayRef<std::pair<Value, int64_t>> trailing) {
  SmallVector<std::pair<Value, int64_t>> sources;
  for (int64_t d = 0; d < batchRank; ++d)
    sources.push_back({batchSource, d});
  sources.append(trailing.begin(), trailing.end());
  return sources;
}

/// Whether the kernel computes `op`: f32 state, f32/f16/bf16 data.
static bool hasKernel(ScanOp op) {
  return isF32Tensor(op.getFinalState().getType()) &&
         isF32Tensor(op.getFinalNormalizer().getType()) &&
         llvm::all_of(TypeRange{op.getQueryFeatures().getType(),
                                op.getKeyFeatures().getType(),
                                op.getValues().getType(),
                                op.getResult().getType()},
                      isKernelInputType);
}

static bool hasKernel(StepOp op) {
  return isF32Tensor(op.getNewState().getType()) &&
         isF32Tensor(op.getNewNormalizer().getType()) &&
         isF32Tensor(op.getState().getType()) &&
         isF32Tensor(op.getNormalizer().getType()) &&
         llvm::all_of(TypeRange{op.getQueryFeatures().getType(),
                                op.getKeyFeatures().getType(),
                                op.getValues().getType(),
                                op.getResult().getType()},
                      isKernelInputType);
}

/// Replaces the scan `op` by its kernel.
static void rewriteScan(RewriterBase &rewriter, ScanOp op, KernelShape shape,
                        bool fuse) {
  rewriter.setInsertionPoint(op);

  Location loc = op.getLoc();
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  auto stateType = cast<RankedTensorType>(op.getFinalState().getType());
  auto normalizerType =
      cast<RankedTensorType>(op.getFinalNormalizer().getType());
  int64_t batchRank = resultType.getRank() - 2;

  KernelOperands ops;
  ops.batchRank = batchRank;
  ops.reverse = op.isReverse();
  ops.eps = op.getEps() ? std::optional<double>(op.getEps()->convertToDouble())
                        : std::nullopt;
  Value q, k;
  fuseFeatureMap(op.getQueryFeatures(), fuse, q, ops.qMap, ops.qFeatureType);
  fuseFeatureMap(op.getKeyFeatures(), fuse, k, ops.kMap, ops.kFeatureType);
  Value v = op.getValues();
  ops.q = toBuffer(rewriter, loc, q);
  ops.k = toBuffer(rewriter, loc, k);
  ops.v = toBuffer(rewriter, loc, v);
  if (op.hasInitialState()) {
    ops.s0 = toBuffer(rewriter, loc, op.getInitialState());
    ops.z0 = toBuffer(rewriter, loc, op.getInitialNormalizer());
  }
  // The fused maps keep the feature size: F is read from the raw keys.
  ops.s = allocate(
      rewriter, loc, stateType,
      dimSources(v, batchRank, {{k, batchRank + 1}, {v, batchRank + 1}}));
  ops.z = allocate(rewriter, loc, normalizerType,
                   dimSources(v, batchRank, {{k, batchRank + 1}}));
  ops.out =
      allocate(rewriter, loc, resultType,
               dimSources(v, batchRank, {{v, batchRank}, {v, batchRank + 1}}));

  replaceWithKernel(rewriter, op, ops, shape);
}

/// Replaces the step `op` by its kernel.
static void rewriteStep(RewriterBase &rewriter, StepOp op, KernelShape shape,
                        bool fuse) {
  rewriter.setInsertionPoint(op);

  Location loc = op.getLoc();
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  auto stateType = cast<RankedTensorType>(op.getNewState().getType());
  auto normalizerType = cast<RankedTensorType>(op.getNewNormalizer().getType());
  int64_t batchRank = resultType.getRank() - 1;

  KernelOperands ops;
  ops.batchRank = batchRank;
  ops.hasSequence = false;
  ops.eps = op.getEps() ? std::optional<double>(op.getEps()->convertToDouble())
                        : std::nullopt;
  Value q, k;
  fuseFeatureMap(op.getQueryFeatures(), fuse, q, ops.qMap, ops.qFeatureType);
  fuseFeatureMap(op.getKeyFeatures(), fuse, k, ops.kMap, ops.kFeatureType);
  Value v = op.getValues();
  ops.q = toBuffer(rewriter, loc, q);
  ops.k = toBuffer(rewriter, loc, k);
  ops.v = toBuffer(rewriter, loc, v);
  ops.s0 = toBuffer(rewriter, loc, op.getState());
  ops.z0 = toBuffer(rewriter, loc, op.getNormalizer());
  Value s0 = op.getState();
  ops.s = allocate(
      rewriter, loc, stateType,
      dimSources(v, batchRank, {{s0, batchRank}, {s0, batchRank + 1}}));
  ops.z = allocate(rewriter, loc, normalizerType,
                   dimSources(v, batchRank, {{s0, batchRank}}));
  ops.out = allocate(rewriter, loc, resultType,
                     dimSources(v, batchRank, {{v, batchRank}}));

  replaceWithKernel(rewriter, op, ops, shape);
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {

/// f32 lanes of the host's widest vectors.
static int64_t hostVectorWidth() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  if (features.lookup("avx512f"))
    return 16;
  if (features.lookup("avx2") || features.lookup("avx"))
    return 8;
  return 4;
}

struct ConvertLinAttnToCPUKernelsPass
    : linattn::impl::ConvertLinAttnToCPUKernelsPassBase<
          ConvertLinAttnToCPUKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t width = vectorWidth == 0 ? hostVectorWidth() : vectorWidth;
    if (width < 1 || width > 64) {
      getOperation()->emitError()
          << "vector-width must be between 1 and 64, got " << width;
      return signalPassFailure();
    }
    if (tokensPerBlock < 1 || tokensPerBlock > 8) {
      getOperation()->emitError()
          << "tokens-per-block must be between 1 and 8, got "
          << static_cast<int64_t>(tokensPerBlock);
      return signalPassFailure();
    }
    KernelShape shape{width, tokensPerBlock};
    SmallVector<Operation *> targets;
    getOperation()->walk([&](Operation *op) {
      if (auto scan = dyn_cast<ScanOp>(op); scan && hasKernel(scan))
        targets.push_back(op);
      else if (auto step = dyn_cast<StepOp>(op); step && hasKernel(step))
        targets.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : targets) {
      if (auto scan = dyn_cast<ScanOp>(op))
        rewriteScan(rewriter, scan, shape, fuseFeatureMaps);
      else
        rewriteStep(rewriter, cast<StepOp>(op), shape, fuseFeatureMaps);
    }

    // The fused elu's exp, as a polynomial on vectors rather than a libm
    // call per lane. Only the kernels' exps are touched.
    SmallVector<Operation *> exps;
    getOperation()->walk([&](math::ExpOp exp) {
      if (exp->hasAttr(kKernelExpAttr)) {
        exp->removeAttr(kKernelExpAttr);
        exps.push_back(exp);
      }
    });
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == math::ExpOp::getOperationName();
    });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(exps, std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
