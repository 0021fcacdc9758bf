//===- linattn-plugin.cpp - linattn as an mlir-opt plugin -----------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Lets an upstream mlir-opt load the linattn dialect, passes and pipelines:
//
//   mlir-opt --load-dialect-plugin=LinAttnPlugin.so \
//            --load-pass-plugin=LinAttnPlugin.so -linattn-decompose in.mlir
//
// Both entry points go through InitAll.h, so whatever linattn registers there
// is available from the plugin too.
//
//===----------------------------------------------------------------------===//

#include "linattn/InitAll.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

using namespace mlir;

/// The dialect entry point: `--load-dialect-plugin` calls it to extend the
/// tool's registry before any input is parsed.
extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "LinAttn", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            linattn::registerAllDialects(*registry);
          }};
}

/// The pass entry point: `--load-pass-plugin` calls it before the command line
/// is parsed, so the passes and pipelines become ordinary mlir-opt flags.
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "LinAttnPasses", LLVM_VERSION_STRING,
          []() { linattn::registerAllPasses(); }};
}
