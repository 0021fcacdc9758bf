//===- SimtChunkScan.h - the chunkwise scan on CUDA cores -------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The causal scan chunk by chunk on CUDA cores, in the state's type (option
// `simt-chunks`): what the recurrent scan computes token by token, as the
// chunkwise form's register-blocked products. See SimtChunkScan.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_LIB_CONVERSION_LINATTNTOGPU_SIMTCHUNKSCAN_H
#define LINATTN_LIB_CONVERSION_LINATTNTOGPU_SIMTCHUNKSCAN_H

#include "KernelBuilders.h"

namespace mlir::linattn::gpukernels {

/// Threads per block of the chunkwise CUDA-core scan.
inline constexpr int64_t kSimtThreads = 256;

/// Tokens per chunk of the chunkwise CUDA-core scan.
inline constexpr int64_t kSimtChunk = 32;

/// The block shape of the chunkwise CUDA-core scan.
struct SimtChunkShape {
  /// F rounded up to a multiple of 32 (the state's rows the threads share
  /// out; the rows past F are zeros).
  int64_t paddedFeatures;
  /// Value columns per block (32, 64 or 128).
  int64_t columns;
  /// Slots per staged tile: 2 where the chunks two ahead are copied by
  /// cp.async during the current one, 1 where each chunk is staged before
  /// its products (with the next chunk prefetched into L2).
  int64_t slots;
  /// Bytes of shared memory a block takes.
  int64_t sharedBytes;
};

/// The shape of the chunkwise CUDA-core scan for F = `features` features,
/// `dv` value columns (dynamic: up to 128 a block) and a state of
/// `elementBytes` bytes an element, within `sharedLimit` bytes of shared
/// memory a block, with two slots only where `async` (copies by cp.async)
/// allows them; a reason when it has none (a state other than f32 and f64,
/// F of 0 or above 128, or too little shared memory).
FailureOr<SimtChunkShape> simtChunkShape(int64_t features, int64_t dv,
                                         int64_t elementBytes, bool async,
                                         int64_t sharedLimit,
                                         std::string &reason);

/// What a chunkwise CUDA-core scan kernel is specialized for.
struct SimtChunkConfig {
  int64_t features;
  SimtChunkShape shape;
  Type stateType;  // S, z and the staged tiles
  Type dataType;   // V
  Type resultType; // O
  FeatureSource q, k, v;
  bool normalized, reverse, hasInit, writesState, needZ;
  double eps;
  /// Whether chunks are copied by cp.async (q, k and V in the state's type,
  /// sm_80 and later): ahead into the second slot, or with one slot a
  /// chunk's copies all in flight at once before their wait.
  bool async;
  /// Instrumentation (option `phase-clocks`, `PhaseClocks`): a workgroup
  /// buffer of `kPhaseClockSlots` i64 last, the records buffer the last
  /// argument.
  bool phaseClocks = false;
  /// Whether Q, K, V and O are token-major (`TokenRows`): a kernel argument
  /// H after the sizes, rows H·W elements apart.
  bool tokenMajor = false;
  /// Sequence-parallel: the tokens of a unit of `perSegment`, the argument
  /// that sizes the segments (the staged blocks of the segment states
  /// kernel that computed the starting states).
  int64_t segmentUnit = 0;
};

/// The kernel of the chunkwise CUDA-core scan `c`:
/// - batch-parallel (`segmented` false): the arguments of
///   `Converter::launchScan` (`scanKernelArgs`); grid (batch, value tiles).
/// - a sequence-parallel scan's segment outputs (`segmented`): q, k, v, the
///   states and normalizers at the segments' starts (flat [batch,
///   segments, F, Dv] and [batch, segments, F]), O, N, Dv, units of
///   `segmentUnit` tokens per segment, segments; grid (batch, value tiles,
///   segments).
/// With `tokenMajor`, then H; with `phaseClocks`, then the records of
/// `PhaseClocks::report`. Blocks of `kSimtThreads` threads.
gpu::GPUFuncOp buildSimtChunkKernel(RewriterBase &rewriter, Location loc,
                                    gpu::GPUModuleOp kernels, StringRef name,
                                    const SimtChunkConfig &c, bool segmented);

} // namespace mlir::linattn::gpukernels

#endif // LINATTN_LIB_CONVERSION_LINATTNTOGPU_SIMTCHUNKSCAN_H
