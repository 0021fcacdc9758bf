//===- RunnerUtils.cpp - memrefCopy without libMLIR ----------------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// liblinattn_runner_utils.so: the one function of MLIR's C runner utilities
// that lowered code calls for memref.copy between buffers that are not both
// contiguous, `memrefCopy` (linattn's pipelines turn such copies of ranked
// memrefs into loops; unranked ones and IR lowered by upstream passes alone
// still call it). MLIR's
// libmlir_c_runner_utils.so needs libMLIR.so and libLLVM.so; this library
// needs only libc, so that the relocatable bundle's statically linked tools
// (scripts/bundle.sh) can run such code where no LLVM is installed. The tools
// take it only when MLIR's library is not found.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstring>
#include <vector>

namespace {
/// An unranked memref as the LLVM lowering passes it: the rank and a pointer
/// to a ranked descriptor {allocated, aligned, offset, sizes[rank],
/// strides[rank]}.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

/// The fields of a ranked descriptor, for any rank.
struct Strided {
  char *data; // aligned + offset, in bytes
  const int64_t *sizes;
  const int64_t *strides;
};

Strided fields(const UnrankedMemRef &memref, int64_t elementSize) {
  auto *words = static_cast<int64_t *>(memref.descriptor);
  char *aligned = reinterpret_cast<char *>(words[1]);
  int64_t offset = words[2];
  return {aligned + offset * elementSize, words + 3, words + 3 + memref.rank};
}
} // namespace

/// Copies every element of `src` into `dst`, which has the same shape;
/// each may have any strides (MLIR's memrefCopy).
extern "C" __attribute__((visibility("default"))) void
memrefCopy(int64_t elementSize, UnrankedMemRef *src, UnrankedMemRef *dst) {
  int64_t rank = src->rank;
  Strided from = fields(*src, elementSize);
  Strided to = fields(*dst, elementSize);
  if (rank == 0) {
    std::memcpy(to.data, from.data, elementSize);
    return;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (from.sizes[d] == 0)
      return;

  // Rows along the last dimension are copied whole when both are contiguous
  // there; an odometer walks the other dimensions.
  int64_t last = rank - 1;
  bool rows = from.strides[last] == 1 && to.strides[last] == 1;
  int64_t runLength = rows ? from.sizes[last] : 1;
  int64_t outer = rows ? last : rank; // dimensions the odometer walks
  std::vector<int64_t> index(rank, 0);
  int64_t fromOffset = 0, toOffset = 0;
  while (true) {
    if (rows) {
      std::memcpy(to.data + toOffset * elementSize,
                  from.data + fromOffset * elementSize,
                  runLength * elementSize);
    } else {
      std::memcpy(to.data + toOffset * elementSize,
                  from.data + fromOffset * elementSize, elementSize);
    }
    int64_t d = outer - 1;
    for (; d >= 0; --d) {
      ++index[d];
      fromOffset += from.strides[d];
      toOffset += to.strides[d];
      if (index[d] < from.sizes[d])
        break;
      fromOffset -= from.sizes[d] * from.strides[d];
      toOffset -= to.sizes[d] * to.strides[d];
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}
