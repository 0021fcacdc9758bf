//===- linattn-opt.cpp - the linattn optimizer driver ---------------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// mlir-opt with the linattn dialect, passes and pipelines added to the upstream
// dialects and passes they are used with.
//
//===----------------------------------------------------------------------===//

#include "linattn/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::linattn::registerAllPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary (linattn-lower-to-nvvm) translates GPU modules to
  // LLVM IR, as upstream mlir-opt allows.
  mlir::registerAllGPUToLLVMIRTranslations(registry);
  mlir::linattn::registerAllDialects(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "linattn optimizer driver\n", registry));
}
