//===- CudaTarget.h - linattn-run's CUDA target -----------------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// `linattn-run --target=cuda`: the module is lowered with
// linattn-lower-to-nvvm and the JIT-compiled host code calls the mgpu*
// functions of liblinattn_cuda_runtime.so (or of the mock runtime with
// --mock-gpu, or of the GPU emulator with --emulate-gpu, which also sets
// emulate=true on the pipeline); calls are timed with CUDA events. The
// options live in CudaTarget.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_TOOLS_LINATTN_RUN_CUDATARGET_H
#define LINATTN_TOOLS_LINATTN_RUN_CUDATARGET_H

#include "mlir/Support/LLVM.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace linattn_run {

/// The tool's own options: the ones --help lists.
extern llvm::cl::OptionCategory toolOptions;

/// Whether --target=cuda was given.
bool isCudaTarget();

/// Opens the runtime library and adds it to `libs`; replaces `pipeline` by
/// linattn-lower-to-nvvm unless `pipelineGiven`. Prints the device used.
/// Fails, with a message printed, when the runtime cannot be loaded or sees
/// no device.
mlir::LogicalResult setUpCudaTarget(const char *argv0, std::string &pipeline,
                                    bool pipelineGiven,
                                    llvm::SmallVectorImpl<std::string> &libs);

/// Records the start of a timed call on the GPU.
void startCudaTimer();

/// Milliseconds since startCudaTimer as CUDA events measure them (negative
/// when they could not).
double stopCudaTimer();

/// Fails, with the message printed, when the runtime recorded an error.
mlir::LogicalResult checkCudaErrors();

} // namespace linattn_run

#endif // LINATTN_TOOLS_LINATTN_RUN_CUDATARGET_H
