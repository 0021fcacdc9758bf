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
// sm_90's bulk copies (nvvm.cp.async.bulk.shared.cluster.global) and the
// mbarriers they complete on (GpuEmulatorBulkCopies.cpp) likewise read at
// issue and land when a thread waits on the barrier's phase.
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
// wavefronts as the most distinct 4-byte words it touches in one bank; a
// load whose lanes n and n ^ 1, or n and n ^ 2, all read the same bytes
// returns each pair's once, in half the phases where lanes read more than 4),
// each beside the fewest possible (sectors: the warp's distinct bytes over
// 32; wavefronts: one a phase); the tensor-core instructions
// of the warps; per global buffer the distinct sectors read and written
// (the launch's compulsory traffic). These are the accesses the MLIR kernel
// makes: LLVM may still merge adjacent scalar accesses into vector ones.
//
// With LINATTN_GPU_EMULATOR_CLOCK=shared-wavefronts clock64 reads the
// shared-memory wavefronts the worker's blocks have taken so far (counted
// as in the profile) instead of the ops they executed: phase-clocks
// instrumentation then says what each phase asks of an SM's shared memory.
//
// This file loads modules, runs launches and writes the profile.
// GpuEmulatorCompiler.cpp compiles a kernel; GpuEmulatorHandlers.h and .cpp
// and GpuEmulatorWarpOps.cpp hold the handlers; GpuEmulatorExec.h what they
// all share (the compiled form, a block's state, the memory checks).
//
//===----------------------------------------------------------------------===//

#include "GpuEmulator.h"
#include "GpuEmulatorExec.h"

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
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

using namespace mlir;
using namespace ::linattn::gpu_emulator::detail;

namespace linattn::gpu_emulator {
/// The emulator's internals: hidden in liblinattn_gpu_emulator.so.
namespace LLVM_LIBRARY_VISIBILITY detail {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

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

static std::string locationOf(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getLoc();
  return text;
}

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

} // namespace detail
} // namespace linattn::gpu_emulator

namespace {

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
  e.mbarriers.clear();
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
  for (const auto &[address, barrier] : e.mbarriers)
    if (!barrier.copies.empty())
      fail(e, *barrier.copies.front().inst, barrier.copies.front().lane,
           "the kernel returns with " + std::to_string(barrier.copies.size()) +
               " bulk copies on the mbarrier at shared address " +
               std::to_string(address) + " that no wait completed");
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

/// Whether clock64 reads shared-memory wavefronts
/// (LINATTN_GPU_EMULATOR_CLOCK=shared-wavefronts) rather than ops (unset or
/// `ops`); any other value is an error.
bool sharedMemoryClock() {
  const char *mode = std::getenv("LINATTN_GPU_EMULATOR_CLOCK");
  if (!mode || !*mode || StringRef(mode) == "ops")
    return false;
  if (StringRef(mode) == "shared-wavefronts")
    return true;
  ::linattn::gpu_emulator::fatalError(
      std::string("LINATTN_GPU_EMULATOR_CLOCK is '") + mode +
      "': ops or shared-wavefronts");
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
  compileKernel(*kernel);
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
  // aligned pointer to the end of the descriptor's extent. A shared-memory
  // clock counts the profile's wavefronts; unless the profile is written, it
  // tracks no footprint (every buffer's sector count stays 0).
  bool written = profilePath(), sharedClock = sharedMemoryClock();
  std::unique_ptr<LaunchProfile> profile;
  if (written || sharedClock) {
    profile = std::make_unique<LaunchProfile>();
    profile->sectors.resize(globals.size());
    profile->sectorCounts.assign(globals.size(), 0);
    for (size_t i = 0; written && i < globals.size(); ++i) {
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
    e.sharedClock = sharedClock;
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
  if (written)
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
