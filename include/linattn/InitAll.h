//===- InitAll.h - register everything linattn provides ---------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The one place that registers linattn's dialect, passes and pipelines. Tools,
// the plugin and the C API all call these.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_INITALL_H
#define LINATTN_INITALL_H

#include "linattn/Conversion/Passes.h"
#include "linattn/IR/LinAttnDialect.h"
#include "linattn/Pipelines/Pipelines.h"
#include "linattn/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"

namespace mlir::linattn {

/// Adds the linattn dialect to `registry`.
inline void registerAllDialects(DialectRegistry &registry) {
  registry.insert<LinAttnDialect>();
}

/// Registers every linattn pass and pipeline with the global registry.
inline void registerAllPasses() {
  registerLinAttnPasses();
  registerLinAttnConversionPasses();
  registerLinAttnPipelines();
  registerLinAttnNVVMPipeline();
}

} // namespace mlir::linattn

#endif // LINATTN_INITALL_H
