//===- ChunkedScanShape.cpp - tiles of the chunked kernels ----------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The shape of the chunked kernels (chunk, value tile, warps, padding) from
// the shared memory and registers they would take, how they stage their
// tiles, and which ops they take at all.
//
//===----------------------------------------------------------------------===//

#include "ChunkedScan.h"

using namespace mlir;
using namespace mlir::linattn;
using namespace mlir::linattn::gpukernels;

/// Whether blocks of `wider` bytes of shared memory fit as many to an SM as
/// blocks of `bytes` on an H100 and an A100: padding must not cost
/// occupancy.
static bool sameBlocksPerSM(int64_t bytes, int64_t wider) {
  for (int64_t perSM : {kH100SM.sharedMemory, kA100SM.sharedMemory})
    if (sharedMemoryBlocks(perSM, bytes) != sharedMemoryBlocks(perSM, wider))
      return false;
  return true;
}

/// Shared memory a block of the chunked kernels may take with value tiles of
/// 128 columns, as dynamic shared memory (linattn-gpu-dynamic-shared-memory):
/// below the 99 KiB per block of sm_86, sm_89 and sm_120, the least of the
/// GPUs from sm_80 on.
static constexpr int64_t kWideTileSharedBytes = 96 * 1024;

/// Shared memory a block of the chunked kernels may take with value tiles of
/// 64 columns in dynamic shared memory: two such blocks fit an A100's SM
/// (164 KiB, 1 KiB of each block reserved).
static constexpr int64_t kTwoBlockSharedBytes = 81 * 1024;

/// Shared memory a block of the chunked kernels may take with
/// `wgmmaChunks` (sm_90 only): two such blocks fit an H100's SM (228 KiB,
/// 1 KiB of each block reserved).
static constexpr int64_t kWgmmaChunkSharedBytes = 113 * 1024;

/// Picks the chunk, value tile and warps of the chunked scan for F features:
/// the largest chunk up to `maxChunk`, then the widest value tile up to
/// `maxValueTile`, then the fewest warps per row tile (1 or 2; only
/// `rowTileWarps` where it is not 0), such that
/// the shared memory (φ(Q_c), φ(K_c), V_c, the masked scores unless
/// `registerScores` keeps them in registers where they fit
/// (`scoresFitRegisters`), and the state, in the data type of `dataBytes`
/// bytes, rows padded; z and, with two warps per row tile, their partial row
/// sums in f32; `columnBytes` per value column) fits the 48 KiB of static
/// shared memory and the state fragments each thread accumulates fit 64
/// registers. More warps per row tile spread the state over more threads, so
/// that a block covers more value columns and fewer blocks recompute the
/// same scores (F = 128: 64 columns on four warps instead of 32 on two). Value
/// tiles of 128 columns (only when `maxValueTile` asks for them and `dv`, the
/// number of value columns, is dynamic or above 64) take dynamic shared memory
/// up to `kWideTileSharedBytes`, the staged tiles in `slots` slots counted, and
/// the state and output fragments together at most 96 registers: every block
/// computes its chunks' scores once for 128 columns, where tiles of 64 compute
/// them twice and read φ(Q), φ(K) twice for Dv = 128. Tiles of `dynamicTile`
/// columns and wider take dynamic shared memory the same way, up to
/// `dynamicLimit` bytes (for tiles below 128 columns); none narrower than
/// `minValueTile` is taken. `swizzledFeatures` counts the rows of φ(Q_c) and
/// φ(K_c) unpadded, as wgmma's 128-byte swizzle stages them.
static std::optional<ChunkedScanShape> searchChunkedScanShape(
    int64_t features, int64_t maxChunk, int64_t maxValueTile, int64_t dv,
    int64_t dataBytes, int64_t slots, int64_t columnBytes, int64_t dynamicTile,
    int64_t dynamicLimit, int64_t minValueTile, bool registerScores,
    int64_t rowTileWarps, bool swizzledFeatures = false) {
  int64_t pad = rowPadding(dataBytes);
  // φ(Q_c) and φ(K_c) rows: wgmma's swizzle takes no padding.
  int64_t featurePad = swizzledFeatures ? 0 : pad;
  for (int64_t chunk = 64; chunk >= 16; chunk /= 2) {
    if (chunk > maxChunk)
      continue;
    for (int64_t dvTile = std::min<int64_t>(maxValueTile, 128);
         dvTile >= std::max<int64_t>(minValueTile, 8); dvTile /= 2) {
      for (int64_t groups = 1; groups <= 2; ++groups) {
        if (rowTileWarps && groups != rowTileWarps)
          continue;
        int64_t warps = groups * chunk / 16;
        // Every warp needs a value tile of the state and of the outputs,
        // and a pair of key tiles of the scores.
        if (dvTile < 8 * warps || (chunk / 16) % groups != 0)
          continue;
        // The scores' tile, unless they stay in registers.
        int64_t scores = registerScores && scoresFitRegisters(groups, dataBytes)
                             ? 0
                             : chunk * (chunk + pad);
        int64_t elements = 2 * chunk * (features + featurePad) +
                           chunk * (dvTile + pad) + scores +
                           features * (dvTile + pad);
        int64_t bytes = dataBytes * elements + 4 * features +
                        (groups > 1 ? 4 * groups * chunk : 0) +
                        columnBytes * dvTile;
        int64_t registers = (features / 16) * (dvTile / 8 / warps) * 4;
        int64_t limit = 48 * 1024;
        if (dvTile > 64 && !ShapedType::isDynamic(dv) && dv <= 64)
          continue;
        if (dvTile >= dynamicTile) {
          int64_t staged =
              2 * chunk * (features + featurePad) + chunk * (dvTile + pad);
          bytes += (slots - 1) * dataBytes * staged;
          limit = dvTile >= 128 ? kWideTileSharedBytes : dynamicLimit;
          int64_t outputs = dvTile / groups / 8 * 4;
          if (registers + outputs > 96)
            continue;
        }
        if (bytes > limit || registers > 64)
          continue;
        // The wider padding of the value-column tiles, V_c first, where it
        // still fits without costing blocks per SM: it never changes the
        // tiles' shape. The second slots of tiles within `limit` for one
        // (async copies) count too: they make the block's shared memory
        // dynamic, up to kWideTileSharedBytes.
        int64_t extra = valueRowPadding(dataBytes) - pad;
        int64_t valuePad = pad, statePad = pad;
        int64_t slotBytes = 0, padLimit = limit;
        if (dvTile < dynamicTile && slots > 1) {
          slotBytes =
              (slots - 1) * dataBytes *
              (2 * chunk * (features + featurePad) + chunk * (dvTile + pad));
          padLimit = kWideTileSharedBytes;
        }
        auto widen = [&](int64_t rows, int64_t &rowPad) {
          int64_t wider = bytes + dataBytes * extra * rows;
          if (extra && wider + slotBytes <= padLimit &&
              sameBlocksPerSM(bytes + slotBytes, wider + slotBytes)) {
            rowPad += extra;
            bytes = wider;
          }
        };
        widen(slots * chunk, valuePad);
        widen(features, statePad);
        // f32 tiles left with the narrow padding: the unit swizzle instead.
        bool swizzles = dataBytes == 4 && dvTile % 32 == 0;
        bool valueSwizzle = swizzles && valuePad == pad;
        bool stateSwizzle = swizzles && statePad == pad;
        return ChunkedScanShape{chunk,
                                groups,
                                warps,
                                dvTile,
                                valueSwizzle ? 0 : valuePad,
                                stateSwizzle ? 0 : statePad,
                                valueSwizzle,
                                stateSwizzle};
      }
    }
  }
  return std::nullopt;
}

/// The chunked scan's shape (searchChunkedScanShape): tiles of 128 columns
/// in dynamic shared memory, and where 48 KiB would leave the value tiles
/// narrower than 64 columns and Dv wider than them, tiles of 64 (the largest
/// chunk with such tiles) in dynamic shared memory that leaves two blocks
/// per SM on an A100, else, where the tiles would be narrower than 32
/// columns, tiles of 32 in up to `kWideTileSharedBytes` (two blocks per SM
/// on an H100, one on an A100): every block of a head computes the scores
/// and stages φ(Q), φ(K) of every chunk, so narrower tiles repeat that work
/// and those reads. f32 data (tf32) takes twice the bytes: at F = 128
/// one-warp blocks of 16 columns and chunks of 16, eight a head, become
/// chunks of 32 and tiles of 64, two a head. 16-bit data at F = 80 or 96
/// (the normalized gradients' [g, h] and [V, 1] at Dv = 64, padded): chunks
/// of 64 and tiles of 32, two a head at Dv = 64, become chunks of 32 and
/// tiles of 64, one a head (as at F = 128). 16-bit data at F = 256 (FAVOR+'s
/// usual number of random features): one-warp blocks of 8 columns and
/// chunks of 16, eight a head at Dv = 64, each computing the scores over
/// all 256 features, become chunks of 32 and tiles of 32 on four warps, two
/// a head (the state's 256 rows of a tile of 64 columns would not fit the
/// registers of eight warps). With `groups` (1 or 2) only shapes of that
/// many warps per row tile.
static std::optional<ChunkedScanShape>
chunkedScanShapeOf(int64_t features, int64_t maxChunk, int64_t maxValueTile,
                   int64_t dv, int64_t dataBytes, int64_t slots,
                   int64_t columnBytes, bool registerScores, int64_t groups) {
  std::optional<ChunkedScanShape> shape = searchChunkedScanShape(
      features, maxChunk, maxValueTile, dv, dataBytes, slots, columnBytes,
      /*dynamicTile=*/128, kWideTileSharedBytes, /*minValueTile=*/8,
      registerScores, groups);
  // Wider tiles in dynamic shared memory, the widest that fits first.
  struct Tier {
    int64_t minValueTile, limit;
  };
  for (Tier tier :
       {Tier{64, kTwoBlockSharedBytes}, Tier{32, kWideTileSharedBytes}}) {
    if (!shape || shape->dvTile >= tier.minValueTile ||
        maxValueTile < tier.minValueTile ||
        (!ShapedType::isDynamic(dv) && dv <= shape->dvTile))
      continue;
    if (std::optional<ChunkedScanShape> wider = searchChunkedScanShape(
            features, maxChunk, maxValueTile, dv, dataBytes, slots, columnBytes,
            /*dynamicTile=*/tier.minValueTile, tier.limit, tier.minValueTile,
            registerScores, groups))
      return wider;
  }
  return shape;
}

/// `chunkedScanShapeOf` with `rowTileWarps` (option `row-tile-warps`, 1 or
/// 2) warps per row tile where a shape has them (chunks of 16 have no room
/// for two), else (and with 0) the fewest that fit.
static std::optional<ChunkedScanShape>
chunkedScanShape(int64_t features, int64_t maxChunk, int64_t maxValueTile,
                 int64_t dv, int64_t dataBytes, int64_t slots,
                 int64_t columnBytes, bool registerScores,
                 int64_t rowTileWarps) {
  if (rowTileWarps)
    if (std::optional<ChunkedScanShape> asked = chunkedScanShapeOf(
            features, maxChunk, maxValueTile, dv, dataBytes, slots, columnBytes,
            registerScores, rowTileWarps))
      return asked;
  return chunkedScanShapeOf(features, maxChunk, maxValueTile, dv, dataBytes,
                            slots, columnBytes, registerScores, /*groups=*/0);
}

/// Why the chunked kernels do not take `data` (f16 or bf16; f32 with
/// `tf32`), F = `features` and an accumulator of `state`, nothing when they
/// do.
static std::optional<std::string>
chunkedTypesUnsupported(Type data, bool tf32, int64_t features, Type state) {
  if (!data.isF16() && !data.isBF16() && !(tf32 && data.isF32()))
    return std::string(tf32 ? "the data type is not f16, bf16 or f32"
                            : "the data type is not f16 or bf16");
  if (!state.isF32())
    return std::string("the state is not f32");
  if (ShapedType::isDynamic(features) || features % 16 != 0)
    return std::string("the feature size is not a multiple of 16");
  // No features: the outputs are zeros, which the other kernels write.
  if (features == 0)
    return std::string("the feature size is 0");
  return std::nullopt;
}

/// Whether the features `operand` (or the input of its fused feature map)
/// hold `data`.
static bool featuresOf(Value operand, Type data) {
  return tensorTypeOf(operand).getElementType() == data &&
         tensorTypeOf(featureSourceOf(operand).tensor).getElementType() == data;
}

std::optional<std::string>
mlir::linattn::gpukernels::chunkedScanUnsupported(ScanOp op, bool tf32) {
  Type data = tensorTypeOf(op.getValues()).getElementType();
  if (!featuresOf(op.getQueryFeatures(), data) ||
      !featuresOf(op.getKeyFeatures(), data))
    return std::string("query, key and value types differ");
  if (!tensorTypeOf(op.getResult()).getElementType().isF32() &&
      tensorTypeOf(op.getResult()).getElementType() != data)
    return std::string("the result type is neither the data type nor f32");
  return chunkedTypesUnsupported(
      data, tf32, tensorTypeOf(op.getQueryFeatures()).getShape().back(),
      cast<RankedTensorType>(op.getFinalState().getType()).getElementType());
}

std::optional<std::string>
mlir::linattn::gpukernels::chunkedLinearUnsupported(KvSummaryOp op, bool tf32) {
  Type data = tensorTypeOf(op.getValues()).getElementType();
  if (!featuresOf(op.getKeyFeatures(), data))
    return std::string("key and value types differ");
  return chunkedTypesUnsupported(
      data, tf32, tensorTypeOf(op.getKeyFeatures()).getShape().back(),
      tensorTypeOf(op.getState()).getElementType());
}

std::optional<std::string>
mlir::linattn::gpukernels::chunkedLinearUnsupported(QueryReadoutOp op,
                                                    bool tf32) {
  Type data = tensorTypeOf(op.getQueryFeatures()).getElementType();
  if (!featuresOf(op.getQueryFeatures(), data))
    return std::string("the query features and their source types differ");
  return chunkedTypesUnsupported(
      data, tf32, tensorTypeOf(op.getQueryFeatures()).getShape().back(),
      tensorTypeOf(op.getState()).getElementType());
}

std::optional<StagedShape> gpukernels::stagedChunkedScanShape(
    const LinAttnToGPUKernelOptions &options, int64_t features,
    int64_t maxChunk, int64_t dv, Type data, bool mayCopyAsync,
    bool registerScores, bool scanChunks, bool normalized) {
  int64_t dataBytes = data.getIntOrFloatBitWidth() / 8;
  // f16 chunk loops keep two f32 scales per value column (`scaledState`).
  int64_t columnBytes = data.isF16() ? 8 : 0;
  auto shapeFor = [&](int64_t slots) {
    return chunkedScanShape(features, maxChunk, options.valueTile, dv,
                            dataBytes, slots, columnBytes, registerScores,
                            options.rowTileWarps);
  };
  bool async = mayCopyAsync && options.asyncCopies && options.vectorLoads;
  int64_t slots = async ? std::min<int64_t>(options.copyStages, 2) : 1;
  std::optional<ChunkedScanShape> shape = shapeFor(slots);
  // wgmma-chunks: chunks of 64 (whose scores take wgmma) in the shared
  // memory of two blocks per H100 SM, with tiles no narrower. bf16 at
  // F = 128 takes two warps per row tile unless `row-tile-warps` says
  // otherwise: two warpgroups, one per 64 features, so that the state
  // update takes wgmma too (`wgmmaStateApplies`), the state spread over
  // eight warps (119 registers instead of 223 with one warpgroup). `Auto`
  // takes that shape for the unnormalized loops alone, the case a GPU
  // measured faster; the normalized ones (two blocks of eight warps per SM
  // as well, untimed) and one warpgroup need `On`.
  bool twoGroups =
      options.rowTileWarps != 1 && data.isBF16() && features == 128;
  bool widen =
      options.wgmmaChunks == WgmmaChunks::On ||
      (options.wgmmaChunks == WgmmaChunks::Auto && twoGroups && !normalized);
  if (shape && scanChunks && options.wgmma && widen && dataBytes == 2 &&
      features % 64 == 0 && shape->chunk < 64 && maxChunk >= 64) {
    auto search = [&](int64_t groups) -> std::optional<ChunkedScanShape> {
      std::optional<ChunkedScanShape> wide = searchChunkedScanShape(
          features, /*maxChunk=*/64, options.valueTile, dv, dataBytes, slots,
          columnBytes, /*dynamicTile=*/8, kWgmmaChunkSharedBytes,
          /*minValueTile=*/shape->dvTile, registerScores, groups,
          /*swizzledFeatures=*/true);
      if (wide && wide->chunk == 64)
        return wide;
      return std::nullopt;
    };
    std::optional<ChunkedScanShape> wide;
    if (twoGroups)
      wide = search(/*groups=*/2);
    if (!wide && options.wgmmaChunks == WgmmaChunks::On)
      wide = search(options.rowTileWarps);
    if (wide) {
      shape = wide;
      // Two blocks per SM, as kWgmmaChunkSharedBytes leaves the chunk loops.
      shape->blocksPerSM = 2;
    }
  }
  if (slots == 2 && data.isF32()) {
    std::optional<ChunkedScanShape> single = shapeFor(1);
    if (single &&
        (!shape || shape->chunk != single->chunk ||
         shape->dvTile != single->dvTile || shape->warps != single->warps)) {
      shape = single;
      slots = 1;
    }
  }
  if (!shape)
    return std::nullopt;
  // Synchronous staging has one slot too.
  int64_t prefetch = 0;
  if (slots == 1)
    prefetch =
        options.prefetchChunks >= 0 ? options.prefetchChunks : int64_t(async);
  return StagedShape{*shape, async, prefetch, slots};
}
