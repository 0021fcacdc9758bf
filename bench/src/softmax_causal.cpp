//===- softmax_causal.cpp - causal softmax attention, quadratic -----------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The quadratic baseline: O = softmax(Q K^T / sqrt(D) + causal mask) V, in
// fp32 with the numerically stable softmax (row maximum subtracted). Built
// with -O3 -march=native -fopenmp (see bench/run.py).
//
// Work is split over batch x heads x blocks of `kRows` query rows (dynamic
// OpenMP schedule: causal rows have unequal cost). Per head K is transposed
// once so that the scores of a row block are broadcast-FMAs over contiguous
// keys, each loaded key column serving kRows queries; the probabilities
// then weight V rows the same way. exp is a vectorizable polynomial
// (relative error ~1e-7 on the range softmax needs).
//
//===----------------------------------------------------------------------===//

#include "peers.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace bench;

namespace {
constexpr int64_t kRows = 4;
} // namespace

/// exp(x) for x <= 0 by exp(x) = 2^n p(r), r = x - n ln 2 in [-ln2/2, ln2/2]:
/// branch-free so that loops over it vectorize.
static inline float expNonPositive(float x) {
  x = std::max(x, -87.0f);
  float n = std::nearbyint(x * 1.44269504088896341f);
  float r = std::fma(n, -0.693145751953125f, x);
  r = std::fma(n, -1.428606765330187045e-06f, r);
  float p = 1.0f / 5040;
  p = std::fma(p, r, 1.0f / 720);
  p = std::fma(p, r, 1.0f / 120);
  p = std::fma(p, r, 1.0f / 24);
  p = std::fma(p, r, 1.0f / 6);
  p = std::fma(p, r, 0.5f);
  p = std::fma(p, r, 1.0f);
  p = std::fma(p, r, 1.0f);
  int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

float *bench::softmaxCausalAttention(const float *q, const float *k,
                                     const float *v, const Shape &s) {
  int64_t heads = s.b * s.h;
  float *out = static_cast<float *>(
      std::malloc(sizeof(float) * std::max<int64_t>(1, heads * s.t * s.m)));
  float scale = 1.0f / std::sqrt(static_cast<float>(s.d));

  // K^T per head, [heads, D, T].
  std::vector<float> kt(heads * s.d * s.t);
#pragma omp parallel for
  for (int64_t head = 0; head < heads; ++head)
    for (int64_t t = 0; t < s.t; ++t)
      for (int64_t i = 0; i < s.d; ++i)
        kt[(head * s.d + i) * s.t + t] = k[(head * s.t + t) * s.d + i];

  int64_t blocks = (s.t + kRows - 1) / kRows;
#pragma omp parallel
  {
    std::vector<float> scores(kRows * s.t);
    std::vector<float> acc(kRows * s.m);
#pragma omp for collapse(2) schedule(dynamic, 4)
    for (int64_t head = 0; head < heads; ++head) {
      for (int64_t blk = 0; blk < blocks; ++blk) {
        int64_t row0 = blk * kRows;
        int64_t rows = std::min(kRows, s.t - row0);
        int64_t len = row0 + rows; // keys 0 .. len-1 are seen by the block
        const float *qh = q + head * s.t * s.d;
        const float *kth = kt.data() + head * s.d * s.t;
        const float *vh = v + head * s.t * s.m;

        // Scores of the row block against keys [0, len).
        std::fill(scores.begin(), scores.begin() + kRows * len, 0.0f);
        for (int64_t i = 0; i < s.d; ++i) {
          const float *col = kth + i * s.t;
          for (int64_t r = 0; r < rows; ++r) {
            float qi = qh[(row0 + r) * s.d + i] * scale;
            float *sr = scores.data() + r * len;
#pragma omp simd
            for (int64_t j = 0; j < len; ++j)
              sr[j] += qi * col[j];
          }
        }
        // Softmax per row over its causal prefix; masked keys get 0.
        float inv[kRows];
        for (int64_t r = 0; r < rows; ++r) {
          float *sr = scores.data() + r * len;
          int64_t seen = row0 + r + 1;
          float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
          for (int64_t j = 0; j < seen; ++j)
            mx = std::max(mx, sr[j]);
          float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
          for (int64_t j = 0; j < seen; ++j) {
            float e = expNonPositive(sr[j] - mx);
            sr[j] = e;
            sum += e;
          }
          for (int64_t j = seen; j < len; ++j)
            sr[j] = 0.0f;
          inv[r] = 1.0f / sum;
        }
        // P V.
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t j = 0; j < len; ++j) {
          const float *vj = vh + j * s.m;
          for (int64_t r = 0; r < rows; ++r) {
            float p = scores[r * len + j];
            float *ar = acc.data() + r * s.m;
#pragma omp simd
            for (int64_t c = 0; c < s.m; ++c)
              ar[c] += p * vj[c];
          }
        }
        for (int64_t r = 0; r < rows; ++r) {
          float *o = out + (head * s.t + row0 + r) * s.m;
          for (int64_t c = 0; c < s.m; ++c)
            o[c] = acc[r * s.m + c] * inv[r];
        }
      }
    }
  }
  return out;
}
