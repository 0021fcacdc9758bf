//===- PhaseClocks.h - cycles of a chunk loop's phases ----------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Instrumentation of the chunked kernels and the strict-fp32 recurrent scan
// (option `phase-clocks`): where a block's time goes, phase by phase, read off
// the SM's cycle counter by the kernel itself. Thread 0 of each block adds the
// cycles since the previous mark to the total of the phase that ends there; at
// the end it writes the totals to a buffer of the launch's, and a printer
// kernel launched after it prints one line per block, which
// bench/gpu/phase_clocks.py turns into cycles per chunk (for the recurrent
// scan, per staged block of tokens).
//
// The phases are thread 0's view. Every phase that ends at a barrier also
// holds the wait for the slowest warp there, so the totals sum to the
// block's time; work of other warps that overlaps thread 0's wait is not
// told apart.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_LIB_CONVERSION_LINATTNTOGPU_PHASECLOCKS_H
#define LINATTN_LIB_CONVERSION_LINATTNTOGPU_PHASECLOCKS_H

#include "KernelBuilders.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::linattn::gpukernels {

/// The phases, in the order of the report's fields.
enum class Phase : unsigned {
  /// From the kernel's start to its chunk loop: the initial state and the
  /// first chunks' copies issued.
  Prologue,
  /// With async copies: the barrier that frees the slot of the next copies,
  /// and those copies issued.
  Issue,
  /// With async copies: the wait for the current chunk's copies (and with
  /// bulk copies for its mbarrier phase).
  Wait,
  /// With async copies: the feature map (or tf32 rounding) applied in place
  /// and the barrier that publishes the tiles.
  Map,
  /// With synchronous staging: the whole of it (loads, maps, stores and
  /// its barriers).
  Stage,
  /// The masked scores, and the state stored for the outputs, to the
  /// barrier after them.
  Scores,
  /// O_c = P V_c + φ(Q_c) S and its stores (with `wgmma-outputs` the state
  /// update's wgmmas issued too).
  Outputs,
  /// The state update (and key sums) of the chunk.
  Update,
  /// The recurrent scan: the running normalizer and the denominators of the
  /// staged tokens, to the barrier after them.
  Normalizer,
  /// The recurrent scan: its token steps (readouts, state update and
  /// output stores, which one loop interleaves).
  Tokens,
  /// From the chunk loop's end to the report: the final state written.
  Epilogue,
};
constexpr unsigned kPhases = static_cast<unsigned>(Phase::Epilogue) + 1;

/// The i64 slots of the workgroup buffer: the phases' totals, then the
/// cycle counter at the previous mark, then the counter and the global
/// timer (ns) at the start.
constexpr int64_t kPhaseClockSlots = kPhases + 3;
// A block's record: its id and the grid's, chunks, cycles, ns, the phases.
static_assert(kPhaseClockRecord == 9 + kPhases);

/// The report's field names, in `Phase` order.
inline StringRef phaseName(Phase phase) {
  static constexpr const char *names[] = {
      "prologue", "issue",  "wait",       "map",    "stage",   "scores",
      "outputs",  "update", "normalizer", "tokens", "epilogue"};
  static_assert(std::size(names) == kPhases);
  return names[static_cast<unsigned>(phase)];
}

/// The clocks of one kernel; inert (every call emits nothing) without a
/// buffer.
class PhaseClocks {
public:
  /// `buffer`: a workgroup memref of `kPhaseClockSlots` i64 only this
  /// object touches, or null.
  PhaseClocks(OpBuilder &b, Location loc, Value buffer)
      : b(&b), loc(loc), buffer(buffer) {}

  /// Thread 0: every total 0, the counter and the timer at the start.
  void start() {
    if (!buffer)
      return;
    Value now = clock(), timer = NVVM::GlobalTimerOp::create(*b, loc, i64());
    onThreadZero([&] {
      Value zero = arith::ConstantIntOp::create(*b, loc, 0, 64);
      for (unsigned p = 0; p < kPhases; ++p)
        put(p, zero);
      put(kLast, now);
      put(kStart, now);
      put(kStartTimer, timer);
    });
  }

  /// Thread 0: the cycles since the previous mark (or the start) added to
  /// `phase`'s total.
  void mark(Phase phase) {
    if (!buffer)
      return;
    Value now = clock();
    onThreadZero([&] {
      unsigned p = static_cast<unsigned>(phase);
      Value since = arith::SubIOp::create(*b, loc, now, get(kLast));
      put(p, arith::AddIOp::create(*b, loc, get(p), since));
      put(kLast, now);
    });
  }

  /// Marks the epilogue, then thread 0 writes the block's record to
  /// `records` (the kernel's last argument, `kPhaseClockRecord` i64 a
  /// block, at the block's linear index): block x, y, z, grid x, y, z, the
  /// chunks it walked (`chunks`, an index), its cycles and ns from the
  /// start, then the phases' totals in `Phase` order. No printf here: a
  /// call in a kernel makes ptxas serialize its wgmmas; the printer
  /// (`buildPhaseClocksPrinter`), launched after the kernel, prints them.
  void report(Value chunks, Value records) {
    if (!buffer)
      return;
    mark(Phase::Epilogue);
    Value now = clock(), timer = NVVM::GlobalTimerOp::create(*b, loc, i64());
    onThreadZero([&] {
      auto dims = {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z};
      SmallVector<Value> ids, sizes, fields;
      for (gpu::Dimension d : dims) {
        ids.push_back(gpu::BlockIdOp::create(*b, loc, d));
        sizes.push_back(gpu::GridDimOp::create(*b, loc, d));
      }
      for (Value v : llvm::concat<Value>(ids, sizes))
        fields.push_back(asI64(v));
      fields.push_back(asI64(chunks));
      fields.push_back(arith::SubIOp::create(*b, loc, now, get(kStart)));
      fields.push_back(arith::SubIOp::create(*b, loc, timer, get(kStartTimer)));
      for (unsigned p = 0; p < kPhases; ++p)
        fields.push_back(get(p));
      // (z · Y + y) · X + x
      Value linear = arith::AddIOp::create(
          *b, loc,
          arith::MulIOp::create(
              *b, loc,
              arith::AddIOp::create(
                  *b, loc, arith::MulIOp::create(*b, loc, ids[2], sizes[1]),
                  ids[1]),
              sizes[0]),
          ids[0]);
      Value base =
          arith::MulIOp::create(*b, loc, linear, slot(kPhaseClockRecord));
      for (auto [i, field] : llvm::enumerate(fields))
        memref::StoreOp::create(
            *b, loc, field, records,
            ValueRange{arith::AddIOp::create(*b, loc, base, slot(i))});
    });
  }

private:
  static constexpr int64_t kLast = kPhases, kStart = kPhases + 1,
                           kStartTimer = kPhases + 2;

  Type i64() { return b->getI64Type(); }
  Value clock() { return NVVM::Clock64Op::create(*b, loc, i64()); }
  Value asI64(Value index) {
    return arith::IndexCastUIOp::create(*b, loc, i64(), index);
  }
  Value slot(int64_t i) { return arith::ConstantIndexOp::create(*b, loc, i); }
  Value get(int64_t i) {
    return memref::LoadOp::create(*b, loc, buffer, ValueRange{slot(i)});
  }
  void put(int64_t i, Value value) {
    memref::StoreOp::create(*b, loc, value, buffer, ValueRange{slot(i)});
  }
  void onThreadZero(function_ref<void()> body) {
    Value tid = gpu::ThreadIdOp::create(*b, loc, gpu::Dimension::x);
    Value first =
        arith::CmpIOp::create(*b, loc, arith::CmpIPredicate::eq, tid,
                              arith::ConstantIndexOp::create(*b, loc, 0));
    scf::IfOp::create(*b, loc, first, [&](OpBuilder &, Location) {
      body();
      scf::YieldOp::create(*b, loc);
    });
  }

  OpBuilder *b;
  Location loc;
  Value buffer;
};

/// The records buffer of a timed kernel: its last argument (before its
/// workgroup attributions among the body's arguments).
inline Value recordsOf(gpu::GPUFuncOp kernel) {
  return kernel.getArgument(kernel.getFunctionType().getNumInputs() - 1);
}

/// The printer of kernel `kernel`'s records (`PhaseClocks::report`):
/// `<kernel>_phase_clocks(records, blocks)`, blocks of 128 threads, thread
/// i printing record i (i < blocks) as one line
///   linattn-phase-clocks <kernel> block=x,y,z grid=X,Y,Z chunks=N
///   cycles=C ns=T prologue=... issue=... (every phase, `phaseName` order)
/// Sets `kPhaseClocksAttrName` on `kernel`, so that its launches get the
/// records and launch the printer on them (`LaunchBuilder::launch`).
gpu::GPUFuncOp buildPhaseClocksPrinter(OpBuilder &b, Location loc,
                                       gpu::GPUFuncOp kernel);

} // namespace mlir::linattn::gpukernels

#endif // LINATTN_LIB_CONVERSION_LINATTNTOGPU_PHASECLOCKS_H
