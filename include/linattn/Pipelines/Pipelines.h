//===- Pipelines.h - linattn pass pipelines ---------------------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_PIPELINES_PIPELINES_H
#define LINATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

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
      llvm::cl::desc("Lower f32-state scans and steps to the vectorized, "
                     "register-blocked kernels (off: generic loops)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("f32 lanes per kernel vector; 0 picks the host's (16 "
                     "with AVX-512, 8 with AVX2, 4 otherwise)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> tokensPerBlock{
      *this, "tokens-per-block",
      llvm::cl::desc("Tokens whose state updates share one pass over the "
                     "state in the kernels (1 to 8)"),
      llvm::cl::init(8)};
  PassOptions::Option<unsigned> numThreads{
      *this, "num-threads",
      llvm::cl::desc("Threads for the parallel loops (OpenMP); 0: the "
                     "OpenMP runtime's default (all cores, or "
                     "OMP_NUM_THREADS), 1: no threading"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> cInterface{
      *this, "c-interface",
      llvm::cl::desc("Give every function a _mlir_ciface_ wrapper that takes "
                     "memref descriptors by pointer"),
      llvm::cl::init(true)};
};

/// Builds the pipeline from linattn on tensors to the LLVM dialect for the
/// host CPU: raise, decompose, masked-to-scan and reassociate (unless
/// `rewriteForms` is off), lower scans and steps to vectorized kernels
/// (unless `kernels` is off) and the rest to linalg, bufferize (function
/// boundaries with identity layouts), deallocate, lower to loops, OpenMP
/// (unless `numThreads` is 1) and LLVM, and check that no linattn op is left.
/// The code calls the OpenMP runtime (libomp) unless `numThreads` is 1.
void buildLinAttnLowerToCPUPipeline(OpPassManager &pm,
                                    const LinAttnLowerToCPUOptions &options);

/// Registers `linattn-lower-to-cpu`.
void registerLinAttnPipelines();

} // namespace linattn
} // namespace mlir

#endif // LINATTN_PIPELINES_PIPELINES_H
