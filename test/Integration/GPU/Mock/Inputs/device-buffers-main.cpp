//===- device-buffers-main.cpp - drive device-buffer entry points ---------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Calls the entry points of Inputs/device-buffers.mlir, compiled with
// linattn-compile --target=cuda, the way a GPU application does: buffers
// from the runtime's mgpuMemAlloc, a stream of the caller's (here a made-up
// handle, 7), and nothing else. Linked against the mock runtime, every mgpu*
// call the entry points make is logged to stderr between the "call" and
// "return" lines this program writes there.
//
//===----------------------------------------------------------------------===//

#include "dense-buffer.h"
#include "device-buffers.h"

#include <cstdint>
#include <cstdio>
#include <vector>

extern "C" void *mgpuMemAlloc(uint64_t bytes, void *stream, bool hostShared);
extern "C" void mgpuMemFree(void *pointer, void *stream);

namespace {
std::vector<void *> allocations;

/// A dense row-major device buffer of `sizes` from the runtime.
template <typename Descriptor, int Rank>
Descriptor deviceBuffer(const int64_t (&sizes)[Rank]) {
  return denseBuffer<Descriptor>(sizes, [](uint64_t bytes) {
    allocations.push_back(mgpuMemAlloc(bytes, nullptr, false));
    return allocations.back();
  });
}

void *const stream = reinterpret_cast<void *>(7);
} // namespace

int main() {
  using D2 = linattn_memref_f32_2d;
  using D3 = linattn_memref_f32_3d;
  using D4 = linattn_memref_f32_4d;

  // One decode step: the state goes from s0/z0 to s1/z1.
  D2 q = deviceBuffer<D2>({8, 16}), k = deviceBuffer<D2>({8, 16});
  D2 v = deviceBuffer<D2>({8, 24});
  D3 s0 = deviceBuffer<D3>({8, 16, 24}), s1 = deviceBuffer<D3>({8, 16, 24});
  D2 z0 = deviceBuffer<D2>({8, 16}), z1 = deviceBuffer<D2>({8, 16});
  D2 o = deviceBuffer<D2>({8, 24});
  std::fprintf(stderr, "call decode on s7\n");
  _mlir_ciface_decode(&q, &k, &v, &s0, &z0, &o, &s1, &z1, stream);
  std::fprintf(stderr, "return decode\n");

  // Cross-attention: kv_summary, then query_readout on its S and z.
  D3 cq = deviceBuffer<D3>({2, 7, 32}), ck = deviceBuffer<D3>({2, 13, 32});
  D3 cv = deviceBuffer<D3>({2, 13, 40}), co = deviceBuffer<D3>({2, 7, 40});
  std::fprintf(stderr, "call cross on s7\n");
  _mlir_ciface_cross(&cq, &ck, &cv, &co, stream);
  std::fprintf(stderr, "return cross\n");

  // A causal scan with dynamic batch and length: B = 3, N = 5.
  D4 sq = deviceBuffer<D4>({3, 4, 5, 16}), sk = deviceBuffer<D4>({3, 4, 5, 16});
  D4 sv = deviceBuffer<D4>({3, 4, 5, 40}), so = deviceBuffer<D4>({3, 4, 5, 40});
  D4 ss = deviceBuffer<D4>({3, 4, 16, 40});
  std::fprintf(stderr, "call causal on s7\n");
  _mlir_ciface_causal(&sq, &sk, &sv, &so, &ss, stream);
  std::fprintf(stderr, "return causal\n");

  for (void *pointer : allocations)
    mgpuMemFree(pointer, nullptr);
  std::fprintf(stderr, "done\n");
  return 0;
}
