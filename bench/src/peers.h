//===- peers.h - the C++ peers the CPU benchmark measures -----------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Every peer takes row-major [B, H, T, D] queries and keys and [B, H, T, M]
// values and returns a freshly allocated [B, H, T, M] output (free it with
// std::free), like the functions linattn-lower-to-cpu produces. Each lives in
// its own file because each is built with its own flags (see bench/run.py).
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_BENCH_PEERS_H
#define LINATTN_BENCH_PEERS_H

#include <cstdint>

namespace bench {

/// Shape of one attention call.
struct Shape {
  int64_t b, h, t, d, m;
};

/// Causal normalized linear attention with elu+1 features, computed the way
/// fast-transformers computes it on the CPU (ft_causal.cpp).
float *ftCausalLinearAttention(const float *q, const float *k, const float *v,
                               const Shape &shape, float eps);

/// One decoding step of the same attention for one token per batch and head
/// (the library's recurrent attention): q, k [B, H, D], v [B, H, M], state
/// s [B, H, D, M] and z [B, H, D]. Returns the output [B, H, M] and writes
/// the new state to freshly allocated *sOut and *zOut.
float *ftRecurrentStep(const float *q, const float *k, const float *v,
                       const float *s, const float *z, const Shape &shape,
                       float eps, float **sOut, float **zOut);

/// Causal softmax attention softmax(Q K^T / sqrt(D)) V (softmax_causal.cpp).
float *softmaxCausalAttention(const float *q, const float *k, const float *v,
                              const Shape &shape);

} // namespace bench

#endif // LINATTN_BENCH_PEERS_H
