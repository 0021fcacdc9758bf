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
// The linear form of non-causal attention is the same kernel in halves:
// kv_summary updates the state over the keys and reads nothing out, and
// query_readout reads a state that no token updates.
//
//===----------------------------------------------------------------------===//

#include "VectorEmitter.h"

#include "linattn/Conversion/LinAttnToCPU/TargetCpu.h"
#include "linattn/Conversion/Passes.h"
#include "linattn/IR/LinAttnOps.h"
#include "linattn/Transforms/Passes.h"
#include "linattn/Transforms/Utils.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Threading.h"

namespace mlir::linattn {
#define GEN_PASS_DEF_CONVERTLINATTNTOCPUKERNELSPASS
#include "linattn/Conversion/Passes.h.inc"
} // namespace mlir::linattn

using namespace mlir;
using namespace mlir::linattn;
using namespace mlir::linattn::cpukernels;

//===----------------------------------------------------------------------===//
// Kernel description
//===----------------------------------------------------------------------===//

namespace {

/// The buffers of one scan, step, key-value summary or query readout, and
/// how the kernel treats them. q, k and v are [batch..., N, X] for a scan,
/// a summary and a readout, and [batch..., X] for a step.
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
  /// updated in place (read only by a readout, whose z is null when it is
  /// unnormalized), and the outputs (null for a summary).
  Value s0, z0, s, z, out;
  /// Whether the tokens update the state (not a readout: q is null) and
  /// whether they read it out into `out` (not a summary: k and v are null).
  bool updates = true, readout = true;
  bool hasSequence = true;
  bool reverse = false;
  std::optional<double> eps;
  int64_t batchRank = 0;
};

/// How far ahead the kernels prefetch their inputs, in blocks, and the
/// cache line they count in.
static constexpr int64_t kPrefetchBlocks = 4;
static constexpr int64_t kCacheLineBytes = 64;

/// The shortest piece of a sequence worth a thread of its own, in blocks.
static constexpr int64_t kMinChunkBlocks = 8;

/// Emits the loop nest of one scan or step on buffers.
class KernelEmitter : VectorEmitter {
public:
  KernelEmitter(OpBuilder &builder, Location loc, const KernelOperands &ops,
                KernelShape shape)
      : VectorEmitter(builder, loc,
                      cast<MemRefType>(ops.s.getType()).getElementType(),
                      shape.width),
        ops(ops), shape(shape) {}

  /// Emits the whole kernel at the builder's insertion point.
  void emit();

private:
  /// Indices of column `offset` of the token at `position` in q, k, v or the
  /// outputs, and of row `row` of the state.
  SmallVector<Value> tokenIndices(Value position, Value offset) {
    SmallVector<Value> indices(batch);
    if (ops.hasSequence)
      indices.push_back(position);
    indices.push_back(offset);
    return indices;
  }
  /// Indices of row `row` (null: the normalizer) at column `offset` of the
  /// state the kernel works on (`statePrefix` selects it), and of the
  /// initial state.
  SmallVector<Value> stateIndices(Value row, Value offset) {
    return rowIndices(statePrefix, row, offset);
  }
  SmallVector<Value> rowIndices(ArrayRef<Value> prefix, Value row,
                                Value offset) {
    SmallVector<Value> indices(prefix);
    if (row)
      indices.push_back(row);
    indices.push_back(offset);
    return indices;
  }

  /// The [P, F] slice at (batch..., `chunk`) of a [batch..., C, P, F]
  /// scratch buffer; null for a null buffer (a scratch the kernel does not
  /// use).
  Value scratchFor(Value all, Value chunk);

  /// Calls `body(row)` for every state row, then `body(null)` for the
  /// normalizer.
  void forEachStateRow(function_ref<void(Value row)> body);

  Value applyFeatureMap(FeatureMapKind kind, Type featureType, Value x,
                        Value mask);
  /// Sets the state the kernel works on to the initial state (or zero).
  void emitInitialState();
  /// Walks the tokens at logical positions [from, to): blocks of P, then
  /// single tokens. Without `readout` only the state is updated.
  void emitSequence(Value from, Value to, bool readout);
  /// Processes the `count` tokens from logical position `start` on.
  void emitBlock(int64_t count, Value start, bool readout);
  /// The scan of one batch element per thread.
  void emitBatchParallel(ArrayRef<Value> upper, Value qScratchAll,
                         Value kScratchAll);
  /// The logical positions [from, to) of piece `chunk` of the sequence in
  /// pieces of `chunkLength` tokens.
  std::pair<Value, Value> chunkRange(Value chunk, Value chunkLength);
  /// The scan of `chunks` pieces of each sequence in parallel: their state
  /// contributions, a scan over those per batch element, then the pieces
  /// again from their starting states.
  void emitChunkParallel(ArrayRef<Value> upper, Value chunks, Value qScratchAll,
                         Value kScratchAll);
  /// The readout of a fixed state: `chunks` pieces of each sequence in
  /// parallel, nothing shared between them.
  void emitReadoutParallel(ArrayRef<Value> upper, Value chunks,
                           Value qScratchAll);
  const KernelOperands &ops;
  KernelShape shape;
  // Set by emit(): batch indices of the current element, the sizes.
  SmallVector<Value> batch;
  Value length, features, valueSize;
  /// About the floating-point operations of the whole op (4·F·Dv per token
  /// of each batch element), for `emitParallel`; null with one thread.
  Value flops;
  bool streamOutputs = false;
  // The state being updated: [prefix..., F, Dv] and [prefix..., F].
  Value state, normalizer;
  SmallVector<Value> statePrefix;
  // Per-element scratch: the features of a block, [P, F].
  Value qScratch, kScratch;
};

} // namespace

Value KernelEmitter::applyFeatureMap(FeatureMapKind kind, Type featureType,
                                     Value x, Value mask) {
  Value y = elementwiseMap(kind, x);
  // Round as the unfused feature map would have.
  if (kind != FeatureMapKind::Identity && featureType != compute) {
    auto narrow = VectorType::get({shape.width}, featureType);
    Value rounded = arith::TruncFOp::create(b, loc, narrow, y);
    y = arith::ExtFOp::create(b, loc, vecType, rounded);
  }
  // Lanes past the end must not reach z or the denominators: φ(0) = 1 for
  // elu.
  if (mask)
    y = arith::SelectOp::create(b, loc, mask, y, zeroVector());
  return y;
}

Value KernelEmitter::scratchFor(Value all, Value chunk) {
  if (!all)
    return Value();
  int64_t rank = ops.batchRank + 3;
  SmallVector<OpFoldResult> offsets(batch.begin(), batch.end());
  offsets.append({chunk, b.getIndexAttr(0), b.getIndexAttr(0)});
  SmallVector<OpFoldResult> sizes(ops.batchRank + 1, b.getIndexAttr(1));
  sizes.append({b.getIndexAttr(shape.block), features});
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  auto type = memref::SubViewOp::inferRankReducedResultType(
      {shape.block, ShapedType::kDynamic}, cast<MemRefType>(all.getType()),
      offsets, sizes, strides);
  return memref::SubViewOp::create(b, loc, cast<MemRefType>(type), all, offsets,
                                   sizes, strides);
}

void KernelEmitter::forEachStateRow(function_ref<void(Value row)> body) {
  scf::ForOp::create(b, loc, index(0), features, index(1), ValueRange(),
                     [&](OpBuilder &nb, Location, Value row, ValueRange) {
                       OpBuilder::InsertionGuard guard(b);
                       b.setInsertionPoint(nb.getInsertionBlock(),
                                           nb.getInsertionPoint());
                       body(row);
                       scf::YieldOp::create(b, loc);
                     });
  body(Value());
}

void KernelEmitter::emitInitialState() {
  // Every row of S and z starts from the initial state or from zero.
  forEachStateRow([&](Value row) {
    Value source = row ? ops.s0 : ops.z0;
    Value target = row ? state : normalizer;
    forEachVector(
        row ? valueSize : features, {},
        [&](Value offset, Value mask, ValueRange) {
          Value value =
              source ? loadVector(source, rowIndices(batch, row, offset), mask)
                     : zeroVector();
          storeVector(value, target, stateIndices(row, offset), mask);
          return SmallVector<Value>();
        });
  });
}

void KernelEmitter::emitSequence(Value from, Value to, bool readout) {
  // Full blocks of P tokens, then the rest one token at a time.
  Value count = arith::SubIOp::create(b, loc, to, from);
  Value rest = arith::RemUIOp::create(b, loc, count, index(shape.block));
  Value full = arith::SubIOp::create(b, loc, to, rest);
  for (auto [first, last, tokens] :
       {std::tuple<Value, Value, int64_t>{from, full, shape.block},
        std::tuple<Value, Value, int64_t>{full, to, 1}}) {
    scf::ForOp::create(
        b, loc, first, last, index(tokens), ValueRange(),
        [&, tokens = tokens](OpBuilder &nb, Location, Value start, ValueRange) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          emitBlock(tokens, start, readout);
          scf::YieldOp::create(b, loc);
        });
    if (shape.block == 1)
      break;
  }
}

void KernelEmitter::emitBlock(int64_t count, Value start, bool readout) {
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

  // Ask for the inputs of the token `kPrefetchBlocks` blocks ahead, for
  // sequences streamed from DRAM (about 3% on B8·H16·T4096·D64 and
  // B1·H8·T16K·D64 on the Zen 4 machine).
  if (ops.hasSequence && count == shape.block) {
    for (int64_t t = 0; t < count; ++t) {
      Value ahead = arith::MinUIOp::create(
          b, loc,
          arith::AddIOp::create(b, loc, start,
                                index(t + kPrefetchBlocks * count)),
          arith::SubIOp::create(b, loc, length, index(1)));
      if (ops.reverse)
        ahead = arith::SubIOp::create(
            b, loc, arith::SubIOp::create(b, loc, length, index(1)), ahead);
      SmallVector<std::pair<Value, Value>> inputs;
      if (readout)
        inputs.push_back({ops.q, features});
      if (ops.updates)
        inputs.append({{ops.k, features}, {ops.v, valueSize}});
      for (auto [input, size] : inputs) {
        scf::ForOp::create(b, loc, index(0), size, index(kCacheLineBytes / 4),
                           ValueRange(),
                           [&, input = input](OpBuilder &nb, Location,
                                              Value column, ValueRange) {
                             OpBuilder::InsertionGuard guard(b);
                             b.setInsertionPoint(nb.getInsertionBlock(),
                                                 nb.getInsertionPoint());
                             memref::PrefetchOp::create(
                                 b, loc, input, tokenIndices(ahead, column),
                                 b.getBoolAttr(false), b.getI32IntegerAttr(3),
                                 b.getBoolAttr(true));
                             scf::YieldOp::create(b, loc);
                           });
      }
    }
  }

  // Features, normalizer and denominators of the block, vectorized over F.
  bool denominators = readout && ops.eps;
  SmallVector<Value> inits;
  if (denominators)
    inits.assign(count, zeroVector());
  SmallVector<Value> dots = forEachVector(
      features, inits, [&](Value offset, Value mask, ValueRange dotArgs) {
        Value z;
        if (ops.updates || denominators)
          z = loadVector(normalizer, stateIndices(Value(), offset), mask);
        SmallVector<Value> next;
        for (int64_t t = 0; t < count; ++t) {
          if (ops.updates) {
            Value kx =
                loadVector(ops.k, tokenIndices(positions[t], offset), mask);
            Value kf = applyFeatureMap(ops.kMap, ops.kFeatureType, kx, mask);
            storeVector(kf, kScratch, {index(t), offset}, mask);
            z = arith::AddFOp::create(b, loc, z, kf);
          }
          if (!readout)
            continue;
          Value qx =
              loadVector(ops.q, tokenIndices(positions[t], offset), mask);
          Value qf = applyFeatureMap(ops.qMap, ops.qFeatureType, qx, mask);
          storeVector(qf, qScratch, {index(t), offset}, mask);
          if (denominators)
            next.push_back(vector::FMAOp::create(b, loc, qf, z, dotArgs[t]));
        }
        if (ops.updates)
          storeVector(z, normalizer, stateIndices(Value(), offset), mask);
        return next;
      });
  SmallVector<Value> scales;
  if (denominators) {
    Value eps =
        arith::ConstantOp::create(b, loc, b.getFloatAttr(compute, *ops.eps));
    for (Value dot : dots) {
      Value sum =
          vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, dot);
      // One division per token; the tiles multiply by the reciprocal.
      Value denominator = arith::AddFOp::create(b, loc, sum, eps);
      Value one =
          arith::ConstantOp::create(b, loc, b.getFloatAttr(compute, 1.0));
      Value reciprocal = arith::DivFOp::create(b, loc, one, denominator);
      scales.push_back(
          vector::BroadcastOp::create(b, loc, vecType, reciprocal));
    }
  }

  // State update and readout, one column tile at a time: each state row is
  // loaded once for the whole block. A tile is `columns` vectors wide, which
  // gives the FMA units independent chains; the columns past the last full
  // tile go one vector at a time, the last one masked.
  auto emitTile = [&](ArrayRef<Value> offsets, Value mask) {
    int64_t columns = offsets.size();
    // values[c * count + t], accs likewise.
    SmallVector<Value> values, accs;
    for (Value offset : offsets) {
      for (int64_t t = 0; t < count; ++t) {
        if (ops.updates)
          values.push_back(
              loadVector(ops.v, tokenIndices(positions[t], offset), mask));
        if (readout)
          accs.push_back(zeroVector());
      }
    }
    auto rows = scf::ForOp::create(
        b, loc, index(0), features, index(1), accs,
        [&](OpBuilder &nb, Location, Value row, ValueRange accArgs) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          SmallVector<Value> s, next(accArgs);
          for (Value offset : offsets)
            s.push_back(loadVector(state, stateIndices(row, offset), mask));
          for (int64_t t = 0; t < count; ++t) {
            Value kf;
            if (ops.updates)
              kf = vector::BroadcastOp::create(
                  b, loc, vecType,
                  memref::LoadOp::create(b, loc, kScratch,
                                         ValueRange{index(t), row}));
            Value qf;
            if (readout)
              qf = vector::BroadcastOp::create(
                  b, loc, vecType,
                  memref::LoadOp::create(b, loc, qScratch,
                                         ValueRange{index(t), row}));
            for (int64_t c = 0; c < columns; ++c) {
              if (ops.updates)
                s[c] = vector::FMAOp::create(b, loc, kf, values[c * count + t],
                                             s[c]);
              if (readout)
                next[c * count + t] = vector::FMAOp::create(
                    b, loc, qf, s[c], accArgs[c * count + t]);
            }
          }
          for (auto [offset, value] : llvm::zip_equal(offsets, s))
            if (ops.updates)
              storeVector(value, state, stateIndices(row, offset), mask);
          scf::YieldOp::create(b, loc, next);
        });
    for (int64_t c = 0; readout && c < columns; ++c) {
      for (int64_t t = 0; t < count; ++t) {
        Value o = rows.getResult(c * count + t);
        if (ops.eps)
          o = arith::MulFOp::create(b, loc, o, scales[t]);
        storeVector(o, ops.out, tokenIndices(positions[t], offsets[c]), mask,
                    /*streaming=*/!mask && streamOutputs);
      }
    }
  };

  Value restStart;
  if (shape.columns > 1) {
    Value tileWidth = index(shape.columns * shape.width);
    Value wide = arith::SubIOp::create(
        b, loc, valueSize,
        arith::RemUIOp::create(b, loc, valueSize, tileWidth));
    scf::ForOp::create(
        b, loc, index(0), wide, tileWidth, ValueRange(),
        [&](OpBuilder &nb, Location, Value start, ValueRange) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          SmallVector<Value> offsets;
          for (int64_t c = 0; c < shape.columns; ++c)
            offsets.push_back(
                arith::AddIOp::create(b, loc, start, index(c * shape.width)));
          emitTile(offsets, Value());
          scf::YieldOp::create(b, loc);
        });
    restStart = wide;
  }
  forEachVector(
      valueSize, {},
      [&](Value offset, Value mask, ValueRange) {
        emitTile({offset}, mask);
        return SmallVector<Value>();
      },
      restStart);
}

void KernelEmitter::emitBatchParallel(ArrayRef<Value> upper, Value qScratchAll,
                                      Value kScratchAll) {
  emitParallel(
      upper,
      [&](ValueRange ivs) {
        batch.assign(ivs.begin(), ivs.end());
        statePrefix = batch;
        state = ops.s;
        normalizer = ops.z;
        qScratch = scratchFor(qScratchAll, index(0));
        kScratch = scratchFor(kScratchAll, index(0));
        emitInitialState();
        if (ops.hasSequence)
          emitSequence(index(0), length, ops.readout);
        else
          emitBlock(1, index(0), ops.readout);
      },
      flops);
}

std::pair<Value, Value> KernelEmitter::chunkRange(Value chunk,
                                                  Value chunkLength) {
  // Piece c covers the logical positions [c·L, min((c+1)·L, N)).
  Value from = arith::MulIOp::create(b, loc, chunk, chunkLength);
  Value to = arith::MinUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, from, chunkLength), length);
  return {arith::MinUIOp::create(b, loc, from, length), to};
}

void KernelEmitter::emitChunkParallel(ArrayRef<Value> upper, Value chunks,
                                      Value qScratchAll, Value kScratchAll) {
  // Sequences split only where they hold several blocks per thread: no
  // serial twin of these loops (`emitParallel`'s `flops`).
  Value chunkLength = arith::CeilDivUIOp::create(b, loc, length, chunks);
  // The state of every chunk, [batch..., C, F, Dv] and [batch..., C, F]:
  // first its contribution, then the state it starts from.
  SmallVector<Value> sizes(upper);
  sizes.append({chunks, features, valueSize});
  SmallVector<int64_t> shapeS(ops.batchRank + 3, ShapedType::kDynamic);
  Value chunkStates = memref::AllocOp::create(
      b, loc, MemRefType::get(shapeS, compute), sizes, b.getI64IntegerAttr(64));
  sizes.pop_back();
  shapeS.pop_back();
  Value chunkNormalizers = memref::AllocOp::create(
      b, loc, MemRefType::get(shapeS, compute), sizes, b.getI64IntegerAttr(64));

  SmallVector<Value> chunked(upper);
  chunked.push_back(chunks);
  auto bindChunk = [&](ValueRange ivs) {
    ValueRange outer = ivs.drop_back();
    batch.assign(outer.begin(), outer.end());
    statePrefix.assign(ivs.begin(), ivs.end());
    state = chunkStates;
    normalizer = chunkNormalizers;
    qScratch = scratchFor(qScratchAll, ivs.back());
    kScratch = scratchFor(kScratchAll, ivs.back());
  };

  // 1. Each chunk's contribution, from zero, without readout.
  emitParallel(chunked, [&](ValueRange ivs) {
    bindChunk(ivs);
    forEachStateRow([&](Value row) {
      forEachVector(row ? valueSize : features, {},
                    [&](Value offset, Value mask, ValueRange) {
                      storeVector(zeroVector(), row ? state : normalizer,
                                  stateIndices(row, offset), mask);
                      return SmallVector<Value>();
                    });
    });
    auto [from, to] = chunkRange(ivs.back(), chunkLength);
    emitSequence(from, to, /*readout=*/false);
  });

  // 2. Per batch element, a scan over the chunks: each chunk's slot gets the
  // state it starts from, the final state the sum of all.
  emitParallel(upper, [&](ValueRange ivs) {
    batch.assign(ivs.begin(), ivs.end());
    statePrefix = batch;
    state = ops.s;
    normalizer = ops.z;
    emitInitialState();
    scf::ForOp::create(
        b, loc, index(0), chunks, index(1), ValueRange(),
        [&](OpBuilder &nb, Location, Value chunk, ValueRange) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          SmallVector<Value> chunkPrefix(batch);
          chunkPrefix.push_back(chunk);
          forEachStateRow([&](Value row) {
            Value total = row ? state : normalizer;
            Value slot = row ? chunkStates : chunkNormalizers;
            forEachVector(
                row ? valueSize : features, {},
                [&](Value offset, Value mask, ValueRange) {
                  SmallVector<Value> totalIndices = stateIndices(row, offset);
                  SmallVector<Value> slotIndices =
                      rowIndices(chunkPrefix, row, offset);
                  Value sum = loadVector(total, totalIndices, mask);
                  Value part = loadVector(slot, slotIndices, mask);
                  storeVector(sum, slot, slotIndices, mask);
                  storeVector(arith::AddFOp::create(b, loc, sum, part), total,
                              totalIndices, mask);
                  return SmallVector<Value>();
                });
          });
          scf::YieldOp::create(b, loc);
        });
  });

  // 3. Each chunk again from its starting state, with the readout (none for
  // a summary, whose result is the final state).
  if (!ops.readout)
    return;
  emitParallel(chunked, [&](ValueRange ivs) {
    bindChunk(ivs);
    auto [from, to] = chunkRange(ivs.back(), chunkLength);
    emitSequence(from, to, /*readout=*/true);
  });
}

void KernelEmitter::emitReadoutParallel(ArrayRef<Value> upper, Value chunks,
                                        Value qScratchAll) {
  Value chunkLength = arith::CeilDivUIOp::create(b, loc, length, chunks);
  SmallVector<Value> chunked(upper);
  chunked.push_back(chunks);
  emitParallel(
      chunked,
      [&](ValueRange ivs) {
        ValueRange outer = ivs.drop_back();
        batch.assign(outer.begin(), outer.end());
        statePrefix = batch;
        state = ops.s;
        normalizer = ops.z;
        qScratch = scratchFor(qScratchAll, ivs.back());
        auto [from, to] = chunkRange(ivs.back(), chunkLength);
        emitSequence(from, to, /*readout=*/true);
      },
      flops);
}

void KernelEmitter::emit() {
  // The batch and sequence sizes come from the tokens' inputs: v, or q for
  // a readout; F and Dv from the state.
  Value tokens = ops.updates ? ops.v : ops.q;
  SmallVector<Value> upper;
  for (int64_t d = 0; d < ops.batchRank; ++d)
    upper.push_back(dim(tokens, d));
  length = ops.hasSequence ? dim(tokens, ops.batchRank) : index(1);
  features = dim(ops.s, ops.batchRank);
  valueSize = dim(ops.s, ops.batchRank + 1);
  // Without threads to start, no serial twin of the parallel loops.
  if (shape.threads > 1) {
    flops = arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, length, index(4)),
        arith::MulIOp::create(b, loc, features, valueSize));
    for (Value size : upper)
      flops = arith::MulIOp::create(b, loc, flops, size);
  }
  // The outputs go past the caches when every full vector is aligned to its
  // size (the kernel allocated the buffer 64-byte aligned, rows are whole
  // vectors): they are written once and not read by the kernel, and a cached
  // store would first read the line from memory. A caller's buffer written
  // in place has no alignment the kernel knows of.
  if (ops.out) {
    auto outType = cast<MemRefType>(ops.out.getType());
    // A view of the transposed output (outputRowsBuffer) keeps the rows of
    // the buffer under it, which start at multiples of the row length.
    Value outBase = ops.out;
    if (auto view = outBase.getDefiningOp<memref::TransposeOp>())
      outBase = view.getIn();
    auto alloc = outBase.getDefiningOp<memref::AllocOp>();
    bool aligned = alloc && alloc.getAlignment() &&
                   *alloc.getAlignment() % kCacheLineBytes == 0;
    int64_t outValues = outType.getShape().back();
    int64_t outBytes = shape.width * outType.getElementTypeBitWidth() / 8;
    streamOutputs =
        aligned && ops.hasSequence && !ShapedType::isDynamic(outValues) &&
        outValues % shape.width == 0 && kCacheLineBytes % outBytes == 0;
  }

  // Sequences split into chunks when there are fewer batch elements than
  // threads and each chunk still holds kMinChunkBlocks blocks.
  Value chunks = index(1);
  if (ops.hasSequence && shape.threads > 1) {
    Value batchCount = index(1);
    for (Value size : upper)
      batchCount = arith::MulIOp::create(b, loc, batchCount, size);
    Value wanted = arith::CeilDivUIOp::create(
        b, loc, index(shape.threads),
        arith::MaxUIOp::create(b, loc, batchCount, index(1)));
    Value fitting = arith::DivUIOp::create(
        b, loc, length, index(kMinChunkBlocks * shape.block));
    chunks = arith::MaxUIOp::create(
        b, loc, arith::MinUIOp::create(b, loc, wanted, fitting), index(1));
  }

  // Scratch for the features of one block, [batch..., C, P, F]: one slice
  // per thread's work item, so the threads share nothing. (A stack buffer
  // would need an alloca scope, whose region must stay a single block.)
  // Query features only where there is a readout, key features only where
  // the tokens update the state (null otherwise).
  SmallVector<int64_t> scratchShape(ops.batchRank + 1, ShapedType::kDynamic);
  scratchShape.append({shape.block, ShapedType::kDynamic});
  SmallVector<Value> scratchSizes(upper);
  scratchSizes.append({chunks, features});
  auto scratchType = MemRefType::get(scratchShape, compute);
  auto scratchIf = [&](bool needed) -> Value {
    if (!needed)
      return Value();
    return memref::AllocOp::create(b, loc, scratchType, scratchSizes,
                                   b.getI64IntegerAttr(64));
  };
  Value qScratchAll = scratchIf(ops.readout);
  Value kScratchAll = scratchIf(ops.updates);

  if (!ops.updates) {
    emitReadoutParallel(upper, chunks, qScratchAll);
    return;
  }
  if (!ops.hasSequence || shape.threads <= 1) {
    emitBatchParallel(upper, qScratchAll, kScratchAll);
    return;
  }
  Value split = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, chunks,
                                      index(1));
  auto choice = scf::IfOp::create(b, loc, TypeRange(), split,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&choice.getThenRegion().front());
  emitChunkParallel(upper, chunks, qScratchAll, kScratchAll);
  b.setInsertionPointToStart(&choice.getElseRegion().front());
  emitBatchParallel(upper, qScratchAll, kScratchAll);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// The element type of a state the kernels keep, f32 or f64, from a state
/// tensor type or an element type; null for any other type.
static Type kernelStateType(Type type) {
  Type element = getElementTypeOrSelf(type);
  return isa<Float32Type, Float64Type>(element) ? element : Type();
}

/// Whether the kernels take an op whose states and normalizers have the
/// types `states` (one kernel state type) and whose data has the types
/// `data`: f16, bf16 and f32 with either state, f64 with an f64 state.
static bool takesTypes(TypeRange states, TypeRange data) {
  Type state = kernelStateType(states.front());
  if (!state || !llvm::all_of(states, [&](Type type) {
        return kernelStateType(type) == state;
      }))
    return false;
  return llvm::all_of(data, [&](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return false;
    Type element = tensor.getElementType();
    return isa<Float32Type, Float16Type, BFloat16Type>(element) ||
           (element.isF64() && state.isF64());
  });
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
  if (getElementTypeOrSelf(map.getInput().getType()) != featureType)
    return;
  raw = map.getInput();
  kind = map.getKind();
}

/// Emits the kernel for `ops` before `op`, replaces the results of `op` by
/// `buffers` (one per result) as tensors, and erases the feature maps
/// producing `features` that the kernel fused when nothing else uses them.
static void replaceWithKernel(RewriterBase &rewriter, Operation *op,
                              const KernelOperands &ops, KernelShape shape,
                              ArrayRef<Value> buffers,
                              ArrayRef<Value> features) {
  Location loc = op->getLoc();
  shape.width =
      lanesOf(cast<MemRefType>(ops.s.getType()).getElementType(), shape.width);
  KernelEmitter(rewriter, loc, ops, shape).emit();
  // One map may produce both the query and the key features: erase each
  // once.
  SetVector<Operation *> maps;
  for (Value value : features)
    if (auto map = value.getDefiningOp<FeatureMapOp>())
      maps.insert(map);
  replaceWithBuffers(rewriter, op, buffers);
  for (Operation *map : maps)
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

/// Whether the kernel computes `op`: an f32 state with f32/f16/bf16 data,
/// or an f64 state.
static bool hasKernel(ScanOp op) {
  return takesTypes(
      {op.getFinalState().getType(), op.getFinalNormalizer().getType()},
      {op.getQueryFeatures().getType(), op.getKeyFeatures().getType(),
       op.getValues().getType(), op.getResult().getType()});
}

static bool hasKernel(KvSummaryOp op) {
  return takesTypes({op.getState().getType(), op.getNormalizer().getType()},
                    {op.getKeyFeatures().getType(), op.getValues().getType()});
}

static bool hasKernel(QueryReadoutOp op) {
  SmallVector<Type> states = {op.getState().getType()};
  if (op.isNormalized())
    states.push_back(op.getNormalizer().getType());
  return takesTypes(
      states, {op.getQueryFeatures().getType(), op.getResult().getType()});
}

/// Whether the linear form of a non-causal quadratic form (what
/// `linattn-reassociate` makes of it: a summary in f32 for 16-bit data, else
/// in the data type) has kernels.
static bool hasLinearFormKernels(ApplyScoresOp op) {
  auto scores = op.getScores().getDefiningOp<ScoresOp>();
  if (!scores)
    return false;
  Type state = getAccumulatorType(getElementTypeOrSelf(op.getType()));
  return takesTypes({state}, {scores.getQueryFeatures().getType(),
                              scores.getKeyFeatures().getType(),
                              op.getValues().getType(), op.getType()});
}

static bool hasKernel(StepOp op) {
  return takesTypes(
      {op.getNewState().getType(), op.getNewNormalizer().getType(),
       op.getState().getType(), op.getNormalizer().getType()},
      {op.getQueryFeatures().getType(), op.getKeyFeatures().getType(),
       op.getValues().getType(), op.getResult().getType()});
}

/// The kernel's view of the inputs of a scan or step: the features (looking
/// through fusable feature maps), the values and eps. Returns the raw keys
/// in `rawKeys` (their last size is F).
static KernelOperands bindInputs(RewriterBase &rewriter, Location loc,
                                 Value queryFeatures, Value keyFeatures,
                                 Value values, std::optional<APFloat> eps,
                                 int64_t batchRank, bool fuse, Value &rawKeys) {
  KernelOperands ops;
  ops.batchRank = batchRank;
  if (eps)
    ops.eps = eps->convertToDouble();
  Value q;
  fuseFeatureMap(queryFeatures, fuse, q, ops.qMap, ops.qFeatureType);
  fuseFeatureMap(keyFeatures, fuse, rawKeys, ops.kMap, ops.kFeatureType);
  ops.q = toRowsBuffer(rewriter, loc, q);
  ops.k = toRowsBuffer(rewriter, loc, rawKeys);
  ops.v = toRowsBuffer(rewriter, loc, values);
  return ops;
}

/// The buffers of the state S [batch..., F, Dv] and normalizer z
/// [batch..., F] that a scan or summary `op` accumulates into `ops.s` and
/// `ops.z` (its results `state` and `normalizer`): batch sizes from the
/// values `v`, F from the raw keys `k` (the fused maps keep the feature
/// size), Dv from `v`.
static void allocateState(OpBuilder &b, Location loc, KernelOperands &ops,
                          Operation *op, Value state, Value normalizer, Value k,
                          Value v) {
  int64_t batchRank = ops.batchRank;
  ops.s = outputBuffer(
      b, loc, state, op,
      dimSources(v, batchRank, {{k, batchRank + 1}, {v, batchRank + 1}}));
  ops.z = outputBuffer(b, loc, normalizer, op,
                       dimSources(v, batchRank, {{k, batchRank + 1}}));
}

/// Replaces the scan `op` by its kernel.
static void rewriteScan(RewriterBase &rewriter, ScanOp op, KernelShape shape,
                        bool fuse) {
  rewriter.setInsertionPoint(op);

  Location loc = op.getLoc();
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  int64_t batchRank = resultType.getRank() - 2;

  Value k, v = op.getValues();
  KernelOperands ops =
      bindInputs(rewriter, loc, op.getQueryFeatures(), op.getKeyFeatures(), v,
                 op.getEps(), batchRank, fuse, k);
  ops.reverse = op.isReverse();
  if (op.hasInitialState()) {
    ops.s0 = toBuffer(rewriter, loc, op.getInitialState());
    ops.z0 = toBuffer(rewriter, loc, op.getInitialNormalizer());
  }
  allocateState(rewriter, loc, ops, op, op.getFinalState(),
                op.getFinalNormalizer(), k, v);
  ops.out = outputRowsBuffer(
      rewriter, loc, op.getResult(), op,
      dimSources(v, batchRank, {{v, batchRank}, {v, batchRank + 1}}));

  replaceWithKernel(rewriter, op, ops, shape, {ops.out, ops.s, ops.z},
                    {op.getQueryFeatures(), op.getKeyFeatures()});
}

/// Replaces the step `op` by its kernel.
static void rewriteStep(RewriterBase &rewriter, StepOp op, KernelShape shape,
                        bool fuse) {
  rewriter.setInsertionPoint(op);

  Location loc = op.getLoc();
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  int64_t batchRank = resultType.getRank() - 1;

  Value k, v = op.getValues();
  KernelOperands ops =
      bindInputs(rewriter, loc, op.getQueryFeatures(), op.getKeyFeatures(), v,
                 op.getEps(), batchRank, fuse, k);
  ops.hasSequence = false;
  ops.s0 = toBuffer(rewriter, loc, op.getState());
  ops.z0 = toBuffer(rewriter, loc, op.getNormalizer());
  Value s0 = op.getState();
  ops.s = outputBuffer(
      rewriter, loc, op.getNewState(), op,
      dimSources(v, batchRank, {{s0, batchRank}, {s0, batchRank + 1}}));
  ops.z = outputBuffer(rewriter, loc, op.getNewNormalizer(), op,
                       dimSources(v, batchRank, {{s0, batchRank}}));
  ops.out = outputBuffer(rewriter, loc, op.getResult(), op,
                         dimSources(v, batchRank, {{v, batchRank}}));

  replaceWithKernel(rewriter, op, ops, shape, {ops.out, ops.s, ops.z},
                    {op.getQueryFeatures(), op.getKeyFeatures()});
}

/// Replaces the key-value summary `op` by its kernel: the scan's state
/// update over the keys, without readout.
static void rewriteSummary(RewriterBase &rewriter, KvSummaryOp op,
                           KernelShape shape, bool fuse) {
  rewriter.setInsertionPoint(op);

  Location loc = op.getLoc();
  auto stateType = cast<RankedTensorType>(op.getState().getType());
  int64_t batchRank = stateType.getRank() - 2;

  KernelOperands ops;
  ops.batchRank = batchRank;
  ops.readout = false;
  Value k, v = op.getValues();
  fuseFeatureMap(op.getKeyFeatures(), fuse, k, ops.kMap, ops.kFeatureType);
  ops.k = toRowsBuffer(rewriter, loc, k);
  ops.v = toRowsBuffer(rewriter, loc, v);
  allocateState(rewriter, loc, ops, op, op.getState(), op.getNormalizer(), k,
                v);

  replaceWithKernel(rewriter, op, ops, shape, {ops.s, ops.z},
                    {op.getKeyFeatures()});
}

/// Replaces the query readout `op` by its kernel: the scan's readout of a
/// state that the tokens do not update.
static void rewriteReadout(RewriterBase &rewriter, QueryReadoutOp op,
                           KernelShape shape, bool fuse) {
  rewriter.setInsertionPoint(op);

  Location loc = op.getLoc();
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  int64_t batchRank = resultType.getRank() - 2;

  KernelOperands ops;
  ops.batchRank = batchRank;
  ops.updates = false;
  if (op.isNormalized()) {
    ops.eps = op.getEps()->convertToDouble();
    ops.z = toBuffer(rewriter, loc, op.getNormalizer());
  }
  Value q, state = op.getState();
  fuseFeatureMap(op.getQueryFeatures(), fuse, q, ops.qMap, ops.qFeatureType);
  ops.q = toRowsBuffer(rewriter, loc, q);
  ops.s = toBuffer(rewriter, loc, state);
  ops.out = outputRowsBuffer(
      rewriter, loc, op.getResult(), op,
      dimSources(q, batchRank, {{q, batchRank}, {state, batchRank + 1}}));

  replaceWithKernel(rewriter, op, ops, shape, {ops.out},
                    {op.getQueryFeatures()});
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {

/// f32 lanes of the widest vectors of code for `cpu` with `features`
/// (`targetFeatures`; both empty: the host); 0 when `features` is malformed.
static int64_t vectorWidthFor(StringRef cpu, StringRef features) {
  std::optional<llvm::StringMap<bool>> enabled = targetFeatures(cpu, features);
  if (!enabled)
    return 0;
  if (enabled->lookup("avx512f"))
    return 16;
  if (enabled->lookup("avx2") || enabled->lookup("avx"))
    return 8;
  return 4;
}

struct ConvertLinAttnToCPUKernelsPass
    : linattn::impl::ConvertLinAttnToCPUKernelsPassBase<
          ConvertLinAttnToCPUKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (std::optional<std::string> unknown = unknownTargetCpu(targetCpu)) {
      emitError(getOperation()->getLoc()) << *unknown;
      return signalPassFailure();
    }
    int64_t targetWidth = vectorWidthFor(targetCpu, targetFeatures);
    if (targetWidth == 0) {
      emitError(getOperation()->getLoc())
          << "malformed target features '" << targetFeatures
          << "': expected a comma-separated list of +feature or -feature";
      return signalPassFailure();
    }
    int64_t width = vectorWidth == 0 ? targetWidth : vectorWidth;
    if (width < 1 || width > 64) {
      emitError(getOperation()->getLoc())
          << "vector-width must be between 1 and 64, got " << width;
      return signalPassFailure();
    }
    // The register tile by default: C·P values, C·P accumulators, C state
    // vectors and two broadcasts in the vector registers (32 with AVX-512,
    // 16 otherwise). P = 3, C = 4 measured best on the Zen 4 machine.
    bool wideRegisters = targetWidth == 16;
    int64_t block = tokensPerBlock != 0 ? static_cast<int64_t>(tokensPerBlock)
                    : wideRegisters     ? 3
                                        : 2;
    // Without an explicit count, as many column vectors as fit next to the
    // block's tokens.
    int64_t columns = columnVectors != 0
                          ? static_cast<int64_t>(columnVectors)
                          : std::clamp<int64_t>((wideRegisters ? 12 : 4) /
                                                    std::max<int64_t>(block, 1),
                                                1, wideRegisters ? 4 : 2);
    if (block < 1 || block > 8) {
      emitError(getOperation()->getLoc())
          << "tokens-per-block must be between 1 and 8, got " << block;
      return signalPassFailure();
    }
    int64_t threadCount =
        threads == 0 ? llvm::hardware_concurrency().compute_thread_count()
                     : static_cast<int64_t>(threads);
    if (threadCount < 1) {
      emitError(getOperation()->getLoc())
          << "threads must be 0 or positive, got " << threadCount;
      return signalPassFailure();
    }
    if (columns < 1 || columns > 4) {
      emitError(getOperation()->getLoc())
          << "column-vectors must be between 1 and 4, got " << columns;
      return signalPassFailure();
    }
    if (block * columns > 16) {
      emitError(getOperation()->getLoc())
          << "tokens-per-block × column-vectors must be at most 16 (the "
             "tile's values and accumulators live in registers), got "
          << block * columns;
      return signalPassFailure();
    }
    if (!(reassociateSpeedup >= 0.0)) {
      emitError(getOperation()->getLoc())
          << "reassociate-speedup must be 0 or positive, got "
          << reassociateSpeedup;
      return signalPassFailure();
    }
    KernelShape shape{width, block, columns, threadCount};
    IRRewriter rewriter(&getContext());
    // Quadratic forms the target-independent cost model kept, where the
    // kernels make the linear form the faster one anyway.
    if (reassociateSpeedup > 0.0) {
      SmallVector<ApplyScoresOp> quadratic;
      getOperation()->walk([&](ApplyScoresOp op) {
        if (hasLinearFormKernels(op))
          quadratic.push_back(op);
      });
      for (ApplyScoresOp op : quadratic)
        (void)reassociateScores(rewriter, op, ReassociateMode::Auto,
                                reassociateSpeedup);
    }
    SmallVector<Operation *> targets;
    getOperation()->walk([&](Operation *op) {
      bool kernel = TypeSwitch<Operation *, bool>(op)
                        .Case<ScanOp, StepOp, KvSummaryOp, QueryReadoutOp>(
                            [](auto typed) { return hasKernel(typed); })
                        .Default(false);
      if (kernel)
        targets.push_back(op);
    });
    for (Operation *op : targets) {
      TypeSwitch<Operation *>(op)
          .Case([&](ScanOp scan) {
            rewriteScan(rewriter, scan, shape, fuseFeatureMaps);
          })
          .Case([&](StepOp step) {
            rewriteStep(rewriter, step, shape, fuseFeatureMaps);
          })
          .Case([&](KvSummaryOp summary) {
            rewriteSummary(rewriter, summary, shape, fuseFeatureMaps);
          })
          .Case([&](QueryReadoutOp readout) {
            rewriteReadout(rewriter, readout, shape, fuseFeatureMaps);
          });
    }
    // The feature maps no kernel fused that have kernels of their own.
    SmallVector<FeatureMapOp> maps;
    getOperation()->walk([&](FeatureMapOp map) {
      if (hasFeatureMapKernel(map))
        maps.push_back(map);
    });
    for (FeatureMapOp map : maps)
      rewriteFeatureMap(rewriter, map, shape);
  }
};

} // namespace
