//===- ChunkedScan.cpp - chunked kernels on tensor cores ------------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The conversion of scans and of the linear form (kv_summary,
// query_readout) with f16/bf16 data (f32 by tf32) and an f32 state to the
// chunked kernels on tensor cores: their configuration (shape, staging,
// wgmma), the launches of the batch-parallel chunk loop or of the
// sequence-parallel passes, and the scan over the segments those share with
// the recurrent scan. The kernels are built in ChunkKernels.cpp, their
// shapes chosen in ChunkedScanShape.cpp.
//
//===----------------------------------------------------------------------===//

#include "ChunkedScan.h"

using namespace mlir;
using namespace mlir::linattn;
using namespace mlir::linattn::gpukernels;

/// Sequence-parallel pass 2: the scan over the segments. Each thread walks
/// the segments of one state element (and of one normalizer element in the
/// first blocks), writes the f32 state at each segment's start (exclusive
/// prefix, from the initial state when there is one) and the final S and z
/// (`writesState`). Arguments: the segment states and normalizers of pass 1,
/// the initial state and normalizer (when there are), the prefixes, S and z
/// (`writesState`), Dv and the segment count; grid (batch, element tiles of
/// 256; more tiles than grid y holds by a grid-stride loop). Without
/// `prefixes` (the key-value summary) only the sums: no prefix buffers.
/// With prefixes and without `writesState` the last segment's state is
/// neither read nor needed.
gpu::GPUFuncOp
gpukernels::buildSegmentScan(RewriterBase &rewriter, Location loc,
                             gpu::GPUModuleOp kernels, StringRef name,
                             const SegmentScanConfig &c, bool prefixes) {
  Type index = rewriter.getIndexType();
  int64_t buffers =
      2 + (prefixes ? 2 : 0) + (c.hasInit ? 2 : 0) + (c.writesState ? 2 : 0);
  SmallVector<Type> argTypes(buffers, flatBufferType(c.stateType));
  argTypes.append({index, index});
  gpu::GPUFuncOp kernel =
      createKernel(rewriter, loc, kernels, name, argTypes, TypeRange{});
  OpBuilder::InsertionGuard guard(rewriter);
  setInsertionPointToKernelBody(rewriter, kernel);
  ArrayRef<BlockArgument> args = kernel.getArguments();
  unsigned a = 0;
  Value hBuf = args[a++], zcBuf = args[a++];
  Value s0Buf, z0Buf;
  if (c.hasInit) {
    s0Buf = args[a++];
    z0Buf = args[a++];
  }
  Value prefixBuf, zPrefixBuf;
  if (prefixes) {
    prefixBuf = args[a++];
    zPrefixBuf = args[a++];
  }
  Value sBuf, zBuf;
  if (c.writesState) {
    sBuf = args[a++];
    zBuf = args[a++];
  }
  Value dv = args[a++], segments = args[a++];
  KernelBuilder kb(rewriter, loc, c.stateType);
  Value batch = kb.blockId(gpu::Dimension::x);
  Value tid = kb.threadId();
  Value cF = kb.idx(c.features);
  Value first = kb.mul(batch, segments);

  // Without the final S and z, the last segment's contribution reaches no
  // result: pass 1 leaves it out (`Converter::launchSegments`) and the scan
  // stops at that segment's prefix.
  bool lastAdded = !prefixes || c.writesState;
  Value added = lastAdded ? segments : kb.sub(segments, kb.idx(1));
  // The prefix over segments of the element at `offset` within a segment's
  // `stride` elements.
  auto scanElement = [&](Value src, Value dst, Value offset, Value stride,
                         Value init) {
    auto at = [&](Value segment) {
      return kb.add(kb.mul(kb.add(first, segment), stride), offset);
    };
    Value sum =
        kb.forLoop(kb.idx(0), added, kb.idx(1), ValueRange{init},
                   [&](Value segment, ValueRange run) -> SmallVector<Value> {
                     Value h = kb.load(src, at(segment));
                     if (dst)
                       kb.store(run[0], dst, at(segment));
                     return {kb.fadd(run[0], h)};
                   })[0];
    if (!lastAdded)
      kb.store(sum, dst, at(added));
    return sum;
  };

  Value elements = kb.mul(cF, dv);
  Value cTile = kb.idx(kSegmentScanThreads);
  Value elementTiles =
      kb.divU(kb.add(elements, kb.idx(kSegmentScanThreads - 1)), cTile);
  kb.gridStrideLoop(gpu::Dimension::y, elementTiles, [&](Value tile) {
    Value e = kb.add(kb.mul(tile, cTile), tid);
    kb.ifThen(kb.ult(e, elements), [&] {
      Value at = kb.add(kb.mul(batch, elements), e);
      Value init = c.hasInit ? kb.load(s0Buf, at) : kb.fconst(0.0);
      Value final = scanElement(hBuf, prefixBuf, e, elements, init);
      if (c.writesState)
        kb.store(final, sBuf, at);
    });
  });
  if (!c.normalizer)
    return kernel;
  kb.ifThen(kb.eq(kb.blockId(gpu::Dimension::y), kb.idx(0)), [&] {
    kb.forLoop(tid, cF, kb.idx(kSegmentScanThreads), [&](Value f) {
      Value at = kb.add(kb.mul(batch, cF), f);
      Value init = c.hasInit ? kb.load(z0Buf, at) : kb.fconst(0.0);
      Value final = scanElement(zcBuf, zPrefixBuf, f, cF, init);
      if (c.writesState)
        kb.store(final, zBuf, at);
    });
  });
  return kernel;
}

/// The config of the keys-only kernel (segment states, key-value summary)
/// of the kernels of `c`, for `dv` value columns. With
/// `states-feature-split`, where Dv takes s = 2 or 4 of c's value tiles, its
/// blocks share out K's features: s blocks of F / s features and s value
/// tiles each, instead of s of all F features and one tile. They hold the
/// same state fragments per thread and stage as many elements, but each
/// maps and reads only its share of φ(K_c) (the maps are elementwise); V_c
/// is read s times instead. Only for a static Dv, without wgmma (whose
/// staging takes F a multiple of 64), into tiles of at most 128 columns
/// (their rows keep the padding or unit swizzle of 64, `valueRowPadding`)
/// and F / s a multiple of 16; not for tf32x3, whose normalized kernels at
/// F = Dv = 128, split, spilled 52 bytes within the registers of three
/// blocks per SM (`boundStatesRegisters`).
static ChunkedScanConfig
keysOnlyConfig(const LinAttnToGPUKernelOptions &options,
               const ChunkedScanConfig &c, int64_t dv) {
  ChunkedScanConfig keys = c;
  int64_t dvTile = c.shape.dvTile;
  if (!options.statesFeatureSplit || c.wgmma || c.splitTF32 ||
      ShapedType::isDynamic(dv) || dv <= dvTile)
    return keys;
  int64_t split = llvm::divideCeil(dv, dvTile);
  if (!llvm::isPowerOf2_64(split) || split > 4 || dvTile * split > 128 ||
      c.features % (16 * split) != 0 ||
      (dvTile * split / 8) % c.shape.warps != 0)
    return keys;
  keys.featureSplit = split;
  keys.features /= split;
  keys.shape.dvTile *= split;
  return keys;
}

/// The blocks of the keys-only kernel of config `keys` per batch element
/// and segment (grid y): its value tiles of `dv` columns, each in
/// `featureSplit` blocks.
static Value keysOnlyBlocks(HostIndex &h, const ChunkedScanConfig &keys,
                            Value dv) {
  return h.mul(h.atLeastOne(h.divideCeil(dv, h.constant(keys.shape.dvTile))),
               h.constant(keys.featureSplit));
}

/// Whether the chunk loops of `c` take wgmma (`options.wgmma`): 16-bit data,
/// F a multiple of 64 (rows of whole 128-byte swizzle blocks) and chunks of
/// 64 tokens (wgmma's M; the four row tiles of a key group are one
/// warpgroup).
static bool wgmmaApplies(const LinAttnToGPUKernelOptions &options,
                         const ChunkedScanConfig &c) {
  return options.wgmma && c.dataType.getIntOrFloatBitWidth() == 16 &&
         c.features % 64 == 0 && c.shape.chunk == 64;
}

/// Whether the chunk loops of `c`, which take wgmma for the scores, take it
/// for the state update too: bf16 data (f16's per-column state scaling,
/// `storeStateToShared`, needs each column in one warp), value tiles of
/// whole 128-byte swizzle blocks, and warpgroups that divide into the
/// feature blocks, each with a share of the value tile of whole blocks (at
/// most wgmma's N of 256).
static bool wgmmaStateApplies(const ChunkedScanConfig &c) {
  if (!c.wgmma || !c.dataType.isBF16() || c.shape.dvTile % 64 != 0 ||
      c.shape.warps % 4 != 0)
    return false;
  int64_t blocks = c.features / 64, groups = c.shape.warps / 4;
  return groups % blocks == 0 && c.stateColumns() % 64 == 0 &&
         c.stateColumns() <= 256;
}

/// Whether the chunk loops of `c`, whose scores and state update take
/// wgmma, may take it for their outputs too (option `wgmma-outputs`): each
/// warpgroup's m64 products cover the chunk's rows (chunks of 64, a
/// warpgroup per group of warps of the row tiles) and its N the group's
/// share of the value tile, whole 8-column tiles (16 bytes) up to 256. That
/// is F = 64 on one warpgroup and, with wgmma-chunks, F = 128 on two (32
/// columns each of a tile of 64). P V_c takes the masked scores from their
/// shared tile or, with `scoresInRegisters()` (one warpgroup), from the
/// registers the scores' accumulators were rounded into, as wgmma's A in
/// registers (`wgmmaRegisterAAsm`).
static bool wgmmaOutputsApply(const ChunkedScanConfig &c) {
  int64_t columns = c.shape.dvTile / c.shape.groups;
  return c.wgmmaState && c.shape.chunk == 64 &&
         c.shape.warps == 4 * c.shape.groups && columns % 8 == 0 &&
         columns <= 256;
}

/// Whether the chunk loops of `c` take their S tile unpadded in the 128-byte
/// swizzle (`swizzledState`): on sm_90 (wgmma, whose swizzle the kernels
/// already index), for 16-bit data in whole 128-byte rows (DT a multiple of
/// 64) read by mma.sync (not `wgmmaOutputs`, whose tile is swizzled
/// anyway), and only where the rows' padding costs the chunk loop a block
/// per H100 SM: the padding must not cost occupancy, and elsewhere the
/// kernels stay as they were. So far that is `scores-in-registers` at
/// F = 64: 58368 bytes (three blocks) padded, 57344 (four) swizzled.
static bool swizzledStateApplies(const ChunkedScanConfig &c) {
  if (!c.wgmma || c.dataBytes() != 2 || c.wgmmaOutputs ||
      c.shape.dvTile % 64 != 0 || c.shape.statePad == 0)
    return false;
  ChunkedScanConfig unpadded = c;
  unpadded.shape.statePad = 0;
  unpadded.swizzledState = true;
  auto blocks = [](const ChunkedScanConfig &config) {
    return sharedMemoryBlocks(kH100SM.sharedMemory,
                              chunkSharedBytes(config, ChunkTiles::All));
  };
  return blocks(unpadded) > blocks(c);
}

/// Asks ptxas (`.minnctapersm`) to fit `asked` blocks of the keys-only
/// kernel `kernel` (of config `c`: segment states, key-value summaries) to
/// an SM (option `states-min-blocks-per-sm`; 0: ptxas's choice). With -1,
/// the default, for 16-bit data at F = 64 and 128 and f32 data (tf32,
/// tf32x3) at F = 128 the blocks that leave each thread its share of the
/// state's f32 accumulators (with tf32x3 also of one feature tile's chunk
/// sums, `accumulateState`) and 96 registers beside them (104 without
/// wgmma's state update, whose B operands stay in shared memory), as many
/// as its shared memory allows on an H100, where that bounds the registers
/// at all (below 255). These kernels stage φ(K_c) and V_c and multiply them
/// once a chunk, the least work per byte of the chunked kernels: blocks per
/// SM are what keeps their copies in flight. ptxas (13) alone took
/// registers there that cost blocks: 226 for the normalized kernels at
/// F = 128 (2 blocks; bounded 160 on sm_90, 168 on sm_80: 3), 158 for the
/// unnormalized ones at F = 64 on wgmma (3; bounded 123: 4), 166 for
/// wgmma-chunks' two warpgroups (1; bounded 127: 2), 238 to 250 for f32
/// data at F = 128 in two slots of async copies (2; bounded 168: 3, on
/// sm_90 and sm_80), and given a bound it takes all of it. Elsewhere the
/// rule was mixed: where ptxas needed fewer registers than it gives (on
/// sm_90 F = 16, 80, 96, 160 and 192, and tf32 at F = 80 to 112 and above
/// 128) it cost one to three blocks, though it gained some on sm_80
/// (F = 16 and 32) and in tf32 at F = 64, so it is not set there. None of
/// them spills. Counting tf32x3's chunk sums leaves it no bound at F = 128
/// (two blocks, as ptxas takes them alone); bounded to three blocks, as
/// tf32's, ptxas spilled 500 bytes in the chunk loop.
static void boundStatesRegisters(gpu::GPUFuncOp kernel,
                                 const ChunkedScanConfig &c, int64_t asked) {
  int64_t threads = c.threads(), blocks = asked;
  if (asked < 0) {
    // Split kernels (`keysOnlyConfig`) by their own features in
    // 16-bit data (F = 256 in two blocks of 128: 168 registers, 3 blocks,
    // where ptxas alone took 226 normalized), in f32 by K's (F = 128 in
    // two blocks of 64).
    bool applies = c.dataBytes() == 2
                       ? c.features == 64 || c.features == 128
                       : c.dataType.isF32() && c.rowFeatures() == 128;
    if (!applies)
      return;
    int64_t accumulators = c.features * c.shape.dvTile / threads;
    if (c.splitTF32)
      accumulators += 16 * c.shape.dvTile / threads;
    int64_t registers =
        llvm::alignTo(accumulators + (c.wgmmaState ? 96 : 104), 8);
    blocks = blockLimits(kH100SM, registers,
                         chunkSharedBytes(c, ChunkTiles::Keys), threads)
                 .blocks();
    if (blocks < 1 || kH100SM.registers / (blocks * threads) >= 255)
      return;
  }
  if (blocks > 0)
    kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    Builder(kernel).getI32IntegerAttr(blocks));
}

std::optional<std::string> Converter::convertChunked(ScanOp op) {
  RankedTensorType vType = tensorTypeOf(op.getValues());
  auto sType = cast<RankedTensorType>(op.getFinalState().getType());
  int64_t features = tensorTypeOf(op.getQueryFeatures()).getShape().back();
  int64_t maxChunk = options.chunkSize;
  if (auto hint = op.getChunkSize())
    maxChunk = std::min<int64_t>(maxChunk, *hint);
  int64_t dvSize = vType.getShape().back();
  // The staged shape for value tiles of at most `valueTile` columns.
  auto stagedFor = [&](int64_t valueTile) {
    LinAttnToGPUKernelOptions tiled = options;
    tiled.valueTile = valueTile;
    return stagedChunkedScanShape(tiled, features, maxChunk, dvSize,
                                  vType.getElementType(), /*mayCopyAsync=*/true,
                                  options.scoresInRegisters,
                                  /*scanChunks=*/true, op.isNormalized());
  };
  std::optional<StagedShape> staged = stagedFor(options.valueTile);
  if (!staged)
    return std::string("no chunk shape fits F = ") + std::to_string(features);
  const ChunkedScanShape &shape = staged->shape;
  if (auto reason = valueTilesUnsupported(dvSize, shape.dvTile))
    return reason;
  TokenMajorRows rows = tokenMajorRows(
      op, featureSourceOf(op.getQueryFeatures()),
      featureSourceOf(op.getKeyFeatures()), valueSourceOf(op.getValues()));
  // The configuration of a chunk loop of `staged`'s shape.
  auto configOf = [&](const StagedShape &staged) {
    ChunkedScanConfig c{staged.shape,
                        features,
                        vType.getElementType(),
                        sType.getElementType(),
                        tensorTypeOf(op.getResult()).getElementType(),
                        featureSourceOf(op.getQueryFeatures()),
                        featureSourceOf(op.getKeyFeatures()),
                        op.isReverse(),
                        op.isNormalized(),
                        op.hasInitialState(),
                        op.isNormalized() ? op.getEps()->convertToDouble()
                                          : 0.0,
                        options.vectorLoads,
                        scanWritesState(op),
                        !op.getFinalNormalizer().use_empty(),
                        staged.asyncCopies,
                        /*narrowOffsets=*/true};
    c.wgmma = wgmmaApplies(options, c);
    c.wgmmaState = wgmmaStateApplies(c);
    c.prefetchChunks = staged.prefetchChunks;
    c.shapeSlots = c.copyStages = staged.slots;
    c.registerScores = options.scoresInRegisters;
    c.wgmmaOutputs = options.wgmmaOutputs && wgmmaOutputsApply(c);
    c.unrollStaging = options.unrollStaging;
    c.phaseClocks = options.phaseClocks;
    c.splitTF32 = options.tf32x3 && c.dataType.isF32();
    // Staging applies the values' feature map; their sizes are read from
    // its input as well, so that nothing else uses the map's result.
    c.v = valueSourceOf(op.getValues());
    c.tokenMajor = static_cast<bool>(rows);
    c.bulkCopies = options.bulkCopies;
    chooseCopyStages(c, options.copyStages);
    // The outputs by wgmma read S in the 128-byte swizzle, which needs no
    // padding (with the scores in registers at F = 64 that is 57344 bytes
    // instead of 58368: four blocks per H100 SM instead of three).
    if (c.wgmmaOutputs) {
      c.shape.statePad = 0;
    } else if (swizzledStateApplies(c)) {
      c.swizzledState = true;
      c.shape.statePad = 0;
    }
    return c;
  };
  ChunkedScanConfig c = configOf(*staged);
  // The chunk loop that small grids take (`small-grid-value-tile`): the
  // shape searched again for the narrower tile, kept where it is narrower
  // and its chunks no longer (the 32-bit offsets' bound counts `shape`'s).
  std::optional<ChunkedScanConfig> smallGrid;
  if (options.smallGridValueTile > 0 && options.sequenceParallelBlocks > 0) {
    std::optional<StagedShape> small = stagedFor(options.smallGridValueTile);
    if (small && small->shape.dvTile < shape.dvTile &&
        small->shape.chunk <= shape.chunk &&
        !valueTilesUnsupported(dvSize, small->shape.dvTile))
      smallGrid = configOf(*small);
  }
  Value values = c.v.tensor;
  ChunkedScanConfig wide = c;
  wide.narrowOffsets = false;
  Location loc = op.getLoc();
  int64_t chunk = shape.chunk, dvTile = shape.dvTile;
  int64_t batchDims = vType.getRank() - 2;
  rewriter.setInsertionPoint(op);

  // Sizes fold to constants where they are static, so that the variant is
  // chosen here for static shapes and at run time otherwise.
  HostIndex h{rewriter, loc};
  auto index = [&](int64_t value) { return h.constant(value); };
  auto mul = [&](Value x, Value y) { return h.mul(x, y); };
  auto minU = [&](Value x, Value y) { return h.minU(x, y); };
  auto atLeastOne = [&](Value x) { return h.atLeastOne(x); };
  auto divideCeil = [&](Value x, Value y) { return h.divideCeil(x, y); };
  Value one = index(1);
  Value n = h.size(values, -2);
  Value dv = h.size(values, -1);
  Value batch = h.batch(values, batchDims);
  Value tiles = atLeastOne(divideCeil(dv, index(dvTile)));
  if (rows)
    rows.heads = h.size(values, batchDims - 1);

  // Which variant: batch-parallel when batch × value tiles reaches half of
  // `sequenceParallelBlocks` blocks (by default one per SM: every SM has
  // work, and the segments' extra reads of k and v, half the compulsory
  // bytes, would cost more than more blocks gain); otherwise the sequence
  // splits into enough segments of whole chunks to reach the target, none
  // shorter than `minSegmentTokens`: each segment costs its chunk states'
  // round trip through global memory and two more launches, and on an
  // H100 (bf16, F = 64) segments of 256 tokens made B8·H8·T1K 1.3 times
  // slower than one block per sequence, while segments of 1.4K tokens
  // (B8·H16·T4K) and longer were faster (the default, 1024).
  Value chunks = divideCeil(n, index(chunk));
  Value perSegment, segments;
  // wgmma-chunks' kernels fit two blocks per H100 SM, the default target
  // (264): their segments stay within it, one wave, where rounding up would
  // start a second for the blocks past it.
  std::tie(perSegment, segments) =
      h.segments(mul(batch, tiles), chunks, options.sequenceParallelBlocks,
                 llvm::divideCeil(options.minSegmentTokens, chunk),
                 /*atMostTarget=*/c.shape.blocksPerSM > 0);

  // Kernels with 64-bit offsets are named "..._wide_...".
  auto name = [&](StringRef kind, const ChunkedScanConfig &config) {
    return kernelName(("linattn_scan_" + kind + "_" +
                       (config.narrowOffsets ? "" : "wide_") + c.suffix())
                          .str());
  };
  // The chunk loops ask ptxas for registers that let `minBlocksPerSM`
  // blocks share an SM (.minnctapersm with the block size of .maxntid).
  // Unasked, those in a shape chosen for a number of blocks per SM
  // (wgmma-chunks' two warpgroups) ask for that number where ptxas alone
  // holds them below it and fits it without spilling (ptxas 13, F = 128):
  // the unnormalized ones with outputs by wgmma (152 registers alone, one
  // block of eight warps per SM; 128 asked) and the normalized ones with
  // outputs by mma.sync (the segments' outputs 144 alone, 126 asked). The
  // unnormalized ones with outputs by mma.sync fit two blocks alone (119),
  // and the normalized ones with outputs by wgmma spill within 128 (160
  // alone: one block).
  auto chunkLoop = [&](StringRef kind, const ChunkedScanConfig &config,
                       bool segmented) {
    gpu::GPUFuncOp kernel = buildChunkLoop(
        rewriter, loc, kernels(), name(kind, config), config, segmented);
    int64_t blocks = options.minBlocksPerSM;
    if (blocks == 0 && config.wgmmaOutputs != config.normalized)
      blocks = config.shape.blocksPerSM;
    if (blocks > 0)
      kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                      rewriter.getI32IntegerAttr(blocks));
    return kernel;
  };
  auto launchFused = [&](const ChunkedScanConfig &config) {
    gpu::GPUFuncOp kernel = chunkLoop("chunked", config, /*segmented=*/false);
    return launchScan(op, kernel, c.q.tensor, c.k.tensor, values, features,
                      config.shape.dvTile, config.threads(), rows);
  };
  // `launch` of the chunk loop of `config`, or of the small-grid tiles where
  // their grid, `perTile` blocks a batch element and tile, stays within one
  // block per SM (half of `sequenceParallelBlocks`), as the wider tiles
  // would leave SMs idle there: on an H100 B8·H8·T1K·D64 (too short for
  // segments) took 0.0797 ms in 64 blocks of 64 columns, 0.0556 in 128 of
  // 32. Segments take them only with the same chunks, the segments' unit.
  auto narrowed =
      [&](const ChunkedScanConfig &config, Value perTile, bool segmented,
          function_ref<SmallVector<Value>(const ChunkedScanConfig &)> launch)
      -> SmallVector<Value> {
    if (!smallGrid || (segmented && smallGrid->shape.chunk != chunk))
      return launch(config);
    ChunkedScanConfig small = *smallGrid;
    small.narrowOffsets = config.narrowOffsets;
    int64_t most = options.sequenceParallelBlocks / 2;
    Value smallTiles = atLeastOne(divideCeil(dv, index(small.shape.dvTile)));
    // Segments are at least two: sizes that rule the tiles out statically
    // compile one chunk loop.
    std::optional<int64_t> staticBatch = getConstantIntValue(batch);
    std::optional<int64_t> staticTiles = getConstantIntValue(smallTiles);
    if (staticBatch && staticTiles &&
        *staticBatch * *staticTiles * (segmented ? 2 : 1) > most)
      return launch(config);
    Value fits = rewriter.createOrFold<arith::CmpIOp>(
        loc, arith::CmpIPredicate::ule, mul(mul(batch, smallTiles), perTile),
        index(most));
    return h.choose(
        fits, [&]() -> SmallVector<Value> { return launch(small); },
        [&]() -> SmallVector<Value> { return launch(config); });
  };
  auto fused = [&](const ChunkedScanConfig &config) {
    return narrowed(config, one, /*segmented=*/false, launchFused);
  };

  // The segment states and the scan over them serve both variants: the
  // states kernel keeps 64-bit offsets (with 32-bit ones ptxas gave its
  // staging loop more registers: 127 instead of 96 at F = 64, and spills
  // in tf32), the scan has no chunk loop.
  gpu::GPUFuncOp statesKernel, scanKernel;
  ChunkedScanConfig states = keysOnlyConfig(options, wide, dvSize);
  auto parallel = [&](const ChunkedScanConfig &config, Value perSegment,
                      Value segments) -> SmallVector<Value> {
    Value statesTiles = keysOnlyBlocks(h, states, dv);
    if (!statesKernel) {
      chooseCopyStages(states, options.statesCopyStages, ChunkTiles::Keys);
      statesKernel = buildSegmentStates(rewriter, loc, kernels(),
                                        name("segment_states", c), states);
      boundStatesRegisters(statesKernel, states, options.statesMinBlocksPerSM);
      scanKernel =
          buildSegmentScan(rewriter, loc, kernels(), name("segment_prefix", c),
                           c.segmentScan(), /*prefixes=*/true);
    }
    SmallVector<Value> prefixes = launchSegmentPrefixes(
        op, {statesKernel, scanKernel, {}, statesTiles}, c.k.tensor, values,
        batch, tiles, perSegment, segments, c.threads(), rows);
    auto launch = [&](const ChunkedScanConfig &outputs) -> SmallVector<Value> {
      return {launchSegmentOutputs(
          op, chunkLoop("segment_outputs", outputs, /*segmented=*/true),
          c.q.tensor, c.k.tensor, values, prefixes, batch,
          atLeastOne(divideCeil(dv, index(outputs.shape.dvTile))), perSegment,
          segments, outputs.threads(), rows)};
    };
    Value o = narrowed(config, segments, /*segmented=*/true, launch).front();
    return withSegmentState(op, o, prefixes);
  };

  // The variant for `segments` segments of `perSegment` chunks:
  // sequence-parallel where there are several.
  auto variant = [&](const ChunkedScanConfig &config, Value perSegment,
                     Value segments) -> SmallVector<Value> {
    Value split = rewriter.createOrFold<arith::CmpIOp>(
        loc, arith::CmpIPredicate::ugt, segments, one);
    return h.choose(
        split,
        [&]() -> SmallVector<Value> {
          return parallel(config, perSegment, segments);
        },
        [&]() -> SmallVector<Value> { return fused(config); });
  };

  // 32-bit offsets. A chunk loop's offsets count from the lowest row of its
  // block's positions, R rows (N batch-parallel, a segment's in segments):
  // rows below R + C (the last chunk's tokens past the end included) of W =
  // max(F, Dv, 128) elements at most (H times that token-major: the rows of
  // the other heads lie between), plus the columns of one value tile past
  // Dv and of one 16-byte group, together below (R + C + 2) · W. The
  // launch keeps that within `narrowOffsetLimit`: batch-parallel while N +
  // C + 2 ≤ limit / W, in segments of at most (limit / W - C - 2) / C
  // chunks beyond (whatever `sequence-parallel-blocks` says). That needs
  // segments of one chunk to fit, W ≤ limit / (2C + 2); larger W (Dv above
  // 16.5M at the default limit) takes 64-bit offsets: decided here for a
  // static Dv, at run time between the two sets of kernels for a dynamic
  // one.
  SmallVector<Value> results;
  int64_t limit = std::min(options.narrowOffsetLimit, kMaxNarrowOffsetLimit);
  if (limit <= 0) {
    results = variant(wide, perSegment, segments);
  } else {
    Value width = rewriter.createOrFold<arith::MaxUIOp>(
        loc, dv, index(std::max<int64_t>(features, 128)));
    if (rows)
      width = mul(width, rows.heads);
    Value fits = rewriter.createOrFold<arith::CmpIOp>(
        loc, arith::CmpIPredicate::ule, width, index(limit / (2 * chunk + 2)));
    results = h.choose(
        fits,
        [&]() -> SmallVector<Value> {
          Value rows =
              rewriter.createOrFold<arith::DivUIOp>(loc, index(limit), width);
          Value whole = rewriter.createOrFold<arith::CmpIOp>(
              loc, arith::CmpIPredicate::ule,
              rewriter.createOrFold<arith::AddIOp>(loc, n, index(chunk + 2)),
              rows);
          Value longest = rewriter.createOrFold<arith::DivUIOp>(
              loc,
              rewriter.createOrFold<arith::SubIOp>(loc, rows, index(chunk + 2)),
              index(chunk));
          Value bounded = rewriter.createOrFold<arith::SelectOp>(
              loc, whole, perSegment, minU(perSegment, longest));
          Value count = rewriter.createOrFold<arith::SelectOp>(
              loc, whole, segments, atLeastOne(divideCeil(chunks, bounded)));
          return variant(c, bounded, count);
        },
        [&]() -> SmallVector<Value> {
          return variant(wide, perSegment, segments);
        });
  }
  replaceScan(op, results, rows);
  return std::nullopt;
}

/// The configuration of the linear form's chunked kernels for F =
/// `features`, `data` and the feature source `q` (the queries' or the
/// keys'), staging by async copies where `mayCopyAsync` and they apply
/// (`stagedChunkedScanShape`); nothing, with the reason in `reason`, when
/// no shape fits.
static std::optional<ChunkedScanConfig>
linearConfig(const LinAttnToGPUKernelOptions &options, int64_t features,
             Type data, Type state, Type result, FeatureSource source,
             int64_t dv, bool mayCopyAsync, std::string &reason) {
  std::optional<StagedShape> staged = stagedChunkedScanShape(
      options, features, options.chunkSize, dv, data, mayCopyAsync);
  if (!staged) {
    reason = "no chunk shape fits F = " + std::to_string(features);
    return std::nullopt;
  }
  if (auto tiles = valueTilesUnsupported(dv, staged->shape.dvTile)) {
    reason = *tiles;
    return std::nullopt;
  }
  ChunkedScanConfig c{staged->shape,
                      features,
                      data,
                      state,
                      result,
                      source,
                      source,
                      /*reverse=*/false,
                      /*normalized=*/false,
                      /*hasInit=*/false,
                      /*eps=*/0.0,
                      options.vectorLoads,
                      /*writesState=*/true,
                      /*finalNormalizer=*/false,
                      staged->asyncCopies,
                      /*narrowOffsets=*/false};
  c.prefetchChunks = staged->prefetchChunks;
  c.shapeSlots = c.copyStages = staged->slots;
  c.splitTF32 = options.tf32x3 && data.isF32();
  c.bulkCopies = options.bulkCopies;
  c.unrollStaging = options.unrollStaging;
  return c;
}

std::optional<std::string> Converter::convertChunked(KvSummaryOp op) {
  RankedTensorType vType = tensorTypeOf(op.getValues());
  RankedTensorType sType = tensorTypeOf(op.getState());
  FeatureSource k = featureSourceOf(op.getKeyFeatures());
  int64_t features = tensorTypeOf(op.getKeyFeatures()).getShape().back();
  std::string reason;
  std::optional<ChunkedScanConfig> config = linearConfig(
      options, features, vType.getElementType(), sType.getElementType(),
      sType.getElementType(), k, vType.getShape().back(),
      /*mayCopyAsync=*/true, reason);
  if (!config)
    return reason;
  ChunkedScanConfig &c = *config;
  // z only where it is used (the first value tile's blocks sum the keys).
  c.finalNormalizer = !op.getNormalizer().use_empty();
  // Token-major keys and values are read where the transposes took them
  // from (`ChunkedScanConfig::tokenMajor`).
  Value keys = tokenMajorSource(k.tensor);
  Value rawValues = tokenMajorSource(op.getValues());
  c.tokenMajor = keys && rawValues;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  HostIndex h{rewriter, loc};
  Value values = op.getValues();
  int64_t batchDims = vType.getRank() - 2;
  Value m = h.size(values, -2), dv = h.size(values, -1);
  Value batch = h.batch(values, batchDims);
  Value tiles = h.atLeastOne(h.divideCeil(dv, h.constant(c.shape.dvTile)));
  Value chunks = h.divideCeil(m, h.constant(c.shape.chunk));
  // Segments of the keys, each summed by its own blocks, where the batch
  // alone would leave SMs idle (the rule of the sequence-parallel scan).
  Value perSegment, segments;
  std::tie(perSegment, segments) =
      h.segments(h.mul(batch, tiles), chunks, options.sequenceParallelBlocks);
  ChunkedScanConfig split = keysOnlyConfig(options, c, vType.getShape().back());
  std::string suffix = c.suffixOf(mapName(k));
  chooseCopyStages(split, options.statesCopyStages, ChunkTiles::Keys);
  gpu::GPUFuncOp states = buildSegmentStates(
      rewriter, loc, kernels(),
      kernelName("linattn_kv_summary_chunked_" + suffix), split);
  boundStatesRegisters(states, split, options.statesMinBlocksPerSM);

  // One segment writes S and z directly (their layout is that of one
  // segment's sums); several write [batch, segments, ...] sums that a
  // second kernel adds up.
  OpFoldResult fSize = rewriter.getIndexAttr(features);
  OpFoldResult dvSize = sizeOf(rewriter, loc, values, -1);
  SmallVector<OpFoldResult> sShape =
      leadingThen(rewriter, loc, values, batchDims, {fSize, dvSize});
  SmallVector<OpFoldResult> zShape =
      leadingThen(rewriter, loc, values, batchDims, {fSize});
  auto zType = cast<RankedTensorType>(op.getNormalizer().getType());
  std::optional<int64_t> known = getConstantIntValue(segments);
  bool single = known && *known == 1;
  LaunchBuilder sums(rewriter, loc, module);
  sums.input(c.tokenMajor ? keys : k.tensor);
  sums.input(c.tokenMajor ? rawValues : values);
  if (single) {
    sums.output(sType, sShape);
    sums.output(zType, zShape);
  } else {
    auto flat = RankedTensorType::get({ShapedType::kDynamic}, c.stateType);
    Value slots = h.mul(h.mul(batch, segments), h.constant(features));
    sums.output(flat, {h.mul(slots, dv)});
    sums.output(flat, {slots});
  }
  sums.scalars({m, dv, perSegment, segments});
  if (c.tokenMajor)
    sums.scalar(h.size(values, batchDims - 1));
  SmallVector<Value> results = sums.launch(
      states, {batch, keysOnlyBlocks(h, split, dv), segments}, split.threads());
  if (!single) {
    gpu::GPUFuncOp total =
        buildSegmentScan(rewriter, loc, kernels(),
                         kernelName("linattn_kv_summary_segments_" + suffix),
                         c.segmentScan(), /*prefixes=*/false);
    LaunchBuilder sum(rewriter, loc, module);
    sum.input(results[0]);
    sum.input(results[1]);
    sum.output(sType, sShape);
    sum.output(zType, zShape);
    sum.scalar(dv);
    sum.scalar(segments);
    Value elementTiles = h.atLeastOne(h.divideCeil(
        h.mul(h.constant(features), dv), h.constant(kSegmentScanThreads)));
    results = sum.launch(
        total, {batch, gridSizeYZ(rewriter, loc, elementTiles), h.constant(1)},
        kSegmentScanThreads);
  }
  rewriter.replaceOp(op, results);
  return std::nullopt;
}

/// Chunks per segment of the query readout: blocks aim at four times
/// `sequence-parallel-blocks`, as each is short (no state carried).
static constexpr int64_t kReadoutBlocksPerTarget = 4;

std::optional<std::string> Converter::convertChunked(QueryReadoutOp op) {
  RankedTensorType qType = tensorTypeOf(op.getQueryFeatures());
  RankedTensorType sType = tensorTypeOf(op.getState());
  FeatureSource q = featureSourceOf(op.getQueryFeatures());
  int64_t features = qType.getShape().back();
  std::string reason;
  std::optional<ChunkedScanConfig> config = linearConfig(
      options, features, qType.getElementType(), sType.getElementType(),
      tensorTypeOf(op.getResult()).getElementType(), q, sType.getShape().back(),
      /*mayCopyAsync=*/false, reason);
  if (!config)
    return reason;
  ChunkedScanConfig &c = *config;
  c.normalized = op.isNormalized();
  c.eps = c.normalized ? op.getEps()->convertToDouble() : 0.0;
  c.writesState = false;
  // Token-major queries and result: the kernel reads the queries where the
  // transpose took them from and writes O as its transpose would
  // (`ChunkedScanConfig::tokenMajor`).
  Value queries = tokenMajorSource(q.tensor);
  linalg::TransposeOp result;
  if (queries)
    result = tokenMajorUser(op.getResult());
  c.tokenMajor = static_cast<bool>(result);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  HostIndex h{rewriter, loc};
  int64_t batchDims = qType.getRank() - 2;
  Value n = h.size(q.tensor, -2), dv = h.size(op.getState(), -1);
  Value batch = h.batch(q.tensor, batchDims);
  Value tiles = h.atLeastOne(h.divideCeil(dv, h.constant(c.shape.dvTile)));
  Value chunks = h.divideCeil(n, h.constant(c.shape.chunk));
  Value perSegment, segments;
  std::tie(perSegment, segments) =
      h.segments(h.mul(batch, tiles), chunks,
                 kReadoutBlocksPerTarget * options.sequenceParallelBlocks);
  gpu::GPUFuncOp kernel = buildReadout(
      rewriter, loc, kernels(),
      kernelName("linattn_query_readout_chunked_" + c.suffixOf(mapName(q))), c);

  LaunchBuilder launch(rewriter, loc, module);
  launch.input(c.tokenMajor ? queries : q.tensor);
  launch.input(op.getState());
  if (c.normalized)
    launch.input(op.getNormalizer());
  OpFoldResult dvSize = sizeOf(rewriter, loc, op.getState(), -1);
  if (c.tokenMajor) {
    addTokenMajorOutput(rewriter, launch, result, queries, dvSize);
  } else {
    launch.output(tensorTypeOf(op.getResult()),
                  leadingThen(rewriter, loc, q.tensor, batchDims,
                              {sizeOf(rewriter, loc, q.tensor, -2), dvSize}));
  }
  launch.scalar(n);
  launch.scalar(dv);
  launch.scalar(perSegment);
  if (c.tokenMajor)
    launch.scalar(h.size(q.tensor, batchDims - 1));
  Value o =
      launch.launch(kernel, {batch, tiles, segments}, c.threads()).front();
  if (c.tokenMajor) {
    replaceByTokenMajor(rewriter, op.getResult(), result, o);
    rewriter.eraseOp(op);
  } else {
    rewriter.replaceOp(op, o);
  }
  return std::nullopt;
}
