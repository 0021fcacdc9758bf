//===- GpuEmulatorBulkCopies.cpp - bulk copies and mbarriers --------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// sm_90's bulk copies from global to shared memory and the mbarriers they
// complete on: nvvm.mbarrier.init, .inval, .arrive.expect_tx and
// .try_wait.parity, nvvm.cp.async.bulk.shared.cluster.global, and the LLVM
// pointer casts that make their addresses.
//
// A bulk copy reads its source when it is issued and writes its destination
// when a thread waits for the barrier's phase it was issued in; until then
// a thread that touches the destination fails as it would on an async copy
// in flight. Its bytes count against the barrier's transaction count then,
// and a phase completes when no arrival is pending and the count is back at
// 0. So a wait for a phase that nothing can complete any more (bytes
// expected that no copy brings, an arrival missing) fails rather than
// hangs, and so does a phase that completes with copies still on it (fewer
// bytes expected than copied). A wait for a phase that completed before a
// copy was issued leaves the copy in flight.
//
//===----------------------------------------------------------------------===//

#include "GpuEmulatorHandlers.h"

#include <cstdio>
#include <cstring>

namespace linattn::gpu_emulator {
namespace LLVM_LIBRARY_VISIBILITY detail {

namespace {

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx",
                static_cast<unsigned long long>(value));
  return text;
}

/// The workgroup buffer and element at shared address `address`, which must
/// be `align`-aligned and start `bytes` bytes within that buffer.
std::pair<uint32_t, int64_t> sharedAt(Exec &e, const Inst &in, uint32_t l,
                                      uint64_t address, uint64_t bytes,
                                      uint64_t align, const char *what) {
  if (address % align)
    fail(e, in, l,
         std::string(what) + " shared address " + hex(address) +
             ", which is not " + std::to_string(align) + "-byte aligned");
  for (uint32_t i = 0; i < e.buffers.size(); ++i) {
    const RuntimeBuffer &b = e.buffers[i];
    if (!b.shared)
      continue;
    uint64_t begin = static_cast<uint64_t>(b.sharedAddress);
    uint64_t size = static_cast<uint64_t>(b.size) * b.elementBytes;
    if (address < begin || address - begin >= size)
      continue;
    uint64_t offset = address - begin;
    if (offset % b.elementBytes)
      fail(e, in, l,
           std::string(what) + " byte " + std::to_string(offset) + " of " +
               bufferName(e, b) + ", inside an element");
    if (size - offset < bytes)
      fail(e, in, l,
           std::string(what) + " " + std::to_string(bytes) +
               " bytes from byte " + std::to_string(offset) + " of " +
               bufferName(e, b) + ", past its end (" + std::to_string(size) +
               " bytes)");
    return {i, static_cast<int64_t>(offset / b.elementBytes)};
  }
  fail(e, in, l,
       std::string(what) + " shared address " + hex(address) +
           ", which is in no workgroup buffer");
}

/// The initialized mbarrier at shared address `address`, which a thread
/// other than its initializer may use only after a gpu.barrier.
MBarrier &barrierAt(Exec &e, const Inst &in, uint32_t l, uint64_t address,
                    const char *what) {
  sharedAt(e, in, l, address, 8, 8, what);
  auto it = e.mbarriers.find(address);
  if (it == e.mbarriers.end() || !it->second.valid)
    fail(e, in, l,
         std::string(what) + " shared address " + hex(address) +
             ", which holds no initialized mbarrier");
  MBarrier &barrier = it->second;
  if (barrier.initEpoch == e.epoch && barrier.initLane != l)
    fail(e, in, l,
         std::string(what) + " the mbarrier at shared address " + hex(address) +
             ", which thread " + std::to_string(barrier.initLane) +
             " initialized with no gpu.barrier since");
  return barrier;
}

/// Ends the barrier's phase if no arrival is pending and its transaction
/// count is 0.
void completePhase(Exec &e, const Inst &in, uint32_t l, uint64_t address,
                   MBarrier &barrier) {
  if (barrier.pending || barrier.tx)
    return;
  if (!barrier.copies.empty())
    fail(e, in, l,
         "phase " + std::to_string(barrier.phase) +
             " of the mbarrier at shared address " + hex(address) +
             " completes with " + std::to_string(barrier.copies.size()) +
             " bulk copies on it in flight: its arrivals expected fewer "
             "bytes than were copied");
  ++barrier.phase;
  barrier.pending = barrier.expected;
}

/// Writes a bulk copy's data; its elements are published to every thread.
void completeBulkCopy(Exec &e, const BulkCopy &copy) {
  RuntimeBuffer &b = e.buffers[copy.buffer];
  std::memcpy(b.base + copy.element * b.elementBytes, copy.data.data(),
              copy.data.size());
  for (uint32_t j = 0; j < copy.elements; ++j) {
    Shadow &s = b.shadow[copy.element + j];
    s.asyncWriter = -1;
    s.writeEpoch = e.epoch;
    s.writer = kBulkWriter;
    s.writeInst = copy.inst;
    s.writerFences = 0;
  }
}

} // namespace

/// llvm.inttoptr, llvm.addrspacecast: the address as it is.
void pointerCastOp(Exec &e, const Inst &in) {
  copySlot(e, in.r, in.a, 1, e.mask);
}

/// nvvm.mbarrier.init (a = address, b = arrivals a phase).
void mbarrierInitOp(Exec &e, const Inst &in) {
  const Word *address = e.reg(in.a);
  const Word *count = e.reg(in.b);
  forActive(e, [&](uint32_t l) {
    sharedAt(e, in, l, address[l], 8, 8, "mbarrier.init at");
    int64_t arrivals = static_cast<int32_t>(count[l]);
    if (arrivals < 1 || arrivals >= (int64_t(1) << 20))
      fail(e, in, l,
           "mbarrier.init with " + std::to_string(arrivals) +
               " arrivals a phase (1 to 2^20 - 1)");
    MBarrier &barrier = e.mbarriers[address[l]];
    if (barrier.valid)
      fail(e, in, l,
           "mbarrier.init at shared address " + hex(address[l]) +
               ", which holds an mbarrier not invalidated since");
    barrier = MBarrier();
    barrier.valid = true;
    barrier.expected = barrier.pending = arrivals;
    barrier.initEpoch = e.epoch;
    barrier.initLane = l;
  });
}

/// nvvm.mbarrier.inval (a = address).
void mbarrierInvalOp(Exec &e, const Inst &in) {
  const Word *address = e.reg(in.a);
  forActive(e, [&](uint32_t l) {
    MBarrier &barrier = barrierAt(e, in, l, address[l], "mbarrier.inval of");
    if (!barrier.copies.empty())
      fail(e, in, l,
           "mbarrier.inval of the mbarrier at shared address " +
               hex(address[l]) + ", on which " +
               std::to_string(barrier.copies.size()) +
               " bulk copies are in flight");
    barrier.valid = false;
  });
}

/// nvvm.mbarrier.arrive.expect_tx (a = address, b = bytes): adds the bytes
/// to the transaction count, then arrives.
void mbarrierArriveExpectTxOp(Exec &e, const Inst &in) {
  const Word *address = e.reg(in.a);
  const Word *bytes = e.reg(in.b);
  forActive(e, [&](uint32_t l) {
    MBarrier &barrier =
        barrierAt(e, in, l, address[l], "mbarrier.arrive.expect_tx on");
    barrier.tx += static_cast<uint32_t>(bytes[l]);
    if (barrier.pending == 0)
      fail(e, in, l,
           "mbarrier.arrive.expect_tx on the mbarrier at shared address " +
               hex(address[l]) + ", whose phase expects no more arrivals");
    --barrier.pending;
    completePhase(e, in, l, address[l], barrier);
  });
}

/// nvvm.mbarrier.try_wait.parity (a = address, b = parity): returns at
/// once where the current phase has the other parity (the phase of this
/// one completed); else waits for the current phase, whose bulk copies
/// land, and which must then complete. (Copies on a barrier are always of
/// its current phase: a phase does not complete with copies on it.)
void mbarrierTryWaitParityOp(Exec &e, const Inst &in) {
  const Word *address = e.reg(in.a);
  const Word *parity = e.reg(in.b);
  forActive(e, [&](uint32_t l) {
    MBarrier &barrier =
        barrierAt(e, in, l, address[l], "mbarrier.try_wait.parity on");
    if ((barrier.phase & 1) != (parity[l] & 1))
      return;
    for (const BulkCopy &copy : barrier.copies) {
      completeBulkCopy(e, copy);
      barrier.tx -= static_cast<int64_t>(copy.data.size());
    }
    barrier.copies.clear();
    completePhase(e, in, l, address[l], barrier);
    if ((barrier.phase & 1) == (parity[l] & 1))
      fail(e, in, l,
           "mbarrier.try_wait.parity " + std::to_string(parity[l] & 1) +
               " on the mbarrier at shared address " + hex(address[l]) +
               " waits for phase " + std::to_string(barrier.phase) +
               ", which nothing completes: " + std::to_string(barrier.pending) +
               " arrivals pending, transaction count " +
               std::to_string(barrier.tx) + " bytes");
  });
}

/// nvvm.cp.async.bulk.shared.cluster.global (ins: destination, source,
/// mbarrier, bytes): reads the source now, writes the destination when a
/// thread waits on the mbarrier.
void bulkCopyOp(Exec &e, const Inst &in) {
  const Word *dstAddress = e.reg(in.ins[0].offset);
  const Word *srcAddress = e.reg(in.ins[1].offset);
  const Word *barrierAddress = e.reg(in.ins[2].offset);
  const Word *size = e.reg(in.ins[3].offset);
  forActive(e, [&](uint32_t l) {
    int64_t bytes = static_cast<int32_t>(size[l]);
    if (bytes <= 0 || bytes % 16)
      fail(e, in, l,
           "bulk copy of " + std::to_string(bytes) +
               " bytes, not a positive multiple of 16");
    auto [buffer, element] =
        sharedAt(e, in, l, dstAddress[l], bytes, 16, "bulk copy to");
    MBarrier &barrier =
        barrierAt(e, in, l, barrierAddress[l], "bulk copy completing on");
    uint64_t src = srcAddress[l];
    if (src % 16)
      fail(e, in, l,
           "bulk copy from global address " + hex(src) +
               ", which is not 16-byte aligned");
    const RuntimeBuffer *source = nullptr;
    for (const RuntimeBuffer &b : e.buffers) {
      uint64_t begin =
          static_cast<uint64_t>(reinterpret_cast<uintptr_t>(b.base));
      if (!b.shared && src >= begin &&
          src - begin < static_cast<uint64_t>(b.size) * b.elementBytes) {
        source = &b;
        break;
      }
    }
    if (!source)
      fail(e, in, l,
           "bulk copy from global address " + hex(src) +
               ", which is in no buffer of the launch");
    uint64_t offset =
        src - static_cast<uint64_t>(reinterpret_cast<uintptr_t>(source->base));
    if (source->sizes.size() != 1 || source->stride != 1 ||
        offset % source->elementBytes)
      fail(e, in, l,
           "bulk copy from " + bufferName(e, *source) +
               ", which is not a flat buffer read from an element's start");
    if (static_cast<uint64_t>(source->size) * source->elementBytes - offset <
        static_cast<uint64_t>(bytes))
      fail(e, in, l,
           "out-of-bounds bulk copy of " + std::to_string(bytes) +
               " bytes from byte " + std::to_string(offset) + " of " +
               bufferName(e, *source));
    int64_t first = static_cast<int64_t>(offset / source->elementBytes);
    if (source->globalShadow)
      for (int64_t j = 0; j < bytes / source->elementBytes; ++j)
        checkGlobalAccess(e, in, *source, first + j, l, /*isStore=*/false);
    RuntimeBuffer &dst = e.buffers[buffer];
    BulkCopy copy;
    copy.buffer = buffer;
    copy.element = element;
    copy.elements = static_cast<uint32_t>(bytes / dst.elementBytes);
    copy.data.assign(source->base + offset, source->base + offset + bytes);
    copy.inst = &in;
    copy.lane = l;
    for (uint32_t j = 0; j < copy.elements; ++j) {
      checkSharedWrite(e, in, dst, element + j, l);
      dst.shadow[element + j].asyncWriter = static_cast<int32_t>(l);
    }
    barrier.copies.push_back(std::move(copy));
  });
}

} // namespace detail
} // namespace linattn::gpu_emulator
