//===- LinAttnToGPU.h - linattn to GPU kernels ------------------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_CONVERSION_LINATTNTOGPU_LINATTNTOGPU_H
#define LINATTN_CONVERSION_LINATTNTOGPU_LINATTNTOGPU_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir {
class ModuleOp;

namespace linattn {

/// On a launch stub: the kernel it launches and which of the kernel's
/// arguments it writes.
inline constexpr llvm::StringLiteral kKernelAttrName = "linattn.gpu_kernel";
inline constexpr llvm::StringLiteral kOutputsAttrName = "linattn.gpu_outputs";
/// On a launch stub: the outputs of which the kernel writes only part (a
/// slice of a wider buffer), copied to the device before the launch too.
inline constexpr llvm::StringLiteral kUpdatedAttrName = "linattn.gpu_updated";

/// On an op `linattn-gpu-linalg-kernels` left to the host: why it is no
/// kernel (device-buffers' error repeats it).
inline constexpr llvm::StringLiteral kNoKernelAttrName =
    "linattn.gpu_no_kernel";

/// On a module whose public functions take device buffers and a stream
/// (`linattn-gpu-stage-buffers{device-buffers}`).
inline constexpr llvm::StringLiteral kDeviceBuffersAttrName =
    "linattn.device_buffers";

/// The inline PTX by which the chunk loops prefetch a line of global memory
/// into L2 (one operand, constraint "l": a generic address); the GPU
/// emulator runs it.
inline constexpr llvm::StringLiteral kPrefetchL2Asm = "prefetch.L2 [$0];";
/// The LLVM intrinsic of 2^x by the special-function unit,
/// `ex2.approx.ftz.f32`: subnormal inputs and results flushed to zero. The
/// tensor-core kernels' feature maps take exp from it, and the GPU emulator
/// runs it. LLVM's own `ex2.approx.f32` (math.exp2, or math.exp with `afn`)
/// keeps subnormal results, which takes ptxas three instructions more.
inline constexpr llvm::StringLiteral kEx2ApproxFtzIntrinsic =
    "llvm.nvvm.ex2.approx.ftz.f32";

/// The inline PTX of wgmma.mma_async m64n`n`k16 with A in registers, which
/// NVVM's op does not spell (it takes A from shared memory only): f32
/// accumulators, `bf16` or f16 A and B, B MN-major (transposed) from its
/// shared-memory descriptor. Operands: $0 .. $(n/2 - 1) the accumulators
/// (outputs, each tied to an input after the others), the four A registers
/// (b32: pairs of 16-bit elements in mma.sync's m16n8k16 A layout, per warp
/// of the warpgroup its 16 rows), the B descriptor (b64) and scale-d (b32:
/// 0 ignores the accumulators' inputs). The GPU emulator runs exactly the
/// strings this returns, with `wgmmaRegisterAConstraints(n)`.
inline std::string wgmmaRegisterAAsm(int64_t n, bool bf16) {
  int64_t d = n / 2;
  std::string accumulators;
  for (int64_t i = 0; i < d; ++i)
    accumulators += (i ? ", $" : "$") + std::to_string(i);
  auto operand = [&](int64_t i) { return "$" + std::to_string(d + i); };
  const char *type = bf16 ? "bf16" : "f16";
  return "{\n.reg .pred p;\nsetp.ne.b32 p, " + operand(5) +
         ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n) +
         "k16.f32." + type + "." + type + " {" + accumulators + "}, {" +
         operand(0) + ", " + operand(1) + ", " + operand(2) + ", " +
         operand(3) + "}, " + operand(4) + ", p, 1, 1, 1;\n}";
}
/// The constraints of `wgmmaRegisterAAsm(n, ...)`'s operands.
inline std::string wgmmaRegisterAConstraints(int64_t n) {
  int64_t d = n / 2;
  std::string constraints;
  for (int64_t i = 0; i < d; ++i)
    constraints += "=f,";
  constraints += "r,r,r,r,l,r";
  for (int64_t i = 0; i < d; ++i)
    constraints += "," + std::to_string(i);
  return constraints;
}
/// The largest `narrowOffsetLimit`: every offset a chunk loop computes is
/// below it, so unsigned 32-bit arithmetic cannot wrap.
inline constexpr int64_t kMaxNarrowOffsetLimit = int64_t(1) << 31;

/// The largest `sequenceParallelBlocks`: far past any GPU's blocks, and
/// small enough that the segment rules' products of it (the readout's
/// multiple, the recurrent scan's blocks of 128 threads) stay in 64 bits.
inline constexpr int64_t kMaxSequenceParallelBlocks = int64_t(1) << 31;

/// The SM version of the GPU `chip` names (sm_XY with any suffix: sm_90a is
/// 90); nullopt when the name is not sm_ and a number.
inline std::optional<unsigned> smVersion(llvm::StringRef chip) {
  unsigned version;
  if (!chip.consume_front("sm_") ||
      chip.take_while(llvm::isDigit).getAsInteger(10, version))
    return std::nullopt;
  return version;
}

/// Shared memory a block of `chip` (sm_XY, with any suffix) may take with the
/// opt-in attribute; nullopt if the name is not sm_ and a number.
inline std::optional<int64_t> maxSharedBytesPerBlock(llvm::StringRef chip) {
  std::optional<unsigned> sm = smVersion(chip);
  if (!sm)
    return std::nullopt;
  unsigned version = *sm;
  constexpr int64_t kib = 1024;
  if (version < 70)
    return 48 * kib;
  if (version == 75)
    return 64 * kib;
  if (version < 80)
    return 96 * kib;
  if (version == 80 || version == 87)
    return 163 * kib;
  if (version < 90 || version >= 120)
    return 99 * kib;
  return 227 * kib;
}

/// Shared memory a block may take wherever PTX for `chip` may run: its own
/// limit, at most the 99 KiB of sm_86, sm_89 and sm_120, for which the
/// driver compiles PTX of sm_80 and sm_90 too (only kernels with sm_90a's
/// instructions, whose PTX runs on sm_90 alone, may take the 227 KiB of
/// `maxSharedBytesPerBlock`); nullopt if the name is not sm_ and a number.
inline std::optional<int64_t>
portableSharedBytesPerBlock(llvm::StringRef chip) {
  std::optional<int64_t> bytes = maxSharedBytesPerBlock(chip);
  if (!bytes)
    return std::nullopt;
  return std::min<int64_t>(*bytes, 99 * 1024);
}

/// `wgmma-chunks`: never, where measured faster, or wherever they fit.
enum class WgmmaChunks { Off, Auto, On };

/// `value` of the option `wgmma-chunks` ("false", "auto" or "true").
std::optional<WgmmaChunks> parseWgmmaChunks(llvm::StringRef value);

/// How `convertLinAttnToGPUKernels` shapes its kernels.
struct LinAttnToGPUKernelOptions {
  /// Threads per block of the scan kernel (128: measured the fastest of 32
  /// and 128 on every shape of the benchmark, on an H100).
  int64_t scanTile = 128;
  /// Adjacent threads sharing a value column in the step kernel, each with
  /// F / scanFeatureLanes features of it; in the recurrent scan, a warp
  /// covers 32 / scanFeatureLanes value columns (see scanThreadColumns). A
  /// power of two up to 32; lowered for an op until it divides F, and to 1
  /// for the scan when scanTile, for the step when its block of at most
  /// blockSize threads is not a multiple of 32: the lanes add their sums
  /// with warp shuffles.
  int64_t scanFeatureLanes = 4;
  /// Value columns per thread of the recurrent scan (a power of two up to
  /// 8): each φ(q), φ(k) element a thread loads from shared memory serves
  /// that many columns of its state. The scan's columns then share their
  /// features among scanFeatureLanes · scanThreadColumns threads (lowered
  /// like scanFeatureLanes, at most 32), so that a warp still covers
  /// 32 / scanFeatureLanes columns.
  int64_t scanThreadColumns = 4;
  /// Most threads per block of the other kernels.
  int64_t blockSize = 128;
  /// Largest state column the scan keeps in registers, in 32-bit registers
  /// (F for an f32 state, 2F for f64).
  int64_t maxRegisterState = 128;
  /// Leave ops without a kernel to the host lowering instead of failing.
  bool hostFallback = true;
  /// Causal scans with f16/bf16 data and an f32 state use the chunked
  /// tensor-core kernel (off: always the recurrent kernel).
  bool chunkedScan = true;
  /// The linear form (kv_summary, query_readout) with f16/bf16 data and an
  /// f32 state uses the chunked tensor-core kernels (off: the scalar ones).
  bool chunkedLinear = true;
  /// Largest chunk of the chunked scan kernel, in tokens (16, 32 or 64).
  int64_t chunkSize = 64;
  /// Widest value tile of the chunked scan kernel (8, 16, 32, 64 or 128
  /// columns per block; 128 in dynamic shared memory). A block computes its
  /// chunks' scores whatever its width, so narrower tiles cost tensor-core work
  /// and q, k reads (from L2 where the blocks of a batch element run together)
  /// for more blocks of the batch-parallel kernel, which reads k and v once
  /// where the sequence-parallel one reads them twice.
  int64_t valueTile = 64;
  /// The value tile of the chunked scan's chunk loop (the batch-parallel
  /// kernel, or the segments' outputs with the same chunks) where its grid
  /// of such tiles stays within half of `sequenceParallelBlocks` (one block
  /// per H100 SM by default), as with a short sequence or segments capped
  /// by `minSegmentTokens`: the tiles of `valueTile` would leave SMs idle
  /// there. 0 (or a tile no narrower than the shape's) keeps `valueTile`'s
  /// everywhere.
  int64_t smallGridValueTile = 32;
  /// Warps per 16-row tile of the chunked kernels' chunks (1 or 2), each
  /// with its share of the chunk's keys and of the value tile's columns; 0
  /// takes the fewest that fit. Two double a block's warps at the same
  /// shared memory (tf32 at F = 64: 4 warps and 128 registers instead of 2
  /// and 255, 12 warps per H100 SM instead of 6), for fragments of φ(Q_c)
  /// loaded by both warps of a row tile.
  int64_t rowTileWarps = 0;
  /// Blocks per SM the chunked scan's chunk loops ask ptxas to make room
  /// for (`.minnctapersm`: registers capped at 65536 / (blocks × threads),
  /// spilling what does not fit); 0 leaves the registers to ptxas.
  int64_t minBlocksPerSM = 0;
  /// `minBlocksPerSM` for the chunked kernels that stage φ(K_c) and V_c
  /// only (the segment states, the key-value summaries), which have the
  /// least work per byte. -1, the default, asks for the blocks that leave
  /// each thread its share of the state's accumulators and 96 registers
  /// beside them (104 without wgmma's state update) where ptxas (13) was
  /// seen to take more than that costs: 16-bit data at F = 64 and 128,
  /// f32 data at F = 128 (`boundStatesRegisters`).
  int64_t statesMinBlocksPerSM = -1;
  /// Blocks the chunked and recurrent scans aim to launch. When the
  /// batch-parallel kernel would launch fewer than half as many (by default
  /// one per H100 SM), the sequence splits into enough segments of whole
  /// chunks (the recurrent scan: staged blocks of tokens) to reach this, run
  /// sequence-parallel (segment states, a scan over them, then the
  /// segments' outputs: three kernels); 0 never splits. The recurrent scan
  /// counts blocks of 128 threads, so that a `scanTile` of 256 threads is
  /// two blocks and one of 32 a quarter; blocks of 512 threads, each all an
  /// SM holds, aim at half of this, one per SM, and no more.
  int64_t sequenceParallelBlocks = 264;
  /// No segment is shorter than this many tokens (rounded up to whole
  /// chunks or staged blocks; 0: one): each costs its states' round trip
  /// through global memory and two more launches, which segments of 256
  /// tokens did not repay on an H100 (the chunked scan).
  int64_t minSegmentTokens = 1024;
  /// Causal scans that take the recurrent kernel (f32 and f64 states: the
  /// strict-fp32 scan) run chunkwise on CUDA cores instead, where F is at
  /// most 128 and the block fits `sharedBytesPerBlock`
  /// (`SimtChunkScan.cpp`): the chunk's scores and its products with the
  /// state as register-blocked products in the state's type, 1.31 times the
  /// recurrent form's multiply-adds at F = Dv = 128 (1.44 at 64) without its
  /// sums across lanes per token; the sequence-parallel variant keeps the
  /// recurrent kernel's segment states. Off until a GPU has measured it.
  bool simtChunks = false;
  /// Shared memory a block may take wherever the kernels may run
  /// (`portableSharedBytesPerBlock` of the chip), for the kernels that size
  /// themselves to it (`simtChunks`).
  int64_t sharedBytesPerBlock = 99 * 1024;
  /// Causal scans with f32 data and an f32 state take the chunked kernel
  /// too, on tf32 tensor cores (10-bit mantissas in the products).
  bool tf32 = false;
  /// With `tf32`: each tf32 product of the chunked kernels is three, of the
  /// operands split into high and low tf32 parts (hi·hi + hi·lo + lo·hi),
  /// for about f32's accuracy.
  bool tf32x3 = false;
  /// The chunked kernels stage global memory 16 bytes per load where the
  /// buffers are 16-byte aligned (tested at run time); off: element by
  /// element always.
  bool vectorLoads = true;
  /// The chunk loops of the chunked kernels (f16/bf16, with vector loads)
  /// copy the next chunk to shared memory with cp.async while they compute
  /// the current one, in two slots per staged tile (more than 48 KiB of
  /// shared memory for F = 64: `linattn-gpu-dynamic-shared-memory` moves
  /// such kernels to dynamic shared memory). On by default: on an H100 the
  /// chunk loops are bound by the latency of their loads, and overlapping
  /// them with the products made every shape of the benchmark 1.2 to 1.8
  /// times as fast (bench/results), despite fewer blocks per SM. The
  /// recurrent scan with f32 data stages its blocks of tokens the same way
  /// (4-byte copies), not yet measured on a GPU.
  bool asyncCopies = true;
  /// With `asyncCopies`, the chunked kernels' slots per staged tile (1 to
  /// 4): the copies of the next `copyStages` - 1 chunks are in flight
  /// while the products read the current one. On an H100 the segment
  /// states kernel moved 87% of DRAM's peak with three blocks per SM and
  /// one chunk of 16 KiB ahead each (B8·H16·D64), 38% with two blocks of
  /// 12 KiB (B2·H16·D128): the loads in flight per SM, not the work, set
  /// its pace. Taken where the chunk loops' shared memory stays within
  /// 96 KiB (113 KiB for `wgmmaChunks`' shapes), else the most that fit:
  /// bf16 at F = 128 takes 3 (87 KiB instead of 65: two blocks per H100
  /// SM instead of three, as many as the batch-parallel grid of
  /// B8·H16·D128 fills), at F = 64 also 3 (90 KiB instead of 66: two
  /// blocks per SM instead of three, which does cost the sequence-parallel
  /// grids). Off (2) until a GPU has measured it. With 1, each chunk's
  /// copies are all issued, then waited for, before its products (the
  /// chunk shape chosen for one slot), with the next chunk prefetched into
  /// L2 (`prefetchChunks`): what f32 data takes wherever its second slots
  /// would shrink the chunks. The kernels that stage keys and values only
  /// take `statesCopyStages`.
  int64_t copyStages = 2;
  /// `copyStages` for the chunked kernels that stage φ(K_c) and V_c only:
  /// the sequence-parallel scan's segment states and the linear form's
  /// key-value summaries, within 96 KiB of their own shared memory (a
  /// third of the chunk loops'): at F = 64 three slots take 48 KiB, four
  /// 64 KiB (three blocks per H100 SM; two slots leave the four that
  /// `statesMinBlocksPerSM` gives 16-bit data on wgmma); at F = 128 three
  /// take 39 KiB. The B2·H16·D128
  /// profile's states kernel (38% of DRAM's peak with one chunk of 12 KiB
  /// in flight per block) is what they are for. Off (2) until a GPU has
  /// measured it.
  int64_t statesCopyStages = 2;
  /// The kernels that stage φ(K_c) and V_c only share out the features
  /// between their blocks where the value columns take several tiles: at
  /// Dv = 128 in tiles of 64 (F = 128), two blocks of 64 features and all
  /// 128 columns each instead of two of 128 features and 64 columns, which
  /// both mapped and read all of φ(K_c). See `keysOnlyConfig`.
  bool statesFeatureSplit = true;
  /// With `asyncCopies` on sm_90 and later, the chunked kernels stage whole
  /// chunks by bulk copies: `cp.async.bulk` (the TMA unit) of each row of
  /// the tiles whose rows are padded (φ(Q_c), φ(K_c) unless wgmma swizzles
  /// them, V_c unless wgmma or the unit swizzle does), one thread a row,
  /// completing on an mbarrier per slot that thread 0 arms with the
  /// chunk's bytes. A row per copy instead of 16 bytes per cp.async: the
  /// F = 128 bf16 chunk loop issues 96 copies a chunk instead of 1280, and
  /// holds no registers for them. Chunks cut short by the sequence or Dv,
  /// and swizzled tiles, keep cp.async. Off until a GPU has measured it.
  bool bulkCopies = false;
  /// The chunk loops compute their scores with sm_90's wgmma (their module
  /// then needs chip sm_90a) where it applies (`wgmmaApplies`: f16/bf16, F
  /// a multiple of 64, chunks of 64 tokens); φ(Q_c) and φ(K_c) are then
  /// staged in wgmma's 128-byte swizzled layout. On by default: 1.07 to
  /// 1.14 times faster at F = 64 on an H100 (bench/results).
  bool wgmma = true;
  /// With `wgmma` (sm_90): chunks of 64 where the shared memory budgets of
  /// the chunk loops, which hold on every chip from sm_80 on, leave them
  /// smaller (16-bit data at F = 128: chunks of 32 in 65 KiB, mma.sync), in
  /// up to 113 KiB of dynamic shared memory, so that their scores take
  /// wgmma. Two such blocks fit an H100 SM where the portable
  /// shape fits three; the batch-parallel grid of B8·H16·D128 (256 blocks)
  /// fills two a SM either way. `Auto` takes them for the unnormalized bf16
  /// scan on two warpgroups only: 1.14 times faster at B2·H16·T16K·D128 on
  /// an H200 (bench/results/NVIDIA-H200-2026-11-30.md); the normalized
  /// loops (172 and 181 registers: one block of eight warps per SM) and
  /// one warpgroup (f16, `row-tile-warps=1`: up to 255 registers) are
  /// unmeasured and take them only with `On`.
  WgmmaChunks wgmmaChunks = WgmmaChunks::Auto;
  /// The chunk loops with one warp per row tile (f16/bf16) keep their masked
  /// scores in registers as the A fragments of P·V instead of a shared
  /// tile: 9 KiB less shared memory at chunks of 64 and no stores and
  /// ldmatrix of the scores (the emulator counts 22% fewer shared-memory
  /// wavefronts at F = 64), for about 15 more registers (F = 64, wgmma:
  /// 119 → 134), which cost some normalized and f16 kernels a block per SM
  /// (docs/Rationale.md). Off until a GPU has measured it.
  bool scoresInRegisters = false;
  /// The chunk loops whose scores and state update take wgmma (bf16 with
  /// chunks of 64: F = 64 on one warpgroup, F = 128 on two with
  /// wgmma-chunks) compute O_c = P V_c + φ(Q_c) S by wgmma too, from the
  /// masked scores and the state rounded to bf16 in shared memory in the
  /// 128-byte swizzle: at F = 64 eight m64n64k16 a chunk for the warpgroup
  /// where each warp issued 64 mma.sync and 64 ldmatrix. With
  /// scoresInRegisters too (F = 64), P V_c takes the scores as wgmma's A in
  /// registers (`wgmmaRegisterAAsm`): no scores tile, 57344 bytes of shared
  /// memory, four blocks per H100 SM for the unnormalized loops (124
  /// registers). Off until a GPU has measured it.
  bool wgmmaOutputs = false;
  /// The chunked kernels' loops over a thread's 16-byte groups of a chunk
  /// (async copies issued, the feature map in place, bulk copies' rows)
  /// unrolled: no counter, compare and branch per group, and the groups'
  /// loads free to overlap, for the registers their hoisted addresses keep
  /// live (ptxas 13: the F = 64 chunk loop 127 instead of 112, no spills,
  /// the same blocks per SM). Off until a GPU has measured it.
  bool unrollStaging = false;
  /// Instrumentation: the chunked scan's chunk loops and segment states
  /// (and the strict-fp32 scans' kernels, recurrent and `simtChunks`) time
  /// their phases with the SM's cycle counter (thread 0 of each block,
  /// totals in shared memory) and write each block's totals to a buffer of
  /// the launch, which a printer kernel launched after it prints
  /// (`PhaseClocks`). For profiling: it adds a few instructions and a
  /// branch per phase.
  bool phaseClocks = false;
  /// The chunk loops that stage synchronously, or copy into one slot (so
  /// that no copy overlaps the products), ask L2 for the rows of the chunk
  /// this many chunks ahead as they stage one (`prefetch.L2`, one per
  /// 128-byte line, no registers held), so that that chunk's loads wait on
  /// L2 rather than HBM; 0 prefetches nothing. -1 (the default): one chunk
  /// ahead with async copies in one slot (`copyStages` 1, and f32 data
  /// whose second slots would shrink the chunk shape, F = 128), none
  /// elsewhere.
  /// An H100 ran bf16 chunk loops staged synchronously 1.04 to 1.3 times
  /// faster with it; it costs ptxas 0 to 5 registers, which at F = 128
  /// takes the unnormalized bf16 sequence-parallel outputs kernel from 4 to
  /// 3 blocks per SM, so it stays off where `async-copies=false` asks for
  /// synchronous staging.
  int64_t prefetchChunks = -1;
  /// The chunk loops address global memory by 32-bit offsets from the
  /// first row of their block (fewer instructions and registers than
  /// 64-bit index arithmetic) and keep them below this: a block spans
  /// (R + C + 2) · max(F, Dv, 128) elements at most, R its rows, so a
  /// sequence too long for one block runs in segments short enough
  /// (whatever `sequenceParallelBlocks` says), and W = max(F, Dv, 128)
  /// above limit / (2C + 2) takes 64-bit offsets (the launch picks between
  /// the two sets of kernels where Dv is dynamic). At most
  /// `kMaxNarrowOffsetLimit`; 0, the default, always takes 64-bit offsets,
  /// which an H100 ran 1.17 times faster at F = 128 (and the same at
  /// F = 64) despite the instructions they add.
  int64_t narrowOffsetLimit = 0;
};

/// Replaces every `linattn.scan`, `step`, `kv_summary` and `query_readout` in
/// `module` whose sizes the kernels support by a launch of a `gpu.func`
/// generated for it in the `gpu.module @linattn_kernels`. elu, relu and
/// identity feature maps that produce the query and key features are fused
/// into the kernels (applied as the kernel loads its inputs).
///
/// On the host the kernel reads and writes flattened buffers of the operand
/// tensors (`linattn.read_buffer`, `memref.alloc` for the results) through
/// a call to a private launch stub carrying the kernel symbol and the grid;
/// `linattn-gpu-stage-buffers` turns each stub call into device buffers,
/// copies and `gpu.launch_func` after bufferization.
///
/// Ops left (no kernel: the quadratic form, poly2 and favor feature maps
/// that feed no kernel, dynamic feature sizes, scans whose static Dv needs
/// more blocks than CUDA's grid y holds, ...) are reported as errors
/// unless `hostFallback` is set, in which case the host lowering handles
/// them. Fails when an error was reported.
LogicalResult convertLinAttnToGPUKernels(ModuleOp module,
                                         const LinAttnToGPUKernelOptions &opts);

/// Replaces every call to a launch stub (a private function with the
/// `linattn.gpu_kernel` attribute) in `module` by `gpu.alloc` of a device
/// buffer for every buffer operand, `gpu.memcpy` of the kernel's inputs to
/// the device, the `gpu.launch_func`, `gpu.memcpy` of its outputs back and
/// `gpu.dealloc`; erases the stubs.
LogicalResult stageLinAttnGPUBuffers(ModuleOp module);

/// The device-buffer calling convention: in every public function of
/// `module`, memref arguments are device buffers, memref results become
/// out-params appended to the arguments (the kernel that produces a result
/// writes the out-param directly) and a trailing `!llvm.ptr` argument is the
/// stream: every launch stub call becomes a `gpu.launch_func async` on a
/// token chain that starts at the stream, and buffers between kernels
/// stream-ordered `gpu.alloc`/`gpu.dealloc`; a result no kernel writes (an
/// argument returned) is copied into its out-param by `gpu.memcpy async`
/// on the stream. Fails, with an error at the op, when a function would
/// compute on the host (host-fallback ops, host copies, constants, calls);
/// erases the stubs.
LogicalResult stageLinAttnGPUDeviceBuffers(ModuleOp module);

} // namespace linattn
} // namespace mlir

#endif // LINATTN_CONVERSION_LINATTNTOGPU_LINATTNTOGPU_H
