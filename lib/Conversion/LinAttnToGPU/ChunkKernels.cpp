//===- ChunkKernels.cpp - the chunked kernels' bodies ---------------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The kernels of the chunked scan on tensor cores: the chunk loop (one
// block per batch element and value tile walks its chunks, the state in
// registers; or one segment of the sequence from its starting state), the
// segment states of the sequence-parallel scan and of the key-value summary,
// and the query readout. Within a chunk of C tokens the output is
// tril(φ(Q_c)φ(K_c)ᵀ)V_c + φ(Q_c)S, across chunks the state grows by
// φ(K_c)ᵀV_c.
//
//===----------------------------------------------------------------------===//

#include "ChunkedScan.h"
#include "MmaBuilder.h"
#include "PhaseClocks.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::linattn;
using namespace mlir::linattn::gpukernels;

/// Keys of one wgmma of the scores (its N): each thread holds N / 2
/// accumulators until they are stored.
static constexpr int64_t kWgmmaKeys = 32;
/// The most value columns of a block of the chunk loops' outputs by wgmma
/// (`wgmmaOutputs`, its N): on one warpgroup the whole tile of the
/// benchmark's F = 64, on two (whose state takes twice the registers a
/// thread) half that, which keeps wgmma-chunks' two blocks per SM.
static constexpr int64_t kWgmmaOutputColumns = 64;
static constexpr int64_t kWgmmaOutputColumnsTwoGroups = 32;

namespace {
/// The tiles of a chunked kernel's workgroup memory, in this order: φ(Q_c),
/// φ(K_c), V_c (each in `slots()` slots), the masked scores (unless
/// `scoresInRegisters()`), S at the chunk start (in the data type), z at
/// the chunk start (f32, where a kernel keeps z: `keepsNormalizer()`) and,
/// for normalized scans with several warps per row tile, their partial row
/// sums (f32, G x C), and with `scaledState()` the state's column scales
/// and their inverses (f32, 2 x DT).
/// `ChunkTiles::Keys`: only φ(K_c) and V_c; `ChunkTiles::Queries`: φ(Q_c),
/// S, z (normalized) and the column scales (`scaledState()`).
SmallVector<Type> chunkTileBuffers(const ChunkedScanConfig &c,
                                   ChunkTiles tiles) {
  int64_t staged = c.slots() * c.shape.chunk;
  int64_t chunk = c.shape.chunk;
  Type features = workgroupBufferType(c.dataType, staged * c.ldF());
  Type state = workgroupBufferType(c.dataType, c.features * c.ldS());
  Type normalizer = workgroupBufferType(c.stateType, c.features);
  Type scales = workgroupBufferType(c.stateType, 2 * c.shape.dvTile);
  if (tiles == ChunkTiles::Keys)
    return {features, workgroupBufferType(c.dataType, staged * c.ldV())};
  if (tiles == ChunkTiles::Queries) {
    SmallVector<Type> buffers = {features, state};
    if (c.normalized)
      buffers.push_back(normalizer);
    if (c.scaledState())
      buffers.push_back(scales);
    return buffers;
  }
  SmallVector<Type> buffers = {
      features, features, workgroupBufferType(c.dataType, staged * c.ldV())};
  if (!c.scoresInRegisters())
    buffers.push_back(workgroupBufferType(c.dataType, chunk * c.ldC()));
  buffers.push_back(state);
  if (c.keepsNormalizer())
    buffers.push_back(normalizer);
  if (c.sharedRowSums())
    buffers.push_back(
        workgroupBufferType(c.stateType, c.shape.groups * c.shape.chunk));
  if (c.scaledState())
    buffers.push_back(scales);
  return buffers;
}

/// The workgroup buffers of a chunked kernel: `chunkTileBuffers`, then with
/// bulk copies (`usesBulkCopies()`) one mbarrier per slot (i64), then with
/// `phaseClocks` the clocks' slots (i64).
SmallVector<Type> chunkSharedBuffers(const ChunkedScanConfig &c,
                                     ChunkTiles tiles) {
  SmallVector<Type> buffers = chunkTileBuffers(c, tiles);
  Type i64 = IntegerType::get(c.dataType.getContext(), 64);
  if (c.usesBulkCopies())
    buffers.push_back(workgroupBufferType(i64, c.slots()));
  if (c.phaseClocks)
    buffers.push_back(workgroupBufferType(i64, kPhaseClockSlots));
  return buffers;
}

/// How many of the first buffers of `chunkSharedBuffers` are swizzled for
/// wgmma, and so 1024-byte aligned (the swizzle is of the absolute
/// address): the feature tiles, V_c with `wgmmaState`, and the scores
/// (unless `scoresInRegisters()`) and the state after it with
/// `wgmmaOutputs` (the chunk loops').
unsigned swizzledBuffers(const ChunkedScanConfig &c, ChunkTiles tiles) {
  if (!c.wgmma)
    return 0;
  unsigned featureTiles = tiles == ChunkTiles::All ? 2 : 1;
  if (tiles == ChunkTiles::Queries)
    return 1;
  if (!c.wgmmaState)
    return featureTiles;
  if (tiles != ChunkTiles::All || !c.wgmmaOutputs)
    return featureTiles + 1;
  return c.scoresInRegisters() ? featureTiles + 2 : featureTiles + 3;
}

/// Creates a chunked kernel with the workgroup buffers of
/// `chunkSharedBuffers`, each 16-byte aligned for ldmatrix, the swizzled
/// ones (`swizzledBuffers`) 1024-byte aligned.
gpu::GPUFuncOp createChunkKernel(OpBuilder &b, Location loc,
                                 gpu::GPUModuleOp kernels, StringRef name,
                                 TypeRange args, const ChunkedScanConfig &c,
                                 ChunkTiles tiles) {
  gpu::GPUFuncOp kernel =
      createKernel(b, loc, kernels, name, args, chunkSharedBuffers(c, tiles));
  for (unsigned i = 0, e = swizzledBuffers(c, tiles); i < e; ++i)
    kernel.setWorkgroupAttributionAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                                       b.getI64IntegerAttr(1024));
  return kernel;
}

Value laneOf(KernelBuilder &kb) { return kb.remU(kb.threadId(), kb.idx(32)); }

/// Emits the parts of a chunked kernel for one block: a chunk of C tokens of
/// batch element `batch` and the value columns [colBase, colBase + DT).
/// Warp w takes row tile w mod (C/16) (16 tokens) of the chunk and, of that
/// row tile, group w div (C/16) of the G groups: a G-th of the keys of the
/// scores and of the value columns of the outputs. For the state it owns
/// the fragments of every feature tile and its value tiles (pairs of
/// adjacent tiles when they pair up, so one ldmatrix reads the B fragments
/// of both).
class ChunkEmitter {
public:
  /// `stageBatch`: global loads per thread in flight while staging (more
  /// hide more latency and take more registers).
  /// The block walks scan positions [begin, end) of batch element `batch`.
  /// `shared` holds the buffers of `chunkSharedBuffers(c, tiles)`; the
  /// global buffers of tiles the kernel does not stage are null. With
  /// `c.featureSplit` > 1 the block stages features [featureColumn,
  /// featureColumn + F) of rows of c.rowFeatures(). With `c.tokenMajor`,
  /// `heads` is the kernel's argument H.
  ChunkEmitter(RewriterBase &rewriter, Location loc, const ChunkedScanConfig &c,
               ChunkTiles tiles, ValueRange shared, Value qBuf, Value kBuf,
               Value vBuf, Value n, Value dv, Value batch, Value colBase,
               Value begin, Value end, int64_t stageBatch,
               Value featureColumn = Value(), Value heads = Value())
      : c(c), stageBatch(stageBatch), b(rewriter), loc(loc),
        kb(rewriter, loc, c.stateType),
        mb(kb, c.dataType, c.splitTF32, laneOf(kb)),
        phases(rewriter, loc, c.phaseClocks ? shared.back() : Value()),
        qBuf(qBuf), kBuf(kBuf), vBuf(vBuf), n(n), dv(dv), batch(batch),
        colBase(colBase), begin(begin), end(end),
        hasScores(tiles == ChunkTiles::All) {
    if (c.phaseClocks)
      shared = shared.drop_back();
    if (c.usesBulkCopies()) {
      barriers = shared.back();
      shared = shared.drop_back();
    }
    switch (tiles) {
    case ChunkTiles::Keys:
      ks = shared[0];
      vs = shared[1];
      break;
    case ChunkTiles::Queries:
      qs = shared[0];
      ss = shared[1];
      if (c.normalized)
        zs = shared[2];
      if (c.scaledState())
        cs = shared.back();
      break;
    case ChunkTiles::All: {
      qs = shared[0];
      ks = shared[1];
      vs = shared[2];
      unsigned next = 3;
      if (!c.scoresInRegisters())
        ps = shared[next++];
      ss = shared[next++];
      if (c.keepsNormalizer())
        zs = shared[next++];
      if (c.sharedRowSums())
        rs = shared[next];
      if (c.scaledState())
        cs = shared.back();
      break;
    }
    }
    tid = kb.threadId();
    warp = kb.divU(tid, kb.idx(32));
    zero = kb.idx(0);
    featureSlot = valueSlot = zero;
    cF = kb.idx(c.features);
    ldF = kb.idx(c.ldF());
    if (vectorWidth() > 1) {
      for (Value buffer : {qBuf, kBuf}) {
        if (!buffer)
          continue;
        Value aligned = aligned16(buffer);
        featuresAligned =
            featuresAligned
                ? arith::AndIOp::create(b, loc, featuresAligned, aligned)
                : aligned;
      }
      // Rows of V are 16-byte aligned when Dv is a multiple of the width too.
      if (vBuf)
        valuesAligned = arith::AndIOp::create(
            b, loc, aligned16(vBuf),
            kb.eq(kb.remU(dv, kb.idx(vectorWidth())), kb.idx(0)));
    }
    offsetType = c.narrowOffsets ? Type(b.getI32Type()) : b.getIndexType();
    dvOffset = toOffset(dv);
    colBaseOffset = toOffset(colBase);
    // Offsets count from the lowest row of the block's positions: that of
    // token `begin`, or in a reverse scan (whose positions run down the
    // rows) that of token end - 1.
    Value lowest = c.reverse ? kb.sub(n, end) : begin;
    TokenRows rows(kb, batch, n, heads);
    Value first = rows(lowest);
    featureStride = rows.stride(kb.idx(c.rowFeatures()));
    valueStride = rows.stride(dv);
    featureStrideOffset = toOffset(featureStride);
    valueStrideOffset = toOffset(valueStride);
    featureBase = kb.mul(first, kb.idx(c.rowFeatures()));
    if (featureColumn)
      featureBase = kb.add(featureBase, featureColumn);
    valueBase = kb.mul(first, dv);
  }

  KernelBuilder &builder() { return kb; }
  Value threadIndex() const { return tid; }
  /// The kernel's phase clocks (inert without `phaseClocks`).
  PhaseClocks &clocks() { return phases; }
  /// The chunks the block walks: those of [begin, end).
  Value chunkCount() {
    Value step = kb.idx(c.shape.chunk);
    return kb.divU(kb.add(kb.sub(end, begin), kb.sub(step, kb.idx(1))), step);
  }

  /// Tokens of the chunk starting at scan position `t0` (t0 < N).
  Value count(Value t0) {
    return kb.minU(kb.idx(c.shape.chunk), kb.sub(n, t0));
  }

  /// Stages φ(Q_c) (when staged), φ(K_c) and V_c of the chunk at `t0`, zeros
  /// past the sequence and the value columns. Each thread stages groups of
  /// 16 bytes: one load where the rows are 16-byte aligned (tested at run
  /// time, the same for the whole block), element by element otherwise: a
  /// second loop for φ(Q) and φ(K), a branch per group for V (see
  /// `loadElements`).
  void stage(Value t0, Value count) {
    kb.barrier();
    int64_t width = vectorWidth();
    if (width == 1)
      stageFeatures(t0, count, 1, zero);
    else
      kb.ifElse(
          featuresAligned, [&] { stageFeatures(t0, count, width, zero); },
          [&] { stageFeatures(t0, count, 1, zero); });
    if (vs)
      stageValues(t0, count,
                  (c.shape.chunk * c.shape.dvTile / width) % c.threads() == 0
                      ? width
                      : 1,
                  zero);
    fenceForAsyncProxy();
    kb.barrier();
  }

  /// With wgmma or bulk copies, makes this thread's shared-memory writes
  /// visible to the async proxy that wgmma reads and bulk copies write
  /// through (the barrier after it publishes them to the block).
  void fenceForAsyncProxy() {
    if (c.wgmma || c.usesBulkCopies())
      NVVM::FenceProxyOp::create(
          b, loc, NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(b.getContext(),
                                     NVVM::SharedSpace::shared_cta));
  }

  /// Async copies (`c.asyncCopies`): starts staging the chunk at `t0` into
  /// slot `slot`, each thread issuing cp.async of 16-byte groups (zero-filled
  /// past the sequence and Dv) where the rows are 16-byte aligned and
  /// staging synchronously where not. The caller commits the group.
  ///
  /// With bulk copies (`c.usesBulkCopies()`) a whole chunk's tiles with
  /// padded, 16-byte aligned rows (and V_c with all DT columns in Dv) go
  /// by one bulk copy per row instead, completing on the slot's mbarrier,
  /// on which thread 0 arrives expecting their bytes (none where every
  /// tile took cp.async: the phase then completes at once).
  void issue(Value t0, Value slot) {
    Value count = this->count(t0);
    Value fBase, vBase;
    std::tie(fBase, vBase) = slotBases(slot);
    Value bulkF, bulkV; // null: never
    if (c.usesBulkCopies()) {
      auto both = [&](Value x, Value y) {
        return arith::AndIOp::create(b, loc, x, y).getResult();
      };
      Value whole = kb.eq(count, kb.idx(c.shape.chunk));
      // The bytes of the tiles that go by bulk copies.
      Value expected = arith::ConstantIntOp::create(b, loc, 0, 32);
      auto expect = [&](Value bulk, int64_t bytes) {
        Value more = arith::AddIOp::create(
            b, loc, expected, arith::ConstantIntOp::create(b, loc, bytes, 32));
        expected = kb.select(bulk, more, expected);
      };
      if (c.bulkFeatures() && featuresAligned) {
        bulkF = both(featuresAligned, whole);
        int64_t tiles = (qs ? 1 : 0) + (ks ? 1 : 0);
        expect(bulkF, tiles * c.shape.chunk * c.features * c.dataBytes());
      }
      if (vs && valuesAligned && c.bulkValues()) {
        Value columns =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                  kb.add(colBase, kb.idx(c.shape.dvTile)), dv);
        bulkV = both(both(valuesAligned, whole), columns);
        expect(bulkV, c.shape.chunk * c.shape.dvTile * c.dataBytes());
      }
      kb.ifThen(kb.eq(tid, zero),
                [&] { kb.arriveExpectingBytes(barrierAt(slot), expected); });
    }
    // Bulk copies where `bulk` holds (null: never), else `other`.
    auto bulkOr = [&](Value bulk, function_ref<void()> copies,
                      function_ref<void()> other) {
      if (bulk)
        kb.ifElse(bulk, copies, other);
      else
        other();
    };
    bulkOr(
        bulkF, [&] { bulkCopyFeatures(t0, fBase, slot); },
        [&] {
          kb.ifElse(
              featuresAligned, [&] { copyFeatures(t0, count, fBase); },
              [&] { stageFeatures(t0, count, 1, fBase); });
        });
    if (!vs)
      return;
    bulkOr(
        bulkV, [&] { bulkCopyValues(t0, vBase, slot); },
        [&] {
          kb.ifElse(
              valuesAligned, [&] { copyValues(t0, count, vBase); },
              [&] { stageValues(t0, count, 1, vBase); });
        });
  }

  /// The shared address of the mbarrier of slot `slot`.
  Value barrierAt(Value slot) {
    return kb.add(kb.pointerOf(barriers), kb.mul(slot, kb.idx(8)));
  }

  /// Bulk copies of the C rows of φ(Q_c) (when staged) and φ(K_c) of the
  /// whole chunk at `t0` into the slot at `base`, one row per thread.
  void bulkCopyFeatures(Value t0, Value base, Value slot) {
    int64_t rowBytes = c.features * c.dataBytes();
    Value barrier = barrierAt(slot);
    forEachGroup(c.shape.chunk, [&](Value t) {
      auto at = [&](int64_t column) {
        return elementAt(row(t0, t), featureStrideOffset, offset(column));
      };
      Value src = kb.mul(toIndex(featureBase, at(0)), kb.idx(c.dataBytes()));
      Value dst = kb.mul(featureIndex(base, t, zero), kb.idx(c.dataBytes()));
      for (auto [staged, global] : {std::pair(qs, qBuf), std::pair(ks, kBuf)}) {
        if (!staged)
          continue;
        kb.bulkCopy(kb.add(kb.pointerOf(staged), dst),
                    kb.add(kb.pointerOf(global), src), barrier, rowBytes);
        prefetchRow(global, featureBase, t, c.features, featureStride, at);
      }
    });
  }

  /// Bulk copies of the C rows of V_c (the block's DT columns, all in Dv)
  /// of the whole chunk at `t0` into the slot at `base`, one row per
  /// thread.
  void bulkCopyValues(Value t0, Value base, Value slot) {
    Value barrier = barrierAt(slot);
    forEachGroup(c.shape.chunk, [&](Value t) {
      auto at = [&](int64_t column) {
        return elementAt(row(t0, t), valueStrideOffset,
                         kb.add(colBaseOffset, offset(column)));
      };
      Value src = kb.mul(toIndex(valueBase, at(0)), kb.idx(c.dataBytes()));
      Value dst = kb.mul(valueIndex(base, t, zero), kb.idx(c.dataBytes()));
      kb.bulkCopy(kb.add(kb.pointerOf(vs), dst),
                  kb.add(kb.pointerOf(vBuf), src), barrier,
                  c.shape.dvTile * c.dataBytes());
      prefetchRow(vBuf, valueBase, t, c.shape.dvTile, valueStride, at);
    });
  }

  /// The prefetch of a bulk-copied row (`aheadTokens` set): the lines of
  /// the row of token t, `elements` elements at `at(column)` (offsets from
  /// `base`), in the chunk `prefetchGroup` prefetches: one every 128 bytes
  /// from its start and one at its end (the row is 16-byte aligned, not
  /// necessarily a line).
  void prefetchRow(Value buffer, Value base, Value t, int64_t elements,
                   Value rowElements, function_ref<Value(int64_t)> at) {
    if (!aheadTokens)
      return;
    Value always = arith::ConstantIntOp::create(b, loc, 1, 1);
    int64_t perLine = kLineBytes / c.dataBytes();
    for (int64_t column = 0; column < elements; column += perLine)
      prefetchGroup(buffer, base, at(column), t, always, Value(), rowElements);
    prefetchGroup(buffer, base, at(elements - 1), t, always, Value(),
                  rowElements);
  }

  /// Whether the groups copied from `source` are rewritten in place once
  /// they arrive (a copy moves the source as it is): by their feature map
  /// (elu and relu), or rounded to tf32 (f32 data without `splitTF32`,
  /// whose synchronous staging rounds every operand tile).
  bool rewritesOnCopy(const FeatureSource &source) const {
    return mapsOnCopy(source) || (c.dataType.isF32() && !c.splitTF32);
  }

  /// Makes the chunk at `t0` in slot `slot` the current one: waits for all
  /// but the `pending` most recent groups of this thread's copies (the
  /// chunk's among them), rewrites the groups it copied where they need it
  /// (`rewritesOnCopy`), then a barrier publishes the tiles to the block.
  ///
  /// With bulk copies every thread also waits for the phase of parity
  /// `parity` (an i32) of the slot's mbarrier: the chunk's bulk copies,
  /// whose rows every thread then sees (so a thread may rewrite groups
  /// another thread's copy brought).
  void complete(Value t0, Value slot, int64_t pending, Value parity) {
    kb.waitAsyncCopies(pending);
    if (c.usesBulkCopies())
      kb.waitBarrier(barrierAt(slot), parity);
    phases.mark(Phase::Wait);
    useSlot(slot);
    bool mapQ = qs && rewritesOnCopy(c.q), mapK = rewritesOnCopy(c.k);
    if (vs && rewritesOnCopy(c.v)) {
      Value count = this->count(t0);
      kb.ifThen(valuesAligned, [&] {
        forEachValueGroup([&](Value t, Value d, Value col) {
          Value valid = arith::AndIOp::create(b, loc, within(t, count),
                                              kb.ult(col, dvOffset));
          mapInPlace(vs, valueIndex(valueSlot, t, d), valid, c.v);
        });
      });
    }
    if (mapQ || mapK) {
      Value count = this->count(t0);
      kb.ifThen(featuresAligned, [&] {
        forEachFeatureGroup(
            vectorWidth(),
            [&](Value t, Value f, Value valid) {
              Value at = featureIndex(featureSlot, t, f);
              if (mapQ)
                mapInPlace(qs, at, valid, c.q);
              if (mapK)
                mapInPlace(ks, at, valid, c.k);
            },
            count);
      });
    }
    fenceForAsyncProxy();
    kb.barrier();
    phases.mark(Phase::Map);
  }

  /// The chunk loop over scan positions [begin, end): each chunk staged,
  /// then `body(t0, count, carried)` on it. With async copies in S slots
  /// (`c.slots()`) the copies of the next S - 1 chunks are in flight while
  /// `body` computes: the first S - 1 chunks are issued before the loop,
  /// one commit group each (empty past `end`, so that every iteration
  /// waits for the same count), and iteration i issues chunk i + S - 1 into
  /// the slot chunk i - 1 used (after a barrier: every thread is done with
  /// it), then waits for all but its S - 1 most recent groups: chunk i's.
  /// With one slot, iteration i issues chunk i itself and waits for all of
  /// it; its copies prefetch the rows `c.prefetchChunks` chunks ahead into
  /// L2, as synchronous staging does (with more slots `prefetchChunks` is
  /// 0: the next chunks' copies are in flight already).
  SmallVector<Value>
  walkChunks(Value begin, Value end, ValueRange init,
             function_ref<SmallVector<Value>(Value, Value, ValueRange)> body) {
    Value step = kb.idx(c.shape.chunk);
    if (!c.asyncCopies) {
      phases.mark(Phase::Prologue);
      return kb.forLoop(begin, end, step, init,
                        [&](Value t0, ValueRange carried) {
                          Value tokens = count(t0);
                          aheadTokens = tokensAhead(t0, end);
                          stage(t0, tokens);
                          aheadTokens = Value();
                          phases.mark(Phase::Stage);
                          return body(t0, tokens, carried);
                        });
    }
    int64_t slots = c.slots();
    // With bulk copies: an mbarrier per slot, one arrival a phase (thread
    // 0's); chunk i completes phase i div S of slot i mod S.
    if (c.usesBulkCopies()) {
      kb.ifThen(kb.eq(tid, zero), [&] {
        for (int64_t s = 0; s < slots; ++s)
          kb.initBarrier(barrierAt(kb.idx(s)), /*arrivals=*/1);
      });
      kb.barrier();
    }
    for (int64_t s = 0; s + 1 < slots; ++s) {
      Value t = kb.add(begin, kb.idx(s * c.shape.chunk));
      kb.ifThen(kb.ult(t, end), [&] { issue(t, kb.idx(s)); });
      kb.commitAsyncCopies();
    }
    phases.mark(Phase::Prologue);
    SmallVector<Value> results =
        kb.forLoop(begin, end, step, init, [&](Value t0, ValueRange carried) {
          Value chunk = kb.divU(kb.sub(t0, begin), step);
          Value slot = kb.remU(chunk, kb.idx(slots));
          kb.barrier();
          Value next = kb.add(t0, kb.idx((slots - 1) * c.shape.chunk));
          kb.ifThen(kb.ult(next, end), [&] {
            aheadTokens = tokensAhead(next, end);
            // The slot chunk i - 1 used; with two (the default), the other.
            issue(next, slots == 2 ? kb.sub(kb.idx(1), slot)
                                   : kb.remU(kb.add(chunk, kb.idx(slots - 1)),
                                             kb.idx(slots)));
            aheadTokens = Value();
          });
          kb.commitAsyncCopies();
          phases.mark(Phase::Issue);
          Value parity = arith::IndexCastUIOp::create(
              b, loc, b.getI32Type(),
              kb.remU(kb.divU(chunk, kb.idx(slots)), kb.idx(2)));
          complete(t0, slot, /*pending=*/slots - 1, parity);
          return body(t0, count(t0), carried);
        });
    featureSlot = valueSlot = zero;
    // Every chunk issued was waited for, each thread's waits before the
    // barrier that ends the last chunk's `complete`: the mbarriers are idle.
    if (c.usesBulkCopies()) {
      kb.ifThen(kb.eq(tid, zero), [&] {
        for (int64_t s = 0; s < slots; ++s)
          kb.invalidateBarrier(barrierAt(kb.idx(s)));
      });
    }
    return results;
  }

  /// With `c.prefetchChunks` = d, the tokens of the chunk d chunks after
  /// the one at `t0` (0 past `end`), whose rows the staging of this chunk
  /// prefetches (`prefetchGroup`); a null value without prefetches. The
  /// block's positions are whole chunks, so a chunk ahead means that this
  /// one is whole.
  Value tokensAhead(Value t0, Value end) {
    if (!c.prefetchChunks)
      return Value();
    Value ahead = kb.add(t0, kb.idx(c.prefetchChunks * c.shape.chunk));
    Value inside = kb.ult(ahead, end);
    return kb.select(inside, count(kb.select(inside, ahead, t0)), zero);
  }

  /// Staging's prefetch (`aheadTokens` set): the group of 16 bytes at
  /// element `at` (an offset from `base`) of token t of `buffer` asks L2 for
  /// the same group d chunks ahead, d times C rows of `rowElements` further
  /// (back in a reverse scan), if token t is in that chunk, `columns` (when
  /// given) holds and the group starts that row (`rowStart`) or a 128-byte
  /// line: one prefetch per line of the rows where they are 16-byte aligned
  /// (the groups then start at every line start), so that their staging
  /// waits on L2 rather than HBM, which works on them while this chunk
  /// computes. Prefetches hold no registers; the address is the load's plus
  /// a constant where the rows have static widths.
  void prefetchGroup(Value buffer, Value base, Value at, Value t,
                     Value rowStart, Value columns, Value rowElements) {
    if (!aheadTokens)
      return;
    int64_t bytes = c.dataBytes();
    Value delta = kb.mul(rowElements, kb.idx(c.prefetchChunks * c.shape.chunk));
    Value index = toIndex(base, at);
    index = c.reverse ? kb.sub(index, delta) : kb.add(index, delta);
    Value address = kb.add(kb.pointerOf(buffer), kb.mul(index, kb.idx(bytes)));
    Value lineStart = kb.ult(kb.remU(address, kb.idx(kLineBytes)), kb.idx(16));
    Value wanted = arith::AndIOp::create(
        b, loc, within(t, aheadTokens),
        arith::OrIOp::create(b, loc, rowStart, lineStart));
    if (columns)
      wanted = arith::AndIOp::create(b, loc, wanted, columns);
    kb.ifThen(wanted, [&] { kb.prefetchL2(address); });
  }

  /// The L2 cache line.
  static constexpr int64_t kLineBytes = 128;

  /// The first elements of slot `slot` of the feature and value tiles.
  std::pair<Value, Value> slotBases(Value slot) {
    return {kb.mul(slot, kb.idx(c.shape.chunk * c.ldF())),
            kb.mul(slot, kb.idx(c.shape.chunk * c.ldV()))};
  }

  /// The slot of the staged tiles the products read.
  void useSlot(Value slot) {
    std::tie(featureSlot, valueSlot) = slotBases(slot);
  }

  /// What `scores` hands to `outputs`.
  struct Scores {
    /// The denominators of this warp's rows g and g + 8 (normalized scans
    /// with one warp per row tile).
    std::optional<std::pair<Value, Value>> denominators;
    /// With `scoresInRegisters()`, this warp's masked scores as the A
    /// fragments of P·V: four registers per kStep() keys.
    SmallVector<Value> fragments;
  };

  /// This warp's 16 rows and keys of tril(φ(Q_c)φ(K_c)ᵀ), to shared memory
  /// or, with `scoresInRegisters()`, as A fragments; with them the
  /// denominators of its rows g and g + 8 (normalized scans; z at the chunk
  /// start in shared memory). With several warps per row tile each stores
  /// its part of the row sums (its keys, its share of φ(q_t)ᵀ z) instead,
  /// and `denominators` adds them up.
  Scores scores() {
    Scores result;
    Value r0 = warpRow();
    int64_t keys = c.shape.chunk / c.shape.groups;
    Value key0 = kb.mul(warpGroup(), kb.idx(keys));
    Value sumLo = kb.fconst(0.0), sumHi = kb.fconst(0.0);
    // φ(q_t)ᵀ z_prev from the scores' φ(Q_c) fragments as the first key
    // tiles load them (mma.sync): LLVM keeps a fragment from its load to its
    // last use, which a later pass over them would extend.
    bool fusedNormalizer = c.normalized && !c.wgmma;
    // Key col is seen by row when col <= row. With wgmma that is pair -
    // group + c <= r0 - n0, c the element's column offset less its row
    // offset, in 32 bits (positions in a chunk), where the positions' own
    // 64-bit compare took two instructions. (With mma.sync ptxas gave some
    // kernels up to 57 more registers for it, losing blocks per SM.)
    Value laneShift;
    if (c.wgmma)
      laneShift = arith::SubIOp::create(b, loc, to32(mb.pair), to32(mb.group));
    auto seen = [&](Value row, Value col, Value shift, int64_t i) -> Value {
      if (!c.wgmma)
        return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, col,
                                     row);
      int64_t offset = i % 2 + 8 * (i / 4) - (i % 4 >= 2 ? 8 : 0);
      Value lane = arith::AddIOp::create(
          b, loc, laneShift,
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), offset));
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, lane,
                                   shift);
    };
    // With wgmma, the keys in blocks of kWgmmaKeys, each block's scores
    // masked and stored before the next is computed (all of a block's
    // accumulators are live at once). The loops with their outputs on wgmma
    // take all of a warpgroup's keys at once, one wait a chunk fewer: at
    // F = 64 the segment outputs kernel took 146 registers instead of 140,
    // the chunk loop 120 instead of 132 (three blocks per SM either way).
    SmallVector<Value> wide;
    int64_t block = c.wgmmaOutputs ? keys : std::min(keys, kWgmmaKeys);
    // Two key tiles at a time: one A fragment for both products.
    for (int64_t j = 0; j < keys / 8; j += 2) {
      Value n0 = kb.add(key0, kb.idx(8 * j));
      SmallVector<Value> acc(8, kb.fconst(0.0));
      if (c.wgmma && 8 * j % block == 0)
        wide = wgmmaScores(n0, block);
      if (c.wgmma)
        for (int64_t i = 0; i < 8; ++i)
          acc[i] = wide[4 * (j % (block / 8) + i / 4) + i % 4];
      else
        for (int64_t f0 = 0; f0 < c.features; f0 += mb.kStep()) {
          SmallVector<Value> aRegs = mb.fragmentA(queryTile(), r0, kb.idx(f0));
          acc = products(aRegs, keysTransposed(), kb.idx(f0), n0, 2, acc);
          if (fusedNormalizer && j == 0)
            std::tie(sumLo, sumHi) = addQueryNormalizerStep(
                [&] { return aRegs; }, f0, c.shape.groups, sumLo, sumHi);
        }
      Value shift;
      if (c.wgmma)
        shift = arith::SubIOp::create(b, loc, to32(r0), to32(n0));
      for (int64_t i = 0; i < 8; ++i) {
        auto [row, col] =
            mb.position(r0, kb.add(n0, kb.idx(8 * (i / 4))), i % 4);
        acc[i] = kb.select(seen(row, col, shift, i), acc[i], kb.fconst(0.0));
        // A lane's two scores of a row (columns 2t, 2t + 1; the pitch, a
        // chunk and its padding, is even) as one store, rounded as a pair:
        // stored one by one, their selects went after the rounding, each
        // score rounded alone and the pair packed.
        if (!c.scoresInRegisters() && i % 2 == 1)
          storeShared(
              {acc[i - 1], acc[i]}, ps,
              sharedIndex(kb, scoreTile(), row, kb.sub(col, kb.idx(1))));
        if (i % 4 < 2)
          sumLo = kb.fadd(sumLo, acc[i]);
        else
          sumHi = kb.fadd(sumHi, acc[i]);
      }
      // Register r of the A fragment: row g + 8·(r % 2), the key tile
      // r / 2 of the pair, accumulators 2r and 2r + 1.
      if (c.scoresInRegisters())
        for (int64_t r = 0; r < 4; ++r)
          result.fragments.push_back(mb.registerA(acc[2 * r], acc[2 * r + 1]));
    }
    if (!c.normalized)
      return result;
    if (fusedNormalizer)
      std::tie(sumLo, sumHi) =
          std::make_pair(kb.sumOverLanes(sumLo, 4), kb.sumOverLanes(sumHi, 4));
    else // φ(q_t)ᵀ z_prev: this group's share of the features.
      std::tie(sumLo, sumHi) = addQueryNormalizer(c.shape.groups, sumLo, sumHi);
    if (c.sharedRowSums()) {
      Value rowLo, rowHi;
      std::tie(rowLo, rowHi) = laneRows();
      Value at = kb.mul(warpGroup(), kb.idx(c.shape.chunk));
      kb.ifThen(kb.eq(mb.quad, kb.idx(0)), [&] {
        storeShared(sumLo, rs, kb.add(at, rowLo));
        storeShared(sumHi, rs, kb.add(at, rowHi));
      });
      return result;
    }
    result.denominators = std::make_pair(kb.fadd(sumLo, kb.fconst(c.eps)),
                                         kb.fadd(sumHi, kb.fconst(c.eps)));
    return result;
  }

  /// The denominators φ(q_t)ᵀz + eps of this warp's rows g and g + 8 for
  /// the query readout (z in shared memory): each warp takes all features.
  std::pair<Value, Value> readoutDenominators() {
    Value eps = kb.fconst(c.eps);
    auto [sumLo, sumHi] = addQueryNormalizer(1, kb.fconst(0.0), kb.fconst(0.0));
    return {kb.fadd(sumLo, eps), kb.fadd(sumHi, eps)};
  }

  /// The denominators of this warp's rows g and g + 8: `den` from `scores`,
  /// or, with the row sums in shared memory (after a barrier), their sum
  /// over the groups.
  std::optional<std::pair<Value, Value>>
  denominators(std::optional<std::pair<Value, Value>> den) {
    if (!c.sharedRowSums())
      return den;
    auto [rowLo, rowHi] = laneRows();
    Value sumLo = kb.fconst(c.eps), sumHi = kb.fconst(c.eps);
    for (int64_t g = 0; g < c.shape.groups; ++g) {
      Value at = kb.idx(g * c.shape.chunk);
      sumLo = kb.fadd(sumLo, loadShared(rs, kb.add(at, rowLo)));
      sumHi = kb.fadd(sumHi, loadShared(rs, kb.add(at, rowHi)));
    }
    return std::make_pair(sumLo, sumHi);
  }

  /// Whether `outputs` may store a lane's two values of a row (columns 2t
  /// and 2t+1 of a tile) as one: the output's first element aligned to a
  /// pair and Dv even, so that every row keeps pairs aligned. Null without
  /// vector loads. Emitted once, before the chunk loop.
  Value pairedStores(Value oBuf) {
    if (!c.vectorLoads)
      return {};
    Type oType = cast<MemRefType>(oBuf.getType()).getElementType();
    return arith::AndIOp::create(
        b, loc, kb.alignedTo(oBuf, 2 * oType.getIntOrFloatBitWidth() / 8),
        kb.eq(kb.remU(dv, kb.idx(2)), kb.idx(0)));
  }

  /// O_c = tril(φ(Q_c)φ(K_c)ᵀ) V_c + φ(Q_c) S for this warp's rows (φ(Q_c) S
  /// alone in the query readout, which has no scores), divided by the
  /// denominators, to `oBuf` (S in shared memory, the scores too or, with
  /// `scoresInRegisters()`, in `scoreFragments`); pairs of values in one
  /// store where `pairs` (`pairedStores`) holds.
  /// With `wgmmaOutputs`, `alongside` (if any) is called once the first
  /// block's wgmmas are committed, to issue and commit another group (the
  /// state update), which runs while the block's results are stored: only
  /// the outputs' group is waited for.
  void outputs(Value t0, Value tokens,
               std::optional<std::pair<Value, Value>> den,
               ArrayRef<Value> scoreFragments, Value oBuf, Value pairs,
               function_ref<void()> alongside = {}) {
    Value r0 = warpRow();
    bool hasScores = ps || !scoreFragments.empty();
    // One division per row, multiplications per element.
    std::optional<std::pair<Value, Value>> inverse;
    if (den)
      inverse = std::make_pair(kb.fdiv(kb.fconst(1.0), den->first),
                               kb.fdiv(kb.fconst(1.0), den->second));
    Type oType = cast<MemRefType>(oBuf.getType()).getElementType();
    int64_t pairBytes = 2 * oType.getIntOrFloatBitWidth() / 8;
    // This warp's group of the value tiles.
    int64_t tiles = c.shape.dvTile / 8 / c.shape.groups;
    Value tile0 = kb.mul(warpGroup(), kb.idx(8 * tiles));
    // With wgmmaOutputs the warpgroup's products, in blocks of `block`
    // columns of its group's tiles (register 4j + e element e of tile j of
    // the block), as the tile pairs below take them.
    bool byWgmma = outputsByWgmma();
    int64_t block = std::min<int64_t>(
        8 * tiles, c.shape.groups == 1 ? kWgmmaOutputColumns
                                       : kWgmmaOutputColumnsTwoGroups);
    SmallVector<Value> wide;
    // The lane's two rows (g and g + 8 of the row tile) and its first
    // column: whether each row is in the sequence, where its first pair
    // goes in O and that pair's column, once. Every pair of the lane is then
    // a constant number of columns (8 a tile) from its row's first, so that
    // its store needs no address arithmetic of its own (computed for each
    // pair, under the branches that guard the stores, the row's offset took
    // a 64-bit multiply per pair).
    Value laneColumn =
        kb.add(colBaseOffset, toOffset(mb.position(r0, tile0, 0).second));
    std::array<Value, 2> rowIn, lanePair;
    for (int64_t h = 0; h < 2; ++h) {
      Value t = mb.position(r0, tile0, 2 * h).first;
      rowIn[h] = within(t, tokens);
      lanePair[h] = elementAt(row(t0, t), valueStrideOffset, laneColumn);
    }
    // Whether every store of the lane is a pair within the sequence and Dv
    // (every chunk but the last, where Dv is whole tiles): the stores of a
    // tile pair then go unguarded, under one branch.
    Value whole;
    if (pairs) {
      Value lastColumn = kb.add(laneColumn, offset(8 * (tiles - 1)));
      whole = arith::AndIOp::create(
          b, loc, arith::AndIOp::create(b, loc, rowIn[0], rowIn[1]),
          arith::AndIOp::create(b, loc, pairs, kb.ult(lastColumn, dvOffset)));
    }
    for (int64_t j = 0; j < tiles; j += 2) {
      int64_t count = std::min<int64_t>(2, tiles - j);
      Value n0 = kb.add(tile0, kb.idx(8 * j));
      SmallVector<Value> acc(4 * count, kb.fconst(0.0));
      if (byWgmma) {
        if (8 * j % block == 0)
          wide = wgmmaOutputs(8 * j, block, scoreFragments,
                              j == 0 ? alongside : nullptr);
        int64_t at = 4 * (j % (block / 8));
        acc.assign(wide.begin() + at, wide.begin() + at + 4 * count);
      }
      for (int64_t t = 0; !byWgmma && hasScores && t < c.shape.chunk;
           t += mb.kStep())
        acc = ps ? products(scoreTile(), valueTile(), r0, kb.idx(t), n0, count,
                            acc)
                 : products(scoreFragments.slice(4 * (t / mb.kStep()), 4),
                            valueTile(), kb.idx(t), n0, count, acc);
      // With scaled state columns, s_d (tril(φ(Q_c)φ(K_c)ᵀ) V_c + φ(Q_c) S)
      // from s_d S (the readout has no scores term to scale), and 1/s_d at
      // the end: per tile, the lane's two columns (values i and i + 2 share
      // one).
      SmallVector<Value, 4> scale, unscale;
      if (cs) {
        for (int64_t i = 0; i < 4 * count; ++i) {
          if (i % 4 < 2) {
            Value d =
                mb.position(r0, kb.add(n0, kb.idx(8 * (i / 4))), i % 4).second;
            scale.push_back(loadShared(cs, d));
            unscale.push_back(
                loadShared(cs, kb.add(d, kb.idx(c.shape.dvTile))));
          }
          if (hasScores)
            acc[i] = kb.fmul(acc[i], scale[2 * (i / 4) + i % 2]);
        }
      }
      for (int64_t f0 = 0; !byWgmma && f0 < c.features; f0 += mb.kStep())
        acc =
            products(queryTile(), stateTile(), r0, kb.idx(f0), n0, count, acc);
      // Values i and i + 1: columns col and col + 1 of row h = i % 4 / 2,
      // 8 (j + i / 4) columns from the lane's first.
      SmallVector<Value> values = acc;
      for (int64_t i = 0; i < 4 * count; ++i) {
        if (inverse)
          values[i] =
              kb.fmul(values[i], i % 4 < 2 ? inverse->first : inverse->second);
        if (cs)
          values[i] = kb.fmul(values[i], unscale[2 * (i / 4) + i % 2]);
      }
      auto pairAt = [&](int64_t i) {
        return kb.add(lanePair[i % 4 / 2], offset(8 * (j + i / 4)));
      };
      auto storePair = [&](int64_t i) {
        SmallVector<Value, 2> elements;
        for (Value value : {values[i], values[i + 1]})
          elements.push_back(convertFloat(b, loc, value, oType));
        Value pair = vector::FromElementsOp::create(
            b, loc, VectorType::get({2}, oType), elements);
        vector::StoreOp::create(
            b, loc, pair, oBuf, ValueRange{toIndex(valueBase, pairAt(i))},
            /*nontemporal=*/false, llvm::MaybeAlign(pairBytes));
      };
      auto storeGuarded = [&](int64_t i) {
        int64_t h = i % 4 / 2;
        Value col = kb.add(laneColumn, offset(8 * (j + i / 4)));
        Value at = pairAt(i);
        auto storeEach = [&] {
          for (int64_t e = 0; e < 2; ++e) {
            Value column = kb.add(col, offset(e));
            kb.ifThen(kb.ult(column, dvOffset), [&] {
              kb.store(values[i + e], oBuf,
                       toIndex(valueBase, kb.add(at, offset(e))));
            });
          }
        };
        kb.ifThen(rowIn[h], [&] {
          if (!pairs) {
            storeEach();
            return;
          }
          // col is even: with Dv even, col < Dv covers col + 1.
          kb.ifElse(
              arith::AndIOp::create(b, loc, pairs, kb.ult(col, dvOffset)),
              [&] { storePair(i); }, storeEach);
        });
      };
      auto storeAll = [&](function_ref<void(int64_t)> store) {
        for (int64_t i = 0; i < 4 * count; i += 2)
          store(i);
      };
      if (!whole) {
        storeAll(storeGuarded);
        continue;
      }
      kb.ifElse(
          whole, [&] { storeAll(storePair); }, [&] { storeAll(storeGuarded); });
    }
  }

  /// Calls `fn(f, d, i)` for every element of this thread's state fragments:
  /// feature f, column d of the tile, i-th value.
  void forEachStateElement(function_ref<void(Value, Value, unsigned)> fn) {
    unsigned s = 0;
    if (c.wgmmaState) {
      // wgmma's D: register 4j + i is element i of column tile j in the
      // accumulator layout of mma.sync.
      auto [r0, n0] = wgmmaStateOrigin();
      for (int64_t j = 0; j < c.stateColumns() / 8; ++j)
        for (int64_t i = 0; i < 4; ++i) {
          auto [f, d] = mb.position(r0, kb.add(n0, kb.idx(8 * j)), i);
          fn(f, d, s++);
        }
      return;
    }
    for (int64_t fi = 0; fi < c.features / 16; ++fi)
      for (int64_t j = 0; j < nTilesPerWarp(); ++j) {
        auto [r0, n0] = stateTileAt(fi, j);
        for (int64_t i = 0; i < 4; ++i) {
          auto [f, d] = mb.position(r0, n0, i);
          fn(f, d, s++);
        }
      }
  }
  int64_t stateFragmentSize() {
    if (c.wgmmaState)
      return c.stateColumns() / 2;
    return c.features / 16 * nTilesPerWarp() * 4;
  }

  /// This thread's fragments (`forEachStateElement`'s order) of the F x DT
  /// tile at the block's value columns of the state whose first row is
  /// `rowBase` in `buffer` (rows of Dv elements), in the state type, zero
  /// past Dv. Each element's guard compares its column in the tile with the
  /// block's columns in Dv in 32 bits: as 64-bit compares of its column in
  /// the row with Dv, ptxas kept them live across the loads, and the F = 64
  /// segment outputs kernel with its outputs on wgmma and its scores in
  /// registers took 146 registers instead of 124 (three blocks per H100 SM
  /// instead of four).
  SmallVector<Value> loadStateTile(Value buffer, Value rowBase) {
    Type i32 = b.getI32Type();
    auto narrow = [&](Value index) {
      return arith::IndexCastUIOp::create(b, loc, i32, index);
    };
    Value columns = narrow(
        kb.minU(kb.sub(dv, kb.minU(dv, colBase)), kb.idx(c.shape.dvTile)));
    SmallVector<Value> loaded;
    forEachStateElement([&](Value f, Value d, unsigned) {
      Value index = kb.add(kb.mul(kb.add(rowBase, f), dv), kb.add(colBase, d));
      loaded.push_back(
          kb.loadIf(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          narrow(d), columns),
                    buffer, index));
    });
    return loaded;
  }

  /// The state fragments in shared memory, for `outputs`. With
  /// `scaledState()` (f16) each column d is multiplied by the power of two
  /// s_d of `powerOfTwoScale` for its largest magnitude first, and s_d and
  /// 1/s_d go to shared memory for `outputs`: columns are owned by one warp,
  /// and lanes 4g + t hold columns 2t and 2t + 1 of each tile, so a column's
  /// maximum is that over the lane's rows and then over the lanes t, t + 4,
  /// ..., t + 28 (shuffles xor 4, 8, 16).
  void storeStateToShared(ValueRange fragments) {
    if (!cs) {
      // f32 (tf32): a lane's two adjacent columns of a row (even and odd
      // elements) in one 8-byte store, which a half-warp's rows 8 words
      // apart or unit-swizzled spread over the banks (LLVM paired the
      // padded tiles' scalar stores the same way; in the IR the emulator
      // counts them as they are). The 128-byte swizzled tile too, in
      // 4-byte stores: there LLVM cannot see the pairs, and a warp's rows g,
      // in 16-byte chunks j XOR g, take all 32 banks.
      bool pairs = c.dataType.isF32() || stateSwizzled();
      forEachStateElement([&](Value f, Value d, unsigned s) {
        if (!pairs)
          storeShared(fragments[s], ss, stateIndex(f, d));
        else if (s % 2 == 0)
          storeShared({fragments[s], fragments[s + 1]}, ss, stateIndex(f, d));
      });
      return;
    }
    int64_t tiles = nTilesPerWarp();
    // Per tile j and column e of the lane's pair: the largest magnitude.
    SmallVector<Value> largest(2 * tiles, kb.fconst(0.0));
    forEachStateElement([&](Value, Value, unsigned s) {
      unsigned column = 2 * (s / 4 % tiles) + s % 2;
      largest[column] = arith::MaximumFOp::create(
          b, loc, largest[column], math::AbsFOp::create(b, loc, fragments[s]));
    });
    SmallVector<std::pair<Value, Value>> scales;
    for (Value m : largest)
      scales.push_back(powerOfTwoScale(kb.maxOverLanes(m, 8, /*stride=*/4)));
    forEachStateElement([&](Value f, Value d, unsigned s) {
      unsigned column = 2 * (s / 4 % tiles) + s % 2;
      storeShared(kb.fmul(fragments[s], scales[column].first), ss,
                  stateIndex(f, d));
      // Lanes 0-3 (g = 0, rows f of the first feature tile) publish the
      // column's scales.
      if (s / 4 / tiles == 0 && s % 4 < 2)
        kb.ifThen(kb.eq(mb.group, zero), [&] {
          storeShared(scales[column].first, cs, d);
          storeShared(scales[column].second, cs,
                      kb.add(d, kb.idx(c.shape.dvTile)));
        });
    });
  }

  /// For `largest` ≥ 0: (s, 1/s), s = 2^(140 - e) for the biased exponent e
  /// of `largest` from e = 141 (2^14) on, which brings it below 2^14, and
  /// (1, 1) below. s·x rounded to f16 (largest finite value 65504) cannot
  /// overflow, and multiplying by 1/s afterwards is exact.
  std::pair<Value, Value> powerOfTwoScale(Value largest) {
    auto constant = [&](int64_t value) {
      return arith::ConstantIntOp::create(b, loc, value, 32).getResult();
    };
    auto fromExponent = [&](Value biased) {
      return arith::BitcastOp::create(
                 b, loc, c.stateType,
                 arith::ShLIOp::create(b, loc, biased, constant(23)))
          .getResult();
    };
    Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), largest);
    Value exponent = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, bits, constant(23)),
        constant(255));
    Value large = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                        exponent, constant(141));
    Value scale =
        fromExponent(arith::SubIOp::create(b, loc, constant(267), exponent));
    Value inverse =
        fromExponent(arith::SubIOp::create(b, loc, exponent, constant(13)));
    return {kb.select(large, scale, kb.fconst(1.0)),
            kb.select(large, inverse, kb.fconst(1.0))};
  }

  /// fragments + φ(K_c)ᵀ V_c (with `wgmmaState`, waited for at once).
  ///
  /// A tensor core rounds the sum of each MMA toward zero, so a state
  /// carried through the MMAs of every chunk as their accumulator shrinks
  /// by up to an ulp per instruction, a drift that grows with the number of
  /// chunks: three instructions a k step with `splitTF32`, 8e-5 of the
  /// state after 16384 tokens on the emulator's model of the tensor cores,
  /// where that option's results are otherwise within about 1e-6. There
  /// each feature tile's part of φ(K_c)ᵀ V_c is summed from zero instead
  /// and added to the state by f32 adds, which round to nearest: the drift
  /// is then relative to one chunk's sum, not to the state. The other data
  /// types' own rounding (tf32's 11 bits and less) is above the drift
  /// (tf32: 1.7e-4 against 1.2e-4 after 65536 tokens), and they keep the
  /// accumulating form, which needs no registers for the sums (ptxas gave
  /// the tf32 segment states 240 registers instead of 144 at F = 64, and
  /// spilled at F = 128).
  SmallVector<Value> accumulateState(ValueRange fragments) {
    if (c.wgmmaState)
      return finishStateUpdate(startStateUpdate(fragments));
    SmallVector<Value> next(fragments.begin(), fragments.end());
    int64_t tiles = nTilesPerWarp(), step = pairedTiles() ? 2 : 1;
    bool sumFromZero = c.splitTF32;
    for (int64_t fi = 0; fi < c.features / 16; ++fi) {
      unsigned first = 4 * fi * tiles;
      // This feature tile's accumulators: the state's, or sums from zero.
      SmallVector<Value> sums(next.begin() + first,
                              next.begin() + first + 4 * tiles);
      if (sumFromZero)
        sums.assign(4 * tiles, kb.fconst(0.0));
      for (int64_t t = 0; t < c.shape.chunk; t += mb.kStep()) {
        SmallVector<Value> a =
            mb.fragmentA(keysTransposed(), kb.idx(16 * fi), kb.idx(t));
        for (int64_t j = 0; j < tiles; j += step) {
          auto [r0, n0] = stateTileAt(fi, j);
          SmallVector<Value> bRegs =
              mb.fragmentsB(valueTile(), kb.idx(t), n0, step);
          for (int64_t p = 0; p < step; ++p) {
            unsigned s = 4 * (j + p);
            SmallVector<Value> acc(sums.begin() + s, sums.begin() + s + 4);
            acc = mb.mma(a, ArrayRef<Value>(bRegs).slice(2 * p, 2), acc);
            std::copy(acc.begin(), acc.end(), sums.begin() + s);
          }
        }
      }
      for (auto [i, sum] : llvm::enumerate(sums))
        next[first + i] = sumFromZero ? kb.fadd(next[first + i], sum) : sum;
    }
    return next;
  }

  /// Starts `fragments` + φ(K_c)ᵀ V_c with wgmma (`wgmmaState`): the
  /// warpgroup's 64 features by `stateColumns()` value columns, C / 16
  /// steps of m64nNk16 with both operands MN-major in the 128-byte swizzle:
  /// φ(K_c) as staged for the scores (a token's 64 features of a block in
  /// one 128-byte row) is φ(K_c)ᵀ column by column, and V_c is staged the
  /// same way. The state stays in registers across chunks, wgmma's D.
  /// Returns the accumulators, in flight until `finishStateUpdate`: the
  /// warp may do other work meanwhile, but must not touch `fragments`, nor
  /// the staged φ(K_c) and V_c.
  Value startStateUpdate(ValueRange fragments) {
    int64_t columns = c.stateColumns();
    int64_t blockBytes = c.shape.chunk * kSwizzleBytes;
    auto [block, column0] = wgmmaStateShare();
    // The warpgroup's 64-column blocks of each tile.
    Value keys =
        kb.add(tileAddress(ks, featureSlot), kb.mul(block, kb.idx(blockBytes)));
    Value values =
        kb.add(tileAddress(vs, valueSlot),
               kb.mul(kb.divU(column0, kb.idx(64)), kb.idx(blockBytes)));
    uint64_t layout = mnMajorBits(c.shape.chunk);
    Value acc = LLVM::UndefOp::create(b, loc, wgmmaAccumulatorType(columns));
    for (auto [i, value] : llvm::enumerate(fragments))
      acc = LLVM::InsertValueOp::create(b, loc, acc, value, i);
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t t = 0; t < c.shape.chunk; t += 16) {
      int64_t offset = t * kSwizzleBytes;
      acc = wgmma(acc, descriptor(keys, offset, layout),
                  descriptor(values, offset, layout), columns,
                  /*accumulate=*/true, NVVM::MMALayout::col,
                  NVVM::MMALayout::row);
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    return acc;
  }
  /// Waits for the update `startStateUpdate` started and returns the new
  /// state fragments.
  SmallVector<Value> finishStateUpdate(Value state) {
    return waitForWgmma(state, c.stateColumns(), /*commit=*/false);
  }

  /// Σ_t φ(k_t)[f] over the chunk's `count` staged keys, in f32. The loop
  /// counts in the offset type (tokens are at most C): with 32-bit offsets
  /// its test is one 32-bit compare.
  Value keySum(Value f, Value count) {
    return kb.forLoop(toOffset(kb.idx(0)), toOffset(count), offset(1),
                      ValueRange{kb.fconst(0.0)},
                      [&](Value t, ValueRange sum) -> SmallVector<Value> {
                        Value row = fromOffset(t);
                        Value key = toState(
                            loadShared(ks, featureIndex(featureSlot, row, f)));
                        return {kb.fadd(sum[0], key)};
                      })[0];
  }

  /// Adds Σ_t φ(k_t) of the chunk's `count` staged keys to z in shared
  /// memory. Where the block has a power-of-two multiple P ≤ 32 of F / W
  /// threads (W features to 32 bits), P adjacent lanes share W features
  /// (one 32-bit load a token), each summing all C rows (rows past the
  /// sequence are staged as zeros, which the state products rely on too) in
  /// blocks of eight: part p takes rows 8/P·p .. 8/P·(p + 1) - 1 of each
  /// block, which puts the parts' rows of one load in distinct banks
  /// (P ≤ 8) in the padded and the swizzled layout alike. A butterfly of
  /// shuffles adds the parts' sums. Otherwise threads take whole features.
  void addKeySums(Value count) {
    int64_t threads = c.threads(), perWord = 4 / c.dataBytes();
    int64_t words = c.features / perWord;
    int64_t parts = threads % words == 0 ? threads / words : 1;
    if (parts == 1 || parts > 32 || !llvm::isPowerOf2_64(parts)) {
      kb.forLoop(tid, cF, kb.idx(threads), [&](Value f) {
        Value z = loadShared(zs, f);
        memref::StoreOp::create(b, loc, kb.fadd(z, keySum(f, count)), zs,
                                ValueRange{f});
      });
      return;
    }
    Value f = kb.mul(kb.divU(tid, kb.idx(parts)), kb.idx(perWord));
    Value part = kb.remU(tid, kb.idx(parts));
    // Rows per part of a block of eight (one row in eight beyond P = 8).
    int64_t perBlock = std::max<int64_t>(8 / parts, 1);
    int64_t block = perBlock * parts;
    Value first = kb.mul(part, kb.idx(perBlock));
    auto wordType = VectorType::get({perWord}, c.dataType);
    // In the swizzle, the part's rows as the first block's row j plus a
    // constant (the blocks are whole swizzle periods, 8 rows, apart): LLVM
    // hoisted each row's swizzled address out of the chunk loop, a register
    // each (62 of the normalized chunk loop's 186 at F = 128 with
    // wgmma-chunks: one block per SM instead of two). The padded rows'
    // addresses were already base plus constant.
    SmallVector<Value, 4> rowBases;
    if (c.wgmma)
      for (int64_t j = 0; j < perBlock; ++j)
        rowBases.push_back(
            featureIndex(featureSlot, kb.add(first, kb.idx(j)), f));
    auto rowAt = [&](int64_t r, int64_t j) {
      if (!c.wgmma)
        return featureIndex(featureSlot, kb.add(first, kb.idx(r + j)), f);
      return kb.add(rowBases[j], kb.idx(r * kSwizzleBytes / c.dataBytes()));
    };
    SmallVector<Value, 2> sums(perWord, kb.fconst(0.0));
    for (int64_t r = 0; r < c.shape.chunk; r += block)
      for (int64_t j = 0; j < perBlock; ++j) {
        Value at = rowAt(r, j);
        Value keys =
            vector::LoadOp::create(b, loc, wordType, ks, ValueRange{at},
                                   /*nontemporal=*/false, llvm::MaybeAlign(4));
        for (int64_t e = 0; e < perWord; ++e)
          sums[e] = kb.fadd(sums[e], toState(vector::ExtractOp::create(
                                         b, loc, keys, ArrayRef<int64_t>{e})));
      }
    for (Value &sum : sums)
      sum = kb.sumOverLanes(sum, parts);
    kb.ifThen(kb.eq(part, kb.idx(0)), [&] {
      Value z = vector::LoadOp::create(
          b, loc, VectorType::get({perWord}, c.stateType), zs, ValueRange{f},
          /*nontemporal=*/false, llvm::MaybeAlign(4 * perWord));
      for (int64_t e = 0; e < perWord; ++e)
        z = vector::InsertOp::create(
            b, loc,
            kb.fadd(vector::ExtractOp::create(b, loc, z, ArrayRef<int64_t>{e}),
                    sums[e]),
            z, ArrayRef<int64_t>{e});
      vector::StoreOp::create(b, loc, z, zs, ValueRange{f},
                              /*nontemporal=*/false,
                              llvm::MaybeAlign(4 * perWord));
    });
  }

  Value zShared() const { return zs; }

private:
  /// The element (f, d) of the shared state tile.
  Value stateIndex(Value f, Value d) {
    return sharedIndex(kb, stateTile(), f, d);
  }
  /// `sumLo` and `sumHi` (a quad's partial row sums of rows g and g + 8)
  /// plus φ(q_t)ᵀz over this warp group's feature steps of `groups`
  /// (`addQueryNormalizerStep`; z in shared memory), summed over the quad:
  /// every lane of the quad gets the rows' sums. φ(Q_c) comes in A
  /// fragments, as the products read it (conflict-free ldmatrix in either
  /// layout), each lane taking the z of its fragment's columns.
  std::pair<Value, Value> addQueryNormalizer(int64_t groups, Value sumLo,
                                             Value sumHi) {
    Value r0 = warpRow();
    for (int64_t f0 = 0; f0 < c.features; f0 += mb.kStep())
      std::tie(sumLo, sumHi) = addQueryNormalizerStep(
          [&] { return mb.fragmentA(queryTile(), r0, kb.idx(f0)); }, f0, groups,
          sumLo, sumHi);
    return {kb.sumOverLanes(sumLo, 4), kb.sumOverLanes(sumHi, 4)};
  }
  /// `sumLo` and `sumHi` plus this lane's part of φ(q_t)ᵀz over the
  /// features of φ(Q_c)'s A fragment at feature f0 (`fragment()` gives it).
  /// With G `groups` of warps per row tile, step s = f0 / kStep() is warp
  /// group s mod G's (a branch uniform over the warp).
  std::pair<Value, Value>
  addQueryNormalizerStep(function_ref<SmallVector<Value>()> fragment,
                         int64_t f0, int64_t groups, Value sumLo, Value sumHi) {
    auto add = [&]() -> std::pair<Value, Value> {
      SmallVector<Value> aRegs = fragment();
      Value lo = sumLo, hi = sumHi;
      // Registers 2j and 2j + 1 (rows g and g + 8) share their columns.
      for (int64_t j = 0; j < 2; ++j) {
        auto rowLo = mb.elementsA(aRegs, 2 * j),
             rowHi = mb.elementsA(aRegs, 2 * j + 1);
        Value at = kb.add(kb.idx(f0), rowLo[0].second);
        SmallVector<Value> z;
        if (rowLo.size() == 1) {
          z.push_back(loadShared(zs, at));
        } else {
          Value both = vector::LoadOp::create(
              b, loc, VectorType::get({2}, b.getF32Type()), zs, ValueRange{at},
              /*nontemporal=*/false, llvm::MaybeAlign(8));
          for (int64_t e = 0; e < 2; ++e)
            z.push_back(
                vector::ExtractOp::create(b, loc, both, ArrayRef<int64_t>{e}));
        }
        for (size_t e = 0; e < z.size(); ++e) {
          lo = kb.fma(rowLo[e].first, z[e], lo);
          hi = kb.fma(rowHi[e].first, z[e], hi);
        }
      }
      return {lo, hi};
    };
    if (groups == 1)
      return add();
    Value mine = kb.eq(warpGroup(), kb.idx(f0 / mb.kStep() % groups));
    auto branch = scf::IfOp::create(
        b, loc, mine,
        [&](OpBuilder &, Location) {
          auto [lo, hi] = add();
          scf::YieldOp::create(b, loc, ValueRange{lo, hi});
        },
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(b, loc, ValueRange{sumLo, sumHi});
        });
    return {branch.getResult(0), branch.getResult(1)};
  }

  /// Elements loaded for shared memory (1, or the elements of 16 bytes, in
  /// the state type), the buffer and the index of the first.
  struct StagedElements {
    SmallVector<Value, 8> values;
    Value buffer, index;
  };
  using StagedGroup = SmallVector<StagedElements, 2>;

  /// A position within a chunk (below 2^31) as an i32.
  Value to32(Value index) {
    return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), index);
  }
  /// A global offset (from `featureBase` or `valueBase`): i32 with narrow
  /// offsets, index otherwise.
  Value toOffset(Value index) {
    if (!c.narrowOffsets)
      return index;
    return arith::IndexCastUIOp::create(b, loc, offsetType, index);
  }
  /// An offset (or a token count in the offset type) as an index.
  Value fromOffset(Value offset) {
    if (!c.narrowOffsets)
      return offset;
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), offset);
  }
  /// The index of the element at `offset` from `base` (`featureBase` or
  /// `valueBase`).
  Value toIndex(Value base, Value offset) {
    return kb.add(base, fromOffset(offset));
  }
  Value offset(int64_t value) {
    return arith::ConstantOp::create(b, loc,
                                     b.getIntegerAttr(offsetType, value));
  }
  /// Element `col` of row `row` of a buffer of rows of `width` elements.
  Value elementAt(Value row, Value width, Value col) {
    return kb.add(kb.mul(row, width), col);
  }

  /// t < count for a token t of the chunk (both at most C), compared in the
  /// offset type.
  Value within(Value t, Value count) {
    return kb.ult(toOffset(t), toOffset(count));
  }

  /// Elements per staged group: those of 16 bytes of the data type, or 1
  /// without vector loads.
  int64_t vectorWidth() const { return c.vectorLoads ? 16 / c.dataBytes() : 1; }

  /// Whether `buffer`'s first element is 16-byte aligned.
  Value aligned16(Value buffer) { return kb.alignedTo(buffer, 16); }

  /// Stages the `groups` (a multiple of the block size) of `width` elements
  /// of a tile: `load` returns what group i stores where. A loop over
  /// batches of up to `stageBatch` elements per thread (at least one group),
  /// unrolled within a batch, the batch's loads before its stores (a loop,
  /// so that ptxas does not hoist every load of the tile and run out of
  /// registers).
  void staged(int64_t groups, int64_t width,
              function_ref<StagedGroup(Value)> load) {
    int64_t trips = groups / c.threads();
    int64_t batch = std::gcd(trips, std::max<int64_t>(1, stageBatch / width));
    Value stride = kb.idx(batch * c.threads());
    kb.forLoop(tid, kb.idx(groups), stride, [&](Value first) {
      SmallVector<StagedElements> loaded;
      for (int64_t r = 0; r < batch; ++r)
        llvm::append_range(loaded,
                           load(kb.add(first, kb.idx(r * c.threads()))));
      for (const StagedElements &e : loaded)
        storeShared(e.values, e.buffer, e.index);
    });
  }

  /// φ(Q_c) (when staged) and φ(K_c) into the slot at `base`, `width`
  /// consecutive features per group. Tokens past the sequence read token 0
  /// of the chunk (count >= 1) and are replaced by zeros: no branches around
  /// the loads.
  void stageFeatures(Value t0, Value count, int64_t width, Value base) {
    staged(c.shape.chunk * c.features / width, width,
           [&](Value i) -> StagedGroup {
             auto [t, f] = stagedGroup(i, c.features, width, featurePitch());
             Value valid = within(t, count);
             Value at = elementAt(row(t0, kb.select(valid, t, kb.idx(0))),
                                  featureStrideOffset, toOffset(f));
             auto features = [&](Value buffer, const FeatureSource &source) {
               SmallVector<Value, 8> xs = loadElements(
                   buffer, featureBase, at, width,
                   /*aligned=*/Value(), [](int64_t) { return Value(); });
               for (Value &x : xs)
                 x = kb.select(valid, featureOf(x, source), kb.fconst(0.0));
               return xs;
             };
             Value slot = featureIndex(base, t, f);
             StagedGroup loaded;
             if (qs)
               loaded.push_back({features(qBuf, c.q), qs, slot});
             if (ks)
               loaded.push_back({features(kBuf, c.k), ks, slot});
             if (width > 1) {
               Value rowStart = kb.eq(f, zero);
               if (qs)
                 prefetchGroup(qBuf, featureBase, at, t, rowStart, Value(),
                               featureStride);
               if (ks)
                 prefetchGroup(kBuf, featureBase, at, t, rowStart, Value(),
                               featureStride);
             }
             return loaded;
           });
  }

  /// V_c into the slot at `base`, `width` consecutive columns per group,
  /// zeros past the sequence and Dv (which may be 0: those loads are under
  /// branches).
  void stageValues(Value t0, Value count, int64_t width, Value base) {
    staged(c.shape.chunk * c.shape.dvTile / width, width,
           [&](Value i) -> StagedGroup {
             auto [t, d] = stagedGroup(i, c.shape.dvTile, width, valuePitch());
             Value col = kb.add(colBaseOffset, toOffset(d));
             Value token = within(t, count);
             Value at = elementAt(row(t0, t), valueStrideOffset, col);
             // Column col + e is in Dv; with aligned rows Dv is a multiple of
             // the width, so the first column decides for the group.
             auto inColumns = [&](int64_t e) {
               return arith::AndIOp::create(
                          b, loc, token,
                          kb.ult(kb.add(col, offset(e)), dvOffset))
                   .getResult();
             };
             SmallVector<Value, 8> values = loadElements(
                 vBuf, valueBase, at, width, valuesAligned, inColumns);
             // φ(0) need not be 0: the elements past the sequence and Dv
             // stay zeros.
             if (c.v.map)
               for (auto [e, x] : llvm::enumerate(values))
                 x = kb.select(inColumns(e), featureOf(x, c.v), kb.fconst(0.0));
             if (width > 1)
               prefetchGroup(vBuf, valueBase, at, t, kb.eq(d, zero),
                             kb.ult(col, dvOffset), valueStride);
             return {{values, vs, valueIndex(base, t, d)}};
           });
  }

  /// Calls `fn(i)` for the groups 0 … `groups` - 1 this thread handles:
  /// tid, tid + T, ... A loop, unless `unrollStaging`: the addresses of
  /// unrolled groups are loop-invariant in the chunk loop, and hoisting them
  /// keeps registers live across it (ptxas 13, sm_90a: the F = 64 chunk
  /// loop 127 instead of 112, the F = 128 one 124 instead of 119, no spills
  /// and the same blocks per SM); unrolled, the groups' shared loads and
  /// copies go without a loop counter, compare and branch each and may
  /// overlap.
  void forEachGroup(int64_t groups, function_ref<void(Value)> fn) {
    int64_t threads = c.threads();
    if (!c.unrollStaging) {
      kb.forLoop(tid, kb.idx(groups), kb.idx(threads), fn);
      return;
    }
    // Unrolled: group tid + j·T for each j, the last guarded where the
    // threads do not divide the groups.
    for (int64_t j = 0; j * threads < groups; ++j) {
      Value i = j ? kb.add(tid, kb.idx(j * threads)) : tid;
      if ((j + 1) * threads <= groups)
        fn(i);
      else
        kb.ifThen(kb.ult(i, kb.idx(groups)), [&] { fn(i); });
    }
  }

  /// Calls `fn(t, f, valid)` for this thread's groups of `width` features of
  /// the chunk's feature tiles: token t (valid: t < count), features f ….
  void forEachFeatureGroup(int64_t width,
                           function_ref<void(Value, Value, Value)> fn,
                           Value count) {
    forEachGroup(c.shape.chunk * c.features / width, [&](Value i) {
      auto [t, f] = stagedGroup(i, c.features, width, featurePitch());
      fn(t, f, within(t, count));
    });
  }

  /// Calls `fn(t, d, col)` for this thread's groups of `vectorWidth()`
  /// columns of the chunk's value tile: token t, tile columns d …, value
  /// columns col … (an offset).
  void forEachValueGroup(function_ref<void(Value, Value, Value)> fn) {
    int64_t width = vectorWidth();
    forEachGroup(c.shape.chunk * c.shape.dvTile / width, [&](Value i) {
      auto [t, d] = stagedGroup(i, c.shape.dvTile, width, valuePitch());
      fn(t, d, kb.add(colBaseOffset, toOffset(d)));
    });
  }

  /// The row pitch of the staged φ(Q_c), φ(K_c) and V_c tiles in elements,
  /// 0 where they are swizzled (wgmma) rather than padded.
  int64_t featurePitch() const { return c.wgmma ? 0 : c.ldF(); }
  int64_t valuePitch() const { return c.wgmmaState ? 0 : c.ldV(); }

  /// Row and first column of group `i` of `width` elements of a staged tile
  /// `columns` wide, rows `pitch` elements apart (0: swizzled). A
  /// quarter-warp phase of 16-byte stores or copies is eight consecutive
  /// groups. Taken row by row, a phase whose groups span two rows hits a
  /// bank twice where the rows' 16-byte units repeat modulo 8 (unit u·r + g
  /// of row r and group g, u the pitch in 16-byte units): whenever a row is
  /// not a multiple of eight groups (F = 80: ten; DT = 32 in 16-bit data:
  /// four). With u odd, as the padding for ldmatrix makes it, the eight
  /// rows of a block at one group are distinct modulo 8, so the groups go
  /// column by column through each block of eight rows instead (chunks are
  /// 16, 32 or 64 rows: whole blocks).
  std::pair<Value, Value> stagedGroup(Value i, int64_t columns, int64_t width,
                                      int64_t pitch) {
    int64_t perRow = columns / width;
    bool byColumn = pitch && width * c.dataBytes() == 16 && perRow % 8 != 0 &&
                    pitch * c.dataBytes() % 32 == 16;
    if (!byColumn)
      return {kb.divU(i, kb.idx(perRow)),
              kb.mul(kb.remU(i, kb.idx(perRow)), kb.idx(width))};
    Value block = kb.divU(i, kb.idx(8 * perRow));
    Value inBlock = kb.remU(i, kb.idx(8 * perRow));
    return {kb.add(kb.mul(block, kb.idx(8)), kb.remU(inBlock, kb.idx(8))),
            kb.mul(kb.divU(inBlock, kb.idx(8)), kb.idx(width))};
  }

  /// cp.async of one 16-byte group of `src` at `at` to `dst` at `slot`,
  /// reading `srcElements` of its elements (all or none) and zero-filling
  /// the rest; L1 is bypassed (the data is read once).
  void copyGroup(Value src, Value index, Value dst, Value slot,
                 Value srcElements) {
    kb.asyncCopy(src, index, dst, slot, vectorWidth(), srcElements,
                 /*bypassL1=*/true);
  }

  /// φ(Q_c) (when staged) and φ(K_c) of the chunk at `t0` into the slot at
  /// `base` by async copies of rows that are 16-byte aligned. Tokens past
  /// the sequence address token 0 of the chunk and read nothing.
  void copyFeatures(Value t0, Value count, Value base) {
    int64_t width = vectorWidth();
    Value none = kb.idx(0), all = kb.idx(width);
    forEachFeatureGroup(
        width,
        [&](Value t, Value f, Value valid) {
          Value offsetAt = elementAt(row(t0, kb.select(valid, t, kb.idx(0))),
                                     featureStrideOffset, toOffset(f));
          Value at = toIndex(featureBase, offsetAt);
          Value slot = featureIndex(base, t, f);
          Value elements = kb.select(valid, all, none);
          Value rowStart = kb.eq(f, zero);
          for (auto [staged, global] :
               {std::pair(qs, qBuf), std::pair(ks, kBuf)}) {
            if (!staged)
              continue;
            copyGroup(global, at, staged, slot, elements);
            prefetchGroup(global, featureBase, offsetAt, t, rowStart, Value(),
                          featureStride);
          }
        },
        count);
  }

  /// V_c of the chunk at `t0` into the slot at `base` by async copies (rows
  /// 16-byte aligned and Dv a multiple of the group, so a group is wholly in
  /// Dv or out). Groups past the sequence or Dv address element 0 and read
  /// nothing.
  void copyValues(Value t0, Value count, Value base) {
    Value none = kb.idx(0), all = kb.idx(vectorWidth());
    forEachValueGroup([&](Value t, Value d, Value col) {
      Value exists = arith::AndIOp::create(b, loc, within(t, count),
                                           kb.ult(col, dvOffset));
      Value offsetAt = elementAt(row(t0, t), valueStrideOffset, col);
      Value at = kb.select(exists, toIndex(valueBase, offsetAt), none);
      copyGroup(vBuf, at, vs, valueIndex(base, t, d),
                kb.select(exists, all, none));
      prefetchGroup(vBuf, valueBase, offsetAt, t, kb.eq(d, zero),
                    kb.ult(col, dvOffset), valueStride);
    });
  }

  /// The feature of `x`, in f32 and not yet rounded: every caller stores it
  /// into a tile of the data type, which the features have, and that store
  /// rounds it (once, as rounding it here first would too): to 16 bits, or
  /// with tf32 to tf32. The rounding to 11 significant bits also makes
  /// exp's approximation invisible but in the last place, next to a tie.
  /// tf32x3 keeps f32 features (their low parts are products too), and
  /// with them math.exp.
  Value featureOf(Value x, const FeatureSource &source) {
    return kb.mapFeature(x, source,
                         c.splitTF32 ? KernelBuilder::Exp::Accurate
                                     : KernelBuilder::Exp::Approximate);
  }

  /// The features of a group of 16-bit elements computed on the group, two
  /// elements an instruction (bf16x2, f16x2), or null where the elementwise
  /// path must do it (f32 data, no map to apply, features of another type,
  /// single elements). A group that is not `valid` was zero-filled by its
  /// copy and its features are zeros.
  /// elu + 1 is max(x, 0) + exp(min(x, 0)): for x > 0, x + 1; otherwise
  /// exp(x) + 0. Only exp leaves the data type: min(x, 0) is extended to f32,
  /// exp'd by `exp2Approx` and rounded back, then the packed add rounds
  /// x + 1 (exp(0) is 1 exactly) or adds the zero, so every feature is
  /// rounded once, as the elementwise path rounds it; NaN stays NaN
  /// (minimum and maximum propagate it). relu is max(x, 0) alone. Zeros
  /// need no select: relu keeps them; elu takes min(x, −∞) for them, whose
  /// exp is +0, so one select a group picks the bound of the minimum where
  /// one a pair picked the features.
  Value packedFeatures(Value group, const FeatureSource &source, Value valid) {
    auto type = cast<VectorType>(group.getType());
    if (c.dataType.getIntOrFloatBitWidth() != 16 || !source.map ||
        (*source.map != FeatureMapKind::Relu &&
         *source.map != FeatureMapKind::Elu) ||
        source.featureType != c.dataType || type.getNumElements() % 2 != 0)
      return Value();
    Value zeros = splatLike(group, 0.0);
    Value positive = arith::MaximumFOp::create(b, loc, group, zeros);
    if (*source.map == FeatureMapKind::Relu)
      return positive;
    Value below = splatLike(group, -std::numeric_limits<double>::infinity());
    Value negative = arith::MinimumFOp::create(b, loc, group,
                                               kb.select(valid, zeros, below));
    auto wide = VectorType::get(type.getShape(), b.getF32Type());
    SmallVector<Value> exps;
    for (Value x : widen(negative))
      exps.push_back(kb.exp(x, KernelBuilder::Exp::Approximate));
    Value exp = arith::TruncFOp::create(
        b, loc, type, vector::FromElementsOp::create(b, loc, wide, exps));
    return arith::AddFOp::create(b, loc, exp, positive);
  }

  /// A constant of the vector type of `vector` whose elements are `value`.
  Value splatLike(Value vector, double value) {
    auto type = cast<VectorType>(vector.getType());
    return arith::ConstantOp::create(
        b, loc, type,
        DenseElementsAttr::get(type,
                               b.getFloatAttr(type.getElementType(), value)));
  }

  /// The elements of a vector of an even number of 16-bit floats, in f32.
  /// bf16 is the high half of an f32, so a pair held in 32 bits widens by a
  /// shift and a mask, one instruction each (extf takes two: ptxas extracts
  /// the half, then shifts it).
  SmallVector<Value> widen(Value group) {
    auto type = cast<VectorType>(group.getType());
    SmallVector<Value> elements;
    if (!type.getElementType().isBF16()) {
      auto wide = VectorType::get(type.getShape(), b.getF32Type());
      Value x = arith::ExtFOp::create(b, loc, wide, group);
      for (int64_t e = 0; e < type.getNumElements(); ++e)
        elements.push_back(
            vector::ExtractOp::create(b, loc, x, ArrayRef<int64_t>{e}));
      return elements;
    }
    Type i32 = b.getI32Type();
    Value pairs = vector::BitCastOp::create(
        b, loc, VectorType::get({type.getNumElements() / 2}, i32), group);
    Value sixteen = arith::ConstantIntOp::create(b, loc, i32, 16);
    Value high = arith::ConstantIntOp::create(b, loc, i32, 0xffff0000);
    for (int64_t p = 0; p < type.getNumElements() / 2; ++p) {
      Value pair =
          vector::ExtractOp::create(b, loc, pairs, ArrayRef<int64_t>{p});
      // Little-endian: element 2p is the pair's low half.
      for (Value bits :
           {arith::ShLIOp::create(b, loc, pair, sixteen).getResult(),
            arith::AndIOp::create(b, loc, pair, high).getResult()})
        elements.push_back(
            arith::BitcastOp::create(b, loc, b.getF32Type(), bits));
    }
    return elements;
  }

  /// Replaces the group of staged elements at `at` of `buffer` by their
  /// features, zeros where not `valid` (a group its copy zero-filled),
  /// rounded as staging rounds them (`storeShared`).
  void mapInPlace(Value buffer, Value at, Value valid,
                  const FeatureSource &source) {
    auto type = VectorType::get({vectorWidth()}, c.dataType);
    Value group =
        vector::LoadOp::create(b, loc, type, buffer, ValueRange{at},
                               /*nontemporal=*/false, llvm::MaybeAlign(16));
    if (Value features = packedFeatures(group, source, valid)) {
      vector::StoreOp::create(b, loc, features, buffer, ValueRange{at},
                              /*nontemporal=*/false, llvm::MaybeAlign(16));
      return;
    }
    SmallVector<Value> features;
    for (int64_t e = 0; e < vectorWidth(); ++e) {
      Value x = toState(
          vector::ExtractOp::create(b, loc, group, ArrayRef<int64_t>{e}));
      features.push_back(
          kb.select(valid, featureOf(x, source), kb.fconst(0.0)));
    }
    storeShared(features, buffer, at);
  }

  /// Elements `at` … `at` + `width` - 1 of a global buffer in the state
  /// type: one 16-byte load, or with `aligned` one where it holds and
  /// element by element where not. `valid(e)` (when it returns a value) says
  /// whether element e exists; zeros replace those that do not, and their
  /// loads are skipped.
  SmallVector<Value, 8> loadElements(Value buffer, Value base, Value at,
                                     int64_t width, Value aligned,
                                     function_ref<Value(int64_t)> valid) {
    auto loadOne = [&](int64_t e) {
      Value index = toIndex(base, kb.add(at, offset(e)));
      if (Value exists = valid(e))
        return kb.loadIf(exists, buffer, index);
      return kb.load(buffer, index);
    };
    if (width == 1)
      return {loadOne(0)};
    auto vectorLoad = [&] {
      auto type = VectorType::get({width}, c.dataType);
      Value vector = vector::LoadOp::create(
          b, loc, type, buffer, ValueRange{toIndex(base, at)},
          /*nontemporal=*/false, llvm::MaybeAlign(16));
      SmallVector<Value, 8> elements;
      for (int64_t e = 0; e < width; ++e)
        elements.push_back(toState(
            vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{e})));
      return elements;
    };
    auto yield = [&](ArrayRef<Value> values) {
      scf::YieldOp::create(b, loc, ValueRange(values));
    };
    // A vector load of elements that may not exist, under a branch.
    auto guardedVectorLoad = [&]() -> SmallVector<Value, 8> {
      Value exists = valid(0);
      if (!exists)
        return vectorLoad();
      auto branch = scf::IfOp::create(
          b, loc, exists, [&](OpBuilder &, Location) { yield(vectorLoad()); },
          [&](OpBuilder &, Location) {
            yield(SmallVector<Value>(width, kb.fconst(0.0)));
          });
      return SmallVector<Value, 8>(branch.getResults());
    };
    if (!aligned)
      return guardedVectorLoad();
    // The element-wise loads are conditional, so the vector load cannot be
    // replaced by them.
    auto branch = scf::IfOp::create(
        b, loc, aligned,
        [&](OpBuilder &, Location) { yield(guardedVectorLoad()); },
        [&](OpBuilder &, Location) {
          SmallVector<Value> elements;
          for (int64_t e = 0; e < width; ++e)
            elements.push_back(loadOne(e));
          yield(elements);
        });
    return SmallVector<Value, 8>(branch.getResults());
  }

  /// The row of token t of the chunk at `t0` over the lowest row of the
  /// block's positions, an offset: t0 - begin + t, or end - 1 - (t0 + t) in a
  /// reverse scan. Only tokens of the chunk are read or written, but rows
  /// are computed for all C: past the end, forward rows stay below the
  /// limit the launch checked, reverse ones wrap (and are not used).
  Value row(Value t0, Value t) {
    if (c.reverse)
      return kb.sub(toOffset(kb.sub(kb.sub(end, kb.idx(1)), t0)), toOffset(t));
    return kb.add(toOffset(kb.sub(t0, begin)), toOffset(t));
  }
  /// The first row of this warp's row tile, and its group in the tile (with
  /// one warp per row tile: the warp's, and 0).
  Value warpRow() {
    Value tile =
        c.shape.groups == 1 ? warp : kb.remU(warp, kb.idx(c.shape.rowTiles()));
    return kb.mul(tile, kb.idx(16));
  }
  /// The rows g and g + 8 of this warp's row tile that this lane's
  /// accumulators hold.
  std::pair<Value, Value> laneRows() {
    Value lo = kb.add(warpRow(), mb.group);
    return {lo, kb.add(lo, kb.idx(8))};
  }
  Value warpGroup() {
    return c.shape.groups == 1 ? zero
                               : kb.divU(warp, kb.idx(c.shape.rowTiles()));
  }
  /// `warpGroup()` as lane 0 of the warp has it (a shuffle), which ptxas
  /// knows to be the same in every lane: the wgmma descriptors made from it
  /// then go to uniform registers rather than two of each thread's.
  Value uniformWarpGroup() {
    if (c.shape.groups == 1)
      return zero;
    Type i32 = b.getI32Type();
    Value group = arith::IndexCastUIOp::create(b, loc, i32, warpGroup());
    Value lane0 = arith::ConstantIntOp::create(b, loc, i32, 0);
    Value width = arith::ConstantIntOp::create(b, loc, i32, 32);
    Value shuffled = gpu::ShuffleOp::create(b, loc, group, lane0, width,
                                            gpu::ShuffleMode::IDX)
                         .getShuffleResult();
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), shuffled);
  }
  int64_t nTilesPerWarp() { return c.shape.dvTile / 8 / c.shape.warps; }
  bool pairedTiles() { return nTilesPerWarp() % 2 == 0; }
  /// The j-th state tile of this warp in feature tile `fi`: value tiles
  /// 2(warp + pW) and 2(warp + pW) + 1 for j = 2p, 2p + 1 when they pair
  /// up, warp + jW otherwise.
  std::pair<Value, Value> stateTileAt(int64_t fi, int64_t j) {
    int64_t w = c.shape.warps;
    Value tile =
        pairedTiles()
            ? kb.add(kb.mul(kb.add(warp, kb.idx(j / 2 * w)), kb.idx(2)),
                     kb.idx(j % 2))
            : kb.add(warp, kb.idx(j * w));
    return {kb.idx(16 * fi), kb.mul(tile, kb.idx(8))};
  }
  /// `acc` (4 values per key or value tile) plus the products of the A
  /// fragment at (r0, k0) and the `count` B tiles from (k0, n0) on.
  SmallVector<Value> products(const SharedMatrix &a, const SharedMatrix &bm,
                              Value r0, Value k0, Value n0, int64_t count,
                              ArrayRef<Value> acc) {
    return products(mb.fragmentA(a, r0, k0), bm, k0, n0, count, acc);
  }
  /// The same with the A fragment in registers.
  SmallVector<Value> products(ArrayRef<Value> aRegs, const SharedMatrix &bm,
                              Value k0, Value n0, int64_t count,
                              ArrayRef<Value> acc) {
    SmallVector<Value> bRegs = mb.fragmentsB(bm, k0, n0, count);
    SmallVector<Value> next;
    for (int64_t p = 0; p < count; ++p)
      llvm::append_range(next,
                         mb.mma(aRegs, ArrayRef<Value>(bRegs).slice(2 * p, 2),
                                acc.slice(4 * p, 4)));
    return next;
  }
  Value toState(Value v) { return convertFloat(b, loc, v, c.stateType); }
  Value loadShared(Value buffer, Value index) {
    return memref::LoadOp::create(b, loc, buffer, ValueRange{index});
  }
  void storeShared(Value value, Value buffer, Value index) {
    storeShared(ArrayRef<Value>{value}, buffer, index);
  }
  /// Stores consecutive elements from `index` on: one store, aligned to its
  /// size when there are several (a power of two of them).
  void storeShared(ArrayRef<Value> values, Value buffer, Value index) {
    Type type = cast<MemRefType>(buffer.getType()).getElementType();
    auto vectorOf = [&](Type element) {
      return VectorType::get({static_cast<int64_t>(values.size())}, element);
    };
    Value vector;
    if (values.size() > 1 && type.getIntOrFloatBitWidth() == 16 &&
        llvm::all_of(values, [](Value v) { return v.getType().isF32(); })) {
      // Several f32 values for a 16-bit tile are rounded as one vector, which
      // NVPTX converts two at a time (cvt.rn.bf16x2.f32, cvt.rn.f16x2.f32).
      vector = arith::TruncFOp::create(
          b, loc, vectorOf(type),
          vector::FromElementsOp::create(b, loc, vectorOf(b.getF32Type()),
                                         values));
    } else {
      SmallVector<Value> elements;
      for (Value value : values) {
        value = convertFloat(b, loc, value, type);
        // The f32 operands of tf32 products, rounded to nearest (ties away)
        // once here rather than truncated by the tensor cores.
        if (c.dataType.isF32() && !c.splitTF32 && buffer != zs &&
            buffer != cs) {
          Value bits = NVVM::ConvertFloatToTF32Op::create(
              b, loc, b.getI32Type(), value, NVVM::FPRoundingMode::RNA);
          value = arith::BitcastOp::create(b, loc, type, bits);
        }
        elements.push_back(value);
      }
      if (elements.size() == 1) {
        memref::StoreOp::create(b, loc, elements[0], buffer, ValueRange{index});
        return;
      }
      vector = vector::FromElementsOp::create(b, loc, vectorOf(type), elements);
    }
    vector::StoreOp::create(
        b, loc, vector, buffer, ValueRange{index},
        /*nontemporal=*/false,
        llvm::MaybeAlign(values.size() * type.getIntOrFloatBitWidth() / 8));
  }
  // The shared tiles as matrices of the products.
  SharedMatrix queryTile() {
    return {qs, c.ldF(), /*rowMajor=*/true, featureSlot, swizzleRows()};
  }
  /// φ(K_c)ᵀ (F x C), stored as φ(K_c).
  SharedMatrix keysTransposed() {
    return {ks, c.ldF(), /*rowMajor=*/false, featureSlot, swizzleRows()};
  }
  int64_t swizzleRows() const { return c.wgmma ? c.shape.chunk : 0; }

  /// The element of token `row`, feature `col` of a feature tile whose slot
  /// starts at `slotBase`: padded rows, or swizzled for wgmma.
  Value featureIndex(Value slotBase, Value row, Value col) {
    if (c.wgmma)
      return kb.add(slotBase, swizzledIndex(kb, c.shape.chunk, row, col));
    return kb.add(slotBase, kb.add(kb.mul(row, ldF), col));
  }

  /// The scores of keys [key0, key0 + keys) for all C rows of the chunk
  /// with wgmma: the warpgroup of this warp (warps 4i..4i+3, row tiles 0..3
  /// of key group i) multiplies φ(Q_c) by those rows of φ(K_c), both
  /// K-major in the 128-byte swizzle, F / 16 steps of m64n<keys>k16 into
  /// f32. Returns this thread's keys / 2 accumulators: register 4j + e is
  /// element e of key tile j in mma.sync's accumulator layout (rows g and
  /// g + 8 of the warp's row tile, columns 2t and 2t + 1).
  SmallVector<Value> wgmmaScores(Value key0, int64_t keys) {
    Value queries = tileAddress(qs, featureSlot);
    Value keyRows = kb.add(tileAddress(ks, featureSlot),
                           kb.mul(key0, kb.idx(kSwizzleBytes)));
    uint64_t layout = kMajorBits();
    auto accType = wgmmaAccumulatorType(keys);
    Value acc = LLVM::UndefOp::create(b, loc, accType);
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t f0 = 0; f0 < c.features; f0 += 16) {
      int64_t offset = kMajorOffset(f0);
      acc = wgmma(acc, descriptor(queries, offset, layout),
                  descriptor(keyRows, offset, layout), keys,
                  /*accumulate=*/f0 != 0, NVVM::MMALayout::row,
                  NVVM::MMALayout::col);
    }
    return waitForWgmma(acc, keys);
  }

  /// O_c = P V_c + φ(Q_c) S by wgmma (`wgmmaOutputs`) for the warpgroup's
  /// group of the value tile, N = DT / G columns from column0: m64nNk16
  /// steps over the chunk's keys, the masked scores (K-major, or with
  /// `scoresInRegisters()` this warp's A fragments `scoreFragments`, four
  /// registers per 16 keys) by V_c (MN-major, as the state update takes
  /// it), then over the features,
  /// φ(Q_c) (K-major, as the scores take it) by the state tile (MN-major,
  /// F rows of 128-byte blocks), all in the 128-byte swizzle, one
  /// accumulator. The MN-major operands start column0 into their blocks:
  /// the swizzle is of the absolute address, so a start within a 128-byte
  /// row reads the columns from there on. Returns this thread's N / 2
  /// accumulators: register 4j + e is element e of the group's value tile
  /// j in mma.sync's accumulator layout (rows g and g + 8 of the warp's row
  /// tile, columns 2t and 2t + 1).
  SmallVector<Value> wgmmaOutputs(int64_t first, int64_t columns,
                                  ArrayRef<Value> scoreFragments,
                                  function_ref<void()> alongside) {
    int64_t share = c.shape.dvTile / c.shape.groups;
    constexpr int64_t perRow = kSwizzleBytes / 2;
    uint64_t kMajor = kMajorBits();
    // Column column0 of a tile of `rows` rows: its block, then its bytes.
    Value column0 =
        kb.add(kb.mul(uniformWarpGroup(), kb.idx(share)), kb.idx(first));
    auto columnStart = [&](Value buffer, Value slot, int64_t rows) {
      Value block = kb.divU(column0, kb.idx(perRow));
      Value within = kb.remU(column0, kb.idx(perRow));
      return kb.add(tileAddress(buffer, slot),
                    kb.add(kb.mul(block, kb.idx(rows * kSwizzleBytes)),
                           kb.mul(within, kb.idx(c.dataBytes()))));
    };
    Value valuesAt = columnStart(vs, valueSlot, c.shape.chunk);
    Value queriesAt = tileAddress(qs, featureSlot);
    Value stateAt = columnStart(ss, zero, c.features);
    Value acc = LLVM::UndefOp::create(b, loc, wgmmaAccumulatorType(columns));
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t t = 0; t < c.shape.chunk; t += 16) {
      Value values =
          descriptor(valuesAt, t * kSwizzleBytes, mnMajorBits(c.shape.chunk));
      acc =
          ps ? wgmma(acc,
                     descriptor(tileAddress(ps, zero), kMajorOffset(t), kMajor),
                     values, columns, /*accumulate=*/t != 0,
                     NVVM::MMALayout::row, NVVM::MMALayout::row)
             : wgmmaRegisterA(acc, scoreFragments.slice(4 * (t / 16), 4),
                              values, columns, /*accumulate=*/t != 0);
    }
    for (int64_t f0 = 0; f0 < c.features; f0 += 16)
      acc = wgmma(acc, descriptor(queriesAt, kMajorOffset(f0), kMajor),
                  descriptor(stateAt, f0 * kSwizzleBytes, mnMajorBits(c.features)),
                  columns, /*accumulate=*/true, NVVM::MMALayout::row,
                  NVVM::MMALayout::row);
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    if (alongside)
      alongside();
    return waitForWgmma(acc, columns, /*commit=*/false,
                        /*pending=*/alongside ? 1 : 0);
  }

  /// This warp's warpgroup i's part of the state with `wgmmaState`: feature
  /// block i mod (F / 64), and the first value column of its share
  /// i div (F / 64) of the value tile.
  std::pair<Value, Value> wgmmaStateShare() {
    Value group = kb.divU(warp, kb.idx(4));
    Value blocks = kb.idx(c.features / 64);
    return {kb.remU(group, blocks),
            kb.mul(kb.divU(group, blocks), kb.idx(c.stateColumns()))};
  }
  /// The first feature and value column of this warp's state fragments
  /// with `wgmmaState`: rows 16(w mod 4).. of the warpgroup's feature block.
  std::pair<Value, Value> wgmmaStateOrigin() {
    auto [block, column0] = wgmmaStateShare();
    Value row = kb.add(kb.mul(block, kb.idx(64)),
                       kb.mul(kb.remU(warp, kb.idx(4)), kb.idx(16)));
    return {row, column0};
  }

  /// The shared-memory address of the slot at `slot` of the tile `buffer`.
  Value tileAddress(Value buffer, Value slot) {
    return kb.add(kb.pointerOf(buffer), kb.mul(slot, kb.idx(c.dataBytes())));
  }
  /// The bits of a wgmma descriptor above its start address for the
  /// 128-byte swizzle: leading and stride byte offsets >> 4 in bits 16-29
  /// and 32-45, the swizzle mode in 62-63.
  static uint64_t swizzledDescriptorBits(int64_t leading, int64_t stride) {
    return uint64_t(leading >> 4) << 16 | uint64_t(stride >> 4) << 32 |
           uint64_t(1) << 62;
  }
  /// K-major tiles (φ(Q_c), φ(K_c), the scores): the leading byte offset is
  /// unused (16); the stride byte offset is 8 rows of 128 bytes.
  static uint64_t kMajorBits() {
    return swizzledDescriptorBits(16, 8 * kSwizzleBytes);
  }
  /// MN-major tiles of `rows` rows (V_c, the state): 8 rows 128 bytes apart,
  /// the next 8 (stride byte offset) 1024 bytes on, the next 64 columns
  /// (leading byte offset) a block of the tile on.
  static uint64_t mnMajorBits(int64_t rows) {
    return swizzledDescriptorBits(rows * kSwizzleBytes, 8 * kSwizzleBytes);
  }
  /// The byte of element k of row 0 of a K-major tile of chunk rows: its
  /// 64-column block, then its bytes in the row.
  int64_t kMajorOffset(int64_t k) {
    constexpr int64_t perRow = kSwizzleBytes / 2;
    return k / perRow * c.shape.chunk * kSwizzleBytes + k % perRow * c.dataBytes();
  }
  /// A wgmma descriptor: (address + offset) >> 4 in bits 0-13 and `high`.
  /// The shared address and `offset` are multiples of 16 and their sum is
  /// below 2^18, so the field is address >> 4 plus offset >> 4 without a
  /// carry out of it: the low word is one add of a constant to address >> 4,
  /// which the steps of a product share, and the high word a constant (six
  /// 64-bit operations a descriptor before, with the offset added to the
  /// address).
  Value descriptor(Value address, int64_t offset, uint64_t high) {
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    auto constant = [&](Type type, uint64_t value) {
      return arith::ConstantIntOp::create(b, loc, type,
                                          static_cast<int64_t>(value));
    };
    Value field = arith::ShRUIOp::create(
        b, loc, arith::IndexCastUIOp::create(b, loc, i32, address),
        constant(i32, 4));
    Value low = arith::AddIOp::create(
        b, loc, field, constant(i32, (offset >> 4) + (high & 0xffffffff)));
    Value highWord = constant(i64, high & ~uint64_t(0xffffffff));
    return arith::OrIOp::create(
        b, loc, arith::ExtUIOp::create(b, loc, i64, low), highWord);
  }
  /// The struct of the n / 2 f32 accumulators of an m64nNk16 wgmma.
  Type wgmmaAccumulatorType(int64_t n) {
    return LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(n / 2, b.getF32Type()));
  }
  /// acc (+)= the m64nNk16 product of the operands of descriptors a and b.
  Value wgmma(Value acc, Value a, Value bDesc, int64_t n, bool accumulate,
              NVVM::MMALayout layoutA, NVVM::MMALayout layoutB) {
    auto type =
        c.dataType.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
    return NVVM::WgmmaMmaAsyncOp::create(
        b, loc, acc.getType(), acc, a, bDesc,
        NVVM::MMAShapeAttr::get(b.getContext(), 64, n, 16), type, type,
        NVVM::WGMMATypes::f32,
        accumulate ? NVVM::WGMMAScaleOut::one : NVVM::WGMMAScaleOut::zero,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, layoutA, layoutB,
        /*satfinite=*/nullptr);
  }
  /// acc (+)= the m64nNk16 product of A in this thread's registers `aRegs`
  /// (mma.sync's m16n8k16 A fragment of its warp's 16 rows) and B MN-major
  /// from descriptor `bDesc`, by inline PTX (`wgmmaRegisterAAsm`). Its
  /// accumulators are acc's, extracted for the asm's operands: a chain of
  /// such wgmmas passes the same registers on, which the wait after the
  /// group completes.
  Value wgmmaRegisterA(Value acc, ArrayRef<Value> aRegs, Value bDesc, int64_t n,
                       bool accumulate) {
    Type i32 = b.getI32Type();
    SmallVector<Value> operands;
    for (Value reg : aRegs) {
      if (reg.getType() != i32)
        reg = vector::ExtractOp::create(
            b, loc,
            vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), reg),
            ArrayRef<int64_t>{0});
      operands.push_back(reg);
    }
    operands.push_back(bDesc);
    operands.push_back(
        arith::ConstantIntOp::create(b, loc, i32, accumulate ? 1 : 0));
    for (int64_t i = 0; i < n / 2; ++i)
      operands.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
    return LLVM::InlineAsmOp::create(
               b, loc, acc.getType(), operands,
               wgmmaRegisterAAsm(n, c.dataType.isBF16()),
               wgmmaRegisterAConstraints(n), /*has_side_effects=*/true,
               /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
               /*asm_dialect=*/LLVM::AsmDialectAttr(),
               /*operand_attrs=*/ArrayAttr())
        .getResult(0);
  }
  /// Commits the wgmmas issued since the last commit (`commit`), waits for
  /// every group but the last `pending` (those committed after acc's) and
  /// returns the n / 2 accumulators of `acc`.
  SmallVector<Value> waitForWgmma(Value acc, int64_t n, bool commit = true,
                                  int64_t pending = 0) {
    if (commit)
      NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, pending);
    SmallVector<Value> values;
    for (int64_t i = 0; i < n / 2; ++i)
      values.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
    return values;
  }
  SharedMatrix valueTile() {
    return {vs,
            c.ldV(),
            /*rowMajor=*/true,
            valueSlot,
            c.wgmmaState ? c.shape.chunk : 0,
            c.shape.valueSwizzle};
  }
  /// The element of token `row`, column `col` of a V_c tile whose slot
  /// starts at `slotBase`: padded rows, or swizzled with `wgmmaState` or
  /// `valueSwizzle`.
  Value valueIndex(Value slotBase, Value row, Value col) {
    SharedMatrix slot = valueTile();
    slot.base = slotBase;
    return sharedIndex(kb, slot, row, col);
  }
  /// Whether `outputs` takes wgmma: `wgmmaOutputs`, in the kernels with
  /// scores (the chunk loops; not the readout).
  bool outputsByWgmma() const { return c.wgmmaOutputs && hasScores; }
  /// The masked scores: padded rows, or K-major in the 128-byte swizzle
  /// for `wgmmaOutputs`.
  SharedMatrix scoreTile() {
    return {ps, c.ldC(), /*rowMajor=*/true, zero,
            c.wgmmaOutputs ? c.shape.chunk : 0};
  }
  /// Whether the state's tile is in the 128-byte swizzle: in the chunk
  /// loops with `wgmmaOutputs` (which have a scores tile), MN-major for the
  /// product φ(Q_c) S, and with `swizzledState`.
  bool stateSwizzled() const { return outputsByWgmma() || c.swizzledState; }
  /// The state rounded to the data type: padded (or unit-swizzled) rows, or
  /// (`stateSwizzled`) feature rows of 128-byte swizzled blocks of 64
  /// columns, as V_c's token rows.
  SharedMatrix stateTile() {
    if (stateSwizzled())
      return {ss, c.ldS(), /*rowMajor=*/true, zero, c.features};
    return {ss,   c.ldS(),           /*rowMajor=*/true,
            zero, /*swizzleRows=*/0, c.shape.stateSwizzle};
  }

  const ChunkedScanConfig &c;
  int64_t stageBatch;
  /// While staging with prefetches: `tokensAhead` of the chunk.
  Value aheadTokens;
  OpBuilder &b;
  Location loc;
  KernelBuilder kb;
  MmaBuilder mb;
  PhaseClocks phases;
  Value qBuf, kBuf, vBuf, n, dv, batch, colBase;
  Value qs, ks, vs, ps, ss, zs, rs, cs;
  /// With bulk copies: the mbarriers, one per slot (i64).
  Value barriers;
  Value tid, warp, cF, ldF, zero;
  /// The type of global offsets (`toOffset`); Dv and the block's first
  /// value column in it.
  Type offsetType;
  Value dvOffset, colBaseOffset;
  /// The block's scan positions [begin, end), and the first elements of
  /// their lowest row in q and k, and in v and O: offsets count from there.
  Value begin, end, featureBase, valueBase;
  /// Elements from one token's row to the next in q and k (rowFeatures(),
  /// or H times that token-major), and in v and O (Dv, or H·Dv), as indices
  /// and as offsets.
  Value featureStride, valueStride, featureStrideOffset, valueStrideOffset;
  /// Whether the kernel computes scores (the chunk loops; ChunkTiles::All).
  bool hasScores;
  /// The first elements of the current slot of the staged tiles.
  Value featureSlot, valueSlot;
  /// Whether the feature rows (φ(Q) and φ(K)) and the value rows can be
  /// read 16 bytes at a time (only with vector loads).
  Value featuresAligned, valuesAligned;
};
} // namespace

/// The first chunk position and the end of the segment `segment` of
/// `perSegment` chunks (scan positions, the end clamped to N).
static std::pair<Value, Value> segmentRange(KernelBuilder &kb,
                                            const ChunkedScanConfig &c, Value n,
                                            Value segment, Value perSegment) {
  Value span = kb.mul(perSegment, kb.idx(c.shape.chunk));
  Value begin = kb.mul(segment, span);
  return {begin, kb.minU(n, kb.add(begin, span))};
}

gpu::GPUFuncOp gpukernels::buildChunkLoop(RewriterBase &rewriter, Location loc,
                                          gpu::GPUModuleOp kernels,
                                          StringRef name,
                                          const ChunkedScanConfig &c,
                                          bool segmented) {
  Type index = rewriter.getIndexType();
  SmallVector<Type> argTypes = {flatBufferType(c.dataType),
                                flatBufferType(c.dataType),
                                flatBufferType(c.dataType)};
  if (segmented || c.hasInit) {
    argTypes.push_back(flatBufferType(c.stateType));
    argTypes.push_back(flatBufferType(c.stateType));
  }
  argTypes.push_back(flatBufferType(c.resultType));
  if (!segmented && c.writesState) {
    argTypes.push_back(flatBufferType(c.stateType));
    argTypes.push_back(flatBufferType(c.stateType));
  }
  argTypes.append({index, index}); // N, Dv
  if (segmented)
    argTypes.append({index, index}); // chunks per segment, segments
  if (c.tokenMajor)
    argTypes.push_back(index); // H
  if (c.phaseClocks)
    argTypes.push_back(flatBufferType(rewriter.getI64Type())); // records
  gpu::GPUFuncOp kernel = createChunkKernel(rewriter, loc, kernels, name,
                                            argTypes, c, ChunkTiles::All);
  if (c.phaseClocks)
    buildPhaseClocksPrinter(rewriter, loc, kernel);
  OpBuilder::InsertionGuard guard(rewriter);
  setInsertionPointToKernelBody(rewriter, kernel);
  ScanKernelArgs a;
  Value perSegment, segments;
  if (segmented) {
    ArrayRef<BlockArgument> args = kernel.getArguments();
    a.q = args[0];
    a.k = args[1];
    a.v = args[2];
    a.s0 = args[3];
    a.z0 = args[4];
    a.o = args[5];
    a.n = args[6];
    a.dv = args[7];
    perSegment = args[8];
    segments = args[9];
  } else {
    a = scanKernelArgs(kernel, c.hasInit, c.writesState);
  }
  Value heads = headsArgument(kernel, c.tokenMajor, c.phaseClocks);
  KernelBuilder kb(rewriter, loc, c.stateType);
  Value batch = kb.blockId(gpu::Dimension::x);
  Value colBase = kb.mul(kb.blockId(gpu::Dimension::y), kb.idx(c.shape.dvTile));
  Value cF = kb.idx(c.features), cT = kb.idx(c.threads());
  Value begin = kb.idx(0), end = a.n;
  // The row of the initial state: the batch element's, or the segment's.
  Value initBase = kb.mul(batch, cF);
  if (segmented) {
    Value segment = kb.blockId(gpu::Dimension::z);
    std::tie(begin, end) = segmentRange(kb, c, a.n, segment, perSegment);
    initBase = kb.mul(kb.add(kb.mul(batch, segments), segment), cF);
  }
  SmallVector<Value> shared(kernel.getWorkgroupAttributions());
  // The state fragments stay in registers: two loads in flight per thread
  // keep ptxas below 180 registers (eight take all 255).
  ChunkEmitter e(rewriter, loc, c, ChunkTiles::All, shared, a.q, a.k, a.v, a.n,
                 a.dv, batch, colBase, begin, end, /*stageBatch=*/2,
                 /*featureColumn=*/Value(), heads);
  PhaseClocks &clocks = e.clocks();
  clocks.start();
  Value tid = e.threadIndex();
  auto stateIndex = [&](Value base, Value f, Value col) {
    return kb.add(kb.mul(kb.add(base, f), a.dv), col);
  };
  bool hasInit = segmented || c.hasInit;

  SmallVector<Value> state =
      hasInit ? e.loadStateTile(a.s0, initBase)
              : SmallVector<Value>(e.stateFragmentSize(), kb.fconst(0.0));
  // z feeds the denominators and the final normalizer. A segment's outputs
  // kernel writes no normalizer (the segment prefix kernel does), so an
  // unnormalized one needs no z; nor does one whose z is unused.
  bool needZ = c.normalized || (!segmented && c.finalNormalizer);
  Value pairs = e.pairedStores(a.o);
  if (needZ)
    kb.forLoop(tid, cF, cT, [&](Value f) {
      Value init =
          hasInit ? kb.load(a.z0, kb.add(initBase, f)) : kb.fconst(0.0);
      memref::StoreOp::create(rewriter, loc, init, e.zShared(), ValueRange{f});
    });

  // The chunk's contribution to the state (and z), for the chunks after it.
  auto update = [&](Value count, ValueRange carried) {
    SmallVector<Value> next = e.accumulateState(carried);
    if (needZ)
      e.addKeySums(count);
    return next;
  };
  // The state after the last chunk is read only when the kernel writes it
  // out: a segment's outputs (pass 3) and a scan whose final state is
  // unused skip that chunk's update, 1 / chunks of the state products (all
  // of them for a sequence of one chunk). The branch is uniform over the
  // block.
  bool lastUpdateRead = !segmented && c.writesState;
  state = e.walkChunks(
      begin, end, state,
      [&](Value t0, Value count, ValueRange carried) -> SmallVector<Value> {
        auto scores = e.scores();
        e.storeStateToShared(carried);
        // wgmma reads the scores and the state the threads just stored.
        if (c.wgmmaOutputs)
          e.fenceForAsyncProxy();
        kb.barrier();
        clocks.mark(Phase::Scores);
        // With the outputs by wgmma (the chunk loops have a scores tile, so
        // `outputs` takes its first block by wgmma and calls `alongside`),
        // the state update's wgmmas go right after theirs and run while O
        // is stored, in every chunk: the last one's update, unused unless
        // the kernel writes the state, costs less than waiting for it apart.
        if (c.wgmmaOutputs) {
          Value pending;
          e.outputs(t0, count, e.denominators(scores.denominators),
                    scores.fragments, a.o, pairs,
                    [&] { pending = e.startStateUpdate(carried); });
          clocks.mark(Phase::Outputs);
          SmallVector<Value> next = e.finishStateUpdate(pending);
          if (needZ)
            e.addKeySums(count);
          clocks.mark(Phase::Update);
          return next;
        }
        e.outputs(t0, count, e.denominators(scores.denominators),
                  scores.fragments, a.o, pairs);
        clocks.mark(Phase::Outputs);
        if (lastUpdateRead) {
          SmallVector<Value> next = update(count, carried);
          clocks.mark(Phase::Update);
          return next;
        }
        auto branch = scf::IfOp::create(
            rewriter, loc, kb.ult(kb.add(t0, count), end),
            [&](OpBuilder &, Location) {
              scf::YieldOp::create(rewriter, loc, update(count, carried));
            },
            [&](OpBuilder &, Location) {
              scf::YieldOp::create(rewriter, loc, carried);
            });
        clocks.mark(Phase::Update);
        return SmallVector<Value>(branch.getResults());
      });
  if (segmented || !c.writesState) {
    clocks.report(e.chunkCount(), recordsOf(kernel));
    return kernel;
  }

  // The final state and normalizer.
  e.forEachStateElement([&](Value f, Value d, unsigned s) {
    Value col = kb.add(colBase, d);
    Value value = state[s];
    kb.ifThen(kb.ult(col, a.dv),
              [&] { kb.store(value, a.s, stateIndex(initBase, f, col)); });
  });
  if (needZ) {
    kb.barrier();
    kb.ifThen(kb.eq(kb.blockId(gpu::Dimension::y), kb.idx(0)), [&] {
      kb.forLoop(tid, cF, cT, [&](Value f) {
        Value z =
            memref::LoadOp::create(rewriter, loc, e.zShared(), ValueRange{f});
        kb.store(z, a.z, kb.add(initBase, f));
      });
    });
  }
  clocks.report(e.chunkCount(), recordsOf(kernel));
  return kernel;
}

gpu::GPUFuncOp gpukernels::buildSegmentStates(RewriterBase &rewriter,
                                              Location loc,
                                              gpu::GPUModuleOp kernels,
                                              StringRef name,
                                              const ChunkedScanConfig &c) {
  Type index = rewriter.getIndexType();
  SmallVector<Type> argTypes = {flatBufferType(c.dataType),
                                flatBufferType(c.dataType),
                                flatBufferType(c.stateType),
                                flatBufferType(c.stateType),
                                index,
                                index,
                                index,
                                index};
  if (c.tokenMajor)
    argTypes.push_back(index); // H
  if (c.phaseClocks)
    argTypes.push_back(flatBufferType(rewriter.getI64Type())); // records
  gpu::GPUFuncOp kernel = createChunkKernel(rewriter, loc, kernels, name,
                                            argTypes, c, ChunkTiles::Keys);
  if (c.phaseClocks)
    buildPhaseClocksPrinter(rewriter, loc, kernel);
  OpBuilder::InsertionGuard guard(rewriter);
  setInsertionPointToKernelBody(rewriter, kernel);
  ArrayRef<BlockArgument> args = kernel.getArguments();
  Value kBuf = args[0], vBuf = args[1], hBuf = args[2], zBuf = args[3],
        n = args[4], dv = args[5], perSegment = args[6], segments = args[7];
  KernelBuilder kb(rewriter, loc, c.stateType);
  Value batch = kb.blockId(gpu::Dimension::x);
  // Grid y: the value tiles, each split over c.featureSplit blocks.
  Value y = kb.blockId(gpu::Dimension::y);
  Value split = kb.idx(c.featureSplit);
  Value valueTile = kb.divU(y, split);
  Value feature0 = kb.mul(kb.remU(y, split), kb.idx(c.features));
  Value colBase = kb.mul(valueTile, kb.idx(c.shape.dvTile));
  Value segment = kb.blockId(gpu::Dimension::z);
  // The first value tile's blocks also sum the keys (of their features).
  Value keyBlock = kb.eq(valueTile, kb.idx(0));
  auto [begin, end] = segmentRange(kb, c, n, segment, perSegment);
  SmallVector<Value> shared(kernel.getWorkgroupAttributions());
  ChunkEmitter e(rewriter, loc, c, ChunkTiles::Keys, shared, Value(), kBuf,
                 vBuf, n, dv, batch, colBase, begin, end, /*stageBatch=*/8,
                 c.featureSplit > 1 ? feature0 : Value(),
                 headsArgument(kernel, c.tokenMajor, c.phaseClocks));
  e.clocks().start();
  Value tid = e.threadIndex();
  Value cF = kb.idx(c.features), rowF = kb.idx(c.rowFeatures());
  // Features tid + j·T of the key sums, j < keyParts (none when neither the
  // denominators nor the final normalizer use them).
  int64_t keyParts =
      c.keepsNormalizer() ? llvm::divideCeil(c.features, c.threads()) : 0;
  auto keyFeature = [&](int64_t j) {
    return kb.add(tid, kb.idx(j * c.threads()));
  };
  auto keyFeatureValid = [&](int64_t j) {
    return arith::AndIOp::create(rewriter, loc, keyBlock,
                                 kb.ult(keyFeature(j), cF))
        .getResult();
  };

  int64_t fragments = e.stateFragmentSize();
  SmallVector<Value> init(fragments + keyParts, kb.fconst(0.0));
  SmallVector<Value> sums = e.walkChunks(
      begin, end, init, [&](Value t0, Value count, ValueRange carried) {
        // With wgmma the key sums are added while the update runs.
        Value pending;
        SmallVector<Value> next;
        if (c.wgmmaState)
          pending = e.startStateUpdate(carried.take_front(fragments));
        else
          next = e.accumulateState(carried.take_front(fragments));
        SmallVector<Value> keySums;
        for (int64_t j = 0; j < keyParts; ++j) {
          Value sum = carried[fragments + j];
          auto branch = scf::IfOp::create(
              rewriter, loc, keyFeatureValid(j),
              [&](OpBuilder &, Location) {
                scf::YieldOp::create(
                    rewriter, loc,
                    kb.fadd(sum, e.keySum(keyFeature(j), count)));
              },
              [&](OpBuilder &, Location) {
                scf::YieldOp::create(rewriter, loc, sum);
              });
          keySums.push_back(branch.getResult(0));
        }
        if (c.wgmmaState)
          next = e.finishStateUpdate(pending);
        llvm::append_range(next, keySums);
        e.clocks().mark(Phase::Update);
        return next;
      });

  // The block's rows of the segment's F x Dv state and F normalizer.
  Value row0 =
      kb.add(kb.mul(kb.add(kb.mul(batch, segments), segment), rowF), feature0);
  e.forEachStateElement([&](Value f, Value d, unsigned s) {
    Value col = kb.add(colBase, d);
    Value at = kb.add(kb.mul(kb.add(row0, f), dv), col);
    kb.ifThen(kb.ult(col, dv), [&] { kb.store(sums[s], hBuf, at); });
  });
  for (int64_t j = 0; j < keyParts; ++j)
    kb.ifThen(keyFeatureValid(j), [&] {
      kb.store(sums[fragments + j], zBuf, kb.add(row0, keyFeature(j)));
    });
  e.clocks().report(e.chunkCount(), recordsOf(kernel));
  return kernel;
}

gpu::GPUFuncOp gpukernels::buildReadout(RewriterBase &rewriter, Location loc,
                                        gpu::GPUModuleOp kernels,
                                        StringRef name,
                                        const ChunkedScanConfig &c) {
  Type index = rewriter.getIndexType();
  SmallVector<Type> argTypes = {flatBufferType(c.dataType),
                                flatBufferType(c.stateType)};
  if (c.normalized)
    argTypes.push_back(flatBufferType(c.stateType));
  argTypes.append({flatBufferType(c.resultType), index, index, index});
  if (c.tokenMajor)
    argTypes.push_back(index); // H
  gpu::GPUFuncOp kernel = createChunkKernel(rewriter, loc, kernels, name,
                                            argTypes, c, ChunkTiles::Queries);
  OpBuilder::InsertionGuard guard(rewriter);
  setInsertionPointToKernelBody(rewriter, kernel);
  ArrayRef<BlockArgument> args = kernel.getArguments();
  unsigned a = 0;
  Value qBuf = args[a++], sBuf = args[a++];
  Value zBuf = c.normalized ? Value(args[a++]) : Value();
  Value oBuf = args[a++], n = args[a++], dv = args[a++], perSegment = args[a++];
  KernelBuilder kb(rewriter, loc, c.stateType);
  Value batch = kb.blockId(gpu::Dimension::x);
  Value colBase = kb.mul(kb.blockId(gpu::Dimension::y), kb.idx(c.shape.dvTile));
  Value segment = kb.blockId(gpu::Dimension::z);
  auto [begin, end] = segmentRange(kb, c, n, segment, perSegment);
  SmallVector<Value> shared(kernel.getWorkgroupAttributions());
  ChunkEmitter e(rewriter, loc, c, ChunkTiles::Queries, shared, qBuf, Value(),
                 Value(), n, dv, batch, colBase, begin, end,
                 /*stageBatch=*/8, /*featureColumn=*/Value(),
                 headsArgument(kernel, c.tokenMajor, c.phaseClocks));
  Value tid = e.threadIndex();
  Value cF = kb.idx(c.features), cT = kb.idx(c.threads());
  Value stateBase = kb.mul(batch, cF);

  e.storeStateToShared(e.loadStateTile(sBuf, stateBase));
  if (c.normalized)
    kb.forLoop(tid, cF, cT, [&](Value f) {
      memref::StoreOp::create(rewriter, loc,
                              kb.load(zBuf, kb.add(stateBase, f)), e.zShared(),
                              ValueRange{f});
    });
  // The first chunk's staging starts with a barrier, which publishes S and
  // z (and the column scales).
  Value pairs = e.pairedStores(oBuf);
  e.walkChunks(begin, end, ValueRange{},
               [&](Value t0, Value count, ValueRange) -> SmallVector<Value> {
                 std::optional<std::pair<Value, Value>> den;
                 if (c.normalized)
                   den = e.readoutDenominators();
                 e.outputs(t0, count, den, /*scoreFragments=*/{}, oBuf, pairs);
                 return {};
               });
  return kernel;
}

int64_t gpukernels::chunkSharedBytes(const ChunkedScanConfig &c,
                                     ChunkTiles tiles) {
  unsigned swizzled = swizzledBuffers(c, tiles);
  SmallVector<WorkgroupBufferLayout> layout;
  for (auto [i, type] : llvm::enumerate(chunkSharedBuffers(c, tiles))) {
    auto buffer = cast<MemRefType>(type);
    layout.push_back({buffer.getNumElements() *
                          buffer.getElementType().getIntOrFloatBitWidth() / 8,
                      i < swizzled ? 1024 : 16});
  }
  return layOutWorkgroupBuffers(layout);
}

void gpukernels::chooseCopyStages(ChunkedScanConfig &c, int64_t asked,
                                  ChunkTiles tiles) {
  // 96 KiB: within the 99 KiB a block may take on every chip from sm_80
  // on; 113 KiB: two blocks per H100 SM, what wgmma-chunks' shapes take.
  int64_t limit = (c.shape.blocksPerSM == 2 ? 113 : 96) * 1024;
  c.copyStages = c.shapeSlots;
  if (!c.asyncCopies || (c.shapeSlots == 1 && tiles != ChunkTiles::Keys))
    return;
  int64_t least = std::min(asked, c.shapeSlots);
  c.copyStages = asked;
  while (c.copyStages > least && chunkSharedBytes(c, tiles) > limit)
    --c.copyStages;
  // The keys-only kernels of a one-slot scan that take more slots have the
  // next chunks in flight, and prefetch none.
  if (c.copyStages > 1)
    c.prefetchChunks = 0;
}
