//===- PipelineStages.h - stages the lowering pipelines share ---*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The pieces linattn-lower-to-cpu and linattn-lower-to-nvvm have in common.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_LIB_PIPELINES_PIPELINESTAGES_H
#define LINATTN_LIB_PIPELINES_PIPELINESTAGES_H

#include "linattn/Transforms/Passes.h"

namespace mlir {
class OpPassManager;

namespace linattn {

/// The fast form of each computation: attention written in linalg is raised,
/// causal attention becomes a scan, the rest is reassociated (`mode`); the
/// gradients are decomposed with `decompose`'s options.
void addRewriteFormsStage(OpPassManager &pm, ReassociateMode mode,
                          const LinAttnDecomposePassOptions &decompose = {});

/// What no kernel took: linattn -> linalg on tensors, cleaned up and, when
/// `fuseElementwise`, with elementwise producers fused where that repeats no
/// work (`linattn-fuse-elementwise`).
void addLinalgStage(OpPassManager &pm, bool fuseElementwise);

/// Tensors -> buffers: One-Shot Bufferize across function boundaries with
/// identity layouts (callers pass plain dense descriptors), the buffer
/// deallocation pipeline (unless `deallocate` is false), bufferization ops ->
/// memref.
void addBufferizeStage(OpPassManager &pm, bool deallocate = true);

/// Structured control flow -> branches: C wrappers (when `cInterface`),
/// affine and scf lowered, cleaned up.
void addBranchesStage(OpPassManager &pm, bool cInterface);

/// The host's memref/func/arith/cf/index/ub -> LLVM conversions (after the
/// loops are branches).
void addHostToLLVMStage(OpPassManager &pm);

} // namespace linattn
} // namespace mlir

#endif // LINATTN_LIB_PIPELINES_PIPELINESTAGES_H
