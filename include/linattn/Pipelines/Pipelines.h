//===- Pipelines.h - linattn pass pipelines ---------------------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_PIPELINES_PIPELINES_H
#define LINATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;

namespace linattn {

/// Options of `linattn-lower-to-cpu`.
struct LinAttnLowerToCPUOptions
    : public PassPipelineOptions<LinAttnLowerToCPUOptions> {
  PassOptions::Option<bool> rewriteForms{
      *this, "rewrite-forms",
      llvm::cl::desc("First raise attention written in linalg, turn causal "
                     "quadratic attention into scans and reassociate the "
                     "rest where it pays (off: lower the ops as written)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse producer-consumer elementwise linalg ops before "
                     "bufferization"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> kernels{
      *this, "kernels",
      llvm::cl::desc("Lower scans, steps, key-value summaries and query "
                     "readouts with an f32 or f64 state to the vectorized, "
                     "register-blocked kernels (off: generic loops)"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> targetCpu{
      *this, "target-cpu",
      llvm::cl::desc("LLVM CPU the code is generated for (e.g. znver4, "
                     "x86-64-v3); its features decide the kernels' vector "
                     "width and register tile. Empty: the code generator's "
                     "(the host's for the JIT)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> targetFeatures{
      *this, "target-features",
      llvm::cl::desc("LLVM CPU features the code is generated for (e.g. "
                     "+avx2,+fma,-avx512f), added to or removed from "
                     "target-cpu's; empty: target-cpu's, or the host's. They "
                     "also decide the kernels' vector width and register "
                     "tile"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> chunkSize{
      *this, "chunk-size",
      llvm::cl::desc("Run linattn-chunk-scan with this chunk size before "
                     "lowering (0: no, the kernels block the tokens "
                     "themselves); its products take the generic loops, "
                     "far slower than the kernels"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("f32 lanes per kernel vector; 0 picks the host's (16 "
                     "with AVX-512, 8 with AVX2, 4 otherwise)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> tokensPerBlock{
      *this, "tokens-per-block",
      llvm::cl::desc("Tokens whose state updates share one pass over the "
                     "state in the kernels (1 to 8; 0: by the host's vector "
                     "registers)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> columnVectors{
      *this, "column-vectors",
      llvm::cl::desc("Vectors of state columns the kernels update together "
                     "per row (1 to 4; 0: by the host's vector registers)"),
      llvm::cl::init(0)};
  PassOptions::Option<unsigned> numThreads{
      *this, "num-threads",
      llvm::cl::desc("Threads for the parallel loops (OpenMP); 0: the "
                     "OpenMP runtime's default (all cores, or "
                     "OMP_NUM_THREADS), 1: no threading"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> parallelizeLinalg{
      *this, "parallelize-linalg",
      llvm::cl::desc("Spread the linalg ops no kernel took over the threads "
                     "by rows (linattn-parallelize-linalg)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> cInterface{
      *this, "c-interface",
      llvm::cl::desc("Give every function a _mlir_ciface_ wrapper that takes "
                     "memref descriptors by pointer"),
      llvm::cl::init(true)};
};

/// Builds the pipeline from linattn on tensors to the LLVM dialect for the
/// host CPU: raise, decompose, masked-to-scan and reassociate (unless
/// `rewriteForms` is off), lower scans, steps, summaries and readouts to
/// vectorized kernels (unless `kernels` is off) and the rest to linalg,
/// bufferize (function boundaries with identity layouts), deallocate, lower
/// to loops, OpenMP (unless `numThreads` is 1) and LLVM, and check that no
/// linattn op is left.
/// The code calls the OpenMP runtime (libomp) unless `numThreads` is 1.
void buildLinAttnLowerToCPUPipeline(OpPassManager &pm,
                                    const LinAttnLowerToCPUOptions &options);

/// Registers `linattn-lower-to-cpu`.
void registerLinAttnPipelines();

/// The CUDA toolkit the build found (/usr/local/cuda when it found none):
/// where `linattn-lower-to-nvvm` looks for ptxas by default.
std::string getDefaultCudaPath();

/// Options of `linattn-lower-to-nvvm`.
struct LinAttnLowerToNVVMOptions
    : public PassPipelineOptions<LinAttnLowerToNVVMOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("GPU architecture the kernels are compiled for (sm_90, "
                     "sm_80, ...; CUDA 13 rejects the upstream default "
                     "sm_50)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (default: the minimum PTX ISA version of "
                     "the chip)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What is embedded: bin (a cubin, through ptxas), fatbin "
                     "(through ptxas and fatbinary) or isa (PTX the driver "
                     "compiles when it loads the module; needs no toolkit)"),
      llvm::cl::init("bin")};
  PassOptions::Option<unsigned> optLevel{
      *this, "opt-level",
      llvm::cl::desc("Optimization level of the NVPTX back end and ptxas"),
      llvm::cl::init(3)};
  PassOptions::Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit whose bin/ptxas, bin/fatbinary and "
                     "nvvm/libdevice are used (default: the toolkit found "
                     "at configure time; CUDA_ROOT, CUDA_HOME, CUDA_PATH and "
                     "PATH are searched when empty)"),
      llvm::cl::init(getDefaultCudaPath())};
  PassOptions::Option<std::string> ptxasOptions{
      *this, "ptxas-options",
      llvm::cl::desc("Extra command-line options for ptxas"),
      llvm::cl::init("")};
  PassOptions::Option<bool> rewriteForms{
      *this, "rewrite-forms",
      llvm::cl::desc("First raise attention written in linalg, turn causal "
                     "quadratic attention into scans and reassociate the "
                     "rest (off: lower the ops as written)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> hostFallback{
      *this, "host-fallback",
      llvm::cl::desc("Run ops that have no GPU kernel on the host CPU "
                     "(off: report them as errors)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> scanTile{
      *this, "scan-tile",
      llvm::cl::desc("Threads per block of the scan kernel"),
      llvm::cl::init(128)};
  PassOptions::Option<int64_t> scanFeatureLanes{
      *this, "scan-feature-lanes",
      llvm::cl::desc("Threads sharing a value column in the recurrent scan "
                     "and step kernels, each with F / lanes of its features"),
      llvm::cl::init(4)};
  PassOptions::Option<int64_t> scanThreadColumns{
      *this, "scan-thread-columns",
      llvm::cl::desc("Value columns per thread of the recurrent scan "
                     "(1, 2, 4 or 8), each of its features shared by "
                     "scan-feature-lanes times as many threads"),
      llvm::cl::init(4)};
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Most threads per block of the other kernels"),
      llvm::cl::init(128)};
  PassOptions::Option<std::string> scanKernel{
      *this, "scan-kernel",
      llvm::cl::desc("Kernel of causal scans: 'chunked' (tensor cores for "
                     "f16/bf16 data on sm_80 and later) or 'recurrent'"),
      llvm::cl::init("chunked")};
  PassOptions::Option<std::string> linearKernel{
      *this, "linear-kernel",
      llvm::cl::desc("Kernels of the linear form: 'chunked' (tensor cores for "
                     "f16/bf16 data on sm_80 and later) or 'scalar'"),
      llvm::cl::init("chunked")};
  PassOptions::Option<int64_t> chunkSize{
      *this, "chunk-size",
      llvm::cl::desc("Largest chunk of the chunked scan kernel (16, 32, 64)"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> valueTile{
      *this, "value-tile",
      llvm::cl::desc("Widest value tile of the chunked scan kernel (8, 16, "
                     "32, 64 or 128 columns per block)"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> smallGridValueTile{
      *this, "small-grid-value-tile",
      llvm::cl::desc("Value tile of the chunked scan's chunk loop (the "
                     "batch-parallel kernel or the segments' outputs) where "
                     "its grid in tiles this wide stays within half of "
                     "sequence-parallel-blocks (0, 8, 16, 32 or 64; 0: "
                     "value-tile everywhere)"),
      llvm::cl::init(32)};
  PassOptions::Option<int64_t> rowTileWarps{
      *this, "row-tile-warps",
      llvm::cl::desc("Warps per 16-row tile of the chunked kernels' chunks "
                     "(1 or 2; 0: the fewest that fit)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> minBlocksPerSM{
      *this, "min-blocks-per-sm",
      llvm::cl::desc("Blocks per SM the chunked scan's chunk loops ask ptxas "
                     "to make room for (.minnctapersm; 0: ptxas's choice)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> statesMinBlocksPerSM{
      *this, "states-min-blocks-per-sm",
      llvm::cl::desc("min-blocks-per-sm for the chunked kernels that stage "
                     "keys and values only (segment states, key-value "
                     "summaries); -1: where ptxas is known to give them "
                     "registers that cost blocks (16-bit data at F = 64 "
                     "and 128, tf32 data at F = 128)"),
      llvm::cl::init(-1)};
  PassOptions::Option<bool> fitRegisters{
      *this, "fit-registers",
      llvm::cl::desc("Ask ptxas, kernel by kernel, for the most blocks per "
                     "SM it fits without spilling where registers hold a "
                     "kernel below its shared memory and threads, and bound "
                     "its registers to that (linattn-gpu-fit-registers; "
                     "needs ptxas, also with format=isa)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> sequenceParallelBlocks{
      *this, "sequence-parallel-blocks",
      llvm::cl::desc("Blocks the chunked and recurrent scans aim to "
                     "launch: when the batch-parallel kernel would launch "
                     "fewer than half as many, the sequence splits into "
                     "segments run in parallel (the recurrent scan counts "
                     "blocks of 128 threads; 0: never)"),
      llvm::cl::init(264)};
  PassOptions::Option<int64_t> minSegmentTokens{
      *this, "min-segment-tokens",
      llvm::cl::desc("Shortest segment the sequence-parallel scans split a "
                     "sequence into, in tokens (0: one chunk or staged "
                     "block)"),
      llvm::cl::init(1024)};
  PassOptions::Option<bool> simtChunks{
      *this, "simt-chunks",
      llvm::cl::desc("Causal scans that take the recurrent kernel (f32 and "
                     "f64 states) run chunkwise on CUDA cores instead, "
                     "register-blocked in the state's type (F up to 128)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> tf32{
      *this, "tf32",
      llvm::cl::desc("Causal scans and the linear form with f32 data take "
                     "the chunked kernels on tf32 tensor cores (sm_80 and "
                     "later)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> tf32x3{
      *this, "tf32x3",
      llvm::cl::desc("As tf32, each product taken as three tf32 products of "
                     "the operands' high and low parts: about f32's "
                     "accuracy for three times the tensor-core work"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> vectorLoads{
      *this, "vector-loads",
      llvm::cl::desc("The chunked kernels stage global memory 16 bytes per "
                     "load where the buffers are 16-byte aligned (false: "
                     "element by element)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> asyncCopies{
      *this, "async-copies",
      llvm::cl::desc("The chunked kernels (f16/bf16, with vector loads) and "
                     "the recurrent scan (f32 data) copy the next chunk or "
                     "block of tokens with cp.async while they compute the "
                     "current one (false: staged synchronously)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> copyStages{
      *this, "copy-stages",
      llvm::cl::desc("With async copies, the chunked kernels' slots per "
                     "staged tile (1 to 4): copies run that many chunks "
                     "minus one ahead of the chunk the products read (1: a "
                     "chunk's copies all issued before its products, the "
                     "next chunk prefetched into L2). Taken where the "
                     "block's shared memory stays within 96 KiB (113 KiB for "
                     "wgmma-chunks' shapes), else as many as fit; the "
                     "segment states and key-value summaries take "
                     "states-copy-stages"),
      llvm::cl::init(2)};
  PassOptions::Option<int64_t> statesCopyStages{
      *this, "states-copy-stages",
      llvm::cl::desc("copy-stages for the chunked kernels that stage keys "
                     "and values only (the sequence-parallel scan's segment "
                     "states, the linear form's key-value summaries), within "
                     "96 KiB of their own shared memory"),
      llvm::cl::init(2)};
  PassOptions::Option<bool> statesFeatureSplit{
      *this, "states-feature-split",
      llvm::cl::desc("Where the value columns take several tiles (without "
                     "wgmma, static Dv), the chunked kernels "
                     "that stage keys and values only share out the "
                     "features between their blocks, each with all the "
                     "value columns, so that each φ(K_c) is mapped and "
                     "read once"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> bulkCopies{
      *this, "bulk-copies",
      llvm::cl::desc("With async copies on sm_90 and later, the chunked "
                     "kernels stage whole chunks by bulk copies (the TMA "
                     "unit, one per row of a tile with padded rows) "
                     "completing on an mbarrier per slot, instead of 16-byte "
                     "cp.async; tiles in wgmma's swizzle and chunks cut "
                     "short by the sequence or Dv keep cp.async. Needs PTX "
                     "8.0, which the pipeline asks for on sm_90 unless "
                     "features names a PTX version"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> wgmma{
      *this, "wgmma",
      llvm::cl::desc("The chunk loops (f16/bf16, F a multiple of 64, chunks "
                     "of 64) compute their scores, and with bf16 their "
                     "state update, with sm_90's wgmma where the chip is "
                     "sm_90, whose modules with wgmma kernels then "
                     "compile for sm_90a (elsewhere "
                     "mma.sync)"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> wgmmaChunks{
      *this, "wgmma-chunks",
      llvm::cl::desc("On sm_90 with wgmma, chunks of 64 where the shared "
                     "memory the chunk loops take on every chip leaves them "
                     "smaller (16-bit data, F = 128): up to 113 KiB of "
                     "dynamic shared memory per block, two blocks per H100 "
                     "SM, so that the scores take wgmma. 'true': wherever "
                     "they fit; 'auto' (the default): the unnormalized bf16 "
                     "scan's chunk loops on two warpgroups (the measured "
                     "case); 'false': never"),
      llvm::cl::init("auto")};
  PassOptions::Option<bool> scoresInRegisters{
      *this, "scores-in-registers",
      llvm::cl::desc("The chunk loops with one warp per row tile (f16/bf16) "
                     "keep their masked scores in registers as the A "
                     "fragments of P·V instead of a shared tile (less shared "
                     "memory, more registers)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> wgmmaOutputs{
      *this, "wgmma-outputs",
      llvm::cl::desc("The chunk loops whose scores and state update take "
                     "wgmma (bf16 with chunks of 64: F = 64, and F = 128 with "
                     "wgmma-chunks) compute their outputs P V_c + φ(Q_c) S "
                     "by wgmma too, from the scores and the state in shared "
                     "memory in the 128-byte swizzle (with "
                     "scores-in-registers, the scores as wgmma's A in "
                     "registers), instead of mma.sync"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> unrollStaging{
      *this, "unroll-staging",
      llvm::cl::desc("The chunked kernels' loops over a thread's 16-byte "
                     "groups of a chunk (async copies issued, the feature map "
                     "in place, bulk copies' rows) unrolled"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> phaseClocks{
      *this, "phase-clocks",
      llvm::cl::desc("Instrumentation: the chunked scan's chunk loops and "
                     "segment states and the strict-fp32 recurrent scan's "
                     "kernels count each block's cycles per phase "
                     "(prologue, issue, wait, map, stage, scores, outputs, "
                     "update, normalizer, tokens, epilogue), which a printer "
                     "kernel launched "
                     "after each prints, a line per block "
                     "(bench/gpu/phase_clocks.py reads them); for profiling"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> prefetchChunks{
      *this, "prefetch-chunks",
      llvm::cl::desc("The chunk loops that stage synchronously or copy into "
                     "one slot prefetch the rows of the chunk this many "
                     "chunks ahead into L2 (0: none; -1: 1 with async "
                     "copies in one slot, as f32 at F = 128 takes them, 0 "
                     "elsewhere)"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> narrowOffsetLimit{
      *this, "narrow-offset-limit",
      llvm::cl::desc("The chunk loops keep their 32-bit offsets below this, "
                     "in segments where a sequence is too long for one "
                     "block (at most 2^31; 0, the default: always 64-bit)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> cInterface{
      *this, "c-interface",
      llvm::cl::desc("Give every function a _mlir_ciface_ wrapper that takes "
                     "memref descriptors by pointer"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> emulate{
      *this, "emulate",
      llvm::cl::desc("Embed the kernels as MLIR text for the GPU emulator "
                     "(liblinattn_gpu_emulator.so) instead of compiling them "
                     "through NVVM; needs no CUDA toolkit"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> deviceBuffers{
      *this, "device-buffers",
      llvm::cl::desc("Functions take the caller's device buffers, write their "
                     "results into out-params and launch on a trailing "
                     "stream argument: no host copies, allocations or "
                     "synchronization, so a call can be captured in a CUDA "
                     "graph (the linalg ops and copies left between "
                     "kernels become kernels too; other host computation "
                     "is an error)"),
      llvm::cl::init(false)};
};

/// Builds the pipeline from linattn on tensors to host code in the LLVM
/// dialect that launches NVIDIA GPU kernels: the rewrites of the CPU
/// pipeline (reassociation forced), `convert-linattn-to-gpu`, the CPU
/// pipeline's bufferization, `linattn-gpu-stage-buffers` and
/// `gpu-async-region` (with `deviceBuffers`: no deallocation pipeline,
/// `linattn-gpu-linalg-kernels`, `linattn-gpu-stage-buffers{device-buffers}`),
/// the kernels through NVVM,
/// the host through `gpu-to-llvm`, and `gpu-module-to-binary`. With
/// `emulate`, the kernels are embedded as MLIR text by
/// `linattn-gpu-embed-kernel-ir` right after the buffer staging instead (no
/// NVVM, no binary).
/// `options` must pass `verifyLinAttnLowerToNVVMOptions`.
void buildLinAttnLowerToNVVMPipeline(OpPassManager &pm,
                                     const LinAttnLowerToNVVMOptions &options);

/// Checks the options before anything runs: the kernels' as
/// `convert-linattn-to-gpu` would (`checkConvertLinAttnToGPUPassOptions`:
/// the chip, chunk and tile sizes, ...) and the format, which
/// `gpu-module-to-binary` would not report (bin, fatbin or isa): failure,
/// after `emitError`, where `options` are not valid. The registered pipeline
/// checks its options with it when it is parsed.
LogicalResult verifyLinAttnLowerToNVVMOptions(
    const LinAttnLowerToNVVMOptions &options,
    function_ref<LogicalResult(const Twine &)> emitError);

/// Registers `linattn-lower-to-nvvm`.
void registerLinAttnNVVMPipeline();

} // namespace linattn
} // namespace mlir

#endif // LINATTN_PIPELINES_PIPELINES_H
