//===- GpuEmulator.cpp - an interpreter of linattn's GPU kernels ----------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Runs the gpu.func kernels of linattn-lower-to-nvvm{emulate=true} on the
// CPU, for tests on machines without a GPU.
//
// A kernel is compiled once into a tree of instructions: every SSA value has
// a slot of one 64-bit word per thread of the block (a vector or struct has
// one word per element), every op a precomputed handler and the slots of its
// operands and results. A block runs all its threads in lockstep: each
// handler loops over the lanes of the active mask. scf.for runs while any
// lane's induction variable is below its bound; scf.if runs both branches
// under complementary masks and merges the yields per lane. Blocks are
// independent and spread over a few host threads.
//
// Floats behave as IEEE types of their width: f32 in float, f64 in double,
// f16 and bf16 stored as their bits and rounded to nearest even; a
// contractible mulf feeding only a contractible addf becomes one fused
// multiply-add, as NVPTX emits it. nvvm.mma.sync (m16n8k16 f16/bf16, m16n8k8
// tf32) gathers the fragments of the warp's 32 lanes in the PTX layouts and
// accumulates the exact products in f32; nvgpu.ldmatrix reads the 8x8 b16
// matrices of its lanes' row addresses and hands them out (transposed or
// not) as the PTX instruction does. vector.load and vector.store move 1 to 8
// consecutive elements of a rank-1 buffer per thread, checked element by
// element as memref.load and memref.store are; vector.extract and
// vector.insert at static positions, vector.from_elements, broadcast and
// bitcast rearrange the words of a vector. The aligned pointer of a kernel
// argument (memref.extract_aligned_pointer_as_index) is its host address,
// the emulated device address, so kernels can test alignment at run time.
// nvgpu.device_async_copy (cp.async) reads global memory when issued and
// claims its shared elements until a wait of the issuing thread
// (nvgpu.device_async_wait or nvvm.cp.async.wait.group, counting the groups
// that nvgpu.device_async_create_group or nvvm.cp.async.commit.group
// closed) completes it; the copy then counts as that thread's store.
//
// sm_90's warpgroup MMA: nvvm.wgmma.mma_async (m64nNk16 of f16 and bf16,
// m64nNk8 of tf32, f32 accumulators) reads A and B from shared memory
// through 64-bit descriptors (start address, leading and stride byte
// offsets, swizzle of 32, 64 or 128 bytes or none) in the canonical K-major
// and MN-major layouts of the PTX ISA, and hands out D in its register
// layout (register i of thread 32w + 4g + q: row 16w + g + 8·(i/2 % 2),
// column 8·(i/4) + 2q + i % 2). Workgroup buffers have shared addresses
// (one after the other at their alignments, from 0), which
// memref.extract_aligned_pointer_as_index returns. The product is computed
// when the op is issued, but its result may be read (other than as the
// accumulator of the next wgmma) only after a nvvm.wgmma.wait.group that
// completes its group (nvvm.wgmma.commit.group), also where a loop or a
// branch passed it on; the shared elements it read may not be written
// until then; each warpgroup needs a nvvm.wgmma.fence.aligned since its
// last wait; every element read must have been written before a
// gpu.barrier and fenced by its writer with nvvm.fence.proxy (async.shared)
// since; warpgroup-aligned ops need all 128 threads of the warpgroup and
// identical descriptors across it.
//
// What a GPU would do wrong or leave undefined aborts the process with the
// kernel, the op, its location and the thread: loads and stores out of the
// bounds of a buffer (global: the size of its descriptor; workgroup: its
// static size), reads of workgroup memory no thread of the block wrote,
// shared-memory data races (two threads touching an element between two
// barriers, one of them writing), global-memory races (an element stored by
// another block, or by another thread of the block with no barrier in
// between), gpu.barrier reached by part of the block, gpu.shuffle with
// inactive lanes, nvvm.mma.sync or nvgpu.ldmatrix without its whole warp,
// ldmatrix rows that are not 16-byte aligned, vector.load and vector.store
// at an address that is not a multiple of their alignment attribute, or
// without one of their element size (global buffers: the host address;
// workgroup buffers: the byte offset, and a buffer whose llvm.align is
// smaller fails when the kernel is compiled), accesses to shared elements an
// async copy still writes, async copies out of bounds or misaligned (source
// and destination to the copy size) and copies left in flight when the
// kernel returns, integer division by zero, scf.for with a step that is not
// positive, ops the emulator does not know, and the misuses of wgmma above
// (with wgmma still in flight when the kernel returns).
//
// With LINATTN_GPU_EMULATOR_PROFILE=FILE every launch appends a JSON line to
// FILE with what its memory accesses cost on a GPU's L1, op by op: global
// loads and stores in 32-byte sectors (the distinct sectors of a warp's
// lanes), shared ones in wavefronts (phases of 128 bytes, each as many
// wavefronts as the most distinct 4-byte words it touches in one bank),
// each beside the fewest possible (sectors: the warp's distinct bytes over
// 32; wavefronts: one a phase); the tensor-core instructions
// of the warps; per global buffer the distinct sectors read and written
// (the launch's compulsory traffic). These are the accesses the MLIR kernel
// makes: LLVM may still merge adjacent scalar accesses into vector ones.
//
//===----------------------------------------------------------------------===//

#include "GpuEmulator.h"

#include "linattn/Conversion/LinAttnToGPU/LinAttnToGPU.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>
#include <vector>

using namespace mlir;

namespace {

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

inline float halfToFloat(uint16_t h) {
  return static_cast<float>(llvm::bit_cast<_Float16>(h));
}
inline uint16_t floatToHalf(float f) {
  return llvm::bit_cast<uint16_t>(static_cast<_Float16>(f));
}
inline uint16_t doubleToHalf(double d) {
  return llvm::bit_cast<uint16_t>(static_cast<_Float16>(d));
}
inline float bf16ToFloat(uint16_t b) {
  return llvm::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}
inline uint16_t floatToBF16(float f) {
  uint32_t u = llvm::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40); // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
uint16_t doubleToBF16(double d) {
  // Rounded once, from the double (through float it could round twice,
  // unless the double is a float, as every f32 truncated to bf16 is).
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d)
    return floatToBF16(f);
  llvm::APFloat value(d);
  bool lost;
  value.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
  return static_cast<uint16_t>(value.bitcastToAPInt().getZExtValue());
}

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

std::optional<FloatKind> floatKindOf(Type type) {
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
double floatToDouble(FloatKind kind, Word w) {
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
Word doubleToFloat(FloatKind kind, double d) {
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
  std::vector<Word> scratch;
  /// Per thread: its async copies in flight and the groups it committed.
  std::vector<std::vector<AsyncCopy>> asyncCopies;
  std::vector<uint64_t> asyncGroups;
  /// Per thread: the async-proxy fences it executed. Per warpgroup: its
  /// wgmma state (kernels with wgmma only).
  std::vector<uint32_t> proxyFences;
  std::vector<Warpgroup> warpgroups;
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
// Errors
//===----------------------------------------------------------------------===//

/// Ends the process on an error. The default SIGABRT action: no crash
/// handler's stack dump (the error is in the kernel, not here).
[[noreturn]] void abortProcess() {
  std::fflush(stderr);
  std::signal(SIGABRT, SIG_DFL);
  std::abort();
}

std::mutex &errorMutex() {
  static std::mutex mutex;
  return mutex;
}

std::string describe(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, OpPrintingFlags().skipRegions().elideLargeElementsAttrs(8));
  if (text.size() > 300)
    text = text.substr(0, 300) + " ...";
  return text;
}

std::string locationOf(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getLoc();
  return text;
}

/// Prints the error and aborts: a kernel that does something undefined must
/// fail its test loudly, never continue.
[[noreturn]] void fail(const Exec &e, const Inst &in, int64_t lane,
                       const std::string &message) {
  std::lock_guard<std::mutex> lock(errorMutex());
  std::string thread = "";
  if (lane >= 0) {
    thread = ", thread (" + std::to_string(e.threadId[0][lane]) + ", " +
             std::to_string(e.threadId[1][lane]) + ", " +
             std::to_string(e.threadId[2][lane]) + ")";
  }
  std::fprintf(stderr,
               "linattn GPU emulator: error: %s\n"
               "  kernel: @%s\n  op: %s\n  at: %s\n"
               "  block (%lld, %lld, %lld)%s\n",
               message.c_str(), e.kernel->name.c_str(), describe(in.op).c_str(),
               locationOf(in.op).c_str(), static_cast<long long>(e.blockId[0]),
               static_cast<long long>(e.blockId[1]),
               static_cast<long long>(e.blockId[2]), thread.c_str());
  abortProcess();
}

[[noreturn]] void failLaunch(const Kernel &k, const std::string &message) {
  std::lock_guard<std::mutex> lock(errorMutex());
  std::fprintf(stderr, "linattn GPU emulator: error: %s\n  kernel: @%s\n",
               message.c_str(), k.name.c_str());
  abortProcess();
}

[[noreturn]] void failCompile(const std::string &kernel, Operation *op,
                              const std::string &message) {
  std::lock_guard<std::mutex> lock(errorMutex());
  std::fprintf(stderr,
               "linattn GPU emulator: error: %s\n  kernel: @%s\n  op: %s\n"
               "  at: %s\n",
               message.c_str(), kernel.c_str(), describe(op).c_str(),
               locationOf(op).c_str());
  abortProcess();
}

//===----------------------------------------------------------------------===//
// Handlers
//===----------------------------------------------------------------------===//

void run(Exec &e, const Program &program) {
  for (const Inst &in : program.insts)
    in.fn(e, in);
}

/// r = f(a) on the active lanes.
template <typename F>
inline void forActive(Exec &e, F &&f) {
  const uint8_t *m = e.mask;
  for (uint32_t l = 0, n = e.threads; l < n; ++l)
    if (m[l])
      f(l);
}

template <typename T, typename Op>
void floatBinary(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a), *b = e.reg(in.b);
  forActive(e, [&](uint32_t l) {
    r[l] = T::put(Op::apply(T::get(a[l]), T::get(b[l])));
  });
}

struct AddOp {
  template <typename C>
  static C apply(C x, C y) {
    return x + y;
  }
};
struct SubOp {
  template <typename C>
  static C apply(C x, C y) {
    return x - y;
  }
};
struct MulOp {
  template <typename C>
  static C apply(C x, C y) {
    return x * y;
  }
};
struct DivOp {
  template <typename C>
  static C apply(C x, C y) {
    return x / y;
  }
};
struct RemOp {
  template <typename C>
  static C apply(C x, C y) {
    return std::fmod(x, y);
  }
};
/// maximumf/minimumf: NaN if either is, -0 < +0.
struct MaximumOp {
  template <typename C>
  static C apply(C x, C y) {
    if (std::isnan(x) || std::isnan(y))
      return std::numeric_limits<C>::quiet_NaN();
    if (x == y)
      return std::signbit(x) ? y : x;
    return x > y ? x : y;
  }
};
struct MinimumOp {
  template <typename C>
  static C apply(C x, C y) {
    if (std::isnan(x) || std::isnan(y))
      return std::numeric_limits<C>::quiet_NaN();
    if (x == y)
      return std::signbit(x) ? x : y;
    return x < y ? x : y;
  }
};
/// maxnumf/minnumf: the number if one is NaN.
struct MaxNumOp {
  template <typename C>
  static C apply(C x, C y) {
    return std::fmax(x, y);
  }
};
struct MinNumOp {
  template <typename C>
  static C apply(C x, C y) {
    return std::fmin(x, y);
  }
};

template <typename T, typename Op>
void floatUnary(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a);
  forActive(e, [&](uint32_t l) { r[l] = T::put(Op::apply(T::get(a[l]))); });
}

struct NegOp {
  template <typename C>
  static C apply(C x) {
    return -x;
  }
};
struct ExpOp {
  template <typename C>
  static C apply(C x) {
    return std::exp(x);
  }
};
struct Exp2Op {
  template <typename C>
  static C apply(C x) {
    return std::exp2(x);
  }
};
struct LogOp {
  template <typename C>
  static C apply(C x) {
    return std::log(x);
  }
};
struct SqrtOp {
  template <typename C>
  static C apply(C x) {
    return std::sqrt(x);
  }
};
struct RsqrtOp {
  template <typename C>
  static C apply(C x) {
    return C(1) / std::sqrt(x);
  }
};
struct AbsOp {
  template <typename C>
  static C apply(C x) {
    return std::fabs(x);
  }
};
struct TanhOp {
  template <typename C>
  static C apply(C x) {
    return std::tanh(x);
  }
};

/// r = a * b + c, rounded once.
template <typename T>
void floatFma(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a), *b = e.reg(in.b), *c = e.reg(in.c);
  forActive(e, [&](uint32_t l) {
    r[l] = T::put(std::fma(T::get(a[l]), T::get(b[l]), T::get(c[l])));
  });
}

template <typename T>
void floatCmp(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a), *b = e.reg(in.b);
  auto pred = static_cast<arith::CmpFPredicate>(in.imm);
  forActive(e, [&](uint32_t l) {
    typename T::C x = T::get(a[l]), y = T::get(b[l]);
    bool unordered = std::isnan(x) || std::isnan(y);
    bool v = false;
    switch (pred) {
    case arith::CmpFPredicate::AlwaysFalse:
      v = false;
      break;
    case arith::CmpFPredicate::OEQ:
      v = !unordered && x == y;
      break;
    case arith::CmpFPredicate::OGT:
      v = !unordered && x > y;
      break;
    case arith::CmpFPredicate::OGE:
      v = !unordered && x >= y;
      break;
    case arith::CmpFPredicate::OLT:
      v = !unordered && x < y;
      break;
    case arith::CmpFPredicate::OLE:
      v = !unordered && x <= y;
      break;
    case arith::CmpFPredicate::ONE:
      v = !unordered && x != y;
      break;
    case arith::CmpFPredicate::ORD:
      v = !unordered;
      break;
    case arith::CmpFPredicate::UEQ:
      v = unordered || x == y;
      break;
    case arith::CmpFPredicate::UGT:
      v = unordered || x > y;
      break;
    case arith::CmpFPredicate::UGE:
      v = unordered || x >= y;
      break;
    case arith::CmpFPredicate::ULT:
      v = unordered || x < y;
      break;
    case arith::CmpFPredicate::ULE:
      v = unordered || x <= y;
      break;
    case arith::CmpFPredicate::UNE:
      v = unordered || x != y;
      break;
    case arith::CmpFPredicate::UNO:
      v = unordered;
      break;
    case arith::CmpFPredicate::AlwaysTrue:
      v = true;
      break;
    }
    r[l] = v;
  });
}

/// extf / truncf between any two float kinds: exact, or rounded once.
template <typename From, typename To>
void floatConvert(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a);
  forActive(e, [&](uint32_t l) {
    r[l] = To::put(static_cast<typename To::C>(From::get(a[l])));
  });
}

/// Conversions that float arithmetic would round twice: through double.
void floatConvertGeneric(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a);
  auto from = static_cast<FloatKind>(in.imm),
       to = static_cast<FloatKind>(in.imm2);
  forActive(e, [&](uint32_t l) {
    r[l] = doubleToFloat(to, floatToDouble(from, a[l]));
  });
}

enum class IntBinaryKind {
  Add,
  Sub,
  Mul,
  DivU,
  DivS,
  RemU,
  RemS,
  CeilDivU,
  CeilDivS,
  FloorDivS,
  MinU,
  MaxU,
  MinS,
  MaxS,
  And,
  Or,
  Xor,
  Shl,
  ShrU,
  ShrS
};

template <unsigned W, IntBinaryKind K>
void intBinary(Exec &e, const Inst &in) {
  using I = Int<W>;
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a), *b = e.reg(in.b);
  forActive(e, [&](uint32_t l) {
    Word x = a[l], y = b[l];
    int64_t sx = I::sext(x), sy = I::sext(y);
    Word v = 0;
    if constexpr (K == IntBinaryKind::DivU || K == IntBinaryKind::DivS ||
                  K == IntBinaryKind::RemU || K == IntBinaryKind::RemS ||
                  K == IntBinaryKind::CeilDivU ||
                  K == IntBinaryKind::CeilDivS || K == IntBinaryKind::FloorDivS)
      if (y == 0)
        fail(e, in, l, "integer division by zero");
    switch (K) {
    case IntBinaryKind::Add:
      v = x + y;
      break;
    case IntBinaryKind::Sub:
      v = x - y;
      break;
    case IntBinaryKind::Mul:
      v = x * y;
      break;
    case IntBinaryKind::DivU:
      v = x / y;
      break;
    case IntBinaryKind::DivS:
      v = static_cast<Word>(sy == -1 ? -sx : sx / sy);
      break;
    case IntBinaryKind::RemU:
      v = x % y;
      break;
    case IntBinaryKind::RemS:
      v = static_cast<Word>(sy == -1 ? 0 : sx % sy);
      break;
    case IntBinaryKind::CeilDivU:
      v = x / y + (x % y != 0);
      break;
    case IntBinaryKind::CeilDivS: {
      int64_t q = sy == -1 ? -sx : sx / sy;
      if (sy != -1 && sx % sy != 0 && ((sx < 0) == (sy < 0)))
        ++q;
      v = static_cast<Word>(q);
      break;
    }
    case IntBinaryKind::FloorDivS: {
      int64_t q = sy == -1 ? -sx : sx / sy;
      if (sy != -1 && sx % sy != 0 && ((sx < 0) != (sy < 0)))
        --q;
      v = static_cast<Word>(q);
      break;
    }
    case IntBinaryKind::MinU:
      v = std::min(x, y);
      break;
    case IntBinaryKind::MaxU:
      v = std::max(x, y);
      break;
    case IntBinaryKind::MinS:
      v = static_cast<Word>(std::min(sx, sy));
      break;
    case IntBinaryKind::MaxS:
      v = static_cast<Word>(std::max(sx, sy));
      break;
    case IntBinaryKind::And:
      v = x & y;
      break;
    case IntBinaryKind::Or:
      v = x | y;
      break;
    case IntBinaryKind::Xor:
      v = x ^ y;
      break;
    case IntBinaryKind::Shl:
      v = y >= W ? 0 : x << y;
      break;
    case IntBinaryKind::ShrU:
      v = y >= W ? 0 : x >> y;
      break;
    case IntBinaryKind::ShrS:
      v = static_cast<Word>(y >= W ? (sx < 0 ? -1 : 0) : sx >> y);
      break;
    }
    r[l] = I::wrap(v);
  });
}

template <unsigned W>
void intCmp(Exec &e, const Inst &in) {
  using I = Int<W>;
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a), *b = e.reg(in.b);
  auto pred = static_cast<arith::CmpIPredicate>(in.imm);
  forActive(e, [&](uint32_t l) {
    Word x = a[l], y = b[l];
    int64_t sx = I::sext(x), sy = I::sext(y);
    bool v = false;
    switch (pred) {
    case arith::CmpIPredicate::eq:
      v = x == y;
      break;
    case arith::CmpIPredicate::ne:
      v = x != y;
      break;
    case arith::CmpIPredicate::slt:
      v = sx < sy;
      break;
    case arith::CmpIPredicate::sle:
      v = sx <= sy;
      break;
    case arith::CmpIPredicate::sgt:
      v = sx > sy;
      break;
    case arith::CmpIPredicate::sge:
      v = sx >= sy;
      break;
    case arith::CmpIPredicate::ult:
      v = x < y;
      break;
    case arith::CmpIPredicate::ule:
      v = x <= y;
      break;
    case arith::CmpIPredicate::ugt:
      v = x > y;
      break;
    case arith::CmpIPredicate::uge:
      v = x >= y;
      break;
    }
    r[l] = v;
  });
}

/// Integer width changes: imm = source width, imm2 = result width; sign
/// extension when `Signed`.
template <bool Signed>
void intResize(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a);
  unsigned from = in.imm, to = in.imm2;
  Word toMask = to >= 64 ? ~Word(0) : (Word(1) << to) - 1;
  forActive(e, [&](uint32_t l) {
    Word x = a[l];
    if (Signed && from < 64)
      x = static_cast<Word>(static_cast<int64_t>(x << (64 - from)) >>
                            (64 - from));
    r[l] = x & toMask;
  });
}

/// sitofp / uitofp: imm = source width, imm2 = FloatKind; `Signed`.
template <bool Signed>
void intToFloat(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a);
  unsigned from = in.imm;
  auto to = static_cast<FloatKind>(in.imm2);
  forActive(e, [&](uint32_t l) {
    Word x = a[l];
    double v;
    if (Signed) {
      int64_t s = from < 64
                      ? static_cast<int64_t>(x << (64 - from)) >> (64 - from)
                      : static_cast<int64_t>(x);
      v = static_cast<double>(s);
    } else {
      v = static_cast<double>(x);
    }
    r[l] = doubleToFloat(to, v);
  });
}

/// fptosi / fptoui: imm = FloatKind, imm2 = result width.
template <bool Signed>
void floatToInt(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a);
  auto from = static_cast<FloatKind>(in.imm);
  unsigned to = in.imm2;
  Word toMask = to >= 64 ? ~Word(0) : (Word(1) << to) - 1;
  forActive(e, [&](uint32_t l) {
    double v = std::trunc(floatToDouble(from, a[l]));
    Word x = Signed ? static_cast<Word>(static_cast<int64_t>(v))
                    : static_cast<Word>(v);
    r[l] = x & toMask;
  });
}

/// arith.select on values of `in.imm` words.
void selectOp(Exec &e, const Inst &in) {
  uint32_t words = in.imm;
  const Word *cond = e.reg(in.a);
  for (uint32_t w = 0; w < words; ++w) {
    Word *r = e.reg(in.r + w);
    const Word *x = e.reg(in.b + w), *y = e.reg(in.c + w);
    forActive(e, [&](uint32_t l) { r[l] = cond[l] ? x[l] : y[l]; });
  }
}

/// Copies `words` words of slot `from` to slot `to` on the active lanes.
void copySlot(Exec &e, uint32_t to, uint32_t from, uint32_t words,
              const uint8_t *mask) {
  for (uint32_t w = 0; w < words; ++w) {
    Word *r = e.reg(to + w);
    const Word *x = e.reg(from + w);
    for (uint32_t l = 0; l < e.threads; ++l)
      if (mask[l])
        r[l] = x[l];
  }
}

void threadIdOp(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const std::vector<int64_t> &ids = e.threadId[in.imm];
  forActive(e, [&](uint32_t l) { r[l] = static_cast<Word>(ids[l]); });
}

/// block_id, block_dim, grid_dim: imm = 0, 1, 2 for which, imm2 the
/// dimension.
void uniformIdOp(Exec &e, const Inst &in) {
  const int64_t *source =
      in.imm == 0 ? e.blockId : (in.imm == 1 ? e.blockDim : e.gridDim);
  Word v = static_cast<Word>(source[in.imm2]);
  Word *r = e.reg(in.r);
  forActive(e, [&](uint32_t l) { r[l] = v; });
}

void laneIdOp(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  forActive(e, [&](uint32_t l) { r[l] = l % 32; });
}

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

std::string bufferName(const Exec &e, const RuntimeBuffer &b) {
  (void)e;
  return b.shared ? "workgroup buffer #" + std::to_string(b.index)
                  : "kernel argument #" + std::to_string(b.index);
}

/// The linear element of a multi-dimensional access on lane `l` (indices
/// in.ins[first...]), or a failure when out of bounds.
int64_t linearIndex(Exec &e, const Inst &in, const RuntimeBuffer &b,
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
/// wait of the issuing thread completes it (then a barrier publishes it).
inline void checkNoAsyncWrite(Exec &e, const Inst &in, const RuntimeBuffer &b,
                              int64_t i, uint32_t l, const Shadow &s) {
  if (s.asyncWriter < 0)
    return;
  fail(e, in, l,
       "access to element " + std::to_string(i) + " of " + bufferName(e, b) +
           " while the async copy of thread " + std::to_string(s.asyncWriter) +
           " to it is in flight (no wait of that thread has completed it)");
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
  if (s.writeEpoch == e.epoch && s.writer != lane)
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
  if (s.writeEpoch == e.epoch && s.writer != lane)
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

std::string blockString(const Exec &e, int64_t linear) {
  return "(" + std::to_string(linear % e.gridDim[0]) + ", " +
         std::to_string((linear / e.gridDim[0]) % e.gridDim[1]) + ", " +
         std::to_string(linear / (e.gridDim[0] * e.gridDim[1])) + ")";
}

std::string threadString(const Exec &e, uint32_t lane) {
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

/// The distinct bytes of some [begin, end) ranges (sorts them).
uint64_t distinctBytes(SmallVectorImpl<std::pair<uint64_t, uint64_t>> &ranges) {
  llvm::sort(ranges);
  uint64_t bytes = 0, covered = 0;
  for (auto [begin, end] : ranges) {
    begin = std::max(begin, covered);
    if (end > begin) {
      bytes += end - begin;
      covered = end;
    }
  }
  return bytes;
}

/// Adds the accesses noteAccess collected for `in` to this worker's
/// statistics, warp by warp, and clears them. Global accesses count the
/// distinct 32-byte sectors a warp's lanes touch (and mark them in the
/// launch's footprint of buffer number `buffer`); shared ones are split
/// into phases of 128 bytes (32 lanes of up to 4 bytes, 16 of 8, 8 of 16:
/// an ldmatrix's phase is one 8x8 matrix) that take as many wavefronts as
/// the most distinct 4-byte words they touch in one of the 32 banks, at
/// fewest one (a broadcast of 16 bytes to the warp takes four).
void accountAccesses(Exec &e, const Inst &in, Access kind, uint32_t buffer) {
  const RuntimeBuffer &b = e.buffers[buffer];
  AccessStats &stats = e.stats[{&in, kind}];
  bool shared = kind == Access::SharedLoad || kind == Access::SharedStore;
  SmallVector<std::pair<uint64_t, uint64_t>, 32> ranges;
  SmallVector<uint64_t, 64> units;
  for (uint32_t base = 0; base < e.threads; base += 32) {
    uint32_t lanes = std::min<uint32_t>(32, e.threads - base);
    ranges.clear();
    uint64_t asked = 0;
    uint32_t widest = 0;
    for (uint32_t i = 0; i < lanes; ++i) {
      LaneAccess &a = e.pending[base + i];
      if (!a.bytes)
        continue;
      ranges.push_back({a.address, a.address + a.bytes});
      asked += a.bytes;
      widest = std::max(widest, a.bytes);
    }
    if (ranges.empty())
      continue;
    ++stats.warps;
    stats.bytes += asked;
    if (!shared) {
      units.clear();
      for (auto [begin, end] : ranges)
        for (uint64_t x = begin / 32; x <= (end - 1) / 32; ++x)
          units.push_back(x);
      llvm::sort(units);
      units.erase(std::unique(units.begin(), units.end()), units.end());
      stats.units += units.size();
      stats.ideal += (distinctBytes(ranges) + 31) / 32;
      // Prefetches move no data the kernel asked for.
      uint64_t first =
          static_cast<uint64_t>(reinterpret_cast<uintptr_t>(b.aligned)) / 32;
      uint8_t bit = kind == Access::GlobalLoad ? 1 : 2;
      if (kind != Access::Prefetch)
        for (uint64_t x : units)
          if (x >= first && x - first < e.profile->sectorCounts[buffer])
            e.profile->sectors[buffer][x - first].fetch_or(
                bit, std::memory_order_relaxed);
    } else {
      uint32_t phase = widest <= 4 ? 32 : 128 / widest;
      for (uint32_t p = 0; p < lanes; p += phase) {
        // (bank, word) of every word the phase touches.
        units.clear();
        for (uint32_t i = p; i < std::min(p + phase, lanes); ++i) {
          LaneAccess &a = e.pending[base + i];
          if (!a.bytes)
            continue;
          for (uint64_t w = a.address / 4; w <= (a.address + a.bytes - 1) / 4;
               ++w)
            units.push_back((w % 32) << 58 | w);
        }
        if (units.empty())
          continue;
        ++stats.ideal;
        llvm::sort(units);
        units.erase(std::unique(units.begin(), units.end()), units.end());
        uint64_t most = 0, run = 0;
        for (size_t j = 0; j < units.size(); ++j) {
          run = j && units[j] >> 58 == units[j - 1] >> 58 ? run + 1 : 1;
          most = std::max(most, run);
        }
        stats.units += most;
      }
    }
    for (uint32_t i = 0; i < lanes; ++i)
      e.pending[base + i] = {};
  }
}

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

/// memref.load of a rank-1 buffer: a = index, imm = buffer.
template <unsigned Bytes, bool Shared>
void loadOp(Exec &e, const Inst &in) {
  const RuntimeBuffer &b = e.buffers[in.imm];
  const Word *index = e.reg(in.a);
  Word *r = e.reg(in.r);
  forActive(e, [&](uint32_t l) {
    int64_t i = static_cast<int64_t>(index[l]);
    if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(b.size))
      fail(e, in, l,
           "out-of-bounds load from " + bufferName(e, b) + ": index " +
               std::to_string(i) + ", size " + std::to_string(b.size));
    if constexpr (Shared)
      checkSharedRead(e, in, b, i, l);
    else if (b.globalShadow)
      checkGlobalAccess(e, in, b, i * b.stride, l, /*isStore=*/false);
    noteAccess(e, l, addressOf(b, i * b.stride), Bytes);
    r[l] = readElement<Bytes>(b.base + i * b.stride * Bytes);
  });
  profileAccesses(e, in, Shared ? Access::SharedLoad : Access::GlobalLoad,
                  in.imm);
}

/// memref.store of a rank-1 buffer: a = value, b = index, imm = buffer.
template <unsigned Bytes, bool Shared>
void storeOp(Exec &e, const Inst &in) {
  const RuntimeBuffer &b = e.buffers[in.imm];
  const Word *value = e.reg(in.a);
  const Word *index = e.reg(in.b);
  forActive(e, [&](uint32_t l) {
    int64_t i = static_cast<int64_t>(index[l]);
    if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(b.size))
      fail(e, in, l,
           "out-of-bounds store to " + bufferName(e, b) + ": index " +
               std::to_string(i) + ", size " + std::to_string(b.size));
    if constexpr (Shared)
      checkSharedWrite(e, in, b, i, l);
    else if (b.globalShadow)
      checkGlobalAccess(e, in, b, i * b.stride, l, /*isStore=*/true);
    noteAccess(e, l, addressOf(b, i * b.stride), Bytes);
    writeElement<Bytes>(b.base + i * b.stride * Bytes, value[l]);
  });
  profileAccesses(e, in, Shared ? Access::SharedStore : Access::GlobalStore,
                  in.imm);
}

/// memref.load of any rank: ins = indices.
template <unsigned Bytes>
void loadOpRanked(Exec &e, const Inst &in) {
  const RuntimeBuffer &b = e.buffers[in.imm];
  Word *r = e.reg(in.r);
  forActive(e, [&](uint32_t l) {
    int64_t i = linearIndex(e, in, b, 0, l);
    if (b.shared)
      checkSharedRead(e, in, b, i, l);
    else if (b.globalShadow)
      checkGlobalAccess(e, in, b, i, l, /*isStore=*/false);
    noteAccess(e, l, addressOf(b, i), Bytes);
    r[l] = readElement<Bytes>(b.base + i * Bytes);
  });
  profileAccesses(e, in, b.shared ? Access::SharedLoad : Access::GlobalLoad,
                  in.imm);
}

/// memref.store of any rank: ins = value, indices.
template <unsigned Bytes>
void storeOpRanked(Exec &e, const Inst &in) {
  const RuntimeBuffer &b = e.buffers[in.imm];
  const Word *value = e.reg(in.ins[0].offset);
  forActive(e, [&](uint32_t l) {
    int64_t i = linearIndex(e, in, b, 1, l);
    if (b.shared)
      checkSharedWrite(e, in, b, i, l);
    else if (b.globalShadow)
      checkGlobalAccess(e, in, b, i, l, /*isStore=*/true);
    noteAccess(e, l, addressOf(b, i), Bytes);
    writeElement<Bytes>(b.base + i * Bytes, value[l]);
  });
  profileAccesses(e, in, b.shared ? Access::SharedStore : Access::GlobalStore,
                  in.imm);
}

/// Checks a vector access of `n` elements from element `i` of a rank-1
/// buffer on lane `l`: consecutive elements (a global descriptor's stride
/// is 1), in bounds, and its address a multiple of `alignment` bytes (global
/// buffers: the host address; workgroup buffers: the byte offset, their
/// llvm.align being checked when compiled).
inline void checkVectorAccess(Exec &e, const Inst &in, const RuntimeBuffer &b,
                              int64_t i, int64_t n, int64_t alignment,
                              uint32_t l) {
  const char *what =
      isa<vector::LoadOp>(in.op) ? "vector.load from " : "vector.store to ";
  if (b.stride != 1)
    fail(e, in, l,
         std::string(what) + bufferName(e, b) +
             ", whose descriptor has stride " + std::to_string(b.stride) +
             " (a vector access reads or writes consecutive elements)");
  if (i < 0 || i > b.size - n)
    fail(e, in, l,
         "out-of-bounds " + std::string(what) + bufferName(e, b) +
             ": elements " + std::to_string(i) + ".." +
             std::to_string(i + n - 1) + ", size " + std::to_string(b.size));
  int64_t byte = i * b.elementBytes;
  uint64_t address =
      b.shared ? static_cast<uint64_t>(byte)
               : static_cast<uint64_t>(reinterpret_cast<uintptr_t>(b.base)) +
                     static_cast<uint64_t>(byte);
  if (address % static_cast<uint64_t>(alignment)) {
    char hex[32];
    std::snprintf(hex, sizeof(hex), "0x%llx",
                  static_cast<unsigned long long>(address));
    fail(e, in, l,
         in.op->getName().getStringRef().str() + " at byte " +
             std::to_string(byte) + " of " + bufferName(e, b) +
             (b.shared ? "" : " (address " + std::string(hex) + ")") +
             " is not " + std::to_string(alignment) + "-byte aligned");
  }
}

/// vector.load from / vector.store to a rank-1 buffer: imm = buffer, imm2 =
/// elements | alignment in bytes << 8. Loads: a = index, r = the result;
/// stores: a = the value, b = index (one word per element).
template <unsigned Bytes, bool Shared, bool IsStore>
void vectorAccessOp(Exec &e, const Inst &in) {
  const RuntimeBuffer &b = e.buffers[in.imm];
  int64_t n = in.imm2 & 0xff, alignment = in.imm2 >> 8;
  const Word *index = e.reg(IsStore ? in.b : in.a);
  forActive(e, [&](uint32_t l) {
    int64_t i = static_cast<int64_t>(index[l]);
    checkVectorAccess(e, in, b, i, n, alignment, l);
    noteAccess(e, l, addressOf(b, i), static_cast<uint32_t>(n * Bytes));
    for (int64_t j = 0; j < n; ++j) {
      if constexpr (Shared) {
        if constexpr (IsStore)
          checkSharedWrite(e, in, b, i + j, l);
        else
          checkSharedRead(e, in, b, i + j, l);
      } else if (b.globalShadow) {
        checkGlobalAccess(e, in, b, i + j, l, IsStore);
      }
      char *at = b.base + (i + j) * Bytes;
      if constexpr (IsStore)
        writeElement<Bytes>(at, e.reg(in.a + j)[l]);
      else
        e.reg(in.r + j)[l] = readElement<Bytes>(at);
    }
  });
  profileAccesses(e, in,
                  Shared ? (IsStore ? Access::SharedStore : Access::SharedLoad)
                         : (IsStore ? Access::GlobalStore : Access::GlobalLoad),
                  in.imm);
}

/// memref.extract_aligned_pointer_as_index of a global buffer: imm =
/// buffer; the host address of the descriptor's aligned pointer.
void alignedPointerOp(Exec &e, const Inst &in) {
  Word v =
      static_cast<Word>(reinterpret_cast<uintptr_t>(e.buffers[in.imm].aligned));
  Word *r = e.reg(in.r);
  forActive(e, [&](uint32_t l) { r[l] = v; });
}

/// The bytes from a global buffer's first element to past its last.
uint64_t extentBytes(const RuntimeBuffer &b) {
  int64_t last = 0;
  if (b.sizes.empty()) {
    if (b.size <= 0)
      return 0;
    last = (b.size - 1) * b.stride;
  } else {
    for (size_t d = 0; d < b.sizes.size(); ++d) {
      if (b.sizes[d] <= 0)
        return 0;
      last += (b.sizes[d] - 1) * b.strides[d];
    }
  }
  return static_cast<uint64_t>(last + 1) * b.elementBytes;
}

/// The chunk loops' prefetch into L2 (`kPrefetchL2Asm`): a =
/// the address. It moves nothing the kernel reads, but an address outside
/// the launch's global buffers is a bug that a GPU would not report, so it
/// is an error; the profile counts the 128-byte lines (as 32-byte sectors).
void prefetchOp(Exec &e, const Inst &in) {
  const Word *address = e.reg(in.a);
  forActive(e, [&](uint32_t l) {
    uint64_t at = address[l];
    bool inside = false;
    for (const RuntimeBuffer &b : e.buffers) {
      uint64_t begin =
          static_cast<uint64_t>(reinterpret_cast<uintptr_t>(b.base));
      if (!b.shared && at >= begin && at - begin < extentBytes(b)) {
        inside = true;
        break;
      }
    }
    if (!inside) {
      char hex[32];
      std::snprintf(hex, sizeof(hex), "0x%llx",
                    static_cast<unsigned long long>(at));
      fail(e, in, l,
           "prefetch of address " + std::string(hex) +
               ", which is in none of the kernel's global buffers");
    }
    noteAccess(e, l, at / 128 * 128, 128);
  });
  profileAccesses(e, in, Access::Prefetch, /*buffer=*/0);
}

/// The feature maps' 2^x (`kEx2ApproxFtzIntrinsic`): r = 2^a, subnormal inputs
/// and results flushed to zero as `.ftz` does. The host's exp2f, not the
/// special-function unit's approximation (within 2 ulp).
void ex2ApproxFtzOp(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a);
  auto flush = [](float x) {
    return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x;
  };
  forActive(e, [&](uint32_t l) {
    r[l] = F32::put(flush(std::exp2(flush(F32::get(a[l])))));
  });
}

/// memref.dim of an argument: imm = buffer, imm2 = dimension.
void dimOp(Exec &e, const Inst &in) {
  const RuntimeBuffer &b = e.buffers[in.imm];
  Word v = static_cast<Word>(b.sizes[in.imm2]);
  Word *r = e.reg(in.r);
  forActive(e, [&](uint32_t l) { r[l] = v; });
}

//===--- Async copies ----------------------------------------------------===//

/// nvgpu.device_async_copy (cp.async) from a rank-1 global buffer to a
/// rank-1 workgroup buffer: imm = destination buffer, imm2 = source buffer;
/// ins = destination index, source index, [source elements]; c = the
/// elements of the copy (4, 8 or 16 bytes). Reads the source now (the
/// elements it names, both address and extent checked; zeros for the rest)
/// and claims the destination, which reads and writes must not touch until
/// a wait of this thread completes the copy.
void asyncCopyOp(Exec &e, const Inst &in) {
  const RuntimeBuffer &dst = e.buffers[in.imm];
  const RuntimeBuffer &src = e.buffers[in.imm2];
  uint32_t n = in.c, bytes = n * dst.elementBytes;
  const Word *dstIndex = e.reg(in.ins[0].offset);
  const Word *srcIndex = e.reg(in.ins[1].offset);
  const Word *srcCount = in.ins.size() > 2 ? e.reg(in.ins[2].offset) : nullptr;
  forActive(e, [&](uint32_t l) {
    int64_t d = static_cast<int64_t>(dstIndex[l]);
    int64_t s = static_cast<int64_t>(srcIndex[l]);
    int64_t reads = srcCount ? static_cast<int64_t>(srcCount[l]) : n;
    if (d < 0 || d > dst.size - n)
      fail(e, in, l,
           "out-of-bounds async copy to " + bufferName(e, dst) + ": elements " +
               std::to_string(d) + ".." + std::to_string(d + n - 1) +
               ", size " + std::to_string(dst.size));
    if ((d * dst.elementBytes) % bytes)
      fail(e, in, l,
           "async copy to byte " + std::to_string(d * dst.elementBytes) +
               " of " + bufferName(e, dst) + ", which is not " +
               std::to_string(bytes) + "-byte aligned");
    if (reads < 0 || reads > n)
      fail(e, in, l,
           "async copy of " + std::to_string(reads) +
               " source elements into a copy of " + std::to_string(n));
    AsyncCopy copy;
    copy.buffer = static_cast<uint32_t>(in.imm);
    copy.element = d;
    copy.elements = n;
    copy.group = kUncommitted;
    copy.inst = &in;
    if (reads > 0) {
      if (src.stride != 1)
        fail(e, in, l,
             "async copy from " + bufferName(e, src) +
                 ", whose descriptor has stride " + std::to_string(src.stride));
      if (s < 0 || s > src.size - reads)
        fail(e, in, l,
             "out-of-bounds async copy from " + bufferName(e, src) +
                 ": elements " + std::to_string(s) + ".." +
                 std::to_string(s + reads - 1) + ", size " +
                 std::to_string(src.size));
      uintptr_t address =
          reinterpret_cast<uintptr_t>(src.base) + s * src.elementBytes;
      if (address % bytes)
        fail(e, in, l,
             "async copy from element " + std::to_string(s) + " of " +
                 bufferName(e, src) + ", whose address is not " +
                 std::to_string(bytes) + "-byte aligned");
      for (int64_t j = 0; j < reads; ++j)
        if (src.globalShadow)
          checkGlobalAccess(e, in, src, s + j, l, /*isStore=*/false);
      std::memcpy(copy.data, src.base + s * src.elementBytes,
                  reads * src.elementBytes);
      noteAccess(e, l, addressOf(src, s),
                 static_cast<uint32_t>(reads * src.elementBytes));
    }
    for (uint32_t j = 0; j < n; ++j) {
      checkSharedWrite(e, in, dst, d + j, l);
      dst.shadow[d + j].asyncWriter = static_cast<int32_t>(l);
    }
    e.asyncCopies[l].push_back(copy);
  });
  if (e.profile) {
    profileAccesses(e, in, Access::GlobalLoad, in.imm2);
    forActive(e, [&](uint32_t l) {
      noteAccess(e, l, addressOf(dst, static_cast<int64_t>(dstIndex[l])),
                 bytes);
    });
    profileAccesses(e, in, Access::SharedStore, in.imm);
  }
}

/// nvgpu.device_async_create_group or nvvm.cp.async.commit.group: this
/// thread's uncommitted copies become its next group (possibly empty).
void asyncCommitOp(Exec &e, const Inst &) {
  forActive(e, [&](uint32_t l) {
    for (AsyncCopy &copy : e.asyncCopies[l])
      if (copy.group == kUncommitted)
        copy.group = e.asyncGroups[l];
    ++e.asyncGroups[l];
  });
}

/// Writes an async copy's data and hands its elements to the thread as if
/// it stored them now.
void completeCopy(Exec &e, const AsyncCopy &copy, uint32_t l) {
  RuntimeBuffer &b = e.buffers[copy.buffer];
  std::memcpy(b.base + copy.element * b.elementBytes, copy.data,
              copy.elements * b.elementBytes);
  for (uint32_t j = 0; j < copy.elements; ++j) {
    Shadow &s = b.shadow[copy.element + j];
    s.asyncWriter = -1;
    s.writeEpoch = e.epoch;
    s.writer = static_cast<int32_t>(l);
    s.writeInst = copy.inst;
    s.writerFences = e.proxyFences[l];
  }
}

/// nvgpu.device_async_wait or nvvm.cp.async.wait.group (imm = the groups
/// left in flight): completes this thread's committed groups but the imm
/// most recent.
void asyncWaitOp(Exec &e, const Inst &in) {
  uint64_t keep = static_cast<uint64_t>(in.imm);
  forActive(e, [&](uint32_t l) {
    uint64_t committed = e.asyncGroups[l];
    std::vector<AsyncCopy> &copies = e.asyncCopies[l];
    auto done = [&](const AsyncCopy &copy) {
      return copy.group != kUncommitted && copy.group + keep < committed;
    };
    for (const AsyncCopy &copy : copies)
      if (done(copy))
        completeCopy(e, copy, l);
    llvm::erase_if(copies, done);
  });
}

//===--- Synchronization and warps ---------------------------------------===//

void barrierOp(Exec &e, const Inst &in) {
  uint32_t active = 0;
  int64_t missing = -1;
  for (uint32_t l = 0; l < e.threads; ++l) {
    if (e.mask[l])
      ++active;
    else if (missing < 0)
      missing = l;
  }
  if (active != e.threads)
    fail(e, in, missing,
         "gpu.barrier reached by " + std::to_string(active) + " of the " +
             std::to_string(e.threads) +
             " threads of the block (a divergent barrier); this thread does "
             "not reach it");
  ++e.epoch;
}

/// gpu.shuffle: ins = value, offset, width; outs = value, valid; imm = mode.
void shuffleOp(Exec &e, const Inst &in) {
  const Word *value = e.reg(in.ins[0].offset);
  const Word *offset = e.reg(in.ins[1].offset);
  const Word *width = e.reg(in.ins[2].offset);
  Word *r = e.reg(in.outs[0].offset);
  Word *valid = e.reg(in.outs[1].offset);
  auto mode = static_cast<gpu::ShuffleMode>(in.imm);
  // Every source is read before any result is written: results have slots
  // of their own.
  forActive(e, [&](uint32_t l) {
    uint32_t warp = l / 32 * 32, lane = l % 32;
    int64_t w = static_cast<int32_t>(width[l]);
    int64_t o = static_cast<int32_t>(offset[l]);
    if (w <= 0 || w > 32)
      fail(e, in, l,
           "gpu.shuffle width " + std::to_string(w) + " is not in 1..32");
    // NVVM lowers the width to a member mask of lanes 0..width-1 of the
    // warp, all of which must execute the shuffle.
    if (lane >= w)
      fail(e, in, l,
           "gpu.shuffle executed by lane " + std::to_string(lane) +
               ", outside its width " + std::to_string(w));
    for (int64_t m = 0; m < w; ++m)
      if (warp + m >= e.threads || !e.mask[warp + m])
        fail(e, in, l,
             "gpu.shuffle with lane " + std::to_string(m) +
                 " of the warp inactive (every lane of the width must "
                 "execute it)");
    int64_t source = lane;
    bool ok = true;
    switch (mode) {
    case gpu::ShuffleMode::XOR:
      source = lane ^ o;
      ok = source < w;
      break;
    case gpu::ShuffleMode::DOWN:
      source = lane + o;
      ok = source < w;
      break;
    case gpu::ShuffleMode::UP:
      source = lane - o;
      ok = source >= 0;
      break;
    case gpu::ShuffleMode::IDX:
      source = o;
      ok = source >= 0 && source < w;
      break;
    }
    if (!ok)
      source = lane;
    r[l] = value[warp + source];
    valid[l] = ok;
  });
}

/// Whether threads [base, base + count) of the block (a warp or a
/// warpgroup, `unit` `index`) execute an op all of them must: none of them
/// (false), all (true), or some, which is an error naming the first one
/// inactive or, past the block's end, missing.
static bool allOrNoneActive(Exec &e, const Inst &in, uint32_t base,
                            uint32_t count, const char *unit, uint32_t index) {
  bool any = false;
  for (uint32_t i = 0; i < count && base + i < e.threads; ++i)
    any |= e.mask[base + i] != 0;
  if (!any)
    return false;
  for (uint32_t i = 0; i < count; ++i)
    if (base + i >= e.threads || !e.mask[base + i])
      fail(e, in, base + i < e.threads ? static_cast<int64_t>(base + i) : -1,
           in.op->getName().getStringRef().str() + " executed without all " +
               std::to_string(count) + " threads of " + unit + " " +
               std::to_string(index) + " (thread " + std::to_string(base + i) +
               (base + i < e.threads
                    ? " inactive)"
                    : " missing: the block has " + std::to_string(e.threads) +
                          " threads)"));
  return true;
}

/// Whether warp `wp` executes a warp-wide op (nvvm.mma.sync, nvgpu.ldmatrix).
static bool warpActive(Exec &e, const Inst &in, uint32_t wp) {
  return allOrNoneActive(e, in, wp * 32, 32, "warp", wp);
}

/// acc + a[0]·b[0] + ... + a[n-1]·b[n-1], one fused multiply-add per step
/// in that order: the emulator's model of a tensor core's dot product (the
/// products of 16-bit and tf32 operands are exact in f32). The MMA ops
/// spend most of their time here, so on x86 it is compiled twice, with FMA
/// instructions and without (libm's fmaf, the same results), and the CPU
/// picks one when the library loads.
#if defined(__x86_64__) && defined(__ELF__)
[[gnu::target_clones("fma", "default")]]
#endif
float fmaChain(float acc, const float *a, const float *b, unsigned n) {
  for (unsigned k = 0; k < n; ++k)
    acc = std::fma(a[k], b[k], acc);
  return acc;
}

/// nvvm.mma.sync m16n8k16 with 16-bit A and B (row and col layouts) and f32
/// accumulators. ins: A0..A3, B0..B1, C0..C3; outs: the 4-word struct.
/// imm: 1 for bf16; imm2: 1 when the A/B registers are i32 (packed).
void mmaOp(Exec &e, const Inst &in) {
  bool bf16 = in.imm == 1;
  bool packed = in.imm2 == 1;
  auto element = [&](const Slot &slot, uint32_t l, unsigned half) -> float {
    Word bits;
    if (packed)
      bits = (e.reg(slot.offset)[l] >> (16 * half)) & 0xffff;
    else
      bits = e.reg(slot.offset + half)[l];
    return bf16 ? bf16ToFloat(static_cast<uint16_t>(bits))
                : halfToFloat(static_cast<uint16_t>(bits));
  };
  uint32_t warps = (e.threads + 31) / 32;
  for (uint32_t wp = 0; wp < warps; ++wp) {
    uint32_t base = wp * 32;
    if (!warpActive(e, in, wp))
      continue;
    profileMma(e, in);
    // A by rows, B by columns (Bt[n][k]), C by rows.
    float A[16][16], Bt[8][16], C[16][8];
    for (uint32_t i = 0; i < 32; ++i) {
      uint32_t l = base + i, g = i / 4, t = i % 4;
      // A: a0a1 (g, 2t..), a2a3 (g+8, 2t..), a4a5 (g, 2t+8..),
      // a6a7 (g+8, 2t+8..).
      for (unsigned reg = 0; reg < 4; ++reg) {
        unsigned row = g + (reg % 2) * 8, col = 2 * t + (reg / 2) * 8;
        A[row][col] = element(in.ins[reg], l, 0);
        A[row][col + 1] = element(in.ins[reg], l, 1);
      }
      // B: b0b1 (k = 2t.., n = g), b2b3 (k = 2t+8..).
      for (unsigned reg = 0; reg < 2; ++reg) {
        unsigned k = 2 * t + reg * 8;
        Bt[g][k] = element(in.ins[4 + reg], l, 0);
        Bt[g][k + 1] = element(in.ins[4 + reg], l, 1);
      }
      // C: c0c1 (g, 2t..), c2c3 (g+8, 2t..).
      for (unsigned j = 0; j < 4; ++j)
        C[g + (j / 2) * 8][2 * t + j % 2] =
            bitsToF32(e.reg(in.ins[6 + j].offset)[l]);
    }
    for (uint32_t i = 0; i < 32; ++i) {
      uint32_t l = base + i, g = i / 4, t = i % 4;
      for (unsigned j = 0; j < 4; ++j) {
        unsigned row = g + (j / 2) * 8, col = 2 * t + j % 2;
        e.reg(in.outs[0].offset + j)[l] =
            f32ToBits(fmaChain(C[row][col], A[row], Bt[col], 16));
      }
    }
  }
}

/// tf32 bits of an f32 word: the low 13 mantissa bits dropped (what the
/// tensor cores read of a tf32 operand).
static float tf32Value(Word bits) {
  return bitsToF32(static_cast<uint32_t>(bits) & 0xffffe000u);
}

/// nvvm.mma.sync m16n8k8 with tf32 A and B (i32 registers holding f32 bits,
/// row and col layouts) and f32 accumulators. ins: A0..A3, B0..B1, C0..C3;
/// outs: the 4-word struct.
void mmaTF32Op(Exec &e, const Inst &in) {
  uint32_t warps = (e.threads + 31) / 32;
  for (uint32_t wp = 0; wp < warps; ++wp) {
    uint32_t base = wp * 32;
    if (!warpActive(e, in, wp))
      continue;
    profileMma(e, in);
    // A by rows, B by columns (Bt[n][k]), C by rows.
    float A[16][8], Bt[8][8], C[16][8];
    for (uint32_t i = 0; i < 32; ++i) {
      uint32_t l = base + i, g = i / 4, t = i % 4;
      // A: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4).
      for (unsigned reg = 0; reg < 4; ++reg)
        A[g + (reg % 2) * 8][t + (reg / 2) * 4] =
            tf32Value(e.reg(in.ins[reg].offset)[l]);
      // B: b0 (k = t, n = g), b1 (k = t+4).
      for (unsigned reg = 0; reg < 2; ++reg)
        Bt[g][t + reg * 4] = tf32Value(e.reg(in.ins[4 + reg].offset)[l]);
      for (unsigned j = 0; j < 4; ++j)
        C[g + (j / 2) * 8][2 * t + j % 2] =
            bitsToF32(e.reg(in.ins[6 + j].offset)[l]);
    }
    for (uint32_t i = 0; i < 32; ++i) {
      uint32_t l = base + i, g = i / 4, t = i % 4;
      for (unsigned j = 0; j < 4; ++j) {
        unsigned row = g + (j / 2) * 8, col = 2 * t + j % 2;
        e.reg(in.outs[0].offset + j)[l] =
            f32ToBits(fmaChain(C[row][col], A[row], Bt[col], 8));
      }
    }
  }
}

/// nvvm.convert.float.to.tf32 with rounding to nearest, ties away from zero
/// (cvt.rna.tf32.f32): the f32 bits rounded at mantissa bit 13, as an i32.
void convertToTF32Op(Exec &e, const Inst &in) {
  Word *r = e.reg(in.r);
  const Word *a = e.reg(in.a);
  forActive(e, [&](uint32_t l) {
    uint32_t bits = static_cast<uint32_t>(a[l]);
    bool finite = (bits & 0x7f800000u) != 0x7f800000u;
    if (finite)
      bits = (bits + 0x1000u) & 0xffffe000u;
    r[l] = bits;
  });
}

/// nvgpu.ldmatrix from a rank-1 workgroup buffer: a = the element index of
/// this lane's row, imm = buffer, imm2 = matrices | transpose << 8; r = the
/// result, (matrices x 32 bits) words: two 16-bit elements per matrix, or
/// one 32-bit element. Lanes 8i..8i+7 address the rows of matrix i (only
/// lanes 0..8·matrices-1 are read); lane 4g+t receives row g, b16 columns
/// 2t and 2t+1 of each matrix, or with transpose its column g, rows 2t and
/// 2t+1.
void ldmatrixOp(Exec &e, const Inst &in) {
  const RuntimeBuffer &b = e.buffers[in.imm];
  unsigned matrices = in.imm2 & 0xff;
  bool transpose = (in.imm2 >> 8) & 1;
  unsigned eb = b.elementBytes;
  unsigned perRow = 16 / eb;
  const Word *index = e.reg(in.a);
  uint32_t warps = (e.threads + 31) / 32;
  for (uint32_t wp = 0; wp < warps; ++wp) {
    uint32_t base = wp * 32;
    if (!warpActive(e, in, wp))
      continue;
    uint16_t m[4][8][8];
    for (unsigned i = 0; i < matrices; ++i)
      for (unsigned r = 0; r < 8; ++r) {
        uint32_t l = base + 8 * i + r;
        int64_t at = static_cast<int64_t>(index[l]);
        if (at < 0 || at + perRow > b.size)
          fail(e, in, l,
               "out-of-bounds ldmatrix row in " + bufferName(e, b) +
                   ": elements " + std::to_string(at) + ".." +
                   std::to_string(at + perRow - 1) + ", size " +
                   std::to_string(b.size));
        if ((at * eb) % 16)
          fail(e, in, l,
               "ldmatrix row at byte " + std::to_string(at * eb) + " of " +
                   bufferName(e, b) + " is not 16-byte aligned");
        for (unsigned c = 0; c < perRow; ++c)
          checkSharedRead(e, in, b, at + c, l);
        noteAccess(e, l, addressOf(b, at), 16);
        std::memcpy(m[i][r], b.base + at * eb, 16);
      }
    for (uint32_t lane = 0; lane < 32; ++lane) {
      uint32_t l = base + lane, g = lane / 4, t = lane % 4;
      for (unsigned i = 0; i < matrices; ++i) {
        uint16_t lo = transpose ? m[i][2 * t][g] : m[i][g][2 * t];
        uint16_t hi = transpose ? m[i][2 * t + 1][g] : m[i][g][2 * t + 1];
        if (eb == 2) {
          e.reg(in.r + 2 * i)[l] = lo;
          e.reg(in.r + 2 * i + 1)[l] = hi;
        } else {
          e.reg(in.r + i)[l] = static_cast<Word>(lo) | (Word(hi) << 16);
        }
      }
    }
  }
  profileAccesses(e, in, Access::SharedLoad, static_cast<uint32_t>(in.imm));
}

//===--- Warpgroup MMA (sm_90) -------------------------------------------===//

void extractOp(Exec &e, const Inst &in);

/// nvvm.fence.proxy of the async proxy: this thread's earlier workgroup
/// writes become visible to wgmma.
void proxyFenceOp(Exec &e, const Inst &) {
  forActive(e, [&](uint32_t l) { ++e.proxyFences[l]; });
}

/// Whether warpgroup `g` (threads 128g..128g+127) executes a
/// warpgroup-aligned op.
static bool warpgroupActive(Exec &e, const Inst &in, uint32_t g) {
  return allOrNoneActive(e, in, g * 128, 128, "warpgroup", g);
}

/// nvvm.wgmma.fence.aligned: the warpgroup's registers and shared memory are
/// ready for its next wgmma.mma_async.
void wgmmaFenceOp(Exec &e, const Inst &in) {
  for (uint32_t g = 0; g < e.warpgroups.size(); ++g)
    if (warpgroupActive(e, in, g))
      e.warpgroups[g].fenced = true;
}

/// nvvm.wgmma.commit.group.sync.aligned: the warpgroup's uncommitted
/// wgmma.mma_async become its next group.
void wgmmaCommitOp(Exec &e, const Inst &in) {
  for (uint32_t g = 0; g < e.warpgroups.size(); ++g) {
    if (!warpgroupActive(e, in, g))
      continue;
    Warpgroup &wg = e.warpgroups[g];
    for (PendingWgmma &p : wg.pending)
      if (p.group == kUncommitted)
        p.group = wg.committed;
    ++wg.committed;
  }
}

/// nvvm.wgmma.wait.group.sync.aligned (imm = the groups left in flight):
/// completes the warpgroup's committed groups but the imm most recent, whose
/// results may then be read and whose shared operands written.
void wgmmaWaitOp(Exec &e, const Inst &in) {
  uint64_t keep = static_cast<uint64_t>(in.imm);
  for (uint32_t g = 0; g < e.warpgroups.size(); ++g) {
    if (!warpgroupActive(e, in, g))
      continue;
    Warpgroup &wg = e.warpgroups[g];
    auto done = [&](const PendingWgmma &p) {
      return p.group != kUncommitted && p.group + keep < wg.committed;
    };
    for (const PendingWgmma &p : wg.pending)
      if (done(p))
        for (auto [buffer, element] : p.reads)
          --e.buffers[buffer].shadow[element].wgmmaReads;
    llvm::erase_if(wg.pending, done);
    wg.fenced = false;
  }
}

/// Fails if lane `l` reads slot `slot` while a wgmma.mma_async that writes
/// it is in flight: its registers hold the result only after a
/// wgmma.wait.group.
static void checkWgmmaResult(Exec &e, const Inst &in, uint32_t slot,
                             uint32_t l) {
  for (const PendingWgmma &p : e.warpgroups[l / 128].pending)
    if (llvm::is_contained(p.slots, slot))
      fail(e, in, l,
           "read of the result of " + describe(p.inst->op) +
               " before a wgmma.wait.group completed it");
}

/// After a copy of slot `from` to slot `to` (a loop or branch passing a
/// value on): `to` holds a pending result where `from` did.
void notePendingCopy(Exec &e, uint32_t to, uint32_t from) {
  if (!e.kernel->wgmma || to == from)
    return;
  for (Warpgroup &wg : e.warpgroups)
    for (PendingWgmma &p : wg.pending) {
      llvm::erase(p.slots, to);
      if (llvm::is_contained(p.slots, from))
        p.slots.push_back(to);
    }
}

/// llvm.extractvalue in a kernel with wgmma: extractOp, after the check
/// that the struct is no result in flight.
void extractCheckedOp(Exec &e, const Inst &in) {
  forActive(e, [&](uint32_t l) { checkWgmmaResult(e, in, in.a, l); });
  extractOp(e, in);
}

/// A wgmma shared-memory matrix descriptor: start address, leading and
/// stride dimension byte offsets, and the swizzle (the bytes of a swizzled
/// row: 128, 64 or 32; 0 for none).
struct WgmmaDescriptor {
  uint64_t start = 0, leading = 0, stride = 0;
  unsigned swizzle = 0;
};

/// Where element (r, k) of a wgmma operand (r: its row of A or column of B;
/// k: the reduction index) lies in shared memory, in the canonical layouts
/// of the PTX ISA. K-major (A `row`, B `col`): core matrices of 8 rows of
/// 16 bytes of k; without swizzle the rows are 16 bytes apart, the core
/// matrices `leading` apart in k and `stride` apart in r; swizzled, rows are
/// the swizzle's width apart and groups of 8 rows `stride` apart. MN-major
/// (16-bit types only): 16 bytes of r hold 8 elements; without swizzle the
/// 8 k rows of a core matrix are 16 bytes apart, core matrices `stride`
/// apart in r and `leading` apart in k; swizzled, a row holds the
/// swizzle's width of r, 8 k rows are that width apart, the next width of
/// r `leading` on and the next 8 k `stride` on. The swizzle XORs address
/// bits 4.. with bits 7.. (the 16-byte chunk with the row within the
/// pattern), on the absolute address.
static uint64_t wgmmaAddress(const WgmmaDescriptor &d, bool kMajor,
                             unsigned bytes, uint64_t r, uint64_t k) {
  uint64_t at;
  if (kMajor) {
    uint64_t kb = k * bytes;
    at = d.swizzle ? d.start + r / 8 * d.stride + r % 8 * d.swizzle + kb
                   : d.start + r / 8 * d.stride + r % 8 * 16 +
                         kb / 16 * d.leading + kb % 16;
  } else if (!d.swizzle) {
    at = d.start + r / 8 * d.stride + r % 8 * bytes + k % 8 * 16 +
         k / 8 * d.leading;
  } else {
    uint64_t perRow = d.swizzle / bytes;
    at = d.start + r / perRow * d.leading + r % perRow * bytes +
         k % 8 * d.swizzle + k / 8 * d.stride;
  }
  if (d.swizzle)
    at ^= ((at >> 7) & (d.swizzle / 16 - 1)) << 4;
  return at;
}

/// nvvm.wgmma.mma_async, D = A·B (+ D): ins = D in, descriptor A,
/// descriptor B; outs = D out (N/2 f32 words); imm = N | type << 16 |
/// A MN-major << 20 | B MN-major << 21 | scale-d << 22 | negate A << 23 |
/// negate B << 24 (type 0: f16, 1: bf16, 2: tf32). Each warpgroup whose
/// threads all execute it computes its 64 x N product now, from the
/// operands its (uniform) descriptors address, and marks the result and
/// the shared elements read pending until a wait completes the group.
void wgmmaOp(Exec &e, const Inst &in) {
  uint32_t n = in.imm & 0xffff;
  unsigned type = (in.imm >> 16) & 0xf;
  bool mnA = (in.imm >> 20) & 1, mnB = (in.imm >> 21) & 1;
  bool scaleD = (in.imm >> 22) & 1;
  bool negateA = (in.imm >> 23) & 1, negateB = (in.imm >> 24) & 1;
  unsigned bytes = type == 2 ? 4 : 2;
  uint32_t kSteps = type == 2 ? 8 : 16;
  const Word *descA = e.reg(in.ins[1].offset);
  const Word *descB = e.reg(in.ins[2].offset);
  for (uint32_t g = 0; g < e.warpgroups.size(); ++g) {
    if (!warpgroupActive(e, in, g))
      continue;
    uint32_t base = g * 128;
    Warpgroup &wg = e.warpgroups[g];
    if (!wg.fenced)
      fail(e, in, base,
           "wgmma.mma_async without a wgmma.fence since the warpgroup's last "
           "wgmma.wait.group");
    for (uint32_t i = 1; i < 128; ++i)
      if (descA[base + i] != descA[base] || descB[base + i] != descB[base])
        fail(e, in, base + i,
             "wgmma.mma_async descriptors differ across warpgroup " +
                 std::to_string(g) + " (thread " + std::to_string(base) +
                 " and this one)");
    profileMma(e, in);
    PendingWgmma pending;
    pending.inst = &in;
    pending.slots.push_back(in.outs[0].offset);
    // Reads one operand (rows x kSteps) into `values`.
    auto readOperand = [&](Word raw, bool mnMajor, uint32_t rows,
                           std::vector<float> &values) {
      WgmmaDescriptor d;
      d.start = (raw & 0x3fff) << 4;
      d.leading = ((raw >> 16) & 0x3fff) << 4;
      d.stride = ((raw >> 32) & 0x3fff) << 4;
      unsigned mode = raw >> 62;
      d.swizzle = mode == 0 ? 0 : 256 >> mode;
      if ((raw >> 49) & 7)
        fail(e, in, base,
             "wgmma descriptor with a matrix base offset (bits 49-51) other "
             "than 0");
      values.assign(size_t(rows) * kSteps, 0.0f);
      // The buffer of the last element: an operand's elements are in one
      // buffer but for misuse, so it is looked up again only on leaving it.
      const RuntimeBuffer *b = nullptr;
      uint32_t buffer = 0;
      auto holds = [&](const RuntimeBuffer &c, uint64_t at) {
        return c.shared && at >= static_cast<uint64_t>(c.sharedAddress) &&
               at < static_cast<uint64_t>(c.sharedAddress +
                                          c.size * c.elementBytes);
      };
      for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t k = 0; k < kSteps; ++k) {
          uint64_t at = wgmmaAddress(d, !mnMajor, bytes, r, k);
          if (!b || !holds(*b, at)) {
            b = nullptr;
            for (uint32_t j = 0; j < e.buffers.size() && !b; ++j)
              if (holds(e.buffers[j], at)) {
                b = &e.buffers[j];
                buffer = j;
              }
          }
          if (!b)
            fail(e, in, base,
                 "wgmma operand element (" + std::to_string(r) + ", " +
                     std::to_string(k) + ") at shared address " +
                     std::to_string(at) + " is in no workgroup buffer");
          if (b->elementBytes != bytes)
            fail(e, in, base,
                 "wgmma operand of " + std::to_string(bytes) +
                     "-byte elements in " + bufferName(e, *b) + " of " +
                     std::to_string(b->elementBytes) + "-byte elements");
          uint64_t offset = at - b->sharedAddress;
          if (offset % bytes)
            fail(e, in, base,
                 "wgmma operand element at shared address " +
                     std::to_string(at) + " is not " + std::to_string(bytes) +
                     "-byte aligned");
          int64_t element = static_cast<int64_t>(offset / bytes);
          Shadow &s = b->shadow[element];
          auto where = [&] {
            return "element " + std::to_string(element) + " of " +
                   bufferName(e, *b) + ", operand element (" +
                   std::to_string(r) + ", " + std::to_string(k) + ")";
          };
          checkNoAsyncWrite(e, in, *b, element, base, s);
          if (s.writeEpoch < e.blockEpoch)
            fail(e, in, base,
                 "wgmma reads uninitialized workgroup memory: " + where() +
                     " was not written by any thread of this block");
          if (s.writeEpoch == e.epoch)
            fail(e, in, base,
                 "wgmma reads " + where() + ", which thread " +
                     std::to_string(s.writer) +
                     " wrote with no gpu.barrier in between (at " +
                     describe(s.writeInst->op) + ")");
          if (e.proxyFences[s.writer] == s.writerFences)
            fail(e, in, base,
                 "wgmma reads " + where() + ", which thread " +
                     std::to_string(s.writer) +
                     " wrote without an async-proxy fence (nvvm.fence.proxy "
                     "async.shared) after it (at " +
                     describe(s.writeInst->op) + ")");
          ++s.wgmmaReads;
          pending.reads.push_back({buffer, element});
          const char *p = b->base + element * bytes;
          float v;
          if (type == 2) {
            uint32_t bits;
            std::memcpy(&bits, p, 4);
            v = tf32Value(bits);
          } else {
            uint16_t bits;
            std::memcpy(&bits, p, 2);
            v = type == 1 ? bf16ToFloat(bits) : halfToFloat(bits);
          }
          values[size_t(r) * kSteps + k] = v;
        }
    };
    std::vector<float> A, B;
    readOperand(descA[base], mnA, 64, A);
    readOperand(descB[base], mnB, n, B);
    // Negations are exact: applied to the operands once.
    if (negateA)
      for (float &x : A)
        x = -x;
    if (negateB)
      for (float &x : B)
        x = -x;
    // Thread 32w + 4g + q of the warpgroup holds, in register i, row
    // 16w + g + 8·(i / 2 % 2), column 8·(i / 4) + 2q + i % 2 of D.
    for (uint32_t t = 0; t < 128; ++t) {
      uint32_t l = base + t, lane = t % 32, w = t / 32;
      for (uint32_t i = 0; i < n / 2; ++i) {
        uint32_t row = 16 * w + lane / 4 + 8 * (i / 2 % 2);
        uint32_t col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
        float acc = scaleD ? bitsToF32(e.reg(in.ins[0].offset + i)[l]) : 0.0f;
        e.reg(in.outs[0].offset + i)[l] = f32ToBits(fmaChain(
            acc, &A[size_t(row) * kSteps], &B[size_t(col) * kSteps], kSteps));
      }
    }
    wg.pending.push_back(std::move(pending));
  }
}

//===--- Vectors and structs ---------------------------------------------===//

/// Copies ins[i] (one word each) to word i of the result.
void fromElementsOp(Exec &e, const Inst &in) {
  for (size_t w = 0; w < in.ins.size(); ++w)
    copySlot(e, in.r + w, in.ins[w].offset, 1, e.mask);
}

/// Word imm of the operand (vector.extract, llvm.extractvalue), imm2 words.
void extractOp(Exec &e, const Inst &in) {
  copySlot(e, in.r, in.a + in.imm, in.imm2, e.mask);
}

/// vector.insert: the destination ins[0] with imm2 words from imm on
/// replaced by ins[1].
void insertOp(Exec &e, const Inst &in) {
  copySlot(e, in.r, in.ins[0].offset, in.ins[0].words, e.mask);
  copySlot(e, in.r + in.imm, in.ins[1].offset, in.imm2, e.mask);
}

/// A scalar into every word of the result (vector.broadcast).
void broadcastOp(Exec &e, const Inst &in) {
  for (int64_t w = 0; w < in.imm; ++w)
    copySlot(e, in.r + w, in.a, 1, e.mask);
}

/// vector.bitcast: imm = source element bits, imm2 = result element bits;
/// ins[0] the source, outs[0] the result. Elements are packed little-endian.
void bitcastOp(Exec &e, const Inst &in) {
  unsigned fromBits = in.imm, toBits = in.imm2;
  const Slot &from = in.ins[0], &to = in.outs[0];
  forActive(e, [&](uint32_t l) {
    uint8_t bytes[64] = {0};
    for (uint32_t w = 0; w < from.words; ++w) {
      Word v = e.reg(from.offset + w)[l];
      std::memcpy(bytes + w * fromBits / 8, &v, fromBits / 8);
    }
    for (uint32_t w = 0; w < to.words; ++w) {
      Word v = 0;
      std::memcpy(&v, bytes + w * toBits / 8, toBits / 8);
      e.reg(to.offset + w)[l] = v;
    }
  });
}

//===--- Structured control flow -----------------------------------------===//

/// scf.for: a, b, c = lower bound, upper bound, step; ins = initial values;
/// outs = results; region[0] = body (args: iv, iteration values); imm: 1 for
/// an unsigned comparison. W: the width of the induction variable (64 for
/// index), whose values, bounds and step are held as integers of W bits.
template <unsigned W>
void forOp(Exec &e, const Inst &in) {
  using I = Int<W>;
  const Program &body = e.kernel->programs[in.region[0]];
  uint8_t *outer = e.mask;
  const Word *lb = e.reg(in.a), *ub = e.reg(in.b), *step = e.reg(in.c);
  Word *iv = e.reg(body.args[0].offset);
  bool isUnsigned = in.imm == 1;
  forActive(e, [&](uint32_t l) {
    if (I::sext(step[l]) <= 0)
      fail(e, in, l,
           "scf.for step " + std::to_string(I::sext(step[l])) +
               " is not positive");
    iv[l] = lb[l];
  });
  for (size_t j = 0; j < in.ins.size(); ++j) {
    copySlot(e, body.args[j + 1].offset, in.ins[j].offset, in.ins[j].words,
             outer);
    notePendingCopy(e, body.args[j + 1].offset, in.ins[j].offset);
  }
  uint8_t *inner = e.pushMask();
  for (;;) {
    bool any = false;
    for (uint32_t l = 0; l < e.threads; ++l) {
      bool on = outer[l] &&
                (isUnsigned ? iv[l] < ub[l] : I::sext(iv[l]) < I::sext(ub[l]));
      inner[l] = on;
      any |= on;
    }
    if (!any)
      break;
    e.mask = inner;
    run(e, body);
    if (body.yieldsAlias) {
      // Through a temporary: a yielded value may be another iteration value.
      size_t words = 0;
      for (const Slot &y : body.yields)
        words += y.words;
      e.scratch.resize(words * e.threads);
      size_t at = 0;
      for (const Slot &y : body.yields)
        for (uint32_t w = 0; w < y.words; ++w, ++at)
          std::memcpy(e.scratch.data() + at * e.threads, e.reg(y.offset + w),
                      e.threads * sizeof(Word));
      at = 0;
      for (size_t j = 0; j < body.yields.size(); ++j)
        for (uint32_t w = 0; w < body.yields[j].words; ++w, ++at) {
          Word *r = e.reg(body.args[j + 1].offset + w);
          const Word *x = e.scratch.data() + at * e.threads;
          for (uint32_t l = 0; l < e.threads; ++l)
            if (inner[l])
              r[l] = x[l];
        }
      if (e.kernel->wgmma)
        failLaunch(*e.kernel, "a loop that yields its iteration values in "
                              "another order, in a kernel with wgmma, is "
                              "not emulated");
    } else {
      for (size_t j = 0; j < body.yields.size(); ++j)
        if (body.yields[j].offset != body.args[j + 1].offset) {
          copySlot(e, body.args[j + 1].offset, body.yields[j].offset,
                   body.yields[j].words, inner);
          notePendingCopy(e, body.args[j + 1].offset, body.yields[j].offset);
        }
    }
    for (uint32_t l = 0; l < e.threads; ++l)
      if (inner[l])
        iv[l] = I::wrap(iv[l] + step[l]);
  }
  e.popMask();
  e.mask = outer;
  for (size_t j = 0; j < in.outs.size(); ++j) {
    copySlot(e, in.outs[j].offset, body.args[j + 1].offset, in.outs[j].words,
             outer);
    notePendingCopy(e, in.outs[j].offset, body.args[j + 1].offset);
  }
}

/// scf.if: a = condition; outs = results; region[0], region[1] = then,
/// else (kNone when empty).
void ifOp(Exec &e, const Inst &in) {
  uint8_t *outer = e.mask;
  const Word *cond = e.reg(in.a);
  uint8_t *inner = e.pushMask();
  for (int branch = 0; branch < 2; ++branch) {
    if (in.region[branch] == kNone)
      continue;
    bool any = false;
    for (uint32_t l = 0; l < e.threads; ++l) {
      bool on = outer[l] && ((cond[l] & 1) == (branch == 0 ? 1u : 0u));
      inner[l] = on;
      any |= on;
    }
    if (!any)
      continue;
    const Program &p = e.kernel->programs[in.region[branch]];
    e.mask = inner;
    run(e, p);
    for (size_t j = 0; j < in.outs.size(); ++j) {
      copySlot(e, in.outs[j].offset, p.yields[j].offset, in.outs[j].words,
               inner);
      notePendingCopy(e, in.outs[j].offset, p.yields[j].offset);
    }
    e.mask = outer;
  }
  e.popMask();
  e.mask = outer;
}

//===----------------------------------------------------------------------===//
// The compiler: gpu.func -> programs
//===----------------------------------------------------------------------===//

/// Words of a value of type `type` per lane, 0 when the emulator has no
/// representation for it.
uint32_t wordsOf(Type type) {
  if (type.isIntOrIndexOrFloat())
    return type.isIndex() || type.getIntOrFloatBitWidth() <= 64 ? 1 : 0;
  if (auto vector = dyn_cast<VectorType>(type)) {
    if (vector.isScalable() || !vector.getElementType().isIntOrIndexOrFloat())
      return 0;
    return vector.getNumElements();
  }
  if (auto structType = dyn_cast<LLVM::LLVMStructType>(type)) {
    uint32_t words = 0;
    for (Type element : structType.getBody()) {
      uint32_t w = wordsOf(element);
      if (!w)
        return 0;
      words += w;
    }
    return words;
  }
  return 0;
}

unsigned intWidth(Type type) {
  if (type.isIndex())
    return 64;
  return type.getIntOrFloatBitWidth();
}

/// Shared memory per block every GPU of sm_80 and later allows (99 KiB on
/// sm_86, sm_89 and sm_120; more elsewhere), and sm_90 (227 KiB), the one
/// chip of kernels with wgmma. Kernels above 48 KiB take it as dynamic
/// shared memory when compiled (linattn-gpu-dynamic-shared-memory).
constexpr int64_t kMaxSharedBytes = 99 * 1024;
constexpr int64_t kMaxSharedBytesSm90 = 227 * 1024;

class Compiler {
public:
  explicit Compiler(Kernel &kernel) : k(kernel) {}

  void compile() {
    gpu::GPUFuncOp func = k.func;
    Region &body = func.getBody();
    if (!body.hasOneBlock())
      failCompile(k.name, func, "the kernel body has more than one block");
    // Arguments.
    unsigned numArgs = func.getFunctionType().getNumInputs();
    for (BlockArgument arg : func.getArguments().take_front(numArgs)) {
      ArgInfo info;
      if (auto memref = dyn_cast<MemRefType>(arg.getType())) {
        info.buffer =
            addBuffer(arg, memref, /*shared=*/false, arg.getArgNumber(), func);
        k.params += 3 + 2 * memref.getRank();
      } else if (arg.getType().isIntOrIndexOrFloat()) {
        Slot s = define(arg, func);
        info.slot = s.offset;
        info.bytes =
            arg.getType().isIndex()
                ? 8
                : std::max(1u, arg.getType().getIntOrFloatBitWidth() / 8);
        info.isFloat = isa<FloatType>(arg.getType());
        k.params += 1;
      } else {
        failCompile(k.name, func,
                    "kernel argument #" + std::to_string(arg.getArgNumber()) +
                        " has a type the emulator does not support");
      }
      k.args.push_back(info);
    }
    for (auto [i, attribution] :
         llvm::enumerate(func.getWorkgroupAttributions())) {
      auto memref = cast<MemRefType>(attribution.getType());
      if (!memref.hasStaticShape() || !memref.getLayout().isIdentity())
        failCompile(k.name, func,
                    "workgroup buffer #" + std::to_string(i) +
                        " has no static shape or identity layout");
      uint32_t buffer =
          addBuffer(attribution, memref, /*shared=*/true, i, func);
      BufferInfo &info = k.buffers[buffer];
      info.alignment = info.elementBytes;
      if (auto align =
              dyn_cast_or_null<IntegerAttr>(func.getWorkgroupAttributionAttr(
                  i, LLVM::LLVMDialect::getAlignAttrName())))
        info.alignment = std::max<int64_t>(info.alignment, align.getInt());
    }
    int64_t sharedBytes = 0;
    for (BufferInfo &info : k.buffers)
      if (info.shared) {
        info.sharedAddress = llvm::alignTo(sharedBytes, info.alignment);
        sharedBytes = info.sharedAddress + info.elements * info.elementBytes;
      }
    k.wgmma =
        func.walk([](NVVM::WgmmaMmaAsyncOp) { return WalkResult::interrupt(); })
            .wasInterrupted();
    if (k.wgmma ? sharedBytes > kMaxSharedBytesSm90
                : sharedBytes > kMaxSharedBytes)
      failCompile(k.name, func,
                  "the kernel has " + std::to_string(sharedBytes) +
                      " bytes of workgroup memory; " +
                      (k.wgmma ? "sm_90 allows a block 227 KiB"
                               : "every GPU of sm_80 and later allows a "
                                 "block 99 KiB"));
    if (!func.getPrivateAttributions().empty())
      failCompile(k.name, func, "private attributions are not emulated");
    k.programs.emplace_back();
    compileBlock(body.front(), 0, 1);
    k.words = next;
  }

private:
  uint32_t addBuffer(Value value, MemRefType type, bool shared, unsigned index,
                     Operation *op) {
    Type element = type.getElementType();
    if (!element.isIntOrIndexOrFloat())
      failCompile(k.name, op, "a buffer of elements the emulator cannot load");
    unsigned bits = element.isIndex() ? 64 : element.getIntOrFloatBitWidth();
    if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
      failCompile(k.name, op,
                  "a buffer of " + std::to_string(bits) + "-bit elements");
    BufferInfo info;
    info.shared = shared;
    info.index = index;
    info.rank = type.getRank();
    info.elementBytes = bits / 8;
    if (shared) {
      info.shape.assign(type.getShape().begin(), type.getShape().end());
      info.elements = type.getNumElements();
    }
    k.buffers.push_back(info);
    buffers[value] = k.buffers.size() - 1;
    return k.buffers.size() - 1;
  }

  Slot define(Value value, Operation *op) {
    uint32_t words = wordsOf(value.getType());
    if (!words) {
      std::string type;
      llvm::raw_string_ostream os(type);
      os << value.getType();
      failCompile(k.name, op, "values of type " + type + " are not emulated");
    }
    Slot s{next, words};
    next += words;
    slots[value] = s;
    return s;
  }

  Slot use(Value value, Operation *op) {
    auto it = slots.find(value);
    if (it == slots.end())
      failCompile(k.name, op, "an operand the emulator has no value for");
    return it->second;
  }

  uint32_t bufferOf(Value value, Operation *op) {
    auto it = buffers.find(value);
    if (it == buffers.end())
      failCompile(k.name, op,
                  "a memref that is not a kernel argument or workgroup "
                  "buffer");
    return it->second;
  }

  /// Compiles `block` into program `index`, at nesting `depth`.
  void compileBlock(Block &block, uint32_t index, unsigned depth) {
    k.maxDepth = std::max(k.maxDepth, depth);
    for (Operation &op : block.without_terminator())
      compileOp(op, index, depth);
    Operation *terminator = block.getTerminator();
    if (isa<gpu::ReturnOp>(terminator)) {
      if (terminator->getNumOperands())
        failCompile(k.name, terminator, "gpu.return with values");
      return;
    }
    auto yield = dyn_cast<scf::YieldOp>(terminator);
    if (!yield)
      failCompile(k.name, terminator,
                  "unsupported terminator '" +
                      terminator->getName().getStringRef().str() + "'");
    SmallVector<Slot, 4> yields;
    for (Value v : yield.getOperands())
      yields.push_back(use(v, yield));
    k.programs[index].yields = yields;
  }

  uint32_t newProgram() {
    k.programs.emplace_back();
    return k.programs.size() - 1;
  }

  void emit(uint32_t program, Inst in) {
    k.programs[program].insts.push_back(std::move(in));
  }

  /// Whether `value` is a contractible mulf whose only use is a contractible
  /// addf that will fuse it.
  static bool isFusedMul(Value value) {
    auto mul = value.getDefiningOp<arith::MulFOp>();
    if (!mul || !value.hasOneUse() ||
        !arith::bitEnumContainsAll(mul.getFastmath(),
                                   arith::FastMathFlags::contract))
      return false;
    auto add = dyn_cast<arith::AddFOp>(*value.user_begin());
    return add && fusedOperand(add) == value;
  }

  /// The operand of `add` that is a mulf it fuses with, if any.
  static Value fusedOperand(arith::AddFOp add) {
    if (!arith::bitEnumContainsAll(add.getFastmath(),
                                   arith::FastMathFlags::contract))
      return Value();
    for (Value operand : {add.getLhs(), add.getRhs()}) {
      auto mul = operand.getDefiningOp<arith::MulFOp>();
      if (mul && operand.hasOneUse() &&
          arith::bitEnumContainsAll(mul.getFastmath(),
                                    arith::FastMathFlags::contract))
        return operand;
    }
    return Value();
  }

  /// The first word of the element or subvector of `words` words at the
  /// static `positions` of a vector of `shape` (row major, one word per
  /// element), for vector.extract and vector.insert; poison positions fail.
  int64_t wordPosition(Operation *op, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> positions, uint32_t words) {
    int64_t at = 0;
    for (auto [i, position] : llvm::enumerate(positions)) {
      if (position < 0)
        failCompile(k.name, op,
                    op->getName().getStringRef().str() +
                        " at a poison position");
      at = at * shape[i] + position;
    }
    return at * words;
  }

  /// nvgpu.device_async_copy between rank-1 buffers: global to a 16-byte
  /// aligned workgroup buffer of the same element type. Its token is not a
  /// value: groups and waits are per thread, in program order.
  void compileAsyncCopy(nvgpu::DeviceAsyncCopyOp copy, uint32_t program) {
    Operation *op = copy.getOperation();
    uint32_t dst = bufferOf(copy.getDst(), op);
    uint32_t src = bufferOf(copy.getSrc(), op);
    const BufferInfo &to = k.buffers[dst];
    const BufferInfo &from = k.buffers[src];
    int64_t elements = copy.getDstElements().getZExtValue();
    int64_t bytes = elements * to.elementBytes;
    if (!to.shared || from.shared || to.rank != 1 || from.rank != 1 ||
        to.elementBytes != from.elementBytes ||
        (bytes != 4 && bytes != 8 && bytes != 16))
      failCompile(k.name, op,
                  "only nvgpu.device_async_copy of 4, 8 or 16 bytes from a "
                  "rank-1 global buffer to a rank-1 workgroup buffer of the "
                  "same element type is emulated");
    if (to.alignment < bytes)
      failCompile(k.name, op,
                  "nvgpu.device_async_copy to workgroup buffer #" +
                      std::to_string(to.index) + ", which is not " +
                      std::to_string(bytes) + "-byte aligned (llvm.align)");
    k.buffers[dst].stored = true;
    k.asyncCopies = true;
    Inst in;
    in.fn = asyncCopyOp;
    in.op = op;
    in.imm = dst;
    in.imm2 = src;
    in.c = static_cast<uint32_t>(elements);
    in.ins = {use(copy.getDstIndices()[0], op),
              use(copy.getSrcIndices()[0], op)};
    if (Value count = copy.getSrcElements())
      in.ins.push_back(use(count, op));
    emit(program, std::move(in));
  }

  template <template <typename> class H>
  Handler floatHandler(FloatKind kind) {
    switch (kind) {
    case FloatKind::F16:
      return H<F16>::fn;
    case FloatKind::BF16:
      return H<BF16>::fn;
    case FloatKind::F32:
      return H<F32>::fn;
    case FloatKind::F64:
      return H<F64>::fn;
    }
    return nullptr;
  }

  template <typename Op>
  struct Binary {
    template <typename T>
    struct H {
      static constexpr Handler fn = floatBinary<T, Op>;
    };
  };
  template <typename Op>
  struct Unary {
    template <typename T>
    struct H {
      static constexpr Handler fn = floatUnary<T, Op>;
    };
  };
  template <typename T>
  struct FmaH {
    static constexpr Handler fn = floatFma<T>;
  };
  template <typename T>
  struct CmpH {
    static constexpr Handler fn = floatCmp<T>;
  };

  template <IntBinaryKind K>
  Handler intHandler(unsigned width, Operation *op) {
    switch (width) {
    case 1:
      return intBinary<1, K>;
    case 8:
      return intBinary<8, K>;
    case 16:
      return intBinary<16, K>;
    case 32:
      return intBinary<32, K>;
    case 64:
      return intBinary<64, K>;
    }
    failCompile(k.name, op,
                "integers of width " + std::to_string(width) +
                    " are not emulated");
  }

  Handler intCmpHandler(unsigned width, Operation *op) {
    switch (width) {
    case 1:
      return intCmp<1>;
    case 8:
      return intCmp<8>;
    case 16:
      return intCmp<16>;
    case 32:
      return intCmp<32>;
    case 64:
      return intCmp<64>;
    }
    failCompile(k.name, op,
                "integers of width " + std::to_string(width) +
                    " are not emulated");
  }

  FloatKind floatKind(Type type, Operation *op) {
    std::optional<FloatKind> kind = floatKindOf(type);
    if (!kind)
      failCompile(k.name, op, "a float type the emulator does not support");
    return *kind;
  }

  /// An op on scalars: `in` with a, b, c, r filled.
  Inst scalarInst(Operation &op, Handler fn) {
    Inst in;
    in.fn = fn;
    in.op = &op;
    for (Value operand : op.getOperands())
      if (wordsOf(operand.getType()) != 1)
        failCompile(k.name, &op, "vector operands are not emulated here");
    if (op.getNumOperands() > 0)
      in.a = use(op.getOperand(0), &op).offset;
    if (op.getNumOperands() > 1)
      in.b = use(op.getOperand(1), &op).offset;
    if (op.getNumOperands() > 2)
      in.c = use(op.getOperand(2), &op).offset;
    if (op.getNumResults() > 0)
      in.r = define(op.getResult(0), &op).offset;
    return in;
  }

  Handler floatBinaryHandler(Operation &op, FloatKind kind) {
    return llvm::TypeSwitch<Operation *, Handler>(&op)
        .Case(
            [&](arith::AddFOp) { return floatHandler<Binary<AddOp>::H>(kind); })
        .Case(
            [&](arith::SubFOp) { return floatHandler<Binary<SubOp>::H>(kind); })
        .Case(
            [&](arith::MulFOp) { return floatHandler<Binary<MulOp>::H>(kind); })
        .Case(
            [&](arith::DivFOp) { return floatHandler<Binary<DivOp>::H>(kind); })
        .Case(
            [&](arith::RemFOp) { return floatHandler<Binary<RemOp>::H>(kind); })
        .Case([&](arith::MaximumFOp) {
          return floatHandler<Binary<MaximumOp>::H>(kind);
        })
        .Case([&](arith::MinimumFOp) {
          return floatHandler<Binary<MinimumOp>::H>(kind);
        })
        .Case([&](arith::MaxNumFOp) {
          return floatHandler<Binary<MaxNumOp>::H>(kind);
        })
        .Case([&](arith::MinNumFOp) {
          return floatHandler<Binary<MinNumOp>::H>(kind);
        })
        .Default([](Operation *) { return Handler(nullptr); });
  }

  Handler floatUnaryHandler(Operation &op, FloatKind kind) {
    return llvm::TypeSwitch<Operation *, Handler>(&op)
        .Case(
            [&](arith::NegFOp) { return floatHandler<Unary<NegOp>::H>(kind); })
        .Case([&](math::ExpOp) { return floatHandler<Unary<ExpOp>::H>(kind); })
        .Case(
            [&](math::Exp2Op) { return floatHandler<Unary<Exp2Op>::H>(kind); })
        .Case([&](math::LogOp) { return floatHandler<Unary<LogOp>::H>(kind); })
        .Case(
            [&](math::SqrtOp) { return floatHandler<Unary<SqrtOp>::H>(kind); })
        .Case([&](math::RsqrtOp) {
          return floatHandler<Unary<RsqrtOp>::H>(kind);
        })
        .Case([&](math::AbsFOp) { return floatHandler<Unary<AbsOp>::H>(kind); })
        .Case(
            [&](math::TanhOp) { return floatHandler<Unary<TanhOp>::H>(kind); })
        .Default([](Operation *) { return Handler(nullptr); });
  }

  Handler intBinaryHandler(Operation &op, unsigned w) {
    return llvm::TypeSwitch<Operation *, Handler>(&op)
        .Case([&](arith::AddIOp) {
          return intHandler<IntBinaryKind::Add>(w, &op);
        })
        .Case([&](arith::SubIOp) {
          return intHandler<IntBinaryKind::Sub>(w, &op);
        })
        .Case([&](arith::MulIOp) {
          return intHandler<IntBinaryKind::Mul>(w, &op);
        })
        .Case([&](arith::DivUIOp) {
          return intHandler<IntBinaryKind::DivU>(w, &op);
        })
        .Case([&](arith::DivSIOp) {
          return intHandler<IntBinaryKind::DivS>(w, &op);
        })
        .Case([&](arith::RemUIOp) {
          return intHandler<IntBinaryKind::RemU>(w, &op);
        })
        .Case([&](arith::RemSIOp) {
          return intHandler<IntBinaryKind::RemS>(w, &op);
        })
        .Case([&](arith::CeilDivUIOp) {
          return intHandler<IntBinaryKind::CeilDivU>(w, &op);
        })
        .Case([&](arith::CeilDivSIOp) {
          return intHandler<IntBinaryKind::CeilDivS>(w, &op);
        })
        .Case([&](arith::FloorDivSIOp) {
          return intHandler<IntBinaryKind::FloorDivS>(w, &op);
        })
        .Case([&](arith::MinUIOp) {
          return intHandler<IntBinaryKind::MinU>(w, &op);
        })
        .Case([&](arith::MaxUIOp) {
          return intHandler<IntBinaryKind::MaxU>(w, &op);
        })
        .Case([&](arith::MinSIOp) {
          return intHandler<IntBinaryKind::MinS>(w, &op);
        })
        .Case([&](arith::MaxSIOp) {
          return intHandler<IntBinaryKind::MaxS>(w, &op);
        })
        .Case([&](arith::AndIOp) {
          return intHandler<IntBinaryKind::And>(w, &op);
        })
        .Case(
            [&](arith::OrIOp) { return intHandler<IntBinaryKind::Or>(w, &op); })
        .Case([&](arith::XOrIOp) {
          return intHandler<IntBinaryKind::Xor>(w, &op);
        })
        .Case([&](arith::ShLIOp) {
          return intHandler<IntBinaryKind::Shl>(w, &op);
        })
        .Case([&](arith::ShRUIOp) {
          return intHandler<IntBinaryKind::ShrU>(w, &op);
        })
        .Case([&](arith::ShRSIOp) {
          return intHandler<IntBinaryKind::ShrS>(w, &op);
        })
        .Default([](Operation *) { return Handler(nullptr); });
  }

  void compileConstant(arith::ConstantOp op) {
    Slot s = define(op.getResult(), op);
    Attribute value = op.getValue();
    auto bitsOf = [&](Attribute attr, Type type) -> std::optional<Word> {
      if (auto f = dyn_cast<FloatAttr>(attr))
        return f.getValue().bitcastToAPInt().getZExtValue();
      if (auto i = dyn_cast<IntegerAttr>(attr))
        return i.getValue().getZExtValue() &
               (intWidth(type) >= 64 ? ~Word(0)
                                     : (Word(1) << intWidth(type)) - 1);
      return std::nullopt;
    };
    if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
      Type element = dense.getElementType();
      int64_t i = 0;
      if (dense.isSplat()) {
        Attribute splat = dense.getSplatValue<Attribute>();
        std::optional<Word> bits = bitsOf(splat, element);
        if (!bits)
          failCompile(k.name, op, "an unsupported constant");
        for (uint32_t w = 0; w < s.words; ++w)
          k.constants.push_back({s.offset + w, *bits});
        return;
      }
      for (Attribute attr : dense.getValues<Attribute>()) {
        std::optional<Word> bits = bitsOf(attr, element);
        if (!bits)
          failCompile(k.name, op, "an unsupported constant");
        k.constants.push_back({s.offset + i++, *bits});
      }
      return;
    }
    std::optional<Word> bits = bitsOf(value, op.getType());
    if (!bits)
      failCompile(k.name, op, "an unsupported constant");
    k.constants.push_back({s.offset, *bits});
  }

  void compileOp(Operation &op, uint32_t program, unsigned depth) {
    // Constants are written once, into every lane.
    if (auto constant = dyn_cast<arith::ConstantOp>(op))
      return compileConstant(constant);
    // A mulf fused into the addf that uses it is computed there.
    if (isa<arith::MulFOp>(op) && isFusedMul(op.getResult(0)))
      return;

    Type resultType = op.getNumResults() ? op.getResult(0).getType() : Type();
    bool scalarResult =
        resultType && wordsOf(resultType) == 1 && !isa<VectorType>(resultType);

    if (auto add = dyn_cast<arith::AddFOp>(op)) {
      if (Value fused = fusedOperand(add)) {
        auto mul = fused.getDefiningOp<arith::MulFOp>();
        Value other = fused == add.getLhs() ? add.getRhs() : add.getLhs();
        Inst in;
        in.op = &op;
        in.fn = floatHandler<FmaH>(floatKind(resultType, &op));
        in.a = use(mul.getLhs(), &op).offset;
        in.b = use(mul.getRhs(), &op).offset;
        in.c = use(other, &op).offset;
        in.r = define(add.getResult(), &op).offset;
        return emit(program, std::move(in));
      }
    }

    if (scalarResult && isa<FloatType>(resultType) &&
        op.getNumOperands() == 2 && op.getDialect() &&
        op.getDialect()->getNamespace() == "arith") {
      if (Handler fn = floatBinaryHandler(op, floatKind(resultType, &op)))
        return emit(program, scalarInst(op, fn));
    }
    if (scalarResult && isa<FloatType>(resultType) &&
        op.getNumOperands() == 1) {
      if (Handler fn = floatUnaryHandler(op, floatKind(resultType, &op)))
        return emit(program, scalarInst(op, fn));
    }
    if (scalarResult && resultType.isIntOrIndex() && op.getNumOperands() == 2) {
      if (Handler fn = intBinaryHandler(op, intWidth(resultType)))
        return emit(program, scalarInst(op, fn));
    }

    if (auto fma = dyn_cast<math::FmaOp>(op)) {
      if (!scalarResult)
        failCompile(k.name, &op, "vector math.fma is not emulated");
      return emit(program, scalarInst(op, floatHandler<FmaH>(
                                              floatKind(resultType, &op))));
    }
    if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
      Inst in = scalarInst(
          op, floatHandler<CmpH>(floatKind(cmp.getLhs().getType(), &op)));
      in.imm = static_cast<int64_t>(cmp.getPredicate());
      return emit(program, std::move(in));
    }
    if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
      Inst in =
          scalarInst(op, intCmpHandler(intWidth(cmp.getLhs().getType()), &op));
      in.imm = static_cast<int64_t>(cmp.getPredicate());
      return emit(program, std::move(in));
    }
    if (auto select = dyn_cast<arith::SelectOp>(op)) {
      if (wordsOf(select.getCondition().getType()) != 1 ||
          isa<VectorType>(select.getCondition().getType()))
        failCompile(k.name, &op, "a vector condition is not emulated");
      Inst in;
      in.fn = selectOp;
      in.op = &op;
      in.a = use(select.getCondition(), &op).offset;
      in.b = use(select.getTrueValue(), &op).offset;
      in.c = use(select.getFalseValue(), &op).offset;
      Slot r = define(select.getResult(), &op);
      in.r = r.offset;
      in.imm = r.words;
      return emit(program, std::move(in));
    }
    if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
      // A vector converts element by element (a word each).
      FloatKind from =
          floatKind(getElementTypeOrSelf(op.getOperand(0).getType()), &op);
      FloatKind to = floatKind(getElementTypeOrSelf(resultType), &op);
      Handler fn = floatConvertGeneric;
      // Through float arithmetic only where that rounds once.
      if (from == FloatKind::F32 && to == FloatKind::F16)
        fn = floatConvert<F32, F16>;
      else if (from == FloatKind::F32 && to == FloatKind::BF16)
        fn = floatConvert<F32, BF16>;
      else if (from == FloatKind::F16 && to == FloatKind::F32)
        fn = floatConvert<F16, F32>;
      else if (from == FloatKind::BF16 && to == FloatKind::F32)
        fn = floatConvert<BF16, F32>;
      else if (from == FloatKind::F32 && to == FloatKind::F64)
        fn = floatConvert<F32, F64>;
      else if (from == FloatKind::F64 && to == FloatKind::F32)
        fn = floatConvert<F64, F32>;
      if (scalarResult) {
        Inst in = scalarInst(op, fn);
        in.imm = static_cast<int64_t>(from);
        in.imm2 = static_cast<int64_t>(to);
        return emit(program, std::move(in));
      }
      uint32_t words = wordsOf(resultType);
      if (!words)
        failCompile(k.name, &op, "a vector the emulator does not support");
      uint32_t a = use(op.getOperand(0), &op).offset;
      uint32_t r = define(op.getResult(0), &op).offset;
      for (uint32_t w = 0; w < words; ++w) {
        Inst in;
        in.fn = fn;
        in.op = &op;
        in.a = a + w;
        in.r = r + w;
        in.imm = static_cast<int64_t>(from);
        in.imm2 = static_cast<int64_t>(to);
        emit(program, std::move(in));
      }
      return;
    }
    if (isa<arith::ExtUIOp, arith::ExtSIOp, arith::TruncIOp, arith::IndexCastOp,
            arith::IndexCastUIOp>(op)) {
      if (!scalarResult)
        failCompile(k.name, &op, "vector conversions are not emulated");
      bool isSigned = isa<arith::ExtSIOp, arith::IndexCastOp>(op);
      Inst in = scalarInst(op, isSigned ? intResize<true> : intResize<false>);
      in.imm = intWidth(op.getOperand(0).getType());
      in.imm2 = intWidth(resultType);
      return emit(program, std::move(in));
    }
    if (isa<arith::SIToFPOp, arith::UIToFPOp>(op)) {
      if (!scalarResult)
        failCompile(k.name, &op, "vector conversions are not emulated");
      Inst in = scalarInst(op, isa<arith::SIToFPOp>(op) ? intToFloat<true>
                                                        : intToFloat<false>);
      in.imm = intWidth(op.getOperand(0).getType());
      in.imm2 = static_cast<int64_t>(floatKind(resultType, &op));
      return emit(program, std::move(in));
    }
    if (isa<arith::FPToSIOp, arith::FPToUIOp>(op)) {
      if (!scalarResult)
        failCompile(k.name, &op, "vector conversions are not emulated");
      Inst in = scalarInst(op, isa<arith::FPToSIOp>(op) ? floatToInt<true>
                                                        : floatToInt<false>);
      in.imm = static_cast<int64_t>(floatKind(op.getOperand(0).getType(), &op));
      in.imm2 = intWidth(resultType);
      return emit(program, std::move(in));
    }
    if (auto bitcast = dyn_cast<arith::BitcastOp>(op)) {
      if (!scalarResult)
        failCompile(k.name, &op, "vector bitcasts are not emulated here");
      // Same width: the bits are the bits.
      Inst in;
      in.fn = extractOp;
      in.op = &op;
      in.a = use(bitcast.getIn(), &op).offset;
      in.r = define(bitcast.getOut(), &op).offset;
      in.imm = 0;
      in.imm2 = 1;
      return emit(program, std::move(in));
    }

    // GPU ids.
    if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
      Inst in = scalarInst(op, threadIdOp);
      in.imm = static_cast<int64_t>(id.getDimension());
      return emit(program, std::move(in));
    }
    if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
      Inst in = scalarInst(op, uniformIdOp);
      in.imm = 0;
      in.imm2 = static_cast<int64_t>(id.getDimension());
      return emit(program, std::move(in));
    }
    if (auto dim = dyn_cast<gpu::BlockDimOp>(op)) {
      Inst in = scalarInst(op, uniformIdOp);
      in.imm = 1;
      in.imm2 = static_cast<int64_t>(dim.getDimension());
      return emit(program, std::move(in));
    }
    if (auto dim = dyn_cast<gpu::GridDimOp>(op)) {
      Inst in = scalarInst(op, uniformIdOp);
      in.imm = 2;
      in.imm2 = static_cast<int64_t>(dim.getDimension());
      return emit(program, std::move(in));
    }
    if (isa<gpu::LaneIdOp>(op))
      return emit(program, scalarInst(op, laneIdOp));
    if (isa<gpu::BarrierOp>(op)) {
      Inst in;
      in.fn = barrierOp;
      in.op = &op;
      return emit(program, std::move(in));
    }
    if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
      if (wordsOf(shuffle.getValue().getType()) != 1 ||
          isa<VectorType>(shuffle.getValue().getType()))
        failCompile(k.name, &op, "shuffles of vectors are not emulated");
      Inst in;
      in.fn = shuffleOp;
      in.op = &op;
      in.ins = {use(shuffle.getValue(), &op), use(shuffle.getOffset(), &op),
                use(shuffle.getWidth(), &op)};
      in.outs = {define(shuffle.getShuffleResult(), &op),
                 define(shuffle.getValid(), &op)};
      in.imm = static_cast<int64_t>(shuffle.getMode());
      return emit(program, std::move(in));
    }

    // Memory.
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      uint32_t buffer = bufferOf(load.getMemref(), &op);
      const BufferInfo &info = k.buffers[buffer];
      Inst in;
      in.op = &op;
      in.imm = buffer;
      if (wordsOf(load.getType()) != 1)
        failCompile(k.name, &op, "loads of vectors are not emulated");
      if (info.rank == 1) {
        in.a = use(load.getIndices()[0], &op).offset;
        in.fn = loadHandler(info.elementBytes, info.shared);
      } else {
        for (Value index : load.getIndices())
          in.ins.push_back(use(index, &op));
        in.fn = loadRankedHandler(info.elementBytes);
      }
      in.r = define(load.getResult(), &op).offset;
      return emit(program, std::move(in));
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      uint32_t buffer = bufferOf(store.getMemref(), &op);
      k.buffers[buffer].stored = true;
      const BufferInfo &info = k.buffers[buffer];
      Inst in;
      in.op = &op;
      in.imm = buffer;
      if (info.rank == 1) {
        in.a = use(store.getValueToStore(), &op).offset;
        in.b = use(store.getIndices()[0], &op).offset;
        in.fn = storeHandler(info.elementBytes, info.shared);
      } else {
        in.ins.push_back(use(store.getValueToStore(), &op));
        for (Value index : store.getIndices())
          in.ins.push_back(use(index, &op));
        in.fn = storeRankedHandler(info.elementBytes);
      }
      return emit(program, std::move(in));
    }
    if (auto dim = dyn_cast<memref::DimOp>(op)) {
      std::optional<int64_t> index = dim.getConstantIndex();
      if (!index)
        failCompile(k.name, &op, "memref.dim with a dynamic dimension");
      Inst in;
      in.fn = dimOp;
      in.op = &op;
      in.imm = bufferOf(dim.getSource(), &op);
      in.imm2 = *index;
      in.r = define(dim.getResult(), &op).offset;
      return emit(program, std::move(in));
    }

    if (auto load = dyn_cast<vector::LoadOp>(op))
      return compileVectorAccess(op, load.getBase(), load.getIndices(), Value(),
                                 load.getResult(), load.getAlignment(),
                                 program);
    if (auto store = dyn_cast<vector::StoreOp>(op))
      return compileVectorAccess(op, store.getBase(), store.getIndices(),
                                 store.getValueToStore(), Value(),
                                 store.getAlignment(), program);
    if (auto pointer = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(op)) {
      uint32_t buffer = bufferOf(pointer.getSource(), &op);
      // A workgroup buffer's address in the shared memory window.
      if (k.buffers[buffer].shared) {
        Slot s = define(pointer.getResult(), &op);
        k.constants.push_back(
            {s.offset, static_cast<Word>(k.buffers[buffer].sharedAddress)});
        return;
      }
      Inst in;
      in.fn = alignedPointerOp;
      in.op = &op;
      in.imm = buffer;
      in.r = define(pointer.getResult(), &op).offset;
      return emit(program, std::move(in));
    }

    // Vectors and LLVM structs.
    if (auto fromElements = dyn_cast<vector::FromElementsOp>(op)) {
      Inst in;
      in.fn = fromElementsOp;
      in.op = &op;
      for (Value element : fromElements.getElements())
        in.ins.push_back(use(element, &op));
      in.r = define(fromElements.getResult(), &op).offset;
      return emit(program, std::move(in));
    }
    if (auto extract = dyn_cast<vector::ExtractOp>(op)) {
      if (!extract.getDynamicPosition().empty())
        failCompile(k.name, &op, "vector.extract at a dynamic position");
      Inst in;
      in.fn = extractOp;
      in.op = &op;
      in.a = use(extract.getSource(), &op).offset;
      Slot r = define(extract.getResult(), &op);
      in.r = r.offset;
      in.imm = wordPosition(&op, extract.getSourceVectorType().getShape(),
                            extract.getStaticPosition(), r.words);
      in.imm2 = r.words;
      return emit(program, std::move(in));
    }
    if (auto insert = dyn_cast<vector::InsertOp>(op)) {
      if (!insert.getDynamicPosition().empty())
        failCompile(k.name, &op, "vector.insert at a dynamic position");
      Value value = insert.getValueToStore();
      return emitInsert(op, insert.getDest(), value, insert.getResult(),
                        wordPosition(&op, insert.getDestVectorType().getShape(),
                                     insert.getStaticPosition(),
                                     wordsOf(value.getType())),
                        program);
    }
    if (auto broadcast = dyn_cast<vector::BroadcastOp>(op)) {
      if (wordsOf(broadcast.getSource().getType()) != 1)
        failCompile(k.name, &op, "vector.broadcast of a vector");
      Inst in;
      in.fn = broadcastOp;
      in.op = &op;
      in.a = use(broadcast.getSource(), &op).offset;
      Slot r = define(broadcast.getResult(), &op);
      in.r = r.offset;
      in.imm = r.words;
      return emit(program, std::move(in));
    }
    if (auto bitcast = dyn_cast<vector::BitCastOp>(op)) {
      VectorType from = bitcast.getSourceVectorType();
      VectorType to = bitcast.getResultVectorType();
      unsigned fromBits = from.getElementTypeBitWidth();
      unsigned toBits = to.getElementTypeBitWidth();
      if (from.getRank() != 1 || fromBits % 8 || toBits % 8 ||
          from.getNumElements() * fromBits > 512)
        failCompile(k.name, &op, "this vector.bitcast is not emulated");
      Inst in;
      in.fn = bitcastOp;
      in.op = &op;
      in.ins = {use(bitcast.getSource(), &op)};
      in.outs = {define(bitcast.getResult(), &op)};
      in.imm = fromBits;
      in.imm2 = toBits;
      return emit(program, std::move(in));
    }
    if (auto extract = dyn_cast<LLVM::ExtractValueOp>(op)) {
      uint32_t at = structWord(op, extract.getContainer().getType(),
                               extract.getPosition());
      Inst in;
      in.fn = k.wgmma ? extractCheckedOp : extractOp;
      in.op = &op;
      in.a = use(extract.getContainer(), &op).offset;
      Slot r = define(extract.getResult(), &op);
      in.r = r.offset;
      in.imm = at;
      in.imm2 = r.words;
      return emit(program, std::move(in));
    }
    if (auto insert = dyn_cast<LLVM::InsertValueOp>(op)) {
      return emitInsert(
          op, insert.getContainer(), insert.getValue(), insert.getResult(),
          structWord(op, insert.getContainer().getType(), insert.getPosition()),
          program);
    }
    if (auto inlineAsm = dyn_cast<LLVM::InlineAsmOp>(op)) {
      if (inlineAsm.getAsmString() != mlir::linattn::kPrefetchL2Asm ||
          inlineAsm.getOperands().size() != 1 || inlineAsm.getNumResults())
        failCompile(k.name, &op,
                    "inline PTX other than the prefetch \"" +
                        mlir::linattn::kPrefetchL2Asm.str() + "\" is not emulated");
      Inst in;
      in.fn = prefetchOp;
      in.op = &op;
      in.a = use(inlineAsm.getOperands()[0], &op).offset;
      return emit(program, std::move(in));
    }
    if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op)) {
      if (call.getIntrin() != mlir::linattn::kEx2ApproxFtzIntrinsic ||
          call.getArgs().size() != 1 || call.getNumResults() != 1 ||
          !call.getArgs()[0].getType().isF32() ||
          !call.getResult(0).getType().isF32())
        failCompile(k.name, &op,
                    "intrinsics other than " +
                        mlir::linattn::kEx2ApproxFtzIntrinsic.str() +
                        " (f32) are not emulated");
      Inst in;
      in.fn = ex2ApproxFtzOp;
      in.op = &op;
      in.a = use(call.getArgs()[0], &op).offset;
      in.r = define(call.getResult(0), &op).offset;
      return emit(program, std::move(in));
    }
    // Undefined values read as zeros.
    if (isa<LLVM::UndefOp, LLVM::PoisonOp, LLVM::ZeroOp>(op)) {
      Slot s = define(op.getResult(0), &op);
      for (uint32_t w = 0; w < s.words; ++w)
        k.constants.push_back({s.offset + w, 0});
      return;
    }
    if (auto wgmma = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op))
      return compileWgmma(wgmma, program);
    if (isa<NVVM::WgmmaFenceAlignedOp, NVVM::WgmmaGroupSyncAlignedOp,
            NVVM::WgmmaWaitGroupSyncOp>(op)) {
      Inst in;
      in.op = &op;
      if (auto wait = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op)) {
        in.fn = wgmmaWaitOp;
        in.imm = wait.getGroup();
      } else {
        in.fn =
            isa<NVVM::WgmmaFenceAlignedOp>(op) ? wgmmaFenceOp : wgmmaCommitOp;
      }
      return emit(program, std::move(in));
    }
    if (auto fence = dyn_cast<NVVM::FenceProxyOp>(op)) {
      if (fence.getKind() != NVVM::ProxyKind::async_shared &&
          fence.getKind() != NVVM::ProxyKind::async)
        failCompile(k.name, &op,
                    "only nvvm.fence.proxy of the async or async.shared proxy "
                    "is emulated");
      Inst in;
      in.fn = proxyFenceOp;
      in.op = &op;
      return emit(program, std::move(in));
    }
    if (auto mma = dyn_cast<NVVM::MmaOp>(op))
      return compileMma(mma, program);
    if (auto ldmatrix = dyn_cast<nvgpu::LdMatrixOp>(op)) {
      uint32_t buffer = bufferOf(ldmatrix.getSrcMemref(), &op);
      const BufferInfo &info = k.buffers[buffer];
      auto type = cast<VectorType>(ldmatrix.getRes().getType());
      uint32_t matrices = ldmatrix.getNumTiles();
      if (!info.shared || info.rank != 1)
        failCompile(k.name, &op,
                    "nvgpu.ldmatrix from other than a rank-1 workgroup buffer");
      if (info.alignment < 16)
        failCompile(k.name, &op,
                    "nvgpu.ldmatrix from workgroup buffer #" +
                        std::to_string(info.index) +
                        ", which is not 16-byte aligned (llvm.align)");
      if ((info.elementBytes != 2 && info.elementBytes != 4) ||
          (matrices != 1 && matrices != 2 && matrices != 4) ||
          type.getRank() != 2 || type.getDimSize(0) != matrices ||
          type.getDimSize(1) * info.elementBytes != 4 ||
          (ldmatrix.getTranspose() && info.elementBytes != 2))
        failCompile(k.name, &op, "this nvgpu.ldmatrix is not emulated");
      Inst in;
      in.fn = ldmatrixOp;
      in.op = &op;
      in.imm = buffer;
      in.imm2 = matrices | (ldmatrix.getTranspose() ? 1 << 8 : 0);
      in.a = use(ldmatrix.getIndices()[0], &op).offset;
      in.r = define(ldmatrix.getRes(), &op).offset;
      return emit(program, std::move(in));
    }
    if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op))
      return compileAsyncCopy(copy, program);
    if (isa<nvgpu::DeviceAsyncCreateGroupOp, NVVM::CpAsyncCommitGroupOp>(op)) {
      Inst in;
      in.fn = asyncCommitOp;
      in.op = &op;
      return emit(program, std::move(in));
    }
    if (isa<nvgpu::DeviceAsyncWaitOp, NVVM::CpAsyncWaitGroupOp>(op)) {
      Inst in;
      in.fn = asyncWaitOp;
      in.op = &op;
      // The groups left in flight.
      auto wait = dyn_cast<nvgpu::DeviceAsyncWaitOp>(op);
      in.imm = wait ? wait.getNumGroups().value_or(0)
                    : cast<NVVM::CpAsyncWaitGroupOp>(op).getN();
      return emit(program, std::move(in));
    }
    if (auto cvt = dyn_cast<NVVM::ConvertFloatToTF32Op>(op)) {
      if (cvt.getRnd() != NVVM::FPRoundingMode::RNA ||
          cvt.getSat() != NVVM::SaturationMode::NONE || cvt.getRelu())
        failCompile(k.name, &op,
                    "only nvvm.convert.float.to.tf32 with rna rounding, no "
                    "saturation and no relu is emulated");
      return emit(program, scalarInst(op, convertToTF32Op));
    }

    // Structured control flow.
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      Type ivType = loop.getInductionVar().getType();
      if (!ivType.isIndex() && !ivType.isInteger(64) && !ivType.isInteger(32))
        failCompile(k.name, &op,
                    "scf.for over a type other than index, i64 or i32");
      Inst in;
      in.fn = ivType.isInteger(32) ? forOp<32> : forOp<64>;
      in.op = &op;
      in.a = use(loop.getLowerBound(), &op).offset;
      in.b = use(loop.getUpperBound(), &op).offset;
      in.c = use(loop.getStep(), &op).offset;
      in.imm = loop.getUnsignedCmp() ? 1 : 0;
      for (Value init : loop.getInitArgs())
        in.ins.push_back(use(init, &op));
      uint32_t body = newProgram();
      Block &block = loop.getRegion().front();
      SmallVector<Slot, 4> args;
      for (BlockArgument arg : block.getArguments())
        args.push_back(define(arg, &op));
      k.programs[body].args = args;
      compileBlock(block, body, depth + 1);
      Program &p = k.programs[body];
      for (size_t j = 0; j < p.yields.size(); ++j)
        for (size_t i = 1; i < p.args.size(); ++i)
          if (i != j + 1 && p.yields[j].offset == p.args[i].offset)
            p.yieldsAlias = true;
      in.region[0] = body;
      for (Value result : loop.getResults())
        in.outs.push_back(define(result, &op));
      return emit(program, std::move(in));
    }
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      Inst in;
      in.fn = ifOp;
      in.op = &op;
      in.a = use(branch.getCondition(), &op).offset;
      for (Value result : branch.getResults())
        in.outs.push_back(define(result, &op));
      uint32_t thenProgram = newProgram();
      compileBlock(branch.getThenRegion().front(), thenProgram, depth + 1);
      in.region[0] = thenProgram;
      if (!branch.getElseRegion().empty()) {
        uint32_t elseProgram = newProgram();
        compileBlock(branch.getElseRegion().front(), elseProgram, depth + 1);
        in.region[1] = elseProgram;
      }
      return emit(program, std::move(in));
    }

    failCompile(k.name, &op,
                "unsupported op '" + op.getName().getStringRef().str() +
                    "': the emulator does not know it");
  }

  /// vector.load (into `result`) or vector.store (of `value`) of 1 to 8
  /// elements of a rank-1 buffer. The address must be a multiple of the
  /// `alignment` attribute, else of the element size (what the LLVM lowering
  /// assumes); a workgroup buffer must be declared that aligned.
  void compileVectorAccess(Operation &op, Value memref, ValueRange indices,
                           Value value, Value result,
                           std::optional<uint64_t> alignment,
                           uint32_t program) {
    bool isLoad = static_cast<bool>(result);
    std::string name = op.getName().getStringRef().str();
    uint32_t buffer = bufferOf(memref, &op);
    if (!isLoad)
      k.buffers[buffer].stored = true;
    const BufferInfo &info = k.buffers[buffer];
    auto type = cast<VectorType>(isLoad ? result.getType() : value.getType());
    if (info.rank != 1 || type.getRank() != 1 || type.isScalable() ||
        type.getNumElements() < 1 || type.getNumElements() > 8)
      failCompile(k.name, &op,
                  "only " + name +
                      " of 1 to 8 elements of a rank-1 buffer is emulated");
    int64_t bytes =
        alignment ? static_cast<int64_t>(*alignment) : info.elementBytes;
    if (info.shared && info.alignment < bytes)
      failCompile(k.name, &op,
                  name + (isLoad ? " from" : " to") + " workgroup buffer #" +
                      std::to_string(info.index) + ", which is not " +
                      std::to_string(bytes) + "-byte aligned (llvm.align)");
    Inst in;
    in.op = &op;
    in.imm = buffer;
    in.imm2 = type.getNumElements() | bytes << 8;
    in.fn = vectorHandler(info.elementBytes, isLoad, info.shared);
    if (isLoad) {
      in.a = use(indices[0], &op).offset;
      in.r = define(result, &op).offset;
    } else {
      in.a = use(value, &op).offset;
      in.b = use(indices[0], &op).offset;
    }
    emit(program, std::move(in));
  }

  /// vector.insert or llvm.insertvalue: `result` is `dest` with `value` at
  /// its word `at`.
  void emitInsert(Operation &op, Value dest, Value value, Value result,
                  int64_t at, uint32_t program) {
    Inst in;
    in.fn = insertOp;
    in.op = &op;
    Slot inserted = use(value, &op);
    in.ins = {use(dest, &op), inserted};
    in.r = define(result, &op).offset;
    in.imm = at;
    in.imm2 = inserted.words;
    emit(program, std::move(in));
  }

  /// The first word of the member at `position` of a struct of `type`, for
  /// llvm.extractvalue and llvm.insertvalue (one position only).
  uint32_t structWord(Operation &op, Type type, ArrayRef<int64_t> position) {
    auto structType = dyn_cast<LLVM::LLVMStructType>(type);
    if (!structType || position.size() != 1)
      failCompile(k.name, &op,
                  op.getName().getStringRef().str() +
                      " other than one position of a struct");
    uint32_t at = 0;
    for (int64_t i = 0; i < position[0]; ++i)
      at += wordsOf(structType.getBody()[i]);
    return at;
  }

  /// nvvm.wgmma.mma_async m64nNk16 of f16 or bf16 (K-major or MN-major
  /// operands) and m64nNk8 of tf32 (K-major), f32 accumulators.
  void compileWgmma(NVVM::WgmmaMmaAsyncOp wgmma, uint32_t program) {
    Operation *op = wgmma;
    NVVM::MMAShapeAttr shape = wgmma.getShape();
    NVVM::WGMMATypes typeA = wgmma.getTypeA(), typeB = wgmma.getTypeB();
    unsigned type = typeA == NVVM::WGMMATypes::f16    ? 0
                    : typeA == NVVM::WGMMATypes::bf16 ? 1
                    : typeA == NVVM::WGMMATypes::tf32 ? 2
                                                      : 3;
    int n = shape.getN();
    bool mnA = wgmma.getLayoutA() == NVVM::MMALayout::col;
    bool mnB = wgmma.getLayoutB() == NVVM::MMALayout::row;
    auto result = dyn_cast<LLVM::LLVMStructType>(wgmma.getResults().getType());
    bool supported =
        type < 3 && typeB == typeA &&
        wgmma.getTypeD() == NVVM::WGMMATypes::f32 && shape.getM() == 64 &&
        n >= 8 && n <= 256 && n % 8 == 0 &&
        shape.getK() == (type == 2 ? 8 : 16) && !(type == 2 && (mnA || mnB)) &&
        !wgmma.getSatfinite() && result &&
        result.getBody().size() == static_cast<size_t>(n / 2) &&
        llvm::all_of(result.getBody(), [](Type t) { return t.isF32(); });
    if (!supported)
      failCompile(k.name, op,
                  "only nvvm.wgmma.mma_async m64nNk16 of f16 or bf16 and "
                  "m64nNk8 of tf32 (K-major), with f32 accumulators and no "
                  "satfinite, is emulated");
    Inst in;
    in.fn = wgmmaOp;
    in.op = op;
    in.ins = {use(wgmma.getInouts(), op), use(wgmma.getDescriptorA(), op),
              use(wgmma.getDescriptorB(), op)};
    in.outs = {define(wgmma.getResults(), op)};
    in.imm = n | type << 16 | int64_t(mnA) << 20 | int64_t(mnB) << 21 |
             int64_t(wgmma.getScaleD() == NVVM::WGMMAScaleOut::one) << 22 |
             int64_t(wgmma.getScaleA() == NVVM::WGMMAScaleIn::neg) << 23 |
             int64_t(wgmma.getScaleB() == NVVM::WGMMAScaleIn::neg) << 24;
    emit(program, std::move(in));
  }

  void compileMma(NVVM::MmaOp mma, uint32_t program) {
    Operation *op = mma;
    NVVM::MMAShapeAttr shape = mma.getShape();
    auto typeA = mma.getMultiplicandAPtxType();
    auto typeB = mma.getMultiplicandBPtxType();
    if (typeA && typeB && *typeA == NVVM::MMATypes::tf32 &&
        *typeB == NVVM::MMATypes::tf32)
      return compileMmaTF32(mma, program);
    bool supported =
        shape.getM() == 16 && shape.getN() == 8 && shape.getK() == 16 &&
        mma.getLayoutA() == NVVM::MMALayout::row &&
        mma.getLayoutB() == NVVM::MMALayout::col && typeA && typeB &&
        *typeA == *typeB &&
        (*typeA == NVVM::MMATypes::f16 || *typeA == NVVM::MMATypes::bf16) &&
        mma.getOperandA().size() == 4 && mma.getOperandB().size() == 2 &&
        mma.getOperandC().size() == 4;
    auto result = dyn_cast<LLVM::LLVMStructType>(mma.getRes().getType());
    supported =
        supported && result && result.getBody().size() == 4 &&
        llvm::all_of(result.getBody(), [](Type t) { return t.isF32(); });
    for (Value c : mma.getOperandC())
      supported = supported && c.getType().isF32();
    Type regType = mma.getOperandA()[0].getType();
    bool packed = regType.isInteger(32);
    auto vector = dyn_cast<VectorType>(regType);
    supported =
        supported && (packed || (vector && vector.getNumElements() == 2 &&
                                 vector.getElementTypeBitWidth() == 16));
    for (Value v : llvm::concat<Value>(mma.getOperandA(), mma.getOperandB()))
      supported = supported && v.getType() == regType;
    if (!supported)
      failCompile(k.name, op,
                  "only nvvm.mma.sync m16n8k16 with f16 or bf16 A and B "
                  "(row, col) and f32 accumulators is emulated");
    Inst in;
    in.fn = mmaOp;
    in.op = op;
    for (Value v : mma.getOperandA())
      in.ins.push_back(use(v, op));
    for (Value v : mma.getOperandB())
      in.ins.push_back(use(v, op));
    for (Value v : mma.getOperandC())
      in.ins.push_back(use(v, op));
    in.outs = {define(mma.getRes(), op)};
    in.imm = *typeA == NVVM::MMATypes::bf16 ? 1 : 0;
    in.imm2 = packed ? 1 : 0;
    emit(program, std::move(in));
  }

  void compileMmaTF32(NVVM::MmaOp mma, uint32_t program) {
    Operation *op = mma;
    NVVM::MMAShapeAttr shape = mma.getShape();
    auto result = dyn_cast<LLVM::LLVMStructType>(mma.getRes().getType());
    bool supported =
        shape.getM() == 16 && shape.getN() == 8 && shape.getK() == 8 &&
        mma.getLayoutA() == NVVM::MMALayout::row &&
        mma.getLayoutB() == NVVM::MMALayout::col &&
        mma.getOperandA().size() == 4 && mma.getOperandB().size() == 2 &&
        mma.getOperandC().size() == 4 && result &&
        result.getBody().size() == 4 &&
        llvm::all_of(result.getBody(), [](Type t) { return t.isF32(); });
    for (Value v : llvm::concat<Value>(mma.getOperandA(), mma.getOperandB()))
      supported = supported && v.getType().isInteger(32);
    for (Value c : mma.getOperandC())
      supported = supported && c.getType().isF32();
    if (!supported)
      failCompile(k.name, op,
                  "only nvvm.mma.sync m16n8k8 with tf32 A and B in i32 "
                  "registers (row, col) and f32 accumulators is emulated");
    Inst in;
    in.fn = mmaTF32Op;
    in.op = op;
    for (Value v : llvm::concat<Value>(mma.getOperandA(), mma.getOperandB(),
                                       mma.getOperandC()))
      in.ins.push_back(use(v, op));
    in.outs = {define(mma.getRes(), op)};
    emit(program, std::move(in));
  }

  template <unsigned Bytes>
  static Handler loadFor(bool shared) {
    return shared ? loadOp<Bytes, true> : loadOp<Bytes, false>;
  }
  template <unsigned Bytes>
  static Handler storeFor(bool shared) {
    return shared ? storeOp<Bytes, true> : storeOp<Bytes, false>;
  }
  static Handler loadHandler(unsigned bytes, bool shared) {
    switch (bytes) {
    case 1:
      return loadFor<1>(shared);
    case 2:
      return loadFor<2>(shared);
    case 4:
      return loadFor<4>(shared);
    default:
      return loadFor<8>(shared);
    }
  }
  static Handler storeHandler(unsigned bytes, bool shared) {
    switch (bytes) {
    case 1:
      return storeFor<1>(shared);
    case 2:
      return storeFor<2>(shared);
    case 4:
      return storeFor<4>(shared);
    default:
      return storeFor<8>(shared);
    }
  }
  template <unsigned Bytes>
  static Handler vectorFor(bool load, bool shared) {
    if (load)
      return shared ? vectorAccessOp<Bytes, true, false>
                    : vectorAccessOp<Bytes, false, false>;
    return shared ? vectorAccessOp<Bytes, true, true>
                  : vectorAccessOp<Bytes, false, true>;
  }
  static Handler vectorHandler(unsigned bytes, bool load, bool shared) {
    switch (bytes) {
    case 1:
      return vectorFor<1>(load, shared);
    case 2:
      return vectorFor<2>(load, shared);
    case 4:
      return vectorFor<4>(load, shared);
    default:
      return vectorFor<8>(load, shared);
    }
  }
  static Handler loadRankedHandler(unsigned bytes) {
    switch (bytes) {
    case 1:
      return loadOpRanked<1>;
    case 2:
      return loadOpRanked<2>;
    case 4:
      return loadOpRanked<4>;
    default:
      return loadOpRanked<8>;
    }
  }
  static Handler storeRankedHandler(unsigned bytes) {
    switch (bytes) {
    case 1:
      return storeOpRanked<1>;
    case 2:
      return storeOpRanked<2>;
    case 4:
      return storeOpRanked<4>;
    default:
      return storeOpRanked<8>;
    }
  }

  Kernel &k;
  llvm::DenseMap<Value, Slot> slots;
  llvm::DenseMap<Value, uint32_t> buffers;
  uint32_t next = 0;
};

//===----------------------------------------------------------------------===//
// Modules and launches
//===----------------------------------------------------------------------===//

struct EmulatedModule {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  gpu::GPUModuleOp kernels;
  std::map<std::string, std::unique_ptr<Kernel>> functions;
  std::mutex mutex;
};

unsigned workerCount() {
  if (const char *env = std::getenv("LINATTN_GPU_EMULATOR_THREADS"))
    if (int n = std::atoi(env); n > 0)
      return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

/// A worker's state for kernel `k` with `threads` threads per block.
void setUpWorker(Exec &e, const Kernel &k, const int64_t block[3],
                 const int64_t grid[3],
                 const std::vector<RuntimeBuffer> &globals,
                 const std::vector<std::pair<uint32_t, Word>> &scalars) {
  e.kernel = &k;
  e.threads = block[0] * block[1] * block[2];
  e.regs.assign(size_t(k.words) * e.threads, 0);
  for (auto [slot, bits] : k.constants)
    std::fill_n(e.reg(slot), e.threads, bits);
  for (auto [slot, bits] : scalars)
    std::fill_n(e.reg(slot), e.threads, bits);
  e.masks.assign(k.maxDepth + 2, std::vector<uint8_t>(e.threads, 0));
  for (int d = 0; d < 3; ++d) {
    e.blockDim[d] = block[d];
    e.gridDim[d] = grid[d];
    e.threadId[d].resize(e.threads);
  }
  for (uint32_t l = 0; l < e.threads; ++l) {
    e.threadId[0][l] = l % block[0];
    e.threadId[1][l] = (l / block[0]) % block[1];
    e.threadId[2][l] = l / (block[0] * block[1]);
  }
  e.buffers = globals;
  e.asyncCopies.assign(k.asyncCopies ? e.threads : 0, {});
  e.asyncGroups.assign(k.asyncCopies ? e.threads : 0, 0);
  e.proxyFences.assign(e.threads, 0);
  e.warpgroups.assign(k.wgmma ? (e.threads + 127) / 128 : 0, {});
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    const BufferInfo &info = k.buffers[i];
    if (!info.shared)
      continue;
    e.sharedData.emplace_back(info.elements * info.elementBytes);
    e.shadows.emplace_back(info.elements);
    RuntimeBuffer &b = e.buffers[i];
    b.shared = true;
    b.index = info.index;
    b.elementBytes = info.elementBytes;
    b.base = e.sharedData.back().data();
    b.shadow = e.shadows.back().data();
    b.sharedAddress = info.sharedAddress;
    b.size = info.elements;
    b.stride = 1;
    b.sizes.assign(info.shape.begin(), info.shape.end());
    b.strides.assign(info.shape.size(), 1);
    for (int d = static_cast<int>(info.shape.size()) - 2; d >= 0; --d)
      b.strides[d] = b.strides[d + 1] * info.shape[d + 1];
  }
}

void runBlock(Exec &e, int64_t linear) {
  e.blockLinear = linear;
  e.blockId[0] = linear % e.gridDim[0];
  e.blockId[1] = (linear / e.gridDim[0]) % e.gridDim[1];
  e.blockId[2] = linear / (e.gridDim[0] * e.gridDim[1]);
  // Epochs only grow: workgroup memory a previous block wrote reads as
  // uninitialized.
  e.blockEpoch = ++e.epoch;
  e.depth = 0;
  e.mask = e.masks[0].data();
  std::fill_n(e.mask, e.threads, 1);
  // Group numbers restart with the block; the copies are all completed (or
  // the last block failed).
  std::fill(e.asyncGroups.begin(), e.asyncGroups.end(), 0);
  for (Warpgroup &wg : e.warpgroups)
    wg = Warpgroup();
  run(e, e.kernel->programs[0]);
  for (uint32_t g = 0; g < e.warpgroups.size(); ++g)
    if (!e.warpgroups[g].pending.empty())
      fail(e, *e.warpgroups[g].pending.front().inst, g * 128,
           "the kernel returns with " +
               std::to_string(e.warpgroups[g].pending.size()) +
               " wgmma.mma_async of warpgroup " + std::to_string(g) +
               " that no wgmma.wait.group completed");
  // A copy still in flight at the end was issued for nothing (or waited for
  // with too high a count).
  for (uint32_t l = 0; l < e.asyncCopies.size(); ++l)
    if (!e.asyncCopies[l].empty())
      fail(e, *e.asyncCopies[l].front().inst, l,
           "the kernel returns with " +
               std::to_string(e.asyncCopies[l].size()) +
               " async copies of this thread that no wait completed");
}

/// The file LINATTN_GPU_EMULATOR_PROFILE names, or null.
const char *profilePath() {
  const char *path = std::getenv("LINATTN_GPU_EMULATOR_PROFILE");
  return path && *path ? path : nullptr;
}

/// `text` as a JSON string.
std::string jsonString(StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

const char *accessName(Access kind) {
  switch (kind) {
  case Access::GlobalLoad:
    return "global-load";
  case Access::GlobalStore:
    return "global-store";
  case Access::SharedLoad:
    return "shared-load";
  case Access::SharedStore:
    return "shared-store";
  case Access::Mma:
    return "mma";
  case Access::Prefetch:
    return "prefetch";
  }
  return "";
}

/// Appends the launch's profile to the file as one JSON line: the kernel,
/// its grid and block; per op and kind of access (ops numbered in the
/// kernel's pre-order, as printed) the statistics; per global buffer (by
/// kernel argument) the bytes of the distinct sectors read and written.
void writeProfile(const Kernel &k, const int64_t grid[3],
                  const int64_t block[3], LaunchProfile &profile,
                  const std::vector<RuntimeBuffer> &globals) {
  DenseMap<Operation *, unsigned> ordinals;
  k.func->walk<WalkOrder::PreOrder>(
      [&](Operation *op) { ordinals.try_emplace(op, ordinals.size()); });
  std::string line = "{\"kernel\": " + jsonString(k.name) + ", \"grid\": [" +
                     std::to_string(grid[0]) + ", " + std::to_string(grid[1]) +
                     ", " + std::to_string(grid[2]) + "], \"block\": [" +
                     std::to_string(block[0]) + ", " +
                     std::to_string(block[1]) + ", " +
                     std::to_string(block[2]) + "], \"ops\": [";
  // The entries by (ordinal, kind).
  using Entry = std::pair<const AccessKey, AccessStats>;
  std::vector<std::tuple<unsigned, Access, const Entry *>> order;
  for (const Entry &entry : profile.stats)
    order.emplace_back(ordinals.lookup(entry.first.first->op),
                       entry.first.second, &entry);
  llvm::sort(order);
  bool first = true;
  for (auto [ordinal, kind, entry] : order) {
    const AccessStats &stats = entry->second;
    line += std::string(first ? "" : ", ") +
            "{\"id\": " + std::to_string(ordinal) + ", \"kind\": \"" +
            accessName(kind) + "\", \"warps\": " + std::to_string(stats.warps) +
            ", \"bytes\": " + std::to_string(stats.bytes) +
            ", \"units\": " + std::to_string(stats.units) +
            ", \"ideal\": " + std::to_string(stats.ideal) +
            ", \"op\": " + jsonString(describe(entry->first.first->op)) + "}";
    first = false;
  }
  line += "], \"buffers\": [";
  first = true;
  for (size_t i = 0; i < globals.size(); ++i) {
    if (!profile.sectors[i])
      continue;
    uint64_t read = 0, written = 0;
    for (uint64_t x = 0; x < profile.sectorCounts[i]; ++x) {
      uint8_t bits = profile.sectors[i][x].load(std::memory_order_relaxed);
      read += bits & 1;
      written += (bits >> 1) & 1;
    }
    line += std::string(first ? "" : ", ") +
            "{\"argument\": " + std::to_string(globals[i].index) +
            ", \"read_bytes\": " + std::to_string(read * 32) +
            ", \"written_bytes\": " + std::to_string(written * 32) + "}";
    first = false;
  }
  line += "]}\n";
  std::lock_guard<std::mutex> lock(errorMutex());
  if (FILE *file = std::fopen(profilePath(), "a")) {
    std::fputs(line.c_str(), file);
    std::fclose(file);
  } else {
    std::fprintf(stderr,
                 "linattn GPU emulator: error: cannot append to %s "
                 "(LINATTN_GPU_EMULATOR_PROFILE)\n",
                 profilePath());
    abortProcess();
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// The interface
//===----------------------------------------------------------------------===//

// The file uses mlir, whose mlir::linattn (LinAttnToGPU.h) makes a plain
// `linattn::` ambiguous.
namespace emulator = ::linattn::gpu_emulator;

void *emulator::loadModule(const void *data, size_t size) {
  auto m = std::make_unique<EmulatedModule>();
  DialectRegistry registry;
  registry
      .insert<arith::ArithDialect, gpu::GPUDialect, LLVM::LLVMDialect,
              NVVM::NVVMDialect, nvgpu::NVGPUDialect, math::MathDialect,
              memref::MemRefDialect, scf::SCFDialect, vector::VectorDialect>();
  m->context =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  m->context->loadAllAvailableDialects();
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(m->context.get(), [&](Diagnostic &d) {
      llvm::raw_string_ostream os(diagnostics);
      os << d.getLocation() << ": " << d << "\n";
      return success();
    });
    ParserConfig config(m->context.get());
    m->module = parseSourceString<ModuleOp>(
        StringRef(static_cast<const char *>(data), size), config,
        "linattn_kernels");
  }
  if (!m->module) {
    std::fprintf(stderr,
                 "linattn GPU emulator: error: the module given to "
                 "mgpuModuleLoad is not MLIR text holding a gpu.module (was "
                 "it compiled with linattn-lower-to-nvvm{emulate=true}?):\n%s",
                 diagnostics.c_str());
    abortProcess();
  }
  m->module->walk([&](gpu::GPUModuleOp kernels) {
    if (!m->kernels)
      m->kernels = kernels;
  });
  if (!m->kernels) {
    std::fprintf(stderr, "linattn GPU emulator: error: the module given to "
                         "mgpuModuleLoad holds no gpu.module\n");
    abortProcess();
  }
  return m.release();
}

void emulator::unloadModule(void *module) {
  delete static_cast<EmulatedModule *>(module);
}

void *emulator::getFunction(void *module, const char *name) {
  auto *m = static_cast<EmulatedModule *>(module);
  std::lock_guard<std::mutex> lock(m->mutex);
  auto it = m->functions.find(name);
  if (it != m->functions.end())
    return it->second.get();
  auto func = m->kernels.lookupSymbol<gpu::GPUFuncOp>(name);
  if (!func || !func.isKernel()) {
    std::fprintf(stderr,
                 "linattn GPU emulator: error: no kernel @%s in gpu.module "
                 "@%s\n",
                 name, m->kernels.getName().str().c_str());
    abortProcess();
  }
  auto kernel = std::make_unique<Kernel>();
  kernel->name = name;
  kernel->func = func;
  if (std::optional<ArrayRef<int32_t>> known = func.getKnownBlockSize())
    kernel->knownBlockSize = {(*known)[0], (*known)[1], (*known)[2]};
  Compiler(*kernel).compile();
  Kernel *result = kernel.get();
  m->functions[name] = std::move(kernel);
  return result;
}

const char *emulator::functionName(void *function) {
  return static_cast<Kernel *>(function)->name.c_str();
}

void emulator::launch(void *function, const int64_t grid[3],
                                   const int64_t block[3], void **params,
                                   size_t paramCount,
                                   const DeviceRangeCheck &isDeviceRange) {
  const Kernel &k = *static_cast<Kernel *>(function);
  int64_t threads = block[0] * block[1] * block[2];
  if (block[0] <= 0 || block[1] <= 0 || block[2] <= 0 || threads > 1024)
    failLaunch(k, "block of " + std::to_string(block[0]) + "x" +
                      std::to_string(block[1]) + "x" +
                      std::to_string(block[2]) +
                      " threads (a block has 1 to 1024)");
  if (k.knownBlockSize && (block[0] != (*k.knownBlockSize)[0] ||
                           block[1] != (*k.knownBlockSize)[1] ||
                           block[2] != (*k.knownBlockSize)[2]))
    failLaunch(k, "block of " + std::to_string(block[0]) + "x" +
                      std::to_string(block[1]) + "x" +
                      std::to_string(block[2]) +
                      " threads, but the kernel's known_block_size is " +
                      std::to_string((*k.knownBlockSize)[0]) + "x" +
                      std::to_string((*k.knownBlockSize)[1]) + "x" +
                      std::to_string((*k.knownBlockSize)[2]));
  if (grid[0] <= 0 || grid[1] <= 0 || grid[2] <= 0 || grid[1] > 65535 ||
      grid[2] > 65535 || grid[0] > 2147483647)
    failLaunch(k, "grid of " + std::to_string(grid[0]) + "x" +
                      std::to_string(grid[1]) + "x" + std::to_string(grid[2]) +
                      " blocks exceeds the CUDA limits");
  if (paramCount != k.params)
    failLaunch(k, "the launch passes " + std::to_string(paramCount) +
                      " parameters, the kernel takes " +
                      std::to_string(k.params) +
                      " (five per rank-1 memref, one per scalar)");

  // The arguments.
  std::vector<RuntimeBuffer> globals(k.buffers.size());
  std::vector<std::unique_ptr<GlobalShadow[]>> shadows;
  std::vector<std::pair<uint32_t, Word>> scalars;
  size_t p = 0;
  for (size_t i = 0; i < k.args.size(); ++i) {
    const ArgInfo &arg = k.args[i];
    if (arg.buffer == kNone) {
      Word bits = 0;
      std::memcpy(&bits, params[p++], arg.bytes);
      scalars.push_back({arg.slot, bits});
      continue;
    }
    const BufferInfo &info = k.buffers[arg.buffer];
    RuntimeBuffer &b = globals[arg.buffer];
    char *aligned = *static_cast<char **>(params[p + 1]);
    int64_t offset = *static_cast<int64_t *>(params[p + 2]);
    b.sizes.resize(info.rank);
    b.strides.resize(info.rank);
    for (unsigned d = 0; d < info.rank; ++d) {
      b.sizes[d] = *static_cast<int64_t *>(params[p + 3 + d]);
      b.strides[d] = *static_cast<int64_t *>(params[p + 3 + info.rank + d]);
    }
    p += 3 + 2 * info.rank;
    b.base = aligned + offset * info.elementBytes;
    b.aligned = aligned;
    b.elementBytes = info.elementBytes;
    b.index = i;
    b.size = info.rank == 1 ? b.sizes[0] : 0;
    b.stride = info.rank == 1 ? b.strides[0] : 1;
    // The extent the descriptor allows must be device memory.
    int64_t last = 0;
    bool empty = false;
    for (unsigned d = 0; d < info.rank; ++d) {
      if (b.sizes[d] <= 0)
        empty = true;
      else
        last += (b.sizes[d] - 1) * b.strides[d];
    }
    if (!empty && !isDeviceRange(b.base, static_cast<uint64_t>(last + 1) *
                                             info.elementBytes))
      failLaunch(k, "kernel argument #" + std::to_string(i) +
                        " is not (all) in device memory: a host buffer, or a "
                        "descriptor larger than its allocation");
    if (info.stored && !empty) {
      shadows.emplace_back(new GlobalShadow[last + 1]);
      b.globalShadow = shadows.back().get();
    }
  }

  // Profiling: the footprint of every global buffer, in sectors from its
  // aligned pointer to the end of the descriptor's extent.
  std::unique_ptr<LaunchProfile> profile;
  if (profilePath()) {
    profile = std::make_unique<LaunchProfile>();
    profile->sectors.resize(globals.size());
    profile->sectorCounts.assign(globals.size(), 0);
    for (size_t i = 0; i < globals.size(); ++i) {
      const RuntimeBuffer &b = globals[i];
      if (k.buffers[i].shared || !b.aligned)
        continue;
      int64_t end = 1;
      for (size_t d = 0; d < b.sizes.size(); ++d)
        end += b.sizes[d] <= 0 ? 0 : (b.sizes[d] - 1) * b.strides[d];
      uint64_t bytes = static_cast<uint64_t>(b.base - b.aligned) +
                       static_cast<uint64_t>(end) * b.elementBytes;
      profile->sectorCounts[i] = (bytes + 31) / 32 + 1;
      profile->sectors[i].reset(
          new std::atomic<uint8_t>[profile->sectorCounts[i]]());
    }
  }

  int64_t blocks = grid[0] * grid[1] * grid[2];
  unsigned workers =
      static_cast<unsigned>(std::min<int64_t>(workerCount(), blocks));
  std::atomic<int64_t> nextBlock{0};
  auto work = [&]() {
    Exec e;
    setUpWorker(e, k, block, grid, globals, scalars);
    if (profile) {
      e.profile = profile.get();
      e.pending.assign(e.threads, {});
    }
    for (int64_t b = nextBlock++; b < blocks; b = nextBlock++)
      runBlock(e, b);
    if (profile) {
      std::lock_guard<std::mutex> lock(profile->mutex);
      for (auto &[key, stats] : e.stats) {
        AccessStats &total = profile->stats[key];
        total.warps += stats.warps;
        total.bytes += stats.bytes;
        total.units += stats.units;
        total.ideal += stats.ideal;
      }
    }
  };
  if (workers <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (unsigned w = 1; w < workers; ++w)
      pool.emplace_back(work);
    work();
    for (std::thread &t : pool)
      t.join();
  }
  if (profile)
    writeProfile(k, grid, block, *profile, globals);
}

void emulator::fatalError(const std::string &message) {
  std::lock_guard<std::mutex> lock(errorMutex());
  std::fprintf(stderr, "linattn GPU emulator: error: %s\n", message.c_str());
  abortProcess();
}

std::string emulator::deviceName() {
  return "emulated GPU (MLIR kernel interpreter on the host CPU, " +
         std::to_string(workerCount()) + " threads)";
}
