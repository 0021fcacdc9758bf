//===- Occupancy.h - blocks per SM of NVIDIA GPUs ---------------*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// What one SM holds (the CUDA programming guide's table of compute
// capabilities) and how many blocks of a kernel it runs at once, as the
// CUDA occupancy calculator (cuda_occupancy.h) counts them: the shape
// search sizes shared memory with it, the keys-only kernels' register bound
// and linattn-gpu-fit-registers ask ptxas for blocks with it.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_LINATTNTOGPU_OCCUPANCY_H
#define LIB_CONVERSION_LINATTNTOGPU_OCCUPANCY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace mlir::linattn {

/// The resources of one SM. Every block takes 1 KiB of shared memory beyond
/// its own (from sm_80 on), in units of 128 bytes; registers are allocated
/// per warp in units of 256 from the four sub-partitions' register files.
struct SMLimits {
  int64_t registers;    // 32-bit registers
  int64_t sharedMemory; // bytes
  int64_t threads;
  int64_t blocks;
};

inline constexpr SMLimits kA100SM{64 * 1024, 164 * 1024, 2048, 32};
inline constexpr SMLimits kH100SM{64 * 1024, 228 * 1024, 2048, 32};

/// The SM of `chip` (sm_80, sm_90a, ...; the `a` and `f` suffixes name the
/// same SM); nullopt for chips the table leaves out (before sm_80, where
/// blocks reserve no shared memory, and those it does not know).
inline std::optional<SMLimits> smLimits(llvm::StringRef chip) {
  unsigned number = 0;
  if (!chip.consume_front("sm_"))
    return std::nullopt;
  if (!chip.consume_back("a"))
    chip.consume_back("f");
  if (chip.getAsInteger(10, number))
    return std::nullopt;
  switch (number) {
  case 80:
    return kA100SM;
  case 86:
    return SMLimits{64 * 1024, 100 * 1024, 1536, 16};
  case 89:
    return SMLimits{64 * 1024, 100 * 1024, 1536, 24};
  case 90:
  case 100:
    return kH100SM;
  case 120:
    return SMLimits{64 * 1024, 100 * 1024, 1536, 32};
  default:
    return std::nullopt;
  }
}

/// Blocks of `bytes` of workgroup memory that `perSM` bytes of shared
/// memory hold.
inline int64_t sharedMemoryBlocks(int64_t perSM, int64_t bytes) {
  return perSM / llvm::alignTo(bytes + 1024, 128);
}

/// The blocks per SM of a kernel of `threads` threads a block: what each of
/// its registers (a thread's), shared memory (a block's, static and
/// dynamic) and threads allow, and the SM's own limit.
struct BlockLimits {
  int64_t registers, sharedMemory, threads, sm;

  int64_t blocks() const {
    return std::min({registers, sharedMemory, threads, sm});
  }
  /// Whether registers alone hold the kernel below the others' blocks.
  bool registerBound() const {
    return registers < std::min({sharedMemory, threads, sm});
  }
};

inline BlockLimits blockLimits(const SMLimits &sm, int64_t registers,
                               int64_t sharedBytes, int64_t threads) {
  int64_t warps = llvm::divideCeil(threads, 32);
  int64_t perWarp = llvm::alignTo(registers * 32, 256);
  BlockLimits limits;
  limits.registers =
      perWarp ? (sm.registers / 4 / perWarp) * 4 / warps : sm.blocks;
  limits.sharedMemory = sharedMemoryBlocks(sm.sharedMemory, sharedBytes);
  limits.threads = sm.threads / 32 / warps;
  limits.sm = sm.blocks;
  return limits;
}

} // namespace mlir::linattn

#endif // LIB_CONVERSION_LINATTNTOGPU_OCCUPANCY_H
