//===- PhaseClocks.cpp - the printer of the phase clocks' records ---------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#include "PhaseClocks.h"

using namespace mlir;
using namespace mlir::linattn;
using namespace mlir::linattn::gpukernels;

gpu::GPUFuncOp gpukernels::buildPhaseClocksPrinter(OpBuilder &b, Location loc,
                                                   gpu::GPUFuncOp kernel) {
  auto kernels = kernel->getParentOfType<gpu::GPUModuleOp>();
  Type index = b.getIndexType(), i64 = b.getI64Type();
  gpu::GPUFuncOp printer =
      createKernel(b, loc, kernels, (kernel.getName() + "_phase_clocks").str(),
                   {flatBufferType(i64), index}, {});
  kernel->setAttr(kPhaseClocksAttrName,
                  FlatSymbolRefAttr::get(printer.getNameAttr()));
  OpBuilder::InsertionGuard guard(b);
  setInsertionPointToKernelBody(b, printer);
  KernelBuilder kb(b, loc, b.getF32Type());
  Value records = printer.getArgument(0), blocks = printer.getArgument(1);
  Value record =
      kb.add(kb.mul(kb.blockId(gpu::Dimension::x), kb.idx(128)), kb.threadId());
  kb.ifThen(kb.ult(record, blocks), [&] {
    std::string format = ("linattn-phase-clocks " + kernel.getName() +
                          " block=%lld,%lld,%lld grid=%lld,%lld,%lld "
                          "chunks=%lld cycles=%lld ns=%lld")
                             .str();
    for (unsigned p = 0; p < kPhases; ++p)
      format += (" " + phaseName(static_cast<Phase>(p)) + "=%lld").str();
    format += "\n";
    Value base = kb.mul(record, kb.idx(kPhaseClockRecord));
    SmallVector<Value> fields;
    for (int64_t i = 0; i < kPhaseClockRecord; ++i)
      fields.push_back(memref::LoadOp::create(
          b, loc, records, ValueRange{kb.add(base, kb.idx(i))}));
    gpu::PrintfOp::create(b, loc, b.getStringAttr(format), fields);
  });
  return printer;
}
