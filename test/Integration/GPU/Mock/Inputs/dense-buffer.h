//===- dense-buffer.h - descriptors of dense device buffers -----*- C++ -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// For the test programs that call linattn-compile's device-buffer entry
// points (device-buffers.mlir): a dense row-major f32 buffer from the
// caller's allocator, described as the generated header's
// linattn_memref_f32_<R>d.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_TEST_DENSE_BUFFER_H
#define LINATTN_TEST_DENSE_BUFFER_H

#include <cstdint>

/// A `Descriptor` of a dense row-major f32 buffer of `sizes` at the pointer
/// `allocate(bytes)` returns.
template <typename Descriptor, int Rank, typename Allocate>
Descriptor denseBuffer(const int64_t (&sizes)[Rank], Allocate &&allocate) {
  Descriptor d{};
  int64_t count = 1;
  for (int i = Rank - 1; i >= 0; --i) {
    d.sizes[i] = sizes[i];
    d.strides[i] = count;
    count *= sizes[i];
  }
  d.allocated = d.aligned =
      static_cast<float *>(allocate(uint64_t(count) * sizeof(float)));
  d.offset = 0;
  return d;
}

#endif // LINATTN_TEST_DENSE_BUFFER_H
