//===- attn-compile.cpp - a compiler that uses linattn as a library -------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Stands for "your compiler": it owns its dialect registry and pass pipeline
// and takes linattn's dialect and passes from the installed package. It parses
// a file, runs a pipeline and prints the result.
//
// The pipeline is --pipeline when given. Otherwise it is assembled from the
// stages below that the linked linattn registers, so that linattn-raise and
// linattn-reassociate join the default once linattn provides them, without a
// change here.
//
//===----------------------------------------------------------------------===//

#include "linattn/InitAll.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace mlir;

static llvm::cl::opt<std::string> inputFilename(llvm::cl::Positional,
                                                llvm::cl::desc("<input>"),
                                                llvm::cl::init("-"));

static llvm::cl::opt<std::string>
    outputFilename("o", llvm::cl::desc("Output file"), llvm::cl::init("-"));

static llvm::cl::opt<std::string> pipeline(
    "pipeline",
    llvm::cl::desc("Pass pipeline to run on each function, e.g. "
                   "'linattn-decompose,canonicalize' (default: the stages "
                   "of the linked linattn, see --print-pipeline)"));

static llvm::cl::opt<bool>
    printPipeline("print-pipeline",
                  llvm::cl::desc("Print the pipeline that would run and exit"));

/// The default stages, in order; those the linked linattn does not register
/// (yet) are skipped.
static constexpr const char *kDefaultStages[] = {
    "linattn-raise", "linattn-decompose", "linattn-reassociate", "canonicalize",
    "cse"};

static std::string defaultPipeline() {
  std::string result;
  for (const char *stage : kDefaultStages) {
    if (!PassInfo::lookup(stage) && !PassPipelineInfo::lookup(stage))
      continue;
    if (!result.empty())
      result += ",";
    result += stage;
  }
  return result;
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);

  // The host compiler's own passes, then linattn's.
  registerTransformsPasses();
  linattn::registerAllPasses();

  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "an MLIR compiler using linattn\n");

  std::string funcPipeline =
      pipeline.getNumOccurrences() ? pipeline.getValue() : defaultPipeline();
  // The contents of the module-level pass manager below: no builtin.module
  // anchor here, parsePassPipeline adds to `pm` itself.
  std::string modulePipeline = "func.func(" + funcPipeline + ")";
  if (printPipeline) {
    llvm::outs() << "builtin.module(" << modulePipeline << ")\n";
    return 0;
  }

  DialectRegistry registry;
  registry.insert<arith::ArithDialect, func::FuncDialect, linalg::LinalgDialect,
                  tensor::TensorDialect>();
  linattn::registerAllDialects(registry);
  MLIRContext context(registry);

  std::string errorMessage;
  auto input = openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  PassManager pm(&context);
  if (failed(parsePassPipeline(modulePipeline, pm, llvm::errs())))
    return 1;
  if (failed(pm.run(*module)))
    return 1;

  auto output = openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}
