//===- GpuEmulatorExec.h - the emulator's programs and state ----*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// What the parts of the GPU emulator (GpuEmulator.cpp describes it) share:
// the words lanes hold and the float conversions, a kernel compiled into
// programs of instructions over slots of words, a block's execution state,
// error reporting, and the checks and profiling every memory access takes.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_LIB_RUNTIME_GPUEMULATOREXEC_H
#define LINATTN_LIB_RUNTIME_GPUEMULATOREXEC_H

#include "linattn/Runtime/Float16Bits.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Compiler.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace linattn::gpu_emulator {
/// The emulator's internals: hidden in liblinattn_gpu_emulator.so.
namespace LLVM_LIBRARY_VISIBILITY detail {

using namespace mlir;

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

/// Every value of a lane is one or more 64-bit words: integers zero-extended
/// from their width, floats as their bits (f32 in the low 32 bits).
using Word = uint64_t;

inline float bitsToF32(Word w) {
  return llvm::bit_cast<float>(static_cast<uint32_t>(w));
}
inline Word f32ToBits(float f) { return llvm::bit_cast<uint32_t>(f); }
inline double bitsToF64(Word w) { return llvm::bit_cast<double>(w); }
inline Word f64ToBits(double d) { return llvm::bit_cast<uint64_t>(d); }

/// The float types: their storage and the type they compute in.
struct F32 {
  using C = float;
  static C get(Word w) { return bitsToF32(w); }
  static Word put(C v) { return f32ToBits(v); }
};
struct F64 {
  using C = double;
  static C get(Word w) { return bitsToF64(w); }
  static Word put(C v) { return f64ToBits(v); }
};
struct F16 {
  using C = float;
  static C get(Word w) { return halfToFloat(static_cast<uint16_t>(w)); }
  static Word put(C v) { return floatToHalf(v); }
};
struct BF16 {
  using C = float;
  static C get(Word w) { return bf16ToFloat(static_cast<uint16_t>(w)); }
  static Word put(C v) { return floatToBF16(v); }
};

enum class FloatKind { F16, BF16, F32, F64 };

inline std::optional<FloatKind> floatKindOf(Type type) {
  if (type.isF16())
    return FloatKind::F16;
  if (type.isBF16())
    return FloatKind::BF16;
  if (type.isF32())
    return FloatKind::F32;
  if (type.isF64())
    return FloatKind::F64;
  return std::nullopt;
}

/// The value of a float of kind `kind` as a double (exact).
inline double floatToDouble(FloatKind kind, Word w) {
  switch (kind) {
  case FloatKind::F16:
    return F16::get(w);
  case FloatKind::BF16:
    return BF16::get(w);
  case FloatKind::F32:
    return F32::get(w);
  case FloatKind::F64:
    return F64::get(w);
  }
  return 0;
}

/// `d` rounded once to kind `kind`.
inline Word doubleToFloat(FloatKind kind, double d) {
  switch (kind) {
  case FloatKind::F16:
    return doubleToHalf(d);
  case FloatKind::BF16:
    return doubleToBF16(d);
  case FloatKind::F32:
    return f32ToBits(static_cast<float>(d));
  case FloatKind::F64:
    return f64ToBits(d);
  }
  return 0;
}

/// Integers of width W (index is 64 bits).
template <unsigned W>
struct Int {
  static constexpr Word mask = W >= 64 ? ~Word(0) : (Word(1) << W) - 1;
  static Word wrap(Word v) { return v & mask; }
  static int64_t sext(Word v) {
    if constexpr (W >= 64)
      return static_cast<int64_t>(v);
    else
      return static_cast<int64_t>(v << (64 - W)) >> (64 - W);
  }
};

//===----------------------------------------------------------------------===//
// Compiled kernels
//===----------------------------------------------------------------------===//

struct Exec;
struct Inst;
using Handler = void (*)(Exec &, const Inst &);

constexpr uint32_t kNone = ~0u;

/// A value's slot: its first word and how many words it has.
struct Slot {
  uint32_t offset = 0;
  uint32_t words = 1;
};

/// One op: its handler, the slots it reads and writes and what it needs
/// besides.
struct Inst {
  Handler fn = nullptr;
  Operation *op = nullptr;
  /// First operands and result, for the common small ops.
  uint32_t a = 0, b = 0, c = 0, r = 0;
  /// Every operand and result, for the ops that need more.
  SmallVector<Slot, 4> ins, outs;
  /// Op-specific: a predicate, a buffer number, a position, a width.
  int64_t imm = 0;
  int64_t imm2 = 0;
  /// Nested programs (scf.for body; scf.if then, else).
  uint32_t region[2] = {kNone, kNone};
};

/// The ops of one block of a region, its arguments and what its terminator
/// yields.
struct Program {
  std::vector<Inst> insts;
  SmallVector<Slot, 4> args;
  SmallVector<Slot, 4> yields;
  /// Whether a yielded value is another position's block argument (the
  /// copies back must go through a temporary).
  bool yieldsAlias = false;
};

/// A memref the kernel reads or writes: an argument or a workgroup buffer.
struct BufferInfo {
  bool shared = false;
  /// The kernel argument, or the workgroup attribution.
  unsigned index = 0;
  unsigned rank = 1;
  unsigned elementBytes = 4;
  /// Workgroup buffers: their static shape, elements in all.
  SmallVector<int64_t, 2> shape;
  int64_t elements = 0;
  /// Whether the kernel stores to it (its accesses are then tracked).
  bool stored = false;
  /// Workgroup buffers: their alignment in bytes (llvm.align, else the
  /// element size).
  int64_t alignment = 1;
  /// Workgroup buffers: their address in the block's shared memory (the
  /// buffers one after the other at their alignments, from 0), which
  /// memref.extract_aligned_pointer_as_index returns and wgmma descriptors
  /// hold.
  int64_t sharedAddress = 0;
};

/// Where a kernel argument goes.
struct ArgInfo {
  /// A memref: its buffer number; a scalar: kNone.
  uint32_t buffer = kNone;
  /// Scalars: their slot and how they are passed.
  uint32_t slot = 0;
  unsigned bytes = 8;
  bool isFloat = false;
};

struct Kernel {
  std::string name;
  gpu::GPUFuncOp func;
  std::vector<Program> programs; // programs[0] is the body
  std::vector<BufferInfo> buffers;
  std::vector<ArgInfo> args;
  /// Constants, written once per worker into every lane.
  std::vector<std::pair<uint32_t, Word>> constants;
  uint32_t words = 0;
  unsigned maxDepth = 1;
  /// Whether the kernel issues async copies (its blocks then track them).
  bool asyncCopies = false;
  /// Whether the kernel issues wgmma.mma_async (its warpgroups then track
  /// them).
  bool wgmma = false;
  /// Launch parameters expected (memref descriptors expanded).
  size_t params = 0;
  /// The block size every launch must have (`known_block_size`), if any:
  /// ptxas allocates registers for it, and a larger block fails to launch.
  std::optional<std::array<int64_t, 3>> knownBlockSize;
};

//===----------------------------------------------------------------------===//
// Execution state
//===----------------------------------------------------------------------===//

/// The last accesses to one element of workgroup memory, for the checks of
/// uninitialized reads and data races. Epochs count barriers.
struct Shadow {
  uint32_t writeEpoch = 0, readEpoch = 0;
  int32_t writer = -1, reader = -1; // reader -2: several threads
  const Inst *writeInst = nullptr, *readInst = nullptr;
  /// The thread whose async copy to the element is in flight, or -1.
  int32_t asyncWriter = -1;
  /// The writer's count of async-proxy fences (nvvm.fence.proxy) when it
  /// wrote: wgmma reads only what its writer fenced since.
  uint32_t writerFences = 0;
  /// The wgmma.mma_async in flight that read the element (no thread may
  /// write it until a wgmma.wait.group completes them).
  uint32_t wgmmaReads = 0;
};

constexpr int32_t kSeveralReaders = -2;

/// The last store to one element of a global buffer in the current launch:
/// the storing thread (block * threads + lane + 1, 0 for none) and its
/// worker's epoch. Blocks run on several host threads, hence the atomics.
struct GlobalShadow {
  std::atomic<uint64_t> writer{0};
  std::atomic<uint32_t> epoch{0};
};

struct RuntimeBuffer {
  char *base = nullptr; // element 0 (aligned pointer + offset)
  /// Global buffers: the descriptor's aligned pointer.
  char *aligned = nullptr;
  SmallVector<int64_t, 2> sizes, strides;
  int64_t size = 0, stride = 1; // rank 1
  unsigned elementBytes = 4;
  bool shared = false;
  Shadow *shadow = nullptr;
  /// Global buffers the kernel stores to: by element offset from `base`.
  GlobalShadow *globalShadow = nullptr;
  unsigned index = 0;
  /// Workgroup buffers: their shared-memory address (BufferInfo).
  int64_t sharedAddress = 0;
};

/// An async copy (nvgpu.device_async_copy) a thread issued and no wait has
/// completed: where it writes, what (read from global memory at issue) and
/// its group (kUncommitted until a device_async_create_group).
struct AsyncCopy {
  uint32_t buffer = 0;
  int64_t element = 0;
  uint32_t elements = 0;
  uint64_t group = 0;
  const Inst *inst = nullptr;
  uint8_t data[16] = {};
};

constexpr uint64_t kUncommitted = ~uint64_t(0);

/// The writer of workgroup elements that a bulk copy wrote when its
/// mbarrier phase completed: visible to every thread, as to the threads
/// that wait on the phase (all of them, in the kernels emulated).
constexpr int32_t kBulkWriter = -3;

/// A bulk copy (nvvm.cp.async.bulk.shared.cluster.global) in flight: where
/// it writes, what (read from global memory at issue) and who issued it.
struct BulkCopy {
  uint32_t buffer = 0;
  int64_t element = 0;
  uint32_t elements = 0;
  std::vector<uint8_t> data;
  const Inst *inst = nullptr;
  uint32_t lane = 0;
};

/// An mbarrier object, by its shared-memory address: its current phase, the
/// arrivals a phase expects and still waits for, its transaction count
/// (bytes expected less bytes completed) and the bulk copies that complete
/// bytes on it. A phase completes when no arrival is pending and the count
/// is 0; the copies complete when a thread waits on the barrier.
struct MBarrier {
  bool valid = false;
  uint32_t phase = 0;
  int64_t expected = 0, pending = 0, tx = 0;
  /// The epoch and thread of its mbarrier.init: no other thread may use it
  /// before a gpu.barrier.
  uint32_t initEpoch = 0;
  uint32_t initLane = 0;
  std::vector<BulkCopy> copies;
};

/// A wgmma.mma_async a warpgroup issued and no wgmma.wait.group completed:
/// the slots that hold its result (the op's, and those of the loop and
/// branch values it was copied to), which no op but another wgmma may read
/// yet; its group (kUncommitted until a wgmma.commit_group); the workgroup
/// elements it reads, which no thread may write yet.
struct PendingWgmma {
  SmallVector<uint32_t, 2> slots;
  uint64_t group = kUncommitted;
  const Inst *inst = nullptr;
  std::vector<std::pair<uint32_t, int64_t>> reads;
};

/// The wgmma state of a warpgroup (threads 128i..128i+127): its operations
/// in flight, the groups it committed, and whether a wgmma.fence came since
/// its last wgmma.wait.group.
struct Warpgroup {
  std::vector<PendingWgmma> pending;
  uint64_t committed = 0;
  bool fenced = false;
};

/// What a profiled access is (LINATTN_GPU_EMULATOR_PROFILE).
enum class Access : uint8_t {
  GlobalLoad,
  GlobalStore,
  SharedLoad,
  SharedStore,
  Mma,
  Prefetch
};

/// One op's accesses of one kind over a launch: the warps that executed it
/// with at least one active lane, the bytes their lanes asked for, the
/// units the memory system moved for them (global: 32-byte sectors;
/// shared: wavefronts; mma: none) and the fewest units those bytes need.
struct AccessStats {
  uint64_t warps = 0, bytes = 0, units = 0, ideal = 0;
};

using AccessKey = std::pair<const Inst *, Access>;

/// A lane's access in the op being profiled: its address (global: the
/// device address; shared: the byte offset in its buffer) and its bytes (0:
/// none).
struct LaneAccess {
  uint64_t address = 0;
  uint32_t bytes = 0;
};

/// The profile of one launch, which its workers add to.
struct LaunchProfile {
  std::mutex mutex;
  std::map<AccessKey, AccessStats> stats;
  /// Per global buffer: the 32-byte sectors from its aligned pointer on, bit
  /// 0 for read, bit 1 for written (the launch's compulsory traffic).
  std::vector<std::unique_ptr<std::atomic<uint8_t>[]>> sectors;
  std::vector<uint64_t> sectorCounts;
};

/// One worker: a block's registers, masks and workgroup memory.
struct Exec {
  const Kernel *kernel = nullptr;
  uint32_t threads = 0;
  std::vector<Word> regs;
  std::vector<std::vector<uint8_t>> masks;
  unsigned depth = 0;
  uint8_t *mask = nullptr;
  int64_t blockLinear = 0;
  int64_t blockId[3] = {0, 0, 0}, blockDim[3] = {1, 1, 1},
          gridDim[3] = {1, 1, 1};
  std::vector<int64_t> threadId[3];
  std::vector<RuntimeBuffer> buffers;
  std::vector<std::vector<char>> sharedData;
  std::vector<std::vector<Shadow>> shadows;
  uint32_t epoch = 0, blockEpoch = 0;
  /// Ops the block executed: the emulated cycle counter (nvvm's clock64).
  uint64_t executed = 0;
  /// With LINATTN_GPU_EMULATOR_CLOCK=shared-wavefronts clock64 reads
  /// sharedWavefronts instead: the shared-memory wavefronts of the worker's
  /// accesses so far, counted as the profile counts them.
  bool sharedClock = false;
  uint64_t sharedWavefronts = 0;
  std::vector<Word> scratch;
  /// Per thread: its async copies in flight and the groups it committed.
  std::vector<std::vector<AsyncCopy>> asyncCopies;
  std::vector<uint64_t> asyncGroups;
  /// Per thread: the async-proxy fences it executed. Per warpgroup: its
  /// wgmma state (kernels with wgmma only).
  std::vector<uint32_t> proxyFences;
  std::vector<Warpgroup> warpgroups;
  /// The block's mbarriers, by shared address.
  std::map<uint64_t, MBarrier> mbarriers;
  /// Profiling: the launch's profile (null when off), this worker's
  /// statistics and the lanes' accesses in the op being run.
  LaunchProfile *profile = nullptr;
  std::map<AccessKey, AccessStats> stats;
  std::vector<LaneAccess> pending;

  Word *reg(uint32_t slot) { return regs.data() + size_t(slot) * threads; }

  uint8_t *pushMask() {
    ++depth;
    if (depth >= masks.size())
      masks.emplace_back(threads);
    return masks[depth].data();
  }
  void popMask() { --depth; }
};

//===----------------------------------------------------------------------===//
// Errors (GpuEmulator.cpp)
//===----------------------------------------------------------------------===//

/// Ends the process on an error. The default SIGABRT action: no crash
/// handler's stack dump (the error is in the kernel, not here).
[[noreturn]] void abortProcess();

/// Serializes the error reports of the workers.
std::mutex &errorMutex();

/// `op` printed without its regions, at most 300 characters.
std::string describe(Operation *op);

/// Prints the error and aborts: a kernel that does something undefined must
/// fail its test loudly, never continue. `lane` < 0: no thread.
[[noreturn]] void fail(const Exec &e, const Inst &in, int64_t lane,
                       const std::string &message);
[[noreturn]] void failLaunch(const Kernel &k, const std::string &message);
[[noreturn]] void failCompile(const std::string &kernel, Operation *op,
                              const std::string &message);

//===----------------------------------------------------------------------===//
// What every handler uses
//===----------------------------------------------------------------------===//

/// Runs `program`'s instructions in order, each on the lanes of the current
/// mask, counting them (`Exec::executed`).
inline void run(Exec &e, const Program &program) {
  for (const Inst &in : program.insts) {
    ++e.executed;
    in.fn(e, in);
  }
}

/// r = f(a) on the active lanes.
template <typename F>
inline void forActive(Exec &e, F &&f) {
  const uint8_t *m = e.mask;
  for (uint32_t l = 0, n = e.threads; l < n; ++l)
    if (m[l])
      f(l);
}

/// Copies `words` words of slot `from` to slot `to` on the lanes `mask`
/// holds.
void copySlot(Exec &e, uint32_t to, uint32_t from, uint32_t words,
              const uint8_t *mask);

//===--- Memory ----------------------------------------------------------===//

template <unsigned Bytes>
inline Word readElement(const char *p) {
  if constexpr (Bytes == 1) {
    uint8_t v;
    std::memcpy(&v, p, 1);
    return v;
  } else if constexpr (Bytes == 2) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
  } else if constexpr (Bytes == 4) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  } else {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
}

template <unsigned Bytes>
inline void writeElement(char *p, Word w) {
  if constexpr (Bytes == 1) {
    uint8_t v = static_cast<uint8_t>(w);
    std::memcpy(p, &v, 1);
  } else if constexpr (Bytes == 2) {
    uint16_t v = static_cast<uint16_t>(w);
    std::memcpy(p, &v, 2);
  } else if constexpr (Bytes == 4) {
    uint32_t v = static_cast<uint32_t>(w);
    std::memcpy(p, &v, 4);
  } else {
    std::memcpy(p, &w, 8);
  }
}

inline std::string bufferName(const Exec &e, const RuntimeBuffer &b) {
  (void)e;
  return b.shared ? "workgroup buffer #" + std::to_string(b.index)
                  : "kernel argument #" + std::to_string(b.index);
}

/// The linear element of a multi-dimensional access on lane `l` (indices
/// in.ins[first...]), or a failure when out of bounds.
inline int64_t linearIndex(Exec &e, const Inst &in, const RuntimeBuffer &b,
                           unsigned first, uint32_t l) {
  int64_t linear = 0;
  for (unsigned d = 0; d < b.sizes.size(); ++d) {
    int64_t i = static_cast<int64_t>(e.reg(in.ins[first + d].offset)[l]);
    if (i < 0 || i >= b.sizes[d])
      fail(e, in, l,
           "out-of-bounds access to " + bufferName(e, b) + ": index " +
               std::to_string(i) + " of dimension " + std::to_string(d) +
               " of size " + std::to_string(b.sizes[d]));
    linear += i * b.strides[d];
  }
  return linear;
}

/// Fails on an access to an element an async copy still writes: only a
/// wait of the issuing thread completes a cp.async (then a barrier
/// publishes it), a wait on its mbarrier a bulk copy.
inline void checkNoAsyncWrite(Exec &e, const Inst &in, const RuntimeBuffer &b,
                              int64_t i, uint32_t l, const Shadow &s) {
  if (s.asyncWriter < 0)
    return;
  fail(e, in, l,
       "access to element " + std::to_string(i) + " of " + bufferName(e, b) +
           " while the async copy of thread " + std::to_string(s.asyncWriter) +
           " to it is in flight (no wait has completed it: of that thread "
           "for a cp.async, of any thread on its mbarrier for a bulk copy)");
}

/// Checks a workgroup read on lane `l` of element `i`: written in this
/// block, and not by another thread since the last barrier.
inline void checkSharedRead(Exec &e, const Inst &in, const RuntimeBuffer &b,
                            int64_t i, uint32_t l) {
  Shadow &s = b.shadow[i];
  int32_t lane = static_cast<int32_t>(l);
  checkNoAsyncWrite(e, in, b, i, l, s);
  if (s.writeEpoch < e.blockEpoch)
    fail(e, in, l,
         "read of uninitialized workgroup memory: element " +
             std::to_string(i) + " of " + bufferName(e, b) +
             " was not written by any thread of this block");
  if (s.writeEpoch == e.epoch && s.writer != lane && s.writer != kBulkWriter)
    fail(e, in, l,
         "data race on " + bufferName(e, b) + " element " + std::to_string(i) +
             ": thread " + std::to_string(s.writer) +
             " wrote it since the last gpu.barrier (at " +
             describe(s.writeInst->op) + ")");
  if (s.readEpoch == e.epoch) {
    if (s.reader != lane)
      s.reader = kSeveralReaders;
  } else {
    s.readEpoch = e.epoch;
    s.reader = lane;
  }
  s.readInst = &in;
}

inline void checkSharedWrite(Exec &e, const Inst &in, const RuntimeBuffer &b,
                             int64_t i, uint32_t l) {
  Shadow &s = b.shadow[i];
  int32_t lane = static_cast<int32_t>(l);
  checkNoAsyncWrite(e, in, b, i, l, s);
  if (s.wgmmaReads)
    fail(e, in, l,
         "write to element " + std::to_string(i) + " of " + bufferName(e, b) +
             ", which a wgmma.mma_async in flight reads (no wgmma.wait.group "
             "has completed it)");
  s.writerFences = e.proxyFences[l];
  if (s.writeEpoch == e.epoch && s.writer != lane && s.writer != kBulkWriter)
    fail(e, in, l,
         "data race on " + bufferName(e, b) + " element " + std::to_string(i) +
             ": thread " + std::to_string(s.writer) +
             " also wrote it since the last gpu.barrier (at " +
             describe(s.writeInst->op) + ")");
  if (s.readEpoch == e.epoch && s.reader != lane)
    fail(e, in, l,
         "data race on " + bufferName(e, b) + " element " + std::to_string(i) +
             ": " +
             (s.reader == kSeveralReaders
                  ? std::string("other threads")
                  : "thread " + std::to_string(s.reader)) +
             " read it since the last gpu.barrier (at " +
             describe(s.readInst->op) + ")");
  s.writeEpoch = e.epoch;
  s.writer = lane;
  s.writeInst = &in;
}

inline std::string blockString(const Exec &e, int64_t linear) {
  return "(" + std::to_string(linear % e.gridDim[0]) + ", " +
         std::to_string((linear / e.gridDim[0]) % e.gridDim[1]) + ", " +
         std::to_string(linear / (e.gridDim[0] * e.gridDim[1])) + ")";
}

inline std::string threadString(const Exec &e, uint32_t lane) {
  return "(" + std::to_string(e.threadId[0][lane]) + ", " +
         std::to_string(e.threadId[1][lane]) + ", " +
         std::to_string(e.threadId[2][lane]) + ")";
}

/// The thread that stored an element of a global buffer in this launch must
/// be this one, one of its block ordered by a barrier, or none: blocks are
/// not ordered with each other.
inline void checkGlobalAccess(Exec &e, const Inst &in, const RuntimeBuffer &b,
                              int64_t offset, uint32_t l, bool isStore) {
  GlobalShadow &s = b.globalShadow[offset];
  uint64_t me = static_cast<uint64_t>(e.blockLinear) * e.threads + l + 1;
  uint64_t writer = isStore ? s.writer.exchange(me, std::memory_order_relaxed)
                            : s.writer.load(std::memory_order_relaxed);
  if (writer && writer != me) {
    int64_t block = static_cast<int64_t>((writer - 1) / e.threads);
    uint32_t lane = static_cast<uint32_t>((writer - 1) % e.threads);
    // Built only on failure: ordered accesses by the block's threads are
    // common and must not pay for the message.
    auto what = [&] {
      return std::string(isStore ? "stores to" : "reads") + " element " +
             std::to_string(offset) + " of " + bufferName(e, b) +
             ", which thread " + threadString(e, lane) + " of block " +
             blockString(e, block) + " stored in this launch";
    };
    if (block != e.blockLinear)
      fail(e, in, l,
           "global memory race: this thread " + what() +
               " (blocks are not ordered: the result depends on their "
               "schedule)");
    if (s.epoch.load(std::memory_order_relaxed) == e.epoch)
      fail(e, in, l,
           "global memory race: this thread " + what() +
               " with no gpu.barrier in between");
  }
  if (isStore)
    s.epoch.store(e.epoch, std::memory_order_relaxed);
}

//===--- Profile ---------------------------------------------------------===//

/// Notes lane `l`'s access of `bytes` at `address` for profiling.
inline void noteAccess(Exec &e, uint32_t l, uint64_t address, uint32_t bytes) {
  if (e.profile)
    e.pending[l] = {address, bytes};
}

/// The address noteAccess takes for element `i` of `b`: the byte offset in
/// a workgroup buffer, the device address of a global one.
inline uint64_t addressOf(const RuntimeBuffer &b, int64_t i) {
  int64_t byte = i * b.elementBytes;
  return b.shared ? static_cast<uint64_t>(byte)
                  : static_cast<uint64_t>(reinterpret_cast<uintptr_t>(b.base)) +
                        static_cast<uint64_t>(byte);
}

/// Adds the accesses noteAccess collected for `in` to this worker's
/// statistics, warp by warp, and clears them (GpuEmulatorHandlers.cpp).
void accountAccesses(Exec &e, const Inst &in, Access kind, uint32_t buffer);

/// Profiles the accesses noted for `in` to buffer number `buffer`, if on.
inline void profileAccesses(Exec &e, const Inst &in, Access kind,
                            uint32_t buffer) {
  if (e.profile)
    accountAccesses(e, in, kind, buffer);
}

/// Counts a warp's execution of the tensor-core op `in`, if on.
inline void profileMma(Exec &e, const Inst &in) {
  if (e.profile)
    ++e.stats[{&in, Access::Mma}].warps;
}

//===----------------------------------------------------------------------===//
// The compiler (GpuEmulatorCompiler.cpp)
//===----------------------------------------------------------------------===//

/// Compiles `k.func` into `k`'s programs, buffers and arguments; aborts
/// naming the op on anything the emulator does not know.
void compileKernel(Kernel &k);

} // namespace detail
} // namespace linattn::gpu_emulator

#endif // LINATTN_LIB_RUNTIME_GPUEMULATOREXEC_H
