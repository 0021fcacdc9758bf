//===- RecurrentScan.cpp - the scan and step on CUDA cores ----------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The recurrent (RNN) form on CUDA cores, in the state's type: the causal
// scan token by token, for the scans the chunked tensor-core kernels do not
// take (f32 or f64 data and state, scan-kernel=recurrent), and the decode
// step.
//
// - scan: one block per batch element and tile of value columns; each
//   thread keeps `scan-thread-columns` adjacent columns of S in registers
//   (a share of their rows, `scan-feature-lanes` x columns lanes sharing
//   the rows); the features and values of a block of tokens are staged in
//   shared memory (with the fused feature map applied once; with f32 data
//   on sm_80 and later the next block is copied by cp.async while the
//   current one runs), the normalizer z and the denominators are computed
//   there cooperatively. Sequence-parallel where the batch leaves SMs idle:
//   each segment's contribution to S and z, the scan over the segments,
//   each segment's outputs from its starting state.
// - step (decoding): `scan-feature-lanes` threads per value column of each
//   batch element, each streaming its share of the state's rows from global
//   memory: the first 32 loaded before φ(q), φ(k) and the new normalizer
//   are staged in shared memory, the rest 8 rows at a time.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilders.h"
#include "Occupancy.h"
#include "PhaseClocks.h"
#include "SimtChunkScan.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::linattn;
using namespace mlir::linattn::gpukernels;

/// Partial sums of the recurrent scan's readout φ(q)ᵀS[:, d] per token.
static constexpr int64_t kReadoutChains = 4;

/// Tokens per iteration of the recurrent scan's token loop.
static constexpr int64_t kTokensPerIteration = 2;

/// Partial sums of the recurrent scan's denominators eps + φ(q)ᵀz per token.
static constexpr int64_t kDenominatorChains = 8;

/// Most lanes that add up one token's denominator in the recurrent scan; the
/// rows of its partial products are padded by as many elements.
static constexpr int64_t kDenominatorLanes = 8;

/// State rows whose loads a lane of the step kernel issues together: the
/// first kStepEarlyLoads before the features are staged, the rest in groups
/// of kStepLoads.
static constexpr int64_t kStepEarlyLoads = 32;
static constexpr int64_t kStepLoads = 8;

/// Shared memory the scan kernel stays within where it can: CUDA's static
/// limit per block.
static constexpr int64_t kScanSharedBytes = 48 * 1024;

/// Size of the token block the scan stages in shared memory: the query and
/// key features (and, `normalized`, the normalizer's partial products) of
/// TT tokens, about 8 KiB each, fewer tokens where `slots` blocks of φ(q),
/// φ(k) and V (`columns` wide) with the normalizer's buffers would pass
/// kScanSharedBytes. With two slots, 0 where not even one token fits (the
/// kernel then stages synchronously); with one, at least one token.
static int64_t scanTokensPerBlock(int64_t features, int64_t columns,
                                  int64_t slots, bool normalized,
                                  Type stateType) {
  int64_t element = stateType.getIntOrFloatBitWidth() / 8;
  int64_t tokens = std::clamp<int64_t>(
      8192 / std::max<int64_t>(features * element, 1), 1, 64);
  // Per token: φ(q), φ(k) and V in each slot, normalized a padded row of
  // partial products and a denominator; once: the running normalizer.
  int64_t perToken =
      element * (slots * (2 * features + columns) +
                 (normalized ? features + kDenominatorLanes + 1 : 0));
  int64_t fit = (kScanSharedBytes - element * features) / perToken;
  return std::clamp<int64_t>(fit, slots > 1 ? 0 : 1, tokens);
}

/// Threads of the blocks `sequence-parallel-blocks` counts.
static constexpr int64_t kSegmentTargetThreads = 128;

/// Threads from which a block is taken to be all an SM holds: 512 threads
/// of up to 128 registers each take all of its 64K.
static constexpr int64_t kWholeSMThreads = 512;

/// The recurrent scan's segment target for blocks of `tile` threads, and
/// whether it is a bound (`HostIndex::segments`' `atMostTarget`):
/// `sequence-parallel-blocks` (`target`, 0 for never) counted in blocks of
/// 128 threads, so that blocks of 256 threads count two and of 64 half;
/// blocks that fill an SM aim at one per SM (half the target, by default
/// the H100's 132 SMs) and no more, where one more would start a second
/// wave.
static std::pair<int64_t, bool> segmentTarget(int64_t target, int64_t tile) {
  if (target <= 0)
    return {0, false};
  if (tile >= kWholeSMThreads)
    return {std::max<int64_t>(1, target / 2), true};
  return {std::max<int64_t>(
              1, llvm::divideCeil(target * kSegmentTargetThreads, tile)),
          false};
}

namespace {
/// The kernels of the recurrent scan.
enum class RecurrentPass {
  /// The whole scan, one block per batch element and value tile:
  /// batch-parallel.
  Whole,
  /// Sequence-parallel pass 1: each segment's contribution to S and z, from
  /// a zero state and without outputs.
  SegmentStates,
  /// Sequence-parallel pass 3: each segment's outputs, from the state at its
  /// start.
  SegmentOutputs,
};

/// What the recurrent scan's kernels are specialized for.
struct RecurrentScanConfig {
  int64_t features;
  Type stateType;  // S, z and the staged tiles
  Type dataType;   // V
  Type resultType; // O
  FeatureSource q, k;
  /// Where the values come from (`valueSourceOf`); no map where the
  /// kernels take V as it is.
  FeatureSource v = {};
  bool normalized, reverse, hasInit, writesState;
  /// Whether z is accumulated: for the denominators or the final normalizer.
  bool needZ;
  double eps;
  /// Threads per block, adjacent value columns per thread, threads sharing a
  /// group of columns and the features each of them keeps.
  int64_t tile, threadColumns, lanes, laneFeatures;
  /// Value columns per block.
  int64_t columns;
  /// Tokens per staged block, and whether the next block is copied by
  /// cp.async during the current one (two slots).
  int64_t tokens;
  bool async;
  /// Lanes adding up each token's denominator, and the pitch of the rows of
  /// the denominators' partial products.
  int64_t denominatorLanes, partialPitch;

  /// Instrumentation (option `phase-clocks`, `PhaseClocks`): a workgroup
  /// buffer of `kPhaseClockSlots` i64 last, the records buffer the last
  /// argument.
  bool phaseClocks = false;
  /// Whether Q, K, V and O are token-major (`TokenMajorRows`, as
  /// `ChunkedScanConfig::tokenMajor`): a kernel argument H after the
  /// sizes, rows H·W elements apart.
  bool tokenMajor = false;

  int64_t slots() const { return async ? 2 : 1; }
  SegmentScanConfig segmentScan() const {
    return {features, stateType, hasInit, writesState, needZ};
  }
};
} // namespace

/// The kernel of `pass` of the recurrent scan `c`. Arguments:
/// - Whole: those of `Converter::launchScan` (`scanKernelArgs`); grid
///   (batch, value tiles).
/// - SegmentStates: k, v, the flat [batch, segments, F, Dv] and
///   [batch, segments, F] buffers of the segments' contributions, N, Dv,
///   staged blocks per segment, segments; grid (batch, value tiles,
///   segments).
/// - SegmentOutputs: q, k, v, the states and normalizers at the segments'
///   starts (laid out as the contributions), O, N, Dv, staged blocks per
///   segment, segments; grid (batch, value tiles, segments).
/// With `tokenMajor`, then H; with `phaseClocks`, then the records of
/// `PhaseClocks::report`.
static gpu::GPUFuncOp buildRecurrentKernel(RewriterBase &rewriter, Location loc,
                                           gpu::GPUModuleOp kernels,
                                           StringRef name,
                                           const RecurrentScanConfig &c,
                                           RecurrentPass pass) {
  bool states = pass == RecurrentPass::SegmentStates;
  bool segmented = pass != RecurrentPass::Whole;
  // What this kernel reads, computes and writes.
  bool readsQ = !states;
  bool denominators = c.normalized && !states;
  bool needZ = pass == RecurrentPass::SegmentOutputs ? c.normalized : c.needZ;
  bool hasInit = pass == RecurrentPass::Whole ? c.hasInit : !states;
  bool writesState = pass == RecurrentPass::Whole ? c.writesState : states;
  int64_t features = c.features, tile = c.tile, lanes = c.lanes,
          threadColumns = c.threadColumns, laneFeatures = c.laneFeatures,
          columns = c.columns, tokens = c.tokens, slots = c.slots(),
          partialPitch = c.partialPitch;
  Type stateType = c.stateType;
  const FeatureSource &q = c.q, &k = c.k, &valueMap = c.v;
  bool async = c.async, reverse = c.reverse;

  Type indexType = rewriter.getIndexType();
  SmallVector<Type> argTypes;
  if (readsQ)
    argTypes.push_back(flatBufferType(tensorTypeOf(q.tensor).getElementType()));
  argTypes.push_back(flatBufferType(tensorTypeOf(k.tensor).getElementType()));
  argTypes.push_back(flatBufferType(c.dataType));
  if (pass == RecurrentPass::Whole) {
    if (hasInit)
      argTypes.append(2, flatBufferType(stateType));
    argTypes.push_back(flatBufferType(c.resultType));
    if (writesState)
      argTypes.append(2, flatBufferType(stateType));
  } else {
    // The contributions (written) or the starting states (read), then O.
    argTypes.append(2, flatBufferType(stateType));
    if (!states)
      argTypes.push_back(flatBufferType(c.resultType));
  }
  argTypes.append({indexType, indexType}); // N, Dv
  if (segmented)
    argTypes.append({indexType, indexType}); // blocks per segment, segments
  if (c.tokenMajor)
    argTypes.push_back(indexType); // H
  if (c.phaseClocks)
    argTypes.push_back(flatBufferType(rewriter.getI64Type())); // records
  SmallVector<Type> shared = {
      // φ(q) and φ(k) of the block (of the current and next block with
      // async copies).
      workgroupBufferType(stateType, readsQ ? slots * tokens * features : 1),
      workgroupBufferType(stateType, slots * tokens * features),
      // φ(q)ᵢ zᵢ partials and denominators, when normalized.
      workgroupBufferType(stateType, denominators ? tokens * partialPitch : 1),
      workgroupBufferType(stateType, denominators ? tokens : 1),
      workgroupBufferType(stateType, features), // running z
      // V of the block's tokens and columns (of two blocks, likewise).
      workgroupBufferType(stateType, slots * tokens * columns)};
  if (c.phaseClocks)
    shared.push_back(
        workgroupBufferType(rewriter.getI64Type(), kPhaseClockSlots));
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels, name, argTypes, shared);
  if (c.phaseClocks)
    buildPhaseClocksPrinter(rewriter, loc, kernel);
  OpBuilder::InsertionGuard guard(rewriter);
  setInsertionPointToKernelBody(rewriter, kernel);
  KernelBuilder kb(rewriter, loc, stateType);
  ArrayRef<BlockArgument> args = kernel.getArguments();
  Value qBuf, kBuf, vBuf, s0Buf, z0Buf, oBuf, sBuf, zBuf, n, dv, perSegment,
      segments;
  if (pass == RecurrentPass::Whole) {
    ScanKernelArgs bound = scanKernelArgs(kernel, hasInit, writesState);
    qBuf = bound.q, kBuf = bound.k, vBuf = bound.v, s0Buf = bound.s0,
    z0Buf = bound.z0, oBuf = bound.o, sBuf = bound.s, zBuf = bound.z,
    n = bound.n, dv = bound.dv;
  } else {
    unsigned a = 0;
    if (readsQ)
      qBuf = args[a++];
    kBuf = args[a++];
    vBuf = args[a++];
    if (states) {
      sBuf = args[a++];
      zBuf = args[a++];
    } else {
      s0Buf = args[a++];
      z0Buf = args[a++];
      oBuf = args[a++];
    }
    n = args[a++];
    dv = args[a++];
    perSegment = args[a++];
    segments = args[a++];
  }
  ArrayRef<BlockArgument> wg = kernel.getWorkgroupAttributions();
  Value qs = wg[0], ks = wg[1], pz = wg[2], den = wg[3], zs = wg[4], vs = wg[5];
  PhaseClocks clocks(rewriter, loc, c.phaseClocks ? Value(wg[6]) : Value());
  clocks.start();

  Value c0 = kb.idx(0), c1 = kb.idx(1), cF = kb.idx(features),
        cTT = kb.idx(tokens), cTile = kb.idx(tile);
  Value batch = kb.blockId(gpu::Dimension::x);
  // The rows of the batch element's tokens in q, k, v and O; token-major
  // with H the argument after the sizes.
  TokenRows tokenRows(kb, batch, n,
                      headsArgument(kernel, c.tokenMajor, c.phaseClocks));
  Value tid = kb.threadId();
  // Thread tid keeps F / lanes features of `threadColumns` adjacent value
  // columns from col. Lane l of a warp is part p = l / (32 / lanes) of
  // column group g = l mod (32 / lanes): the lanes of a part, adjacent,
  // read the same features (pairs of lanes with one address, which an SM
  // returns at twice the rate of distinct ones), the `lanes` parts of a
  // group are 32 / lanes lanes apart. A part holds groups of 4 consecutive
  // features, the parts' groups side by side (part p: features 4p..4p+3,
  // 4(p + lanes).., ...; one feature at a time when F / lanes is not a
  // multiple of 4), so that it reads a group of φ(q) or φ(k) as one
  // 16-byte load and the parts read consecutive bytes, where blocks of
  // F / lanes features would put them in the same banks.
  int64_t groupLanes = 32 / lanes;
  Value lane = kb.remU(tid, kb.idx(32));
  Value part = kb.divU(lane, kb.idx(groupLanes));
  Value columnGroup =
      kb.add(kb.mul(kb.divU(tid, kb.idx(32)), kb.idx(groupLanes)),
             kb.remU(lane, kb.idx(groupLanes)));
  Value blockColumn = kb.mul(columnGroup, kb.idx(threadColumns));
  Value col = kb.add(kb.mul(kb.blockId(gpu::Dimension::y), kb.idx(columns)),
                     blockColumn);
  int64_t group = laneFeatures % 4 == 0 ? 4 : 1;
  Value groupBase = kb.mul(part, kb.idx(group));
  auto featureAt = [&](int64_t j) {
    return kb.add(kb.idx((j / group) * lanes * group + j % group), groupBase);
  };
  auto columnAt = [&](int64_t c) { return kb.add(col, kb.idx(c)); };
  // Columns past Dv are computed on zeros and not stored: every thread
  // takes part in the barriers and shuffles.
  auto activeAt = [&](int64_t c) { return kb.ult(columnAt(c), dv); };
  // The scan positions [begin, end) the block walks, and the first row of
  // its state and normalizer: the batch element's (row b·F of S and z), or
  // its segment's in the [batch, segments] buffers.
  Value begin = c0, end = n, stateBase = kb.mul(batch, cF);
  if (segmented) {
    Value segment = kb.blockId(gpu::Dimension::z);
    Value span = kb.mul(perSegment, cTT);
    begin = kb.mul(segment, span);
    end = kb.minU(kb.add(begin, span), n);
    stateBase = kb.mul(kb.add(kb.mul(batch, segments), segment), cF);
  }

  // The state columns in registers (feature j of column c at
  // j·threadColumns + c), the normalizer in shared memory.
  SmallVector<Value> column;
  for (int64_t j = 0; j < laneFeatures; ++j) {
    for (int64_t c = 0; c < threadColumns; ++c) {
      if (hasInit)
        column.push_back(kb.loadIf(
            activeAt(c), s0Buf,
            kb.add(kb.mul(kb.add(stateBase, featureAt(j)), dv), columnAt(c))));
      else
        column.push_back(kb.fconst(0.0));
    }
  }
  if (needZ)
    kb.forLoop(tid, cF, cTile, [&](Value f) {
      Value init =
          hasInit ? kb.load(z0Buf, kb.add(stateBase, f)) : kb.fconst(0.0);
      memref::StoreOp::create(rewriter, loc, init, zs, ValueRange{f});
    });

  // Position of token t of the block starting at scan position t0 in the
  // sequence.
  auto tokenAt = [&](Value t0, Value t) {
    Value i = kb.add(t0, t);
    return reverse ? kb.sub(kb.sub(n, c1), i) : i;
  };

  Value cColumns = kb.idx(columns);
  Value firstColumn = kb.mul(kb.blockId(gpu::Dimension::y), cColumns);
  // The offsets of slot `slot` in the feature and value buffers.
  auto slotBases = [&](Value slot) {
    return std::make_pair(kb.mul(slot, kb.idx(tokens * features)),
                          kb.mul(slot, kb.idx(tokens * columns)));
  };
  // Stages the `count` tokens at t0 into the slot at (fBase, vBase): φ(q)
  // (where the kernel reads it) and φ(k), and V of the block's columns
  // (zeros past Dv). Synchronously, each element loaded, mapped and stored;
  // with async copies each is copied by cp.async (4 bytes, whatever the
  // alignment) and the feature maps wait for `mapStaged`. The recurrence
  // reads a token's value from shared memory, where a load from global
  // memory would put its latency on every token's critical path.
  //
  // Async copies take 16 bytes (4 elements) at a time where the rows allow
  // it, tested once per block: φ(q), φ(k) with F a multiple of 4 and the
  // buffers 16-byte aligned; V with Dv a multiple of 4 (a group is wholly in
  // Dv or past it, and copies zeros there) and its buffer aligned. Elsewhere
  // 4 bytes each, whatever the alignment.
  Value wideFeatures, wideValues; // null: never
  if (async && features % 4 == 0)
    wideFeatures =
        readsQ ? arith::AndIOp::create(rewriter, loc, kb.alignedTo(qBuf, 16),
                                       kb.alignedTo(kBuf, 16))
                     .getResult()
               : kb.alignedTo(kBuf, 16);
  if (async && columns % 4 == 0)
    wideValues = arith::AndIOp::create(rewriter, loc, kb.alignedTo(vBuf, 16),
                                       kb.eq(kb.remU(dv, kb.idx(4)), c0));
  // Calls `fn(i, t, col)` for this thread's groups of `width` value columns
  // of a block of `count` tokens: group i, token t, first column col.
  auto forEachValueGroup = [&](Value count, int64_t width,
                               function_ref<void(Value, Value, Value)> fn) {
    Value groups = kb.idx(columns / width);
    kb.forLoop(tid, kb.mul(count, groups), cTile, [&](Value i) {
      fn(i, kb.divU(i, groups),
         kb.add(firstColumn, kb.mul(kb.remU(i, groups), kb.idx(width))));
    });
  };
  // The staged feature buffers: (shared, global, source).
  SmallVector<std::tuple<Value, Value, const FeatureSource *>> stagedFeatures;
  if (readsQ)
    stagedFeatures.push_back({qs, qBuf, &q});
  stagedFeatures.push_back({ks, kBuf, &k});
  auto stage = [&](Value t0, Value count, Value fBase, Value vBase) {
    auto stageFeatures = [&](int64_t width) {
      Value groups = kb.idx(features / width);
      kb.forLoop(tid, kb.mul(count, groups), cTile, [&](Value i) {
        Value t = kb.divU(i, groups);
        Value f = kb.mul(kb.remU(i, groups), kb.idx(width));
        Value row = tokenRows(tokenAt(t0, t));
        Value at = kb.add(kb.mul(row, cF), f);
        Value to = kb.add(fBase, kb.mul(i, kb.idx(width)));
        for (auto [staged, global, source] : stagedFeatures) {
          if (async)
            kb.asyncCopy(global, at, staged, to, width, Value(), width == 4);
          else
            kb.store(kb.loadFeature(global, at, *source), staged, to);
        }
      });
    };
    auto stageValues = [&](int64_t width) {
      forEachValueGroup(count, width, [&](Value i, Value t, Value col) {
        Value row = tokenRows(tokenAt(t0, t));
        Value exists = kb.ult(col, dv);
        Value at = kb.add(kb.mul(row, dv), col);
        Value to = kb.add(vBase, kb.mul(i, kb.idx(width)));
        if (width > 1)
          kb.asyncCopy(vBuf, kb.select(exists, at, c0), vs, to, width,
                       kb.select(exists, kb.idx(width), c0),
                       /*bypassL1=*/true);
        else if (async)
          kb.ifElse(
              exists, [&] { kb.asyncCopy(vBuf, at, vs, to); },
              [&] { kb.store(kb.fconst(0.0), vs, to); });
        else if (valueMap.map)
          // φ(0) need not be 0: the columns past Dv stay zeros.
          kb.store(
              kb.select(exists,
                        kb.featureOf(kb.loadIf(exists, vBuf, at), valueMap),
                        kb.fconst(0.0)),
              vs, to);
        else
          kb.store(kb.loadIf(exists, vBuf, at), vs, to);
      });
    };
    kb.byWidth(wideFeatures, stageFeatures);
    kb.byWidth(wideValues, stageValues);
  };
  // With async copies: applies the feature maps to the elements of the
  // `count` tokens at fBase this thread copied, in its copies' groups (its
  // own copies are complete once it has waited for their group; the
  // barrier after this publishes them).
  auto mapStaged = [&](Value count, Value fBase, Value vBase) {
    // The values' map (elu, relu), on the groups of the block's columns
    // this thread copied that are in Dv (a wide group is wholly in or out).
    if (mapsOnCopy(valueMap))
      kb.byWidth(wideValues, [&](int64_t width) {
        forEachValueGroup(count, width, [&](Value i, Value, Value col) {
          kb.ifThen(kb.ult(col, dv), [&] {
            kb.mapRun(vs, kb.add(vBase, kb.mul(i, kb.idx(width))), width,
                      valueMap);
          });
        });
      });
    if (llvm::none_of(stagedFeatures,
                      [](auto &s) { return mapsOnCopy(*std::get<2>(s)); }))
      return;
    kb.byWidth(wideFeatures, [&](int64_t width) {
      kb.forLoop(tid, kb.mul(count, kb.idx(features / width)), cTile,
                 [&](Value i) {
                   Value at = kb.add(fBase, kb.mul(i, kb.idx(width)));
                   for (auto [staged, global, source] : stagedFeatures)
                     if (mapsOnCopy(*source))
                       kb.mapRun(staged, at, width, *source);
                 });
    });
  };

  // With async copies the first block is in flight before the loop, and
  // each iteration starts the next block's copies into the other slot
  // (after the barrier that ends every thread's reads of it), then waits
  // for its own block's: all but the group it just committed.
  if (async) {
    stage(begin, kb.minU(cTT, kb.sub(end, begin)), c0, c0);
    kb.commitAsyncCopies();
  }
  clocks.mark(Phase::Prologue);
  column =
      kb.forLoop(begin, end, cTT, column, [&](Value t0, ValueRange carried) {
        Value count = kb.minU(cTT, kb.sub(end, t0));
        Value slot =
            async ? kb.remU(kb.divU(kb.sub(t0, begin), cTT), kb.idx(2)) : c0;
        Value fBase, vBase;
        std::tie(fBase, vBase) = slotBases(slot);
        kb.barrier();
        if (async) {
          Value next = kb.add(t0, cTT);
          kb.ifThen(kb.ult(next, end), [&] {
            auto [nextF, nextV] = slotBases(kb.sub(c1, slot));
            stage(next, kb.minU(cTT, kb.sub(end, next)), nextF, nextV);
          });
          kb.commitAsyncCopies();
          clocks.mark(Phase::Issue);
          kb.waitAsyncCopies(/*pending=*/1);
          clocks.mark(Phase::Wait);
          mapStaged(count, fBase, vBase);
        } else {
          stage(t0, count, fBase, vBase);
        }
        kb.barrier();
        clocks.mark(async ? Phase::Map : Phase::Stage);
        // The running normalizer, one feature per thread, and the partial
        // products of the denominators φ(qᵢ)ᵀzᵢ; none when unnormalized and
        // the final normalizer is unused.
        if (needZ)
          kb.forLoop(tid, cF, cTile, [&](Value f) {
            Value z0 = memref::LoadOp::create(rewriter, loc, zs, ValueRange{f});
            Value z = kb.forLoop(
                c0, count, c1, ValueRange{z0},
                [&](Value t, ValueRange zc) -> SmallVector<Value> {
                  Value i = kb.add(kb.mul(t, cF), f);
                  Value staged = kb.add(fBase, i);
                  Value kf = memref::LoadOp::create(rewriter, loc, ks,
                                                    ValueRange{staged});
                  Value next = kb.fadd(zc[0], kf);
                  if (denominators) {
                    Value qf = memref::LoadOp::create(rewriter, loc, qs,
                                                      ValueRange{staged});
                    memref::StoreOp::create(
                        rewriter, loc, kb.fmul(qf, next), pz,
                        ValueRange{kb.add(kb.mul(t, kb.idx(partialPitch)), f)});
                  }
                  return {next};
                })[0];
            memref::StoreOp::create(rewriter, loc, z, zs, ValueRange{f});
          });
        // The denominators: eps plus the token's F partial products. Each of
        // the token's lanes adds F / lanes of them (every lanes-th one: a
        // warp's loads take consecutive words of each row) in up to
        // kDenominatorChains interleaved sums added pairwise (one chain of
        // dependent adds would hold the block's other threads at the barrier
        // for as many add latencies), and the lanes add their sums with
        // shuffles; the block's threads take part alike, each pass covering
        // the block's tokens (all of them with several lanes a token).
        if (denominators) {
          kb.barrier();
          Value lanes = kb.idx(c.denominatorLanes);
          Value denominatorPart = kb.remU(tid, lanes);
          int64_t perLane = features / c.denominatorLanes;
          int64_t chains = std::clamp<int64_t>(perLane, 1, kDenominatorChains);
          int64_t whole = perLane / chains * chains;
          kb.forLoop(
              c0, count, kb.idx(tile / c.denominatorLanes), [&](Value first) {
                Value t = kb.add(first, kb.divU(tid, lanes));
                Value valid = kb.ult(t, count);
                // Tokens past the block read its last token's row (their sums
                // are dropped): the words its own lanes read, in their warp or
                // alone in theirs, where another row would share their banks.
                Value rowBase = kb.add(
                    kb.mul(kb.minU(t, kb.sub(count, c1)), kb.idx(partialPitch)),
                    denominatorPart);
                auto partial = [&](Value j) {
                  return memref::LoadOp::create(
                             rewriter, loc, pz,
                             ValueRange{kb.add(rowBase, kb.mul(j, lanes))})
                      .getResult();
                };
                // The chains start at the first products (at zero for F = 0).
                SmallVector<Value> sums(chains, kb.fconst(0.0));
                if (whole)
                  for (int64_t i = 0; i < chains; ++i)
                    sums[i] = partial(kb.idx(i));
                sums = kb.forLoop(
                    kb.idx(std::min(whole, chains)), kb.idx(whole),
                    kb.idx(chains), sums,
                    [&](Value j0, ValueRange acc) -> SmallVector<Value> {
                      SmallVector<Value> next;
                      for (int64_t i = 0; i < chains; ++i)
                        next.push_back(
                            kb.fadd(acc[i], partial(kb.add(j0, kb.idx(i)))));
                      return next;
                    });
                for (int64_t j = whole; j < perLane; ++j)
                  sums[j - whole] =
                      kb.fadd(sums[j - whole], partial(kb.idx(j)));
                Value sum =
                    kb.sumOverLanes(kb.pairwiseSum(sums), c.denominatorLanes);
                Value writes = arith::AndIOp::create(
                    rewriter, loc, valid, kb.eq(denominatorPart, c0));
                kb.ifThen(writes, [&] {
                  memref::StoreOp::create(rewriter, loc,
                                          kb.fadd(kb.fconst(c.eps), sum), den,
                                          ValueRange{t});
                });
              });
          kb.barrier();
        }
        if (needZ)
          clocks.mark(Phase::Normalizer);
        // The recurrence over the block's tokens, the state columns in
        // registers: token t of the block.
        auto token = [&](Value t, ValueRange s) -> SmallVector<Value> {
          Value row = tokenRows(tokenAt(t0, t));
          Value vRow = kb.add(vBase, kb.add(kb.mul(t, cColumns), blockColumn));
          SmallVector<Value> vt = kb.loadRun(vs, vRow, threadColumns);
          Value rowBase = kb.add(fBase, kb.mul(t, cF));
          SmallVector<Value> next;
          // The readouts φ(q)ᵀS[:, d], each in interleaved partial sums
          // (kReadoutChains in all): one chain of F dependent fused
          // multiply-adds would bound each token by F FMA latencies. With
          // no features (F = 0) a readout is one zero chain.
          int64_t chains = std::clamp<int64_t>(
              laneFeatures, 1,
              std::max<int64_t>(1, kReadoutChains / threadColumns));
          SmallVector<SmallVector<Value>> partial;
          if (readsQ)
            partial.assign(threadColumns,
                           SmallVector<Value>(chains, kb.fconst(0.0)));
          SmallVector<Value> kt, qt;
          for (int64_t f = 0; f < laneFeatures; f += group) {
            Value i = kb.add(rowBase, featureAt(f));
            llvm::append_range(kt, kb.loadRun(ks, i, group));
            if (readsQ)
              llvm::append_range(qt, kb.loadRun(qs, i, group));
          }
          // A segment's contribution: the state update alone.
          if (states) {
            for (int64_t f = 0; f < laneFeatures; ++f)
              for (int64_t c = 0; c < threadColumns; ++c)
                next.push_back(kb.fma(kt[f], vt[c], s[f * threadColumns + c]));
            return next;
          }
          for (int64_t f = 0; f < laneFeatures; ++f) {
            Value kf = kt[f], qf = qt[f];
            for (int64_t c = 0; c < threadColumns; ++c) {
              next.push_back(kb.fma(kf, vt[c], s[f * threadColumns + c]));
              Value &sum = partial[c][f % chains];
              sum = kb.fma(qf, next.back(), sum);
            }
          }
          // The parts of a column add their readouts (every lane takes
          // part), each lane left with the sums of some of its columns.
          SmallVector<Value> sums;
          for (int64_t c = 0; c < threadColumns; ++c)
            sums.push_back(kb.pairwiseSum(partial[c]));
          sums = kb.transposedSumOverLanes(sums, lanes, groupLanes, part);
          Value first = kb.transposedSumFirst(part, threadColumns, lanes);
          int64_t spread = std::min(threadColumns, lanes);
          Value writer = kb.ult(part, kb.idx(spread));
          Value denominator;
          if (denominators)
            denominator =
                memref::LoadOp::create(rewriter, loc, den, ValueRange{t});
          for (auto [m, acc] : llvm::enumerate(sums)) {
            Value out = denominators ? kb.fdiv(acc, denominator) : acc;
            Value at = kb.add(col, kb.add(first, kb.idx(m)));
            Value writes =
                arith::AndIOp::create(rewriter, loc, kb.ult(at, dv), writer);
            kb.ifThen(writes, [&] {
              kb.store(out, oBuf, kb.add(kb.mul(row, dv), at));
            });
          }
          return next;
        };
        // kTokensPerIteration tokens an iteration, then the rest one at a
        // time: the loads and products of a token need not wait for the
        // shuffles of the one before, whose latency a lone warp per
        // scheduler (small batches) would otherwise wait out every token.
        Value cUnroll = kb.idx(kTokensPerIteration);
        Value whole = kb.mul(kb.divU(count, cUnroll), cUnroll);
        SmallVector<Value> state =
            kb.forLoop(c0, whole, cUnroll, carried,
                       [&](Value t, ValueRange s) -> SmallVector<Value> {
                         SmallVector<Value> next(s.begin(), s.end());
                         for (int64_t u = 0; u < kTokensPerIteration; ++u)
                           next = token(kb.add(t, kb.idx(u)), next);
                         return next;
                       });
        state = kb.forLoop(whole, count, c1, state, token);
        clocks.mark(Phase::Tokens);
        return state;
      });

  // The final state: the scan's, or the segment's contribution.
  if (writesState)
    for (int64_t c = 0; c < threadColumns; ++c)
      kb.ifThen(activeAt(c), [&] {
        for (int64_t j = 0; j < laneFeatures; ++j)
          kb.store(
              column[j * threadColumns + c], sBuf,
              kb.add(kb.mul(kb.add(stateBase, featureAt(j)), dv), columnAt(c)));
      });
  if (writesState && needZ)
    kb.ifThen(kb.eq(kb.blockId(gpu::Dimension::y), c0), [&] {
      kb.forLoop(tid, cF, cTile, [&](Value f) {
        Value z = memref::LoadOp::create(rewriter, loc, zs, ValueRange{f});
        kb.store(z, zBuf, kb.add(stateBase, f));
      });
    });
  clocks.report(ceilDiv(rewriter, loc, kb.sub(end, begin), tokens),
                recordsOf(kernel));
  return kernel;
}

std::optional<std::string> Converter::convertRecurrent(ScanOp op) {
  RankedTensorType qType = tensorTypeOf(op.getQueryFeatures());
  RankedTensorType vType = tensorTypeOf(op.getValues());
  RankedTensorType sType = cast<RankedTensorType>(op.getFinalState().getType());
  int64_t features = qType.getShape().back();
  if (auto reason = checkFeatureSize(features))
    return reason;
  Type stateType = sType.getElementType();
  int64_t tile = options.scanTile;
  // Each thread keeps `threadColumns` adjacent value columns, each feature
  // it loads serving all of them; `lanes` threads share a group of columns,
  // each with F / lanes of its features, so that a warp covers
  // 32 / scan-feature-lanes columns whatever the columns per thread. The
  // lanes add their readouts with shuffles, so they must be in one full
  // warp. Fewer columns per thread where the state would not fit the
  // register budget (when F has few factors of two).
  int64_t registerWidth =
      std::max<int64_t>(1, stateType.getIntOrFloatBitWidth() / 32);
  int64_t threadColumns = options.scanThreadColumns * 2, lanes, laneFeatures,
          registers;
  do {
    threadColumns /= 2;
    lanes = options.scanFeatureLanes * threadColumns;
    while (lanes > 1 && (lanes > 32 || features % lanes || tile % 32))
      lanes /= 2;
    laneFeatures = features / lanes;
    registers = laneFeatures * threadColumns * registerWidth;
  } while (threadColumns > 1 && registers > options.maxRegisterState);
  int64_t columns = tile / lanes * threadColumns; // value columns per block
  if (auto reason = valueTilesUnsupported(vType.getShape().back(), columns))
    return reason;
  if (registers > options.maxRegisterState)
    return "the state column (F = " + std::to_string(features) + ", " +
           std::to_string(laneFeatures) +
           " per thread) does not fit the "
           "scan's register budget of " +
           std::to_string(options.maxRegisterState) + " registers";

  RecurrentScanConfig c;
  c.features = features;
  c.stateType = stateType;
  c.dataType = vType.getElementType();
  c.resultType = tensorTypeOf(op.getResult()).getElementType();
  c.q = featureSourceOf(op.getQueryFeatures());
  c.k = featureSourceOf(op.getKeyFeatures());
  // Staging applies the values' feature map; their sizes are read from its
  // input as well, so that nothing else uses the map's result.
  c.v = valueSourceOf(op.getValues());
  Value values = c.v.tensor;
  c.normalized = op.isNormalized();
  c.reverse = op.isReverse();
  c.hasInit = op.hasInitialState();
  c.writesState = scanWritesState(op);
  c.needZ = c.normalized || !op.getFinalNormalizer().use_empty();
  c.eps = c.normalized ? op.getEps()->convertToDouble() : 0.0;
  c.tile = tile;
  c.threadColumns = threadColumns;
  c.lanes = lanes;
  c.laneFeatures = laneFeatures;
  c.columns = columns;
  c.phaseClocks = options.phaseClocks;
  // With async copies (sm_80 and later) each block of tokens is copied into
  // one of two slots while the block before it runs, which needs the data
  // in the state's type (a copy converts nothing): f32 data, f32 state; and
  // room for two slots of a token at least.
  c.async = options.asyncCopies && stateType.getIntOrFloatBitWidth() == 32 &&
            llvm::all_of(ArrayRef<Value>{c.q.tensor, c.k.tensor, values},
                         [&](Value x) {
                           return tensorTypeOf(x).getElementType() == stateType;
                         });
  c.tokens = c.async ? scanTokensPerBlock(features, columns, 2, c.normalized,
                                          stateType)
                     : 0;
  if (c.tokens == 0) {
    c.async = false;
    c.tokens =
        scanTokensPerBlock(features, columns, 1, c.normalized, stateType);
  }
  // Lanes adding up each token's denominator (adjacent lanes of a warp, all
  // of the block's tokens in one pass), and the pitch of the partial
  // products' rows: padded by the lanes, so that the lanes of a warp, which
  // read 32 / lanes rows, read distinct banks.
  c.denominatorLanes = 1;
  if (c.normalized && tile % 32 == 0)
    while (c.denominatorLanes < kDenominatorLanes &&
           features >= 2 * c.denominatorLanes &&
           features % (2 * c.denominatorLanes) == 0 &&
           c.tokens * 2 * c.denominatorLanes <= tile)
      c.denominatorLanes *= 2;
  c.partialPitch = features + (c.denominatorLanes > 1 ? c.denominatorLanes : 0);

  // The chunkwise CUDA-core kernel (`simt-chunks`) where it applies: the
  // batch-parallel scan and the segments' outputs; the segment states stay
  // the recurrent kernel's.
  std::optional<SimtChunkConfig> simt;
  if (options.simtChunks) {
    // cp.async copies data of the state's type as it is (f32, f64).
    bool simtAsync =
        options.asyncCopies &&
        llvm::all_of(ArrayRef<Value>{c.q.tensor, c.k.tensor, values},
                     [&](Value x) {
                       return tensorTypeOf(x).getElementType() == stateType;
                     });
    std::string reason;
    FailureOr<SimtChunkShape> shape =
        simtChunkShape(features, vType.getShape().back(),
                       stateType.getIntOrFloatBitWidth() / 8, simtAsync,
                       options.sharedBytesPerBlock, reason);
    if (succeeded(shape)) {
      simt.emplace();
      simt->features = features;
      simt->shape = *shape;
      simt->stateType = stateType;
      simt->dataType = c.dataType;
      simt->resultType = c.resultType;
      simt->q = c.q;
      simt->k = c.k;
      simt->v = c.v;
      simt->normalized = c.normalized;
      simt->reverse = c.reverse;
      simt->hasInit = c.hasInit;
      simt->writesState = c.writesState;
      simt->needZ = c.needZ;
      simt->eps = c.eps;
      simt->async = simtAsync;
      simt->segmentUnit = c.tokens;
      simt->phaseClocks = options.phaseClocks;
    } else {
      op.emitRemark() << "simt-chunks: " << reason
                      << "; the recurrent kernel instead";
    }
  }

  // Token-major operands are read and written in place (`TokenRows`).
  TokenMajorRows rows = tokenMajorRows(op, c.q, c.k, c.v);
  c.tokenMajor = static_cast<bool>(rows);
  if (simt)
    simt->tokenMajor = c.tokenMajor;

  Location loc = op.getLoc();
  auto name = [&](StringRef kind) {
    return kernelName((Twine("linattn_scan_") + kind +
                       (c.reverse ? "reverse" : "forward") + "_" +
                       mapName(c.q) + (c.normalized ? "_normalized" : "") +
                       (c.tokenMajor ? "_token_major" : ""))
                          .str());
  };
  rewriter.setInsertionPoint(op);
  // Batch-parallel: grid (batch, value tiles of `columns` columns).
  auto whole = [&]() -> SmallVector<Value> {
    if (simt) {
      gpu::GPUFuncOp kernel = buildSimtChunkKernel(
          rewriter, loc, kernels(), name("simt_"), *simt, /*segmented=*/false);
      return launchScan(op, kernel, c.q.tensor, c.k.tensor, values, features,
                        simt->shape.columns, kSimtThreads, rows);
    }
    gpu::GPUFuncOp kernel = buildRecurrentKernel(
        rewriter, loc, kernels(), name(""), c, RecurrentPass::Whole);
    return launchScan(op, kernel, c.q.tensor, c.k.tensor, values, features,
                      columns, tile, rows);
  };

  // Sequence-parallel where batch × value tiles stay below half of
  // `sequenceParallelBlocks` (by default one block per H100 SM): a block's
  // tokens are a recurrence, so with fewer blocks than SMs the other SMs
  // idle, and with one warp per scheduler each token waits out its
  // latencies. The sequence splits into enough segments of whole staged
  // blocks to reach the target, none shorter than `minSegmentTokens`; each
  // segment's contribution to the state (its tokens' state updates from
  // zero, half the FMAs of the scan) is computed before the scan over
  // segments gives each segment its starting state. All of it in the
  // state's type: the segments only change the order of the additions.
  // The target counts blocks of the default 128 threads, the chunked
  // kernels' four warps (`segmentTarget`): a `scan-tile` of 256 threads is
  // two such blocks, one of 32 a quarter; blocks of 512 threads, each all
  // an SM holds, aim at one per SM.
  HostIndex h{rewriter, loc};
  int64_t batchDims = vType.getRank() - 2;
  Value n = h.size(values, -2);
  Value dv = h.size(values, -1);
  Value batch = h.batch(values, batchDims);
  Value tiles = h.atLeastOne(h.divideCeil(dv, h.constant(columns)));
  Value blocks = h.divideCeil(n, h.constant(c.tokens));
  if (rows)
    rows.heads = h.size(values, batchDims - 1);
  Value perSegment, segments;
  auto [target, bounded] = segmentTarget(options.sequenceParallelBlocks, tile);
  // The chunkwise kernel's blocks, of 256 threads and 72 to 99 KiB, aim at
  // as many as the SMs hold at once: half the target (one per H100 SM by
  // default) per block an H100 SM holds, by its shared memory and by the
  // registers ptxas gives the kernel (about 128 a thread: two blocks).
  Value simtTiles;
  if (simt) {
    simtTiles = h.atLeastOne(h.divideCeil(dv, h.constant(simt->shape.columns)));
    int64_t perSM = std::clamp<int64_t>(
        sharedMemoryBlocks(kH100SM.sharedMemory, simt->shape.sharedBytes), 1,
        2);
    target = options.sequenceParallelBlocks / 2 * perSM;
    bounded = true;
  }
  std::tie(perSegment, segments) =
      h.segments(h.mul(batch, simt ? simtTiles : tiles), blocks, target,
                 llvm::divideCeil(options.minSegmentTokens, c.tokens),
                 /*atMostTarget=*/bounded);
  auto parallel = [&]() -> SmallVector<Value> {
    SegmentKernels segmentKernels;
    segmentKernels.states =
        buildRecurrentKernel(rewriter, loc, kernels(), name("segment_states_"),
                             c, RecurrentPass::SegmentStates);
    segmentKernels.prefix =
        buildSegmentScan(rewriter, loc, kernels(), name("segment_prefix_"),
                         c.segmentScan(), /*prefixes=*/true);
    if (simt) {
      SmallVector<Value> prefixes =
          launchSegmentPrefixes(op, segmentKernels, c.k.tensor, values, batch,
                                tiles, perSegment, segments, tile, rows);
      gpu::GPUFuncOp outputs = buildSimtChunkKernel(
          rewriter, loc, kernels(), name("segment_outputs_simt_"), *simt,
          /*segmented=*/true);
      Value o = launchSegmentOutputs(op, outputs, c.q.tensor, c.k.tensor,
                                     values, prefixes, batch, simtTiles,
                                     perSegment, segments, kSimtThreads, rows);
      return withSegmentState(op, o, prefixes);
    }
    segmentKernels.outputs =
        buildRecurrentKernel(rewriter, loc, kernels(), name("segment_outputs_"),
                             c, RecurrentPass::SegmentOutputs);
    return launchSegments(op, segmentKernels, c.q.tensor, c.k.tensor, values,
                          batch, tiles, perSegment, segments, tile, rows);
  };
  // The batch-parallel kernel first where both are built (N dynamic), so
  // that its name does not depend on whether N is known.
  Value one = rewriter.createOrFold<arith::CmpIOp>(
      loc, arith::CmpIPredicate::ule, segments, h.constant(1));
  replaceScan(op, h.choose(one, whole, parallel), rows);
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
  // Lanes per value column, as in the recurrent scan: each streams F / lanes
  // rows of the column's state, and the lanes add their readouts with
  // shuffles. More threads keep more of the state's loads in flight, which
  // is what a step of a small batch waits for.
  int64_t lanes = options.scanFeatureLanes;
  while (lanes > 1 && features % lanes)
    lanes /= 2;
  int64_t dvStatic = vType.getShape().back();
  auto blockFor = [&](int64_t lanes) {
    return blockSizeFor(ShapedType::isDynamic(dvStatic) ? dvStatic
                                                        : dvStatic * lanes,
                        options.blockSize);
  };
  int64_t block = blockFor(lanes);
  // The shuffles need whole warps: a `block-size` that is not a multiple of
  // 32 gets one lane per column, as the recurrent scan does.
  if (block % 32 != 0) {
    lanes = 1;
    block = blockFor(1);
  }
  int64_t laneFeatures = features / lanes;
  int64_t columns = block / lanes; // value columns per block
  if (auto reason = valueTilesUnsupported(dvStatic, columns))
    return reason;
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
  // φ(q), φ(k) and z + φ(k) staged in shared memory where the block can
  // have it (3·F elements: up to F = 8448 in f32 on every chip from sm_80
  // on); beyond, every lane reads its rows' features from global memory
  // (its column's neighbours read the same ones, from L1) and adds z.
  int64_t stateBytes = stateType.getIntOrFloatBitWidth() / 8;
  bool staged = 3 * features * stateBytes <= options.sharedBytesPerBlock;
  SmallVector<Type> shared;
  if (staged)
    shared.assign(3, workgroupBufferType(stateType, features));
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
    Value c0 = kb.idx(0), cF = kb.idx(features), cBlock = kb.idx(block),
          cLanes = kb.idx(lanes);
    Value batch = kb.blockId(gpu::Dimension::x);
    Value tid = kb.threadId();
    Value col = kb.add(kb.mul(kb.blockId(gpu::Dimension::y), kb.idx(columns)),
                       kb.divU(tid, cLanes));
    Value part = kb.remU(tid, cLanes);
    // Row r of the lane is feature r * lanes + part: the lanes of a column
    // read consecutive features of φ(q), φ(k) (distinct banks) and z (one
    // sector), where blocks of F / lanes rows would put them in one bank.
    auto featureOf = [&](Value row) {
      return kb.add(kb.mul(row, cLanes), part);
    };
    // The lanes of a column past Dv compute nothing and store nothing, but
    // take part in the shuffles.
    Value active = kb.ult(col, dv);
    Value base = kb.mul(batch, cF);
    Value zero = kb.fconst(0.0);
    // φ(q)[f], φ(k)[f] and z[f] + φ(k)[f]: staged, or from global memory.
    ArrayRef<BlockArgument> wg = kernel.getWorkgroupAttributions();
    auto loadQ = [&](Value f) {
      return staged ? Value(memref::LoadOp::create(rewriter, loc, wg[0],
                                                   ValueRange{f}))
                    : kb.loadFeature(qBuf, kb.add(base, f), q);
    };
    auto loadK = [&](Value f) {
      return staged ? Value(memref::LoadOp::create(rewriter, loc, wg[1],
                                                   ValueRange{f}))
                    : kb.loadFeature(kBuf, kb.add(base, f), k);
    };
    auto newZ = [&](Value f, Value kf) {
      return staged ? Value(memref::LoadOp::create(rewriter, loc, wg[2],
                                                   ValueRange{f}))
                    : kb.fadd(kb.load(zIn, kb.add(base, f)), kf);
    };
    // Row `row` of the lane: its feature and the offset of S[f, col].
    auto rowAt = [&](Value row) {
      Value f = featureOf(row);
      return std::make_pair(f, kb.add(kb.mul(kb.add(base, f), dv), col));
    };
    // Each element of S is loaded and then stored by one thread, so the new
    // state may be written over the old one (docs/UsingLinAttn.md promises
    // it; bench/gpu/aot.py's self-test checks it). z may not: every block
    // of a head reads it and the first stores it.
    // v and the lane's first `early` state rows are loaded before the
    // features are staged, so that their latency overlaps the staging's and
    // the barrier's: a step of a small batch waits on little else.
    int64_t early = std::min(laneFeatures, kStepEarlyLoads);
    auto earlyLoads = scf::IfOp::create(
        rewriter, loc, active,
        [&](OpBuilder &, Location) {
          SmallVector<Value> loaded = {
              kb.load(vBuf, kb.add(kb.mul(batch, dv), col))};
          for (int64_t j = 0; j < early; ++j)
            loaded.push_back(kb.load(sIn, rowAt(kb.idx(j)).second));
          scf::YieldOp::create(rewriter, loc, loaded);
        },
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(rewriter, loc,
                               SmallVector<Value>(early + 1, zero));
        });
    // φ(q), φ(k) and the new normalizer z + φ(k), which every column's
    // denominator reads.
    if (staged) {
      kb.forLoop(tid, cF, cBlock, [&](Value f) {
        Value at = kb.add(base, f);
        Value kf = kb.loadFeature(kBuf, at, k);
        memref::StoreOp::create(rewriter, loc, kb.loadFeature(qBuf, at, q),
                                wg[0], ValueRange{f});
        memref::StoreOp::create(rewriter, loc, kf, wg[1], ValueRange{f});
        memref::StoreOp::create(rewriter, loc, kb.fadd(kb.load(zIn, at), kf),
                                wg[2], ValueRange{f});
      });
      kb.barrier();
    }
    // Σ φ(q)ᵀS[:, col] and Σ φ(q)ᵀz over the lane's features: the early
    // rows, then the rest in groups of kStepLoads rows whose loads are
    // issued together, then used. A step is bound by the latency of these
    // loads, not by their arithmetic.
    auto partial = scf::IfOp::create(
        rewriter, loc, active,
        [&](OpBuilder &, Location) {
          Value vt = earlyLoads.getResult(0);
          auto update = [&](Value first, ValueRange s, ValueRange acc) {
            SmallVector<Value> next(acc);
            for (auto [j, sOld] : llvm::enumerate(s)) {
              auto [f, at] = rowAt(kb.add(first, kb.idx(j)));
              Value qf = loadQ(f);
              Value kf = loadK(f);
              Value sNew = kb.fma(kf, vt, sOld);
              kb.store(sNew, sOut, at);
              next[0] = kb.fma(qf, sNew, next[0]);
              if (normalized)
                next[1] = kb.fma(qf, newZ(f, kf), next[1]);
            }
            return next;
          };
          auto rows = [&](Value first, int64_t count, ValueRange acc) {
            SmallVector<Value> s;
            for (int64_t j = 0; j < count; ++j)
              s.push_back(kb.load(sIn, rowAt(kb.add(first, kb.idx(j))).second));
            return update(first, s, acc);
          };
          SmallVector<Value> acc = update(
              c0, earlyLoads.getResults().drop_front(), ValueRange{zero, zero});
          int64_t groups = (laneFeatures - early) / kStepLoads;
          int64_t rest = (laneFeatures - early) % kStepLoads;
          if (groups > 0)
            acc = kb.forLoop(
                kb.idx(early), kb.idx(early + groups * kStepLoads),
                kb.idx(kStepLoads), acc,
                [&](Value g, ValueRange carried) -> SmallVector<Value> {
                  return rows(g, kStepLoads, carried);
                });
          if (rest > 0)
            acc = rows(kb.idx(early + groups * kStepLoads), rest, acc);
          scf::YieldOp::create(rewriter, loc, acc);
        },
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(rewriter, loc, ValueRange{zero, zero});
        });
    // The column's lanes add their sums.
    SmallVector<Value> sums;
    for (Value sum : partial.getResults())
      sums.push_back(kb.sumOverLanes(sum, lanes));
    Value out = normalized ? kb.fdiv(sums[0], kb.fadd(sums[1], kb.fconst(eps)))
                           : sums[0];
    Value writes =
        arith::AndIOp::create(rewriter, loc, active, kb.eq(part, c0));
    kb.ifThen(writes,
              [&] { kb.store(out, oBuf, kb.add(kb.mul(batch, dv), col)); });
    kb.ifThen(kb.eq(kb.blockId(gpu::Dimension::y), c0), [&] {
      kb.forLoop(tid, cF, cBlock, [&](Value f) {
        kb.store(newZ(f, staged ? Value() : loadK(f)), zOut, kb.add(base, f));
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
  Value tiles = tileCount(rewriter, loc, dvValue, columns);
  SmallVector<Value> results = launch.launch(
      kernel, {batchProduct(rewriter, loc, values, batchDims), tiles, one},
      block);
  rewriter.replaceOp(op, results);
  return std::nullopt;
}
