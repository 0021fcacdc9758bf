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
  PassOptions::Option<bool> cInterface{
      *this, "c-interface",
      llvm::cl::desc("Give every function a _mlir_ciface_ wrapper that takes "
                     "memref descriptors by pointer"),
      llvm::cl::init(true)};
};

/// Builds the pipeline from linattn on tensors to the LLVM dialect for the
/// host CPU: raise, decompose, masked-to-scan and reassociate (unless
/// `rewriteForms` is off), lower to linalg, bufferize (function boundaries with
/// identity layouts), deallocate, lower to loops and to LLVM, and check that
/// no linattn op is left.
void buildLinAttnLowerToCPUPipeline(OpPassManager &pm,
                                    const LinAttnLowerToCPUOptions &options);

/// Registers `linattn-lower-to-cpu`.
void registerLinAttnPipelines();

} // namespace linattn
} // namespace mlir

#endif // LINATTN_PIPELINES_PIPELINES_H
