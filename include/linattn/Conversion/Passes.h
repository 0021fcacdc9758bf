//===- Passes.h - linattn conversion passes ---------------------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_CONVERSION_PASSES_H
#define LINATTN_CONVERSION_PASSES_H

#include "linattn/Conversion/LinAttnToGPU/LinAttnToGPU.h"
#include "linattn/Conversion/LinAttnToLinalg/LinAttnToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::linattn {

#define GEN_PASS_DECL
#include "linattn/Conversion/Passes.h.inc"

/// Why `options` are not valid for `convert-linattn-to-gpu` (a chip that is
/// not sm_ and a number, an option out of its range), or nullopt. The pass
/// reports it, and `linattn-lower-to-nvvm` when its options are parsed.
std::optional<std::string> checkConvertLinAttnToGPUPassOptions(
    const ConvertLinAttnToGPUPassOptions &options);

#define GEN_PASS_REGISTRATION
#include "linattn/Conversion/Passes.h.inc"

} // namespace mlir::linattn

#endif // LINATTN_CONVERSION_PASSES_H
