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
// OpenMP schedule: causal rows have unequal cost). A row block walks its
// causal prefix in tiles of kKeys keys with the online softmax (running
// maximum and sum, FlashAttention-style), so that its working set stays in
// L1/L2 at any T. Per head K is transposed once so that a tile's scores are
// kRows x kLanes register tiles of broadcast-FMAs over contiguous keys (each
// loaded key vector serves kRows queries); the probabilities then weight V
// the same way. exp is a vectorizable polynomial (relative error ~1e-7 on
// the range softmax needs).
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
constexpr int64_t kRows = 8, kLanes = 16, kKeys = 256;
/// kLanes floats (one AVX-512 register; the compiler splits it for
/// narrower targets): the register tiles below are arrays of these.
typedef float V16 __attribute__((vector_size(kLanes * sizeof(float))));

inline V16 load(const float *p) {
  V16 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void store(float *p, V16 v) { std::memcpy(p, &v, sizeof(v)); }
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

  // K^T per head, [heads, D, tpad], zero-padded to whole vectors of keys.
  int64_t tpad = (s.t + kLanes - 1) / kLanes * kLanes;
  std::vector<float> kt(heads * s.d * tpad, 0.0f);
#pragma omp parallel for
  for (int64_t head = 0; head < heads; ++head)
    for (int64_t t = 0; t < s.t; ++t)
      for (int64_t i = 0; i < s.d; ++i)
        kt[(head * s.d + i) * tpad + t] = k[(head * s.t + t) * s.d + i];

  int64_t blocks = (s.t + kRows - 1) / kRows;
#pragma omp parallel
  {
    std::vector<float> tile(kRows * kKeys);
    std::vector<float> qs(kRows * s.d);
    std::vector<float> acc(kRows * s.m);
#pragma omp for collapse(2) schedule(dynamic, 4)
    for (int64_t head = 0; head < heads; ++head) {
      for (int64_t blk = 0; blk < blocks; ++blk) {
        int64_t row0 = blk * kRows;
        int64_t rows = std::min(kRows, s.t - row0);
        int64_t len = row0 + rows; // keys 0 .. len-1 are seen by the block
        const float *kth = kt.data() + head * s.d * tpad;
        const float *vh = v + head * s.t * s.m;
        // The block's queries, scaled; missing rows repeat the last one.
        for (int64_t r = 0; r < kRows; ++r)
          for (int64_t i = 0; i < s.d; ++i)
            qs[r * s.d + i] =
                q[(head * s.t + row0 + std::min(r, rows - 1)) * s.d + i] *
                scale;
        float rowMax[kRows], rowSum[kRows];
        for (int64_t r = 0; r < kRows; ++r) {
          rowMax[r] = -INFINITY;
          rowSum[r] = 0.0f;
        }
        std::fill(acc.begin(), acc.end(), 0.0f);

        for (int64_t key0 = 0; key0 < len; key0 += kKeys) {
          int64_t keys = std::min(kKeys, len - key0);
          int64_t keysPad = (keys + kLanes - 1) / kLanes * kLanes;
          // Scores of the tile: kRows x kLanes register tiles.
          for (int64_t j0 = 0; j0 < keysPad; j0 += kLanes) {
            V16 sc[kRows] = {};
            for (int64_t i = 0; i < s.d; ++i) {
              V16 col = load(kth + i * tpad + key0 + j0);
              for (int64_t r = 0; r < kRows; ++r)
                sc[r] += qs[r * s.d + i] * col;
            }
            for (int64_t r = 0; r < kRows; ++r)
              store(tile.data() + r * kKeys + j0, sc[r]);
          }
          // Online softmax: probabilities relative to the running maximum,
          // earlier partial sums rescaled when it grows; keys past a row's
          // causal prefix (and padding rows) get 0.
          for (int64_t r = 0; r < kRows; ++r) {
            float *tr = tile.data() + r * kKeys;
            int64_t valid =
                r < rows ? std::clamp<int64_t>(row0 + r + 1 - key0, 0, keys)
                         : 0;
            // The maximum in kLanes partial maxima so that it vectorizes.
            float lanes[kLanes];
            for (int64_t l = 0; l < kLanes; ++l)
              lanes[l] = rowMax[r];
            int64_t whole = valid / kLanes * kLanes;
            for (int64_t j0 = 0; j0 < whole; j0 += kLanes)
              for (int64_t l = 0; l < kLanes; ++l)
                lanes[l] = tr[j0 + l] > lanes[l] ? tr[j0 + l] : lanes[l];
            float mx = rowMax[r];
            for (int64_t l = 0; l < kLanes; ++l)
              mx = std::max(mx, lanes[l]);
            for (int64_t j = whole; j < valid; ++j)
              mx = std::max(mx, tr[j]);
            float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
            for (int64_t j = 0; j < valid; ++j) {
              float e = expNonPositive(tr[j] - mx);
              tr[j] = e;
              sum += e;
            }
            for (int64_t j = valid; j < keys; ++j)
              tr[j] = 0.0f;
            if (valid == 0)
              continue;
            float correction = expNonPositive(rowMax[r] - mx);
            rowSum[r] = rowSum[r] * correction + sum;
            rowMax[r] = mx;
            for (int64_t c = 0; c < s.m; ++c)
              acc[r * s.m + c] *= correction;
          }
          // acc += P V: a kRows x kLanes register tile per vector of values.
          for (int64_t c0 = 0; c0 < s.m; c0 += kLanes) {
            int64_t width = std::min(kLanes, s.m - c0);
            if (width == kLanes) {
              V16 a[kRows];
              for (int64_t r = 0; r < kRows; ++r)
                a[r] = load(acc.data() + r * s.m + c0);
              for (int64_t j = 0; j < keys; ++j) {
                V16 vj = load(vh + (key0 + j) * s.m + c0);
                for (int64_t r = 0; r < kRows; ++r)
                  a[r] += tile[r * kKeys + j] * vj;
              }
              for (int64_t r = 0; r < kRows; ++r)
                store(acc.data() + r * s.m + c0, a[r]);
            } else {
              for (int64_t j = 0; j < keys; ++j)
                for (int64_t r = 0; r < rows; ++r)
                  for (int64_t l = 0; l < width; ++l)
                    acc[r * s.m + c0 + l] +=
                        tile[r * kKeys + j] * vh[(key0 + j) * s.m + c0 + l];
            }
          }
        }
        for (int64_t r = 0; r < rows; ++r) {
          float *o = out + (head * s.t + row0 + r) * s.m;
          float inv = 1.0f / rowSum[r];
          for (int64_t c = 0; c < s.m; ++c)
            o[c] = acc[r * s.m + c] * inv;
        }
      }
    }
  }
  return out;
}
