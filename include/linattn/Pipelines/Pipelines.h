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
/// host CPU: decompose, lower to linalg, bufferize (function boundaries with
/// identity layouts), deallocate, lower to loops and to LLVM, and check that
/// no linattn op is left.
void buildLinAttnLowerToCPUPipeline(OpPassManager &pm,
                                    const LinAttnLowerToCPUOptions &options);

/// Registers `linattn-lower-to-cpu`.
void registerLinAttnPipelines();

} // namespace linattn
} // namespace mlir

#endif // LINATTN_PIPELINES_PIPELINES_H
