//===- GpuEmulatorHandlers.cpp - the GPU emulator's op handlers -----------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The handlers of scalar, memory, async-copy, vector and scf.if ops that are
// not templates (GpuEmulatorHandlers.h), and the memory profile's
// accounting of a warp's accesses.
//
//===----------------------------------------------------------------------===//

#include "GpuEmulatorHandlers.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace linattn::gpu_emulator {
/// The emulator's internals: hidden in liblinattn_gpu_emulator.so.
namespace LLVM_LIBRARY_VISIBILITY detail {

//===--- Scalars ---------------------------------------------------------===//

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

/// nvvm.read.ptx.sreg.clock64: the ops the block has executed, the same for
/// all its lanes (they run in step). Deterministic, and what a phase costs
/// in emulated ops, not in cycles of any GPU. With a shared-memory clock
/// (Exec::sharedClock), the shared-memory wavefronts instead.
void clockOp(Exec &e, const Inst &in) {
  Word v = e.sharedClock ? e.sharedWavefronts : e.executed;
  Word *r = e.reg(in.r);
  forActive(e, [&](uint32_t l) { r[l] = v; });
}

/// nvvm.read.ptx.sreg.globaltimer: the host's steady clock in ns.
void globalTimerOp(Exec &e, const Inst &in) {
  Word v =
      static_cast<Word>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count());
  Word *r = e.reg(in.r);
  forActive(e, [&](uint32_t l) { r[l] = v; });
}

/// One conversion of a printf format, `spec` from its '%' to its conversion
/// character, of the argument `w` of type `type`.
static std::string formatArgument(std::string spec, Type type, Word w) {
  char conversion = spec.back();
  // The flags, width and precision; the length is the argument's.
  spec.pop_back();
  while (!spec.empty() && std::strchr("hljztL", spec.back()))
    spec.pop_back();
  char text[128];
  if (std::strchr("fFeEgGaA", conversion)) {
    double d = type.isF64() ? bitsToF64(w) : bitsToF32(w);
    std::snprintf(text, sizeof(text), (spec + conversion).c_str(), d);
  } else {
    unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
    uint64_t bits = width >= 64 ? w : w & ((uint64_t(1) << width) - 1);
    if (conversion == 'd' || conversion == 'i') {
      int64_t v = width >= 64 ? static_cast<int64_t>(bits)
                              : static_cast<int64_t>(bits << (64 - width)) >>
                                    (64 - width);
      std::snprintf(text, sizeof(text), (spec + "ll" + conversion).c_str(),
                    static_cast<long long>(v));
    } else {
      std::snprintf(text, sizeof(text), (spec + "ll" + conversion).c_str(),
                    static_cast<unsigned long long>(bits));
    }
  }
  return text;
}

/// gpu.printf: the format of each active lane in lane order, written to
/// stdout at once (the GPU's printf buffer reaches stdout at the host's next
/// synchronization; the emulator's order of blocks is not the GPU's
/// either). The compiler checked the conversions and the arguments'
/// types (`Compiler::checkPrintf`).
void printfOp(Exec &e, const Inst &in) {
  auto op = cast<gpu::PrintfOp>(in.op);
  StringRef format = op.getFormat();
  std::string out;
  forActive(e, [&](uint32_t l) {
    size_t arg = 0;
    for (size_t i = 0; i < format.size(); ++i) {
      if (format[i] != '%') {
        out += format[i];
        continue;
      }
      if (format[i + 1] == '%') {
        out += '%';
        ++i;
        continue;
      }
      size_t end = printfConversionEnd(format, i);
      Value value = op.getArgs()[arg];
      out += formatArgument(format.slice(i, end + 1).str(), value.getType(),
                            e.reg(in.ins[arg].offset)[l]);
      ++arg;
      i = end;
    }
  });
  std::lock_guard<std::mutex> lock(errorMutex());
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

//===--- Memory ----------------------------------------------------------===//

/// memref.extract_aligned_pointer_as_index of a global buffer: imm =
/// buffer; the host address of the descriptor's aligned pointer.
void alignedPointerOp(Exec &e, const Inst &in) {
  Word v =
      static_cast<Word>(reinterpret_cast<uintptr_t>(e.buffers[in.imm].aligned));
  Word *r = e.reg(in.r);
  forActive(e, [&](uint32_t l) { r[l] = v; });
}

/// The bytes from a global buffer's first element to past its last.
static uint64_t extentBytes(const RuntimeBuffer &b) {
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

//===--- Profile ---------------------------------------------------------===//

/// The distinct bytes of some [begin, end) ranges (sorts them).
static uint64_t
distinctBytes(SmallVectorImpl<std::pair<uint64_t, uint64_t>> &ranges) {
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

/// The lane bit (1 or 2) that pairs the lanes of the warp at `base` for a
/// shared load of `in`, or 0: each lane n reads what lane n ^ bit reads (the
/// same bytes, or both nothing). Shared memory returns 128 bytes a cycle;
/// for such a load it returns each pair's data once, packed, so a load of
/// more than 4 bytes a lane takes half the wavefronts (a warp's 16-byte
/// loads two instead of four). ldmatrix's rows are not lanes' loads.
static uint32_t pairedLanes(Exec &e, const Inst &in, uint32_t base,
                            uint32_t lanes) {
  if (lanes != 32 || isa<nvgpu::LdMatrixOp>(in.op))
    return 0;
  for (uint32_t bit : {1u, 2u}) {
    bool paired = true;
    for (uint32_t i = 0; i < 32 && paired; ++i) {
      const LaneAccess &a = e.pending[base + i],
                       &b = e.pending[base + (i ^ bit)];
      paired = a.bytes == b.bytes && (!a.bytes || a.address == b.address);
    }
    if (paired)
      return bit;
  }
  return 0;
}

/// Adds the accesses noteAccess collected for `in` to this worker's
/// statistics, warp by warp, and clears them. Global accesses count the
/// distinct 32-byte sectors a warp's lanes touch (and mark them in the
/// launch's footprint of buffer number `buffer`); shared ones are split
/// into phases of 128 bytes (32 lanes of up to 4 bytes, 16 of 8, 8 of 16:
/// an ldmatrix's phase is one 8x8 matrix) that take as many wavefronts as
/// the most distinct 4-byte words they touch in one of the 32 banks, at
/// fewest one (a broadcast of 16 bytes to the warp takes four). A load
/// whose lanes read in pairs (pairedLanes) has phases of the pairs' first
/// lanes alone (a 16-byte broadcast: two).
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
      // The lanes that take part: all, or the first of each pair.
      SmallVector<uint32_t, 32> order;
      uint32_t pair =
          kind == Access::SharedLoad ? pairedLanes(e, in, base, lanes) : 0;
      for (uint32_t i = 0; i < lanes; ++i)
        if (!(i & pair))
          order.push_back(i);
      uint32_t phase = widest <= 4 ? 32 : 128 / widest;
      for (uint32_t p = 0; p < order.size(); p += phase) {
        // (bank, word) of every word the phase touches.
        units.clear();
        for (uint32_t j = p; j < std::min<size_t>(p + phase, order.size());
             ++j) {
          LaneAccess &a = e.pending[base + order[j]];
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
        e.sharedWavefronts += most;
      }
    }
    for (uint32_t i = 0; i < lanes; ++i)
      e.pending[base + i] = {};
  }
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
static void completeCopy(Exec &e, const AsyncCopy &copy, uint32_t l) {
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
/// ins[0] the source, outs[0] the result. Elements are packed
/// little-endian. Where one width divides the other (every bitcast the
/// kernels make: f16 pairs to and from i32), a result element is
/// `toBits / fromBits` source elements shifted together or a slice of
/// one, word by word over the lanes; otherwise through the bytes.
void bitcastOp(Exec &e, const Inst &in) {
  unsigned fromBits = in.imm, toBits = in.imm2;
  const Slot &from = in.ins[0], &to = in.outs[0];
  if (toBits % fromBits && fromBits % toBits) {
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
    return;
  }
  auto lowBits = [](unsigned bits) {
    return bits >= 64 ? ~Word(0) : (Word(1) << bits) - 1;
  };
  Word fromMask = lowBits(fromBits), toMask = lowBits(toBits);
  const uint8_t *m = e.mask;
  for (uint32_t w = 0; w < to.words; ++w) {
    Word *out = e.reg(to.offset + w);
    // The source element holding the result element's first bit.
    uint64_t first = uint64_t(w) * toBits;
    const Word *src = e.reg(from.offset + first / fromBits);
    if (toBits <= fromBits) {
      unsigned shift = first % fromBits;
      for (uint32_t l = 0; l < e.threads; ++l)
        if (m[l])
          out[l] = (src[l] >> shift) & toMask;
      continue;
    }
    for (uint32_t l = 0; l < e.threads; ++l)
      if (m[l])
        out[l] = src[l] & fromMask;
    for (unsigned p = 1; p < toBits / fromBits; ++p) {
      src = e.reg(from.offset + first / fromBits + p);
      for (uint32_t l = 0; l < e.threads; ++l)
        if (m[l])
          out[l] |= (src[l] & fromMask) << (p * fromBits);
    }
  }
}

//===--- Structured control flow -----------------------------------------===//

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

} // namespace detail
} // namespace linattn::gpu_emulator
