//===- SimtChunkScan.cpp - the chunkwise scan on CUDA cores ---------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The causal scan chunk by chunk on CUDA cores, in the state's type (option
// `simt-chunks`, for the scans the tensor-core kernels do not take: f32 or
// f64 states). The recurrent kernel spends two fused multiply-adds per
// feature, value column and token, and every token's readout is a sum
// across lanes; here the same work is products of tiles, each thread
// accumulating a register block of its product from operands in shared
// memory (as a SIMT GEMM does), for the chunk's own scores on top:
//
//   P   = mask(φ(Q_c) φ(K_c)ᵀ)                         C × C
//   O_c = (φ(Q_c) S + P V_c) / (eps + φ(Q_c) z + P 1)   C × DT
//   S  += φ(K_c)ᵀ V_c,  z += φ(K_c)ᵀ 1                  F × DT
//
// at C = 32 tokens a chunk, 1.28 times the recurrent form's multiply-adds
// at F = Dv = 128 (in tiles of 64 columns, each computing the scores), 1.38
// at F = Dv = 64. One block of 256 threads per batch element and tile of
// DT value columns: S stays in registers, each thread a block of
// F/16 × DT/16, mirrored in shared memory after each chunk for the next
// chunk's φ(Q_c) S. The blocks of the products:
// - scores and outputs: k split between four groups of each warp's lanes,
//   each lane a block of 4 rows by 4 keys (scores) or 8 columns (outputs)
//   of its group's sums, which two rounds of shuffles add;
// - state: F/16 features × DT/16 columns, in runs of up to 4 adjacent ones
//   16 runs apart, so that the lanes of a warp that read a row of φ(K_c)
//   or V_c read adjacent 16-byte units.
// Every shared tile's rows are padded by 4 elements, so that each load's
// phase falls in distinct banks. Data of the state's type is copied by
// cp.async, two chunks ahead of the one computed where two slots per tile
// fit, else a chunk at a time with the next one prefetched into L2; other
// data is loaded, converted and stored. The feature maps are applied in
// shared memory. Tokens past the sequence, features past F and columns past
// Dv are zeros, which add nothing.
//
// At F = 128 the multiply-adds are about two thirds of the instructions an
// H100 must issue, and shared memory returns what a chunk loads in about
// 60% of the issue's cycles: instruction issue bounds the kernel
// (docs/Rationale.md, "The strict-fp32 scan chunk by chunk on CUDA cores",
// works it out).
//
//===----------------------------------------------------------------------===//

#include "SimtChunkScan.h"
#include "PhaseClocks.h"

using namespace mlir;
using namespace mlir::linattn;
using namespace mlir::linattn::gpukernels;

/// Largest F the kernel takes: each thread's share of S (F/16 × DT/16) is
/// in registers.
static constexpr int64_t kSimtMaxFeatures = 128;

/// Blocks per SM the kernel asks ptxas to fit (`.minnctapersm`).
static constexpr int64_t kSimtBlocksPerSM = 2;

/// Elements every row of the shared tiles (φ(Q_c), φ(K_c), V_c, S's mirror,
/// the scores) is padded by: their pitches are then 4 words mod 8, which
/// the products' lane layouts need for their loads to fall in distinct
/// banks. S's mirror at F = 32 and 96 (feature runs of 2) would want 8 mod
/// 16 for its stores, which are 2-way conflicts there instead: a chunk
/// stores S once and loads it in every output tile.
static constexpr int64_t kSimtRowPad = 4;

/// Elements a run of `count` elements of a thread's register block takes:
/// 4, 2 or 1, the most that divides it.
static int64_t runOf(int64_t count) {
  return count % 4 == 0 ? 4 : count % 2 == 0 ? 2 : 1;
}

/// Elements of the shared buffers of a block with `paddedFeatures` features,
/// `columns` value columns and `slots` slots per staged tile: φ(Q_c),
/// φ(K_c) and V_c in each slot, S, the scores, the denominators and z.
static int64_t simtSharedElements(int64_t paddedFeatures, int64_t columns,
                                  int64_t slots) {
  int64_t rows = kSimtChunk;
  return slots * rows *
             (2 * (paddedFeatures + kSimtRowPad) + columns + kSimtRowPad) +
         paddedFeatures * (columns + kSimtRowPad) +
         rows * (rows + kSimtRowPad) + rows + paddedFeatures;
}

FailureOr<SimtChunkShape> mlir::linattn::gpukernels::simtChunkShape(
    int64_t features, int64_t dv, int64_t elementBytes, bool async,
    int64_t sharedLimit, std::string &reason) {
  if (elementBytes != 4 && elementBytes != 8) {
    reason = "the chunkwise CUDA-core scan keeps an f32 or f64 state, not " +
             std::to_string(8 * elementBytes) + "-bit";
    return failure();
  }
  if (features <= 0 || features > kSimtMaxFeatures) {
    reason = "the chunkwise CUDA-core scan takes F from 1 to " +
             std::to_string(kSimtMaxFeatures) + ", not " +
             std::to_string(features);
    return failure();
  }
  int64_t padded = llvm::alignTo(features, 32);
  // The narrowest tile that holds Dv (dynamic: 128), narrower where shared
  // memory does not hold it: with two slots at 64 columns or more, then
  // with one (each chunk staged before its products) down to 32. Tiles of 32
  // leave each thread one output column and two state columns, too few products
  // per load to keep two slots for.
  int64_t widest = 128;
  if (!ShapedType::isDynamic(dv))
    widest = std::clamp<int64_t>(llvm::PowerOf2Ceil(dv), 32, 128);
  for (int64_t slots = async ? 2 : 1; slots >= 1; --slots)
    for (int64_t columns = widest; columns >= (slots == 2 ? 64 : 32);
         columns /= 2) {
      int64_t bytes = elementBytes * simtSharedElements(padded, columns, slots);
      if (bytes <= sharedLimit)
        return SimtChunkShape{padded, columns, slots, bytes};
    }
  reason = "the chunkwise CUDA-core scan at F = " + std::to_string(features) +
           " needs more than the chip's " + std::to_string(sharedLimit) +
           " bytes of shared memory a block";
  return failure();
}

gpu::GPUFuncOp mlir::linattn::gpukernels::buildSimtChunkKernel(
    RewriterBase &rewriter, Location loc, gpu::GPUModuleOp kernels,
    StringRef name, const SimtChunkConfig &c, bool segmented) {
  const SimtChunkShape &shape = c.shape;
  int64_t features = c.features, padded = shape.paddedFeatures,
          columns = shape.columns, slots = shape.slots;
  bool async = c.async, pipelined = slots == 2;
  constexpr int64_t rows = kSimtChunk, threads = kSimtThreads;
  // Row pitches: φ(Q_c) and φ(K_c), V_c, S's mirror, the scores.
  int64_t pitch = padded + kSimtRowPad, valuePitch = columns + kSimtRowPad,
          statePitch = columns + kSimtRowPad, scorePitch = rows + kSimtRowPad;
  bool hasInit = segmented || c.hasInit;
  bool writesState = !segmented && c.writesState;
  bool needZ = segmented ? c.normalized : c.needZ;
  Type stateType = c.stateType;
  const FeatureSource &q = c.q, &k = c.k, &valueMap = c.v;

  Type indexType = rewriter.getIndexType();
  SmallVector<Type> argTypes = {
      flatBufferType(tensorTypeOf(q.tensor).getElementType()),
      flatBufferType(tensorTypeOf(k.tensor).getElementType()),
      flatBufferType(c.dataType)};
  if (hasInit)
    argTypes.append(2, flatBufferType(stateType));
  argTypes.push_back(flatBufferType(c.resultType));
  if (writesState)
    argTypes.append(2, flatBufferType(stateType));
  argTypes.append({indexType, indexType}); // N, Dv
  if (segmented)
    argTypes.append({indexType, indexType}); // units per segment, segments
  if (c.tokenMajor)
    argTypes.push_back(indexType); // H
  if (c.phaseClocks)
    argTypes.push_back(flatBufferType(rewriter.getI64Type())); // records
  SmallVector<Type> shared = {
      workgroupBufferType(stateType, slots * rows * pitch),      // φ(Q_c)
      workgroupBufferType(stateType, slots * rows * pitch),      // φ(K_c)
      workgroupBufferType(stateType, slots * rows * valuePitch), // V_c
      workgroupBufferType(stateType, padded * statePitch),       // S
      workgroupBufferType(stateType, rows * scorePitch),         // P
      workgroupBufferType(stateType, c.normalized ? rows : 1),   // denominators
      workgroupBufferType(stateType, needZ ? padded : 1)};       // z
  if (c.phaseClocks)
    shared.push_back(
        workgroupBufferType(rewriter.getI64Type(), kPhaseClockSlots));
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels, name, argTypes, shared);
  if (c.phaseClocks)
    buildPhaseClocksPrinter(rewriter, loc, kernel);
  // Two blocks share an H100 or A100 SM by shared memory (72 to 99 KiB
  // each); ptxas is asked for registers that let them (128 a thread), which
  // on its own it gave sm_80 (140 at F = 128: one block).
  kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  rewriter.getI32IntegerAttr(kSimtBlocksPerSM));
  OpBuilder::InsertionGuard guard(rewriter);
  setInsertionPointToKernelBody(rewriter, kernel);
  KernelBuilder kb(rewriter, loc, stateType);
  ScanKernelArgs a = scanKernelArgs(kernel, hasInit, writesState);
  ArrayRef<BlockArgument> wg = kernel.getWorkgroupAttributions();
  Value qs = wg[0], ks = wg[1], vs = wg[2], ss = wg[3], ps = wg[4], den = wg[5],
        zs = wg[6];
  PhaseClocks clocks(rewriter, loc, c.phaseClocks ? Value(wg[7]) : Value());
  clocks.start();

  Value c0 = kb.idx(0), c1 = kb.idx(1), cRows = kb.idx(rows),
        cF = kb.idx(features), cThreads = kb.idx(threads);
  Value n = a.n, dv = a.dv;
  Value batch = kb.blockId(gpu::Dimension::x);
  // The rows of the batch element's tokens in q, k, v and O.
  TokenRows tokenRows(kb, batch, n,
                      headsArgument(kernel, c.tokenMajor, c.phaseClocks));
  Value firstColumn = kb.mul(kb.blockId(gpu::Dimension::y), kb.idx(columns));
  Value tid = kb.threadId();
  Value warp = kb.divU(tid, kb.idx(32)), lane = kb.remU(tid, kb.idx(32));

  // The scan positions [begin, end) the block walks and the first row of
  // its state: the batch element's, or its segment's.
  Value begin = c0, end = n, stateBase = kb.mul(batch, cF);
  if (segmented) {
    // The segments' scalars, before H and the records of `phase-clocks`.
    unsigned last = kernel.getFunctionType().getNumInputs() -
                    (c.phaseClocks ? 2 : 1) - (c.tokenMajor ? 1 : 0);
    Value perSegment = kernel.getArgument(last - 1),
          segments = kernel.getArgument(last);
    Value segment = kb.blockId(gpu::Dimension::z);
    Value span = kb.mul(perSegment, kb.idx(c.segmentUnit));
    begin = kb.mul(segment, span);
    end = kb.minU(kb.add(begin, span), n);
    stateBase = kb.mul(kb.add(kb.mul(batch, segments), segment), cF);
  }
  auto tokenAt = [&](Value t0, Value t) {
    Value i = kb.add(t0, t);
    return c.reverse ? kb.sub(kb.sub(n, c1), i) : i;
  };

  // The state block: features fAt(i), i < fm, and tile columns dAt(j),
  // j < dm, of thread (fGroup, dGroup) of the 16 × 16 grid, a warp 4 × 8 of
  // it. Runs of fRun adjacent features 16 · fRun apart, likewise columns.
  // Shared memory returns a 32-bit register to each lane per cycle, twice
  // that for a load whose lanes n and n ^ 1 (or n and n ^ 2) all read the
  // same address: lane bits 0 and 4 pick the feature group and bits 1-3 the
  // column group, so that a token's loads of φ(k) (lanes n, n ^ 2) and of v
  // (lanes n, n ^ 1) are both paired.
  int64_t fm = padded / 16, dm = columns / 16;
  int64_t fRun = runOf(fm), dRun = runOf(dm);
  Value laneRow = kb.add(kb.remU(lane, kb.idx(2)),
                         kb.mul(kb.divU(lane, kb.idx(16)), kb.idx(2))),
        laneColumn = kb.remU(kb.divU(lane, kb.idx(2)), kb.idx(8));
  Value fGroup = kb.add(kb.mul(kb.divU(warp, kb.idx(2)), kb.idx(4)), laneRow);
  Value dGroup =
      kb.add(kb.mul(kb.remU(warp, kb.idx(2)), kb.idx(8)), laneColumn);
  auto fAt = [&](int64_t i) {
    return kb.add(kb.idx(i / fRun * 16 * fRun + i % fRun),
                  kb.mul(fGroup, kb.idx(fRun)));
  };
  auto dAt = [&](int64_t j) {
    return kb.add(kb.idx(j / dRun * 16 * dRun + j % dRun),
                  kb.mul(dGroup, kb.idx(dRun)));
  };

  // S from the initial state (zeros past F and Dv), and its mirror.
  SmallVector<Value> state;
  for (int64_t i = 0; i < fm; ++i)
    for (int64_t j = 0; j < dm; ++j) {
      if (!hasInit) {
        state.push_back(kb.fconst(0.0));
        continue;
      }
      Value f = fAt(i), col = kb.add(firstColumn, dAt(j));
      Value exists =
          arith::AndIOp::create(rewriter, loc, kb.ult(f, cF), kb.ult(col, dv));
      state.push_back(kb.loadIf(exists, a.s0,
                                kb.add(kb.mul(kb.add(stateBase, f), dv), col)));
    }
  auto mirrorState = [&](ArrayRef<Value> s) {
    for (int64_t i = 0; i < fm; ++i)
      for (int64_t j = 0; j < dm; j += dRun)
        kb.storeRun(ss, kb.add(kb.mul(fAt(i), kb.idx(statePitch)), dAt(j)),
                    s.slice(i * dm + j, dRun));
  };
  mirrorState(state);
  // z, feature tid by thread tid (the thread that updates and writes it).
  if (needZ)
    kb.ifThen(kb.ult(tid, kb.idx(padded)), [&] {
      Value z = hasInit
                    ? kb.loadIf(kb.ult(tid, cF), a.z0, kb.add(stateBase, tid))
                    : kb.fconst(0.0);
      memref::StoreOp::create(rewriter, loc, z, zs, ValueRange{tid});
    });

  // Staging. Async copies take 16 bytes where the rows allow it, tested
  // once per block: φ(Q), φ(K) with F a multiple of 4 and both buffers
  // 16-byte aligned; V with Dv a multiple of 4 and its buffer aligned.
  // Elsewhere 4 bytes each, whatever the alignment.
  Value wideFeatures, wideValues; // null: never
  bool wide = async && stateType.isF32();
  if (wide && features % 4 == 0)
    wideFeatures = arith::AndIOp::create(rewriter, loc, kb.alignedTo(a.q, 16),
                                         kb.alignedTo(a.k, 16));
  if (wide)
    wideValues = arith::AndIOp::create(rewriter, loc, kb.alignedTo(a.v, 16),
                                       kb.eq(kb.remU(dv, kb.idx(4)), c0));
  // The outputs are stored 16 bytes at a time where O is the state's f32
  // (no conversion), Dv a multiple of 4 and the buffer aligned: a warp's
  // store then writes whole sectors, where four stores of single columns
  // each wrote a quarter of them.
  Value wideOutputs;
  if (stateType.isF32() && c.resultType == stateType)
    wideOutputs = arith::AndIOp::create(rewriter, loc, kb.alignedTo(a.o, 16),
                                        kb.eq(kb.remU(dv, kb.idx(4)), c0));
  // Calls `fn(at, to, exists)` for this thread's groups of `width` elements
  // of the `count` tokens at t0 in a tile of rows of `rowElements` (pitch
  // `rowPitch`) from `base`: the group's global index (valid where it
  // exists), its index in the tile, and whether it is in the sequence and in
  // F or Dv (`limit` elements a row, from `first`, `stride` elements a
  // global row).
  auto forEachGroup = [&](Value t0, Value count, Value base,
                          int64_t rowElements, int64_t rowPitch, int64_t width,
                          Value first, Value limit, Value stride,
                          function_ref<void(Value, Value, Value)> fn) {
    Value groups = kb.idx(rowElements / width);
    kb.forLoop(tid, kb.mul(cRows, groups), cThreads, [&](Value i) {
      Value t = kb.divU(i, groups);
      Value e = kb.mul(kb.remU(i, groups), kb.idx(width));
      Value element = kb.add(first, e);
      Value exists = arith::AndIOp::create(rewriter, loc, kb.ult(t, count),
                                           kb.ult(element, limit));
      Value row = tokenRows(tokenAt(t0, t));
      Value at = kb.select(exists, kb.add(kb.mul(row, stride), element), c0);
      fn(at, kb.add(base, kb.add(kb.mul(t, kb.idx(rowPitch)), e)), exists);
    });
  };
  SmallVector<std::tuple<Value, Value, const FeatureSource *>> staged = {
      {qs, a.q, &q}, {ks, a.k, &k}};
  // Stages the `count` tokens at t0 into the slot at (fBase, vBase): copied
  // by cp.async (mapped by `mapStaged` once they land), or loaded, mapped and
  // stored.
  auto stage = [&](Value t0, Value count, Value fBase, Value vBase) {
    kb.byWidth(wideFeatures, [&](int64_t width) {
      forEachGroup(t0, count, fBase, padded, pitch, width, c0, cF, cF,
                   [&](Value at, Value to, Value exists) {
                     for (auto [tile, global, source] : staged) {
                       if (async) {
                         kb.asyncCopy(global, at, tile, to, width,
                                      kb.select(exists, kb.idx(width), c0),
                                      /*bypassL1=*/width == 4);
                         continue;
                       }
                       Value x =
                           kb.featureOf(kb.loadIf(exists, global, at), *source);
                       kb.store(kb.select(exists, x, kb.fconst(0.0)), tile, to);
                     }
                   });
    });
    kb.byWidth(wideValues, [&](int64_t width) {
      forEachGroup(t0, count, vBase, columns, valuePitch, width, firstColumn,
                   dv, dv, [&](Value at, Value to, Value exists) {
                     if (async) {
                       kb.asyncCopy(a.v, at, vs, to, width,
                                    kb.select(exists, kb.idx(width), c0),
                                    /*bypassL1=*/width == 4);
                       return;
                     }
                     Value x =
                         kb.featureOf(kb.loadIf(exists, a.v, at), valueMap);
                     kb.store(kb.select(exists, x, kb.fconst(0.0)), vs, to);
                   });
    });
  };
  // With async copies: the feature maps applied to the groups this thread
  // copied that exist, once its copies have landed (the barrier after this
  // publishes them).
  auto mapStaged = [&](Value t0, Value count, Value fBase, Value vBase) {
    auto mapGroup = [&](Value tile, const FeatureSource &source, Value to,
                        Value exists, int64_t width) {
      kb.ifThen(exists, [&] { kb.mapRun(tile, to, width, source); });
    };
    if (mapsOnCopy(q) || mapsOnCopy(k))
      kb.byWidth(wideFeatures, [&](int64_t width) {
        forEachGroup(t0, count, fBase, padded, pitch, width, c0, cF, cF,
                     [&](Value, Value to, Value exists) {
                       for (auto [tile, global, source] : staged)
                         if (mapsOnCopy(*source))
                           mapGroup(tile, *source, to, exists, width);
                     });
      });
    if (mapsOnCopy(valueMap))
      kb.byWidth(wideValues, [&](int64_t width) {
        forEachGroup(t0, count, vBase, columns, valuePitch, width, firstColumn,
                     dv, dv, [&](Value, Value to, Value exists) {
                       mapGroup(vs, valueMap, to, exists, width);
                     });
      });
  };
  auto slotBases = [&](Value slot) {
    return std::make_pair(kb.mul(slot, kb.idx(rows * pitch)),
                          kb.mul(slot, kb.idx(rows * valuePitch)));
  };
  auto chunkAt = [&](Value t0) { return kb.minU(cRows, kb.sub(end, t0)); };
  // The L2 prefetch of the chunk at t0 (none past the sequence), where each
  // chunk is staged before its products: the first element of every
  // 128-byte span of its rows of q, k and of V's tile, and the last.
  auto prefetchChunk = [&](Value t0) {
    kb.ifThen(kb.ult(t0, end), [&] {
      Value count = chunkAt(t0);
      auto prefetchRows = [&](Value buffer, Value first, Value limit,
                              int64_t span, Value stride) {
        Type element = cast<MemRefType>(buffer.getType()).getElementType();
        int64_t bytes = element.getIntOrFloatBitWidth() / 8;
        int64_t perLine = 128 / bytes;
        Value lines = kb.idx(span / perLine + 1);
        kb.forLoop(tid, kb.mul(count, lines), cThreads, [&](Value i) {
          Value t = kb.divU(i, lines);
          Value offset = kb.minU(kb.mul(kb.remU(i, lines), kb.idx(perLine)),
                                 kb.idx(span - 1));
          Value at = kb.minU(kb.add(first, offset), kb.sub(limit, c1));
          Value row = tokenRows(tokenAt(t0, t));
          Value index = kb.add(kb.mul(row, stride), at);
          kb.prefetchL2(
              kb.add(kb.pointerOf(buffer), kb.mul(index, kb.idx(bytes))));
        });
      };
      prefetchRows(a.q, c0, cF, features, cF);
      prefetchRows(a.k, c0, cF, features, cF);
      kb.ifThen(kb.ult(firstColumn, dv),
                [&] { prefetchRows(a.v, firstColumn, dv, columns, dv); });
    });
  };
  // Two slots: the first two chunks in flight before the loop; each
  // iteration waits for its own (all but the latest group) and, once every
  // thread is done with its slot, copies the chunk two ahead into it. Every
  // iteration commits a group, empty past the sequence, so that the count
  // holds.
  if (pipelined) {
    for (int64_t ahead = 0; ahead < 2; ++ahead) {
      Value t0 = kb.add(begin, kb.idx(ahead * rows));
      Value fBase, vBase;
      std::tie(fBase, vBase) = slotBases(kb.idx(ahead));
      kb.ifThen(kb.ult(t0, end), [&] { stage(t0, chunkAt(t0), fBase, vBase); });
      kb.commitAsyncCopies();
    }
  }

  // The products split their sums over k between the lanes of each warp:
  // lane bits 3-4 pick one of four groups, which take the operands' 16-byte
  // units of k in turn (group g units g, g + 4, ...), and the groups' sums
  // are added by two rounds of shuffles that leave each lane a quarter of
  // them (KernelBuilder::transposedSumOverLanes). A lane then holds a
  // register block of 4 rows by 4 (scores) or 8 (outputs) columns, twice the
  // multiply-adds per load of the thread blocks a chunk of 32 rows gives 256
  // threads without the split. Bits 0-2 pick the lane's place in its group's
  // tile, one bit among the rows of one operand and two among those of the
  // other, so that every load is paired (lanes n and n ^ 1 or n and n ^ 2
  // read the same address); with row pitches of 4 words mod 8, a load's
  // phase then falls in distinct banks (rows 2 apart, 8 words, beside the
  // groups' units 4 words apart; or the groups' rows 4 apart, 16 words,
  // beside 4 adjacent units of a row).
  Value group = kb.divU(lane, kb.idx(8));
  Value groupUnit = kb.mul(group, kb.idx(4));
  // Row i < 4 of a lane's block of its tile: 2·block + i % 2 + (i / 2)·far.
  // The lane's rows, and the row `transposedSumOverLanes` leaves it the sums
  // of (`perRow` of them a row).
  auto blockRow = [&](Value base, Value block, int64_t far, Value i) {
    return kb.add(kb.add(base, kb.mul(block, kb.idx(2))),
                  kb.add(kb.remU(i, kb.idx(2)),
                         kb.mul(kb.divU(i, kb.idx(2)), kb.idx(far))));
  };
  auto blockRows = [&](Value base, Value block, int64_t far) {
    SmallVector<Value> at;
    for (int64_t i = 0; i < 4; ++i)
      at.push_back(blockRow(base, block, far, kb.idx(i)));
    return at;
  };
  auto keptRow = [&](Value base, Value block, int64_t far, int64_t perRow) {
    return blockRow(
        base, block, far,
        kb.divU(kb.transposedSumFirst(group, 4 * perRow, 4), kb.idx(perRow)));
  };
  // The scores: warp w the 16 × 8 tile of rows 16(w / 4) and keys 8(w % 4)
  // on; its lanes 4 rows (bits 1-2) by 4 adjacent keys (bit 0). Lanes n and
  // n ^ 1 share their rows of φ(Q_c), lanes n and n ^ 2 (and n ^ 4) their
  // keys of φ(K_c). The tiles of rows below 16 and keys from 16 on are past
  // the diagonal: their warps add nothing (a loop of no steps) and store
  // zeros.
  Value scoreRowBase = kb.mul(kb.divU(warp, kb.idx(4)), kb.idx(16)),
        scoreKey = kb.add(kb.mul(kb.remU(warp, kb.idx(4)), kb.idx(8)),
                          kb.mul(kb.remU(lane, kb.idx(2)), kb.idx(4)));
  Value scoreBlock = kb.remU(kb.divU(lane, kb.idx(2)), kb.idx(4));
  Value scoreExtent =
      kb.select(kb.eq(kb.divU(warp, kb.idx(2)), c1), c0, kb.idx(padded));
  // The outputs: tiles of 8 rows by 32 columns, tile τ rows 8(τ % 4) and
  // columns 32(τ / 4) on, warp w the tiles w, w + 8, ... (DT/8 of them);
  // its lanes 4 rows (bit 0) by 8 columns (bits 1-2), in two runs of 4 from
  // 4c and 16 + 4c. Lanes n and n ^ 2 (and n ^ 4) share their rows of
  // φ(Q_c) or P, lanes n and n ^ 1 their loads of S or V_c.
  int64_t outTiles = rows / 8 * (columns / 32);
  Value outBlock = kb.remU(lane, kb.idx(2));
  Value outColumnBlock =
      kb.mul(kb.remU(kb.divU(lane, kb.idx(2)), kb.idx(4)), kb.idx(4));
  auto rowAt = [&](Value base, int64_t i, int64_t step) {
    return kb.add(base, kb.idx(i * step));
  };

  clocks.mark(Phase::Prologue);
  state = kb.forLoop(begin, end, cRows, state, [&](Value t0, ValueRange s) {
    Value count = chunkAt(t0);
    Value slot =
        pipelined ? kb.remU(kb.divU(kb.sub(t0, begin), cRows), kb.idx(2)) : c0;
    Value fBase, vBase;
    std::tie(fBase, vBase) = slotBases(slot);
    if (pipelined) {
      kb.waitAsyncCopies(/*pending=*/1);
      clocks.mark(Phase::Wait);
      mapStaged(t0, count, fBase, vBase);
    } else {
      // One slot: this chunk's copies (all in flight at once) or loads, then
      // the next chunk's prefetch, so that its staging waits on L2 rather
      // than HBM.
      stage(t0, count, fBase, vBase);
      prefetchChunk(kb.add(t0, cRows));
      if (async) {
        kb.commitAsyncCopies();
        clocks.mark(Phase::Issue);
        kb.waitAsyncCopies(/*pending=*/0);
        clocks.mark(Phase::Wait);
        mapStaged(t0, count, fBase, vBase);
      }
    }
    kb.barrier();
    clocks.mark(async ? Phase::Map : Phase::Stage);

    // The scores, masked: P[t, s] for s <= t.
    {
      SmallVector<Value> qRows = blockRows(scoreRowBase, scoreBlock, 8);
      SmallVector<Value> acc(16, kb.fconst(0.0));
      acc = kb.forLoop(
          c0, scoreExtent, kb.idx(16), acc,
          [&](Value f0, ValueRange in) -> SmallVector<Value> {
            SmallVector<Value> out(in.begin(), in.end());
            Value f = kb.add(fBase, kb.add(f0, groupUnit));
            SmallVector<SmallVector<Value>> qv, kv;
            for (int64_t i = 0; i < 4; ++i) {
              qv.push_back(kb.loadRun(
                  qs, kb.add(kb.mul(qRows[i], kb.idx(pitch)), f), 4));
              kv.push_back(kb.loadRun(
                  ks, kb.add(kb.mul(rowAt(scoreKey, i, 1), kb.idx(pitch)), f),
                  4));
            }
            for (int64_t e = 0; e < 4; ++e)
              for (int64_t i = 0; i < 4; ++i)
                for (int64_t j = 0; j < 4; ++j)
                  out[i * 4 + j] = kb.fma(qv[i][e], kv[j][e], out[i * 4 + j]);
            return out;
          });
      SmallVector<Value> sums =
          kb.transposedSumOverLanes(acc, /*lanes=*/4, /*stride=*/8, group);
      Value t = keptRow(scoreRowBase, scoreBlock, 8, 4);
      for (int64_t j = 0; j < 4; ++j)
        sums[j] = kb.select(kb.ult(t, rowAt(scoreKey, j, 1)), kb.fconst(0.0),
                            sums[j]);
      kb.storeRun(ps, kb.add(kb.mul(t, kb.idx(scorePitch)), scoreKey), sums);
    }
    kb.barrier();
    clocks.mark(Phase::Scores);

    // The denominators eps + φ(q_t)ᵀz + Σ_s P[t, s], warp w those of tokens
    // w + 8i, its lanes sharing out the keys and features.
    if (c.normalized) {
      for (int64_t i = 0; i < rows / 8; ++i) {
        Value t = rowAt(warp, i, 8);
        Value part = memref::LoadOp::create(
            rewriter, loc, ps,
            ValueRange{kb.add(kb.mul(t, kb.idx(scorePitch)), lane)});
        for (int64_t j = 0; j < padded / 32; ++j) {
          Value f = rowAt(lane, j, 32);
          Value qf = memref::LoadOp::create(
              rewriter, loc, qs,
              ValueRange{kb.add(fBase, kb.add(kb.mul(t, kb.idx(pitch)), f))});
          Value zf = memref::LoadOp::create(rewriter, loc, zs, ValueRange{f});
          part = kb.fma(qf, zf, part);
        }
        Value sum = kb.sumOverLanes(part, 32);
        kb.ifThen(kb.eq(lane, c0), [&] {
          memref::StoreOp::create(rewriter, loc, kb.fadd(kb.fconst(c.eps), sum),
                                  den, ValueRange{t});
        });
      }
      kb.barrier();
      clocks.mark(Phase::Normalizer);
    }

    // The outputs φ(Q_c) S + P V_c, tile by tile.
    for (int64_t first = 0; first < outTiles; first += threads / 32) {
      auto tileOutputs = [&](Value tile) {
        Value rowBase = kb.mul(kb.remU(tile, kb.idx(rows / 8)), kb.idx(8));
        Value column =
            kb.add(kb.mul(kb.divU(tile, kb.idx(rows / 8)), kb.idx(32)),
                   outColumnBlock);
        SmallVector<Value> aRows = blockRows(rowBase, outBlock, 4);
        SmallVector<Value> acc(32, kb.fconst(0.0));
        // Adds the lane's rows of `aTile` (from `aBase`, pitch `aPitch`)
        // times the rows of `bTile` (from `bBase`, pitch `bPitch`) over its
        // group's units of k in [0, extent).
        auto product = [&](Value aTile, Value aBase, int64_t aPitch,
                           Value bTile, Value bBase, int64_t bPitch,
                           Value extent) {
          acc = kb.forLoop(
              c0, extent, kb.idx(16), acc,
              [&](Value k0, ValueRange in) -> SmallVector<Value> {
                SmallVector<Value> out(in.begin(), in.end());
                Value k = kb.add(k0, groupUnit);
                SmallVector<SmallVector<Value>> av;
                for (int64_t i = 0; i < 4; ++i)
                  av.push_back(kb.loadRun(
                      aTile,
                      kb.add(aBase,
                             kb.add(kb.mul(aRows[i], kb.idx(aPitch)), k)),
                      4));
                for (int64_t e = 0; e < 4; ++e) {
                  Value bRow = kb.add(
                      bBase,
                      kb.add(kb.mul(rowAt(k, e, 1), kb.idx(bPitch)), column));
                  SmallVector<Value> bv = kb.loadRun(bTile, bRow, 4);
                  llvm::append_range(
                      bv, kb.loadRun(bTile, kb.add(bRow, kb.idx(16)), 4));
                  for (int64_t i = 0; i < 4; ++i)
                    for (int64_t j = 0; j < 8; ++j)
                      out[i * 8 + j] = kb.fma(av[i][e], bv[j], out[i * 8 + j]);
                }
                return out;
              });
        };
        product(qs, fBase, pitch, ss, c0, statePitch, kb.idx(padded));
        // The scores of rows below 16 and keys from 16 on are zeros: tiles of
        // those rows take the keys below 16 only.
        product(ps, c0, scorePitch, vs, vBase, valuePitch,
                kb.select(kb.ult(rowBase, kb.idx(rows / 2)), kb.idx(rows / 2),
                          cRows));
        SmallVector<Value> out =
            kb.transposedSumOverLanes(acc, /*lanes=*/4, /*stride=*/8, group);
        Value t = keptRow(rowBase, outBlock, 4, 8);
        kb.ifThen(kb.ult(t, count), [&] {
          Value row = tokenRows(tokenAt(t0, t));
          if (c.normalized) {
            Value denominator =
                memref::LoadOp::create(rewriter, loc, den, ValueRange{t});
            for (Value &x : out)
              x = kb.fdiv(x, denominator);
          }
          for (int64_t run = 0; run < 2; ++run) {
            Value from = kb.add(firstColumn, rowAt(column, run, 16));
            Value at = kb.add(kb.mul(row, dv), from);
            ArrayRef<Value> values = ArrayRef<Value>(out).slice(4 * run, 4);
            kb.byWidth(wideOutputs, [&](int64_t width) {
              if (width == 1) {
                for (int64_t j = 0; j < 4; ++j)
                  kb.ifThen(kb.ult(kb.add(from, kb.idx(j)), dv), [&] {
                    kb.store(values[j], a.o, kb.add(at, kb.idx(j)));
                  });
                return;
              }
              // One store of the 4 columns, where they are all in Dv (Dv a
              // multiple of 4: all or none).
              kb.ifThen(kb.ult(from, dv), [&] {
                Value run = vector::FromElementsOp::create(
                    rewriter, loc, VectorType::get({4}, c.resultType), values);
                vector::StoreOp::create(rewriter, loc, run, a.o, ValueRange{at},
                                        /*nontemporal=*/false,
                                        llvm::MaybeAlign(16));
              });
            });
          }
        });
      };
      Value tile = kb.add(warp, kb.idx(first));
      if (first + threads / 32 <= outTiles)
        tileOutputs(tile);
      else
        kb.ifThen(kb.ult(tile, kb.idx(outTiles)), [&] { tileOutputs(tile); });
    }

    clocks.mark(Phase::Outputs);

    // S += φ(K_c)ᵀ V_c over the chunk's tokens, in registers, two a step.
    // The rows past the sequence are zeros, which add nothing: every chunk
    // takes all 32 rows, in a loop of constant trip count.
    SmallVector<Value> next = kb.forLoop(
        c0, cRows, kb.idx(2), s,
        [&](Value t0, ValueRange in) -> SmallVector<Value> {
          SmallVector<Value> out(in.begin(), in.end());
          for (int64_t step = 0; step < 2; ++step) {
            Value t = rowAt(t0, step, 1);
            SmallVector<Value> kv, vv;
            Value kRow = kb.add(fBase, kb.mul(t, kb.idx(pitch)));
            Value vRow = kb.add(vBase, kb.mul(t, kb.idx(valuePitch)));
            for (int64_t i = 0; i < fm; i += fRun)
              llvm::append_range(kv,
                                 kb.loadRun(ks, kb.add(kRow, fAt(i)), fRun));
            for (int64_t j = 0; j < dm; j += dRun)
              llvm::append_range(vv,
                                 kb.loadRun(vs, kb.add(vRow, dAt(j)), dRun));
            for (int64_t i = 0; i < fm; ++i)
              for (int64_t j = 0; j < dm; ++j)
                out[i * dm + j] = kb.fma(kv[i], vv[j], out[i * dm + j]);
          }
          return out;
        });
    // z += Σ_t φ(k_t), feature tid by thread tid, in four partial sums (the
    // rows past the sequence are zeros).
    if (needZ)
      kb.ifThen(kb.ult(tid, kb.idx(padded)), [&] {
        SmallVector<Value> sums(4, kb.fconst(0.0));
        for (int64_t t = 0; t < rows; ++t)
          sums[t % 4] = kb.fadd(
              sums[t % 4],
              memref::LoadOp::create(
                  rewriter, loc, ks,
                  ValueRange{kb.add(fBase, kb.add(kb.idx(t * pitch), tid))}));
        Value z = memref::LoadOp::create(rewriter, loc, zs, ValueRange{tid});
        memref::StoreOp::create(rewriter, loc, kb.fadd(z, kb.pairwiseSum(sums)),
                                zs, ValueRange{tid});
      });
    kb.barrier();
    mirrorState(next);
    if (pipelined) {
      Value ahead = kb.add(t0, kb.idx(2 * rows));
      kb.ifThen(kb.ult(ahead, end),
                [&] { stage(ahead, chunkAt(ahead), fBase, vBase); });
      kb.commitAsyncCopies();
    }
    clocks.mark(Phase::Update);
    return next;
  });

  // The final state (the columns of this tile) and z (the first tile).
  if (writesState) {
    for (int64_t i = 0; i < fm; ++i)
      for (int64_t j = 0; j < dm; ++j) {
        Value f = fAt(i), col = kb.add(firstColumn, dAt(j));
        Value exists = arith::AndIOp::create(rewriter, loc, kb.ult(f, cF),
                                             kb.ult(col, dv));
        kb.ifThen(exists, [&] {
          kb.store(state[i * dm + j], a.s,
                   kb.add(kb.mul(kb.add(stateBase, f), dv), col));
        });
      }
    if (needZ) {
      Value first = kb.eq(kb.blockId(gpu::Dimension::y), c0);
      kb.ifThen(
          arith::AndIOp::create(rewriter, loc, first, kb.ult(tid, cF)), [&] {
            Value z =
                memref::LoadOp::create(rewriter, loc, zs, ValueRange{tid});
            kb.store(z, a.z, kb.add(stateBase, tid));
          });
    }
  }
  clocks.report(ceilDiv(rewriter, loc, kb.sub(end, begin), rows),
                recordsOf(kernel));
  return kernel;
}
