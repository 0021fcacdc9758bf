//===- ChunkedScan.h - the chunked kernels' shapes and builders -*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// What the chunked (tensor-core) kernels of a scan and of the linear form
// share between their conversion (ChunkedScan.cpp), their shapes
// (ChunkedScanShape.cpp) and their bodies (ChunkKernels.cpp): the tile
// shape, the configuration every kernel of one op is specialized for, and
// the kernel builders. Internal to the conversion.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_LIB_CONVERSION_LINATTNTOGPU_CHUNKEDSCAN_H
#define LINATTN_LIB_CONVERSION_LINATTNTOGPU_CHUNKEDSCAN_H

#include "KernelBuilders.h"
#include "Occupancy.h"

namespace mlir::linattn::gpukernels {

/// Tile sizes of the chunked scan kernel. Each of the C / 16 row tiles of a
/// chunk (16 tokens) has G warps: one G-th of the keys of the scores and of
/// the value columns of the outputs each.
struct ChunkedScanShape {
  int64_t chunk;  // C tokens per chunk
  int64_t groups; // G warps per row tile
  int64_t warps;  // W = G·C / 16
  int64_t dvTile; // DT value columns per block
  // Elements of padding of the rows of V_c and of S (see valueRowPadding).
  int64_t valuePad, statePad;
  // Whether the rows of V_c and of S are unpadded and take the unit swizzle
  // instead (`SharedMatrix::unitSwizzle`): f32 tiles of whole 128-byte
  // rows that would have the narrow padding.
  bool valueSwizzle = false, stateSwizzle = false;
  // Blocks per SM the shape's shared memory is sized for on the one chip
  // it targets (`wgmma-chunks` shapes: 2 on an H100); 0 for the portable
  // shapes. Segments then stay within `sequence-parallel-blocks`.
  int64_t blocksPerSM = 0;

  int64_t rowTiles() const { return chunk / 16; }
};

/// Elements of padding at the end of each row of a shared tile: 16 bytes,
/// which puts the eight 16-byte rows one ldmatrix phase reads in distinct
/// banks (unpadded rows of 64 or 128 16-bit elements all start in bank 0).
inline int64_t rowPadding(int64_t dataBytes) { return 16 / dataBytes; }

/// Elements of padding the value-column tiles (V_c and S, DT columns) take
/// where the shared memory has room. 16-bit ones are read by transposing
/// ldmatrix: `rowPadding`. tf32 ones are gathered element by element as B
/// fragments, lane 4g+t reading row k0 + t, column n0 + g, and S is stored
/// from accumulators two columns at a time (LLVM pairs the stores): rows 8
/// words apart modulo 32 (DT + 8 for DT = 16, 32, 64) put a warp's gathers
/// and a half-warp's 8-byte stores in distinct banks, where rows 4 words
/// apart have two lanes in each bank. Where the wider padding does not fit,
/// tiles of whole 128-byte rows (DT a multiple of 32) take no padding and
/// the unit swizzle instead (`ChunkedScanShape::valueSwizzle`), which
/// spreads the gathers and the paired stores over the banks as well.
inline int64_t valueRowPadding(int64_t dataBytes) {
  return dataBytes == 4 ? 8 : rowPadding(dataBytes);
}

/// Whether chunk loops of `groups` warps per row tile and `dataBytes`-byte
/// data can keep their masked scores in registers: one warp takes all keys
/// of its rows, and m16n8k16's accumulators rounded in pairs are the A
/// fragments of P·V (tf32's m16n8k8 fragments take other columns).
inline bool scoresFitRegisters(int64_t groups, int64_t dataBytes) {
  return groups == 1 && dataBytes == 2;
}

/// A chunked kernel's shape and how it stages its tiles.
struct StagedShape {
  ChunkedScanShape shape;
  /// `ChunkedScanConfig::asyncCopies`, `prefetchChunks` and `shapeSlots`.
  bool asyncCopies;
  int64_t prefetchChunks;
  int64_t slots;
};

/// The shape of the chunked kernels on `data` (`chunkedScanShape`, whose
/// other arguments these are) and whether they stage by async copies
/// (16-byte groups, so only with vector loads), where `mayCopyAsync`: in two
/// slots of each staged tile, or one with `copy-stages=1`, the shape
/// searched for that many.
/// f32 data (tf32) takes twice the shared memory per slot: it copies into
/// two slots only where they leave the chunk, the value tile and the warps
/// as they are with one (F = 64: chunks of 32, tiles of 64 in 76544 B
/// instead of 48896), and into one where two would shrink them (F = 128:
/// one-warp blocks of 16 columns and chunks of 16, eight a head, instead of
/// chunks of 32 and tiles of 64, two a head). With one slot a chunk's
/// copies are all in flight at once but none overlaps the products, so the
/// chunk loops then prefetch the next chunk into L2 as they issue one
/// unless `prefetch-chunks` says otherwise (`prefetchChunks` -1).
/// Synchronous staging prefetches `prefetch-chunks` chunks ahead, by
/// default none; two or more slots never. `scanChunks`: the scan's chunk
/// loops, which take wgmma at chunks of 64 (`wgmmaApplies`), so that
/// `wgmma-chunks` may widen their chunks to 64; `normalized`: theirs are
/// the normalized loops, which `wgmma-chunks=auto` leaves unwidened.
std::optional<StagedShape>
stagedChunkedScanShape(const LinAttnToGPUKernelOptions &options,
                       int64_t features, int64_t maxChunk, int64_t dv,
                       Type data, bool mayCopyAsync,
                       bool registerScores = false, bool scanChunks = false,
                       bool normalized = false);

/// What the chunked kernels of one scan are specialized for.
struct ChunkedScanConfig {
  ChunkedScanShape shape;
  int64_t features;
  Type dataType;   // f16 or bf16: Q, K, V and the tiles in shared memory
  Type stateType;  // f32
  Type resultType; // O
  FeatureSource q, k;
  bool reverse, normalized, hasInit;
  double eps;
  /// Whether staging may load 16 bytes at a time.
  bool vectorLoads;
  /// Whether the final state S and z is written (`scanWritesState`): the
  /// kernels of a scan whose S and z have no uses take no buffers for them.
  bool writesState;
  /// Whether the final normalizer z is used: an unnormalized scan whose z
  /// has no uses accumulates none.
  bool finalNormalizer;
  /// Whether the chunk loops stage the next chunks with cp.async while they
  /// compute the current one (`stagedChunkedScanShape`): φ(Q_c), φ(K_c) and
  /// V_c then have `copyStages` slots each.
  bool asyncCopies;
  /// Whether the chunk loops address global memory by 32-bit offsets from
  /// the lowest row of the block's scan positions (the launch keeps them
  /// below `narrowOffsetLimit`, see `Converter::convertChunked`), or by
  /// index ones.
  bool narrowOffsets;
  /// Whether the chunk loops compute the scores with sm_90's wgmma (see
  /// `wgmmaApplies`): φ(Q_c) and φ(K_c) are then staged in the 128-byte
  /// swizzled layout (`swizzledIndex`) by every kernel of the scan.
  bool wgmma = false;
  /// Whether the state update φ(K_c)ᵀV_c is wgmma too (see
  /// `wgmmaStateApplies`): V_c is then staged in the 128-byte swizzle, and
  /// warpgroup i (warps 4i..4i+3) accumulates feature block i mod (F / 64)
  /// of its share of the value tile (`stateColumns`), warp w rows
  /// 16(w mod 4)..16(w mod 4) + 15 of the block.
  bool wgmmaState = false;
  /// Whether the chunk loops compute their outputs P V_c + φ(Q_c) S by wgmma
  /// too (option `wgmma-outputs`, see `wgmmaOutputsApply`): each warpgroup
  /// multiplies the masked scores and φ(Q_c), K-major, by its columns of
  /// V_c and of the state rounded to the data type, MN-major, all four in
  /// the 128-byte swizzle (the scores and state tiles then 1024-byte
  /// aligned).
  bool wgmmaOutputs = false;
  /// Whether the chunk loops' S tile, 16-bit and read by mma.sync, drops
  /// its row padding for wgmma's 128-byte swizzle (`swizzledStateApplies`):
  /// feature rows of blocks of 64 columns, each row's 16-byte units
  /// permuted by its row, which ldmatrix reads and a warp's accumulator
  /// stores write without bank conflicts, as the padding did.
  bool swizzledState = false;
  /// Whether the loops over a thread's 16-byte groups of a chunk are
  /// unrolled (option `unroll-staging`, `ChunkEmitter::forEachGroup`).
  bool unrollStaging = false;
  /// Whether the chunk loops and segment states time their phases
  /// (option `phase-clocks`, `PhaseClocks`): a workgroup buffer of
  /// `kPhaseClockSlots` i64 after the others, the blocks' records in a last
  /// argument, and a printer kernel for them.
  bool phaseClocks = false;
  /// How many chunks ahead of the one they stage the chunk loops prefetch
  /// into L2 (`ChunkEmitter::prefetchGroup`) when they stage synchronously
  /// or copy into one slot; 0 with async copies in two or more, which have
  /// the next chunk in flight already.
  int64_t prefetchChunks = 0;
  /// Where the values come from (`valueSourceOf`); no map where the
  /// kernels take V as it is.
  FeatureSource v = {};
  /// f32 data (tf32): whether the tiles stay f32 and each product is three
  /// of the operands' tf32 parts (option `tf32x3`, see `MmaBuilder::mma`),
  /// or the tiles are rounded to tf32 as they are staged.
  bool splitTF32 = false;
  /// Whether the kernels' row operands (the scan's Q, K, V and O, the
  /// summary's K and V, the readout's Q and O) are token-major
  /// (`TokenRows`): a kernel argument H after the sizes, batch element b
  /// the rows of head b mod H of outer element b / H, H·W elements apart
  /// (W = F or Dv), as transposes from and to [..., N, H, W] hold them,
  /// instead of the contiguous rows of [..., H, N, W].
  bool tokenMajor = false;

  /// Blocks that share out K's features in the keys-only kernels (option
  /// `states-feature-split`, `keysOnlyConfig`): with more than one,
  /// `features` is each block's share of the rowFeatures() features of K's
  /// rows, and a block's state tile those rows of S.
  int64_t featureSplit = 1;
  int64_t rowFeatures() const { return features * featureSplit; }

  int64_t threads() const { return 32 * shape.warps; }
  /// With `wgmmaState`: the value columns of a warpgroup's state (wgmma's N).
  int64_t stateColumns() const {
    return shape.dvTile * (features / 64) / (shape.warps / 4);
  }
  /// With `asyncCopies`, the slots per staged tile the chunk shape was
  /// chosen for (`StagedShape::slots`): 2, or 1 where the kernels copy a
  /// chunk at a time (`stagedChunkedScanShape`).
  int64_t shapeSlots = 2;
  /// With `asyncCopies`, the slots of each staged tile: copies of the next
  /// copyStages - 1 chunks are in flight while the products read one, or,
  /// with one slot, all of a chunk's copies before its products
  /// (`chooseCopyStages`).
  int64_t copyStages = 2;
  /// Slots of the staged tiles: `copyStages` with async copies.
  int64_t slots() const { return asyncCopies ? copyStages : 1; }
  /// With `asyncCopies`, whether whole chunks are staged by sm_90's bulk
  /// copies (option `bulk-copies`): one copy per row of the tiles whose
  /// rows are padded (`bulkFeatures`, `bulkValues`; wgmma's swizzle is not
  /// contiguous), completing on an mbarrier per slot. A chunk cut short by
  /// the sequence or the value columns, and tiles in a swizzle, take
  /// cp.async as before.
  bool bulkCopies = false;
  bool bulkFeatures() const { return bulkCopies && asyncCopies && !wgmma; }
  bool bulkValues() const {
    return bulkCopies && asyncCopies && !wgmmaState && !shape.valueSwizzle;
  }
  /// Whether the kernels take an mbarrier per slot for bulk copies.
  bool usesBulkCopies() const { return bulkFeatures() || bulkValues(); }
  /// Whether any kernel accumulates z: for the denominators or the result.
  bool keepsNormalizer() const { return normalized || finalNormalizer; }
  /// The scan over the segment states of these kernels.
  SegmentScanConfig segmentScan() const {
    return {features, stateType, hasInit, writesState, keepsNormalizer()};
  }
  /// Whether the denominators are added up in shared memory: the warps of a
  /// row tile each hold the row sums of their keys.
  bool sharedRowSums() const { return normalized && shape.groups > 1; }
  /// Whether the chunk loops may keep their masked scores in registers
  /// (option `scores-in-registers`, see `scoresInRegisters`).
  bool registerScores = false;
  /// Whether the chunk loops keep their masked scores in registers, not in
  /// a shared tile: asked for and possible (`scoresFitRegisters`).
  bool scoresInRegisters() const {
    return registerScores && scoresFitRegisters(shape.groups, dataBytes());
  }
  /// Whether the chunk loops scale each column of the state by a power of
  /// two before rounding it to the data type (f16, whose range a long
  /// sequence's state outgrows; see `ChunkEmitter::storeStateToShared`).
  bool scaledState() const { return dataType.isF16(); }
  /// Row lengths of the shared tiles (padded, see `rowPadding` and
  /// `valueRowPadding`): φ(Q_c) and φ(K_c) are C x F, V_c is C x DT, S is
  /// F x DT, the scores C x C (unpadded in the 128-byte swizzle of the
  /// outputs by wgmma).
  int64_t ldF() const { return wgmma ? features : features + pad(); }
  int64_t ldV() const {
    return wgmmaState ? shape.dvTile : shape.dvTile + shape.valuePad;
  }
  int64_t ldS() const { return shape.dvTile + shape.statePad; }
  int64_t ldC() const {
    return wgmmaOutputs ? shape.chunk : shape.chunk + pad();
  }
  int64_t pad() const { return rowPadding(dataBytes()); }
  /// Bytes of an element of Q, K, V and the staged tiles.
  int64_t dataBytes() const { return dataType.getIntOrFloatBitWidth() / 8; }
  /// The scan kernels' name suffix: direction, then `suffixOf` the
  /// queries' map.
  std::string suffix() const {
    return (reverse ? "reverse_" : "forward_") + suffixOf(mapName(q));
  }
  /// `map`, then the normalization and the layout.
  std::string suffixOf(StringRef map) const {
    return (map + (normalized ? "_normalized" : "") +
            (tokenMajor ? "_token_major" : ""))
        .str();
  }
};

/// The tiles a chunked kernel stages in shared memory.
enum class ChunkTiles {
  /// The chunk loops: φ(Q_c), φ(K_c), V_c, the scores, S and z.
  All,
  /// The segment states and the key-value summary: φ(K_c) and V_c.
  Keys,
  /// The query readout: φ(Q_c), S and z.
  Queries,
};

/// Workgroup memory of a chunked kernel with `tiles`, in bytes, as its
/// buffers are laid out (each at its alignment).
int64_t chunkSharedBytes(const ChunkedScanConfig &c, ChunkTiles tiles);

/// Sets `c.copyStages` (with async copies) to the most slots up to `asked`
/// (options `copy-stages`, `states-copy-stages`) with which the workgroup
/// memory of the kernels with `tiles` stays within 96 KiB, 113 KiB for
/// shapes of two blocks per SM (`ChunkedScanShape::blocksPerSM`,
/// wgmma-chunks), and at least the shape's slots (`shapeSlots`) or `asked`
/// if fewer. A shape chosen for one slot keeps one in the kernels that
/// stage queries (the chunk loops, the readout): more would exceed the
/// shared memory it was chosen for. With more than one slot the kernels
/// prefetch nothing (`prefetchChunks` 0).
void chooseCopyStages(ChunkedScanConfig &c, int64_t asked,
                      ChunkTiles tiles = ChunkTiles::All);

/// The chunk loop: one block per batch element, value tile and segment of
/// the sequence walks the segment's chunks in order, the state in registers.
///
/// Batch-parallel (`segmented` false): the arguments of `launchScan`, grid
/// (batch, value tiles); one segment, starting from the initial state (or
/// zero), which writes the final state and normalizer (`writesState`).
///
/// Segment outputs (`segmented` true, pass 3 of the sequence-parallel scan):
/// q, k, v, the f32 states and normalizers at each segment's start (pass 2),
/// O, N, Dv, chunks per segment and segments; grid (batch, value tiles,
/// segments).
gpu::GPUFuncOp buildChunkLoop(RewriterBase &rewriter, Location loc,
                              gpu::GPUModuleOp kernels, StringRef name,
                              const ChunkedScanConfig &c, bool segmented);

/// Sequence-parallel pass 1: the contribution of each segment of the
/// sequence to the state, Σ_c φ(K_c)ᵀ V_c and Σ_t φ(k_t) over its chunks,
/// into flat [batch, segments, F, Dv] and [batch, segments, F] f32 buffers.
/// Arguments k, v, the two buffers, N, Dv, chunks per segment, segments;
/// grid (batch, value tiles, segments).
gpu::GPUFuncOp buildSegmentStates(RewriterBase &rewriter, Location loc,
                                  gpu::GPUModuleOp kernels, StringRef name,
                                  const ChunkedScanConfig &c);

/// The query readout O = φ(Q)S, divided by φ(Q)z + eps when normalized, on
/// tensor cores. Arguments φ(Q) (or Q with a fused map), S and z (f32; z
/// only when normalized), O, N, Dv, chunks per segment; grid (batch, value
/// tiles, segments of the sequence). Each block rounds its F x DT tile of S
/// to the data type once (f16: its columns scaled as the chunk loops scale
/// the state, see `ChunkEmitter::storeStateToShared`) and walks its
/// segment's chunks, which are independent: per chunk the products of
/// φ(Q_c) with the tile, as in the chunk loop without scores.
gpu::GPUFuncOp buildReadout(RewriterBase &rewriter, Location loc,
                            gpu::GPUModuleOp kernels, StringRef name,
                            const ChunkedScanConfig &c);

} // namespace mlir::linattn::gpukernels

#endif // LINATTN_LIB_CONVERSION_LINATTNTOGPU_CHUNKEDSCAN_H
