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
// once so that the scores of a row block are computed as kRows x kLanes
// register tiles of broadcast-FMAs over contiguous keys (each loaded key
// vector serves kRows queries); the probabilities then weight V the same
// way. exp is a vectorizable polynomial (relative error ~1e-7 on the range
// softmax needs).
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
constexpr int64_t kRows = 8, kLanes = 16;
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
    std::vector<float> scores(kRows * tpad);
    std::vector<float> qs(kRows * s.d);
#pragma omp for collapse(2) schedule(dynamic, 4)
    for (int64_t head = 0; head < heads; ++head) {
      for (int64_t blk = 0; blk < blocks; ++blk) {
        int64_t row0 = blk * kRows;
        int64_t rows = std::min(kRows, s.t - row0);
        int64_t len = row0 + rows; // keys 0 .. len-1 are seen by the block
        int64_t lenPad = (len + kLanes - 1) / kLanes * kLanes;
        const float *kth = kt.data() + head * s.d * tpad;
        const float *vh = v + head * s.t * s.m;
        // The block's queries, scaled; missing rows repeat the last one.
        for (int64_t r = 0; r < kRows; ++r)
          for (int64_t i = 0; i < s.d; ++i)
            qs[r * s.d + i] =
                q[(head * s.t + row0 + std::min(r, rows - 1)) * s.d + i] *
                scale;

        // Scores: a kRows x kLanes tile of accumulators per key vector.
        for (int64_t j0 = 0; j0 < lenPad; j0 += kLanes) {
          float acc[kRows][kLanes] = {};
          for (int64_t i = 0; i < s.d; ++i) {
            const float *col = kth + i * tpad + j0;
            for (int64_t r = 0; r < kRows; ++r) {
              float qi = qs[r * s.d + i];
#pragma omp simd
              for (int64_t l = 0; l < kLanes; ++l)
                acc[r][l] += qi * col[l];
            }
          }
          for (int64_t r = 0; r < kRows; ++r)
            for (int64_t l = 0; l < kLanes; ++l)
              scores[r * tpad + j0 + l] = acc[r][l];
        }
        // Softmax per row over its causal prefix; masked keys get 0.
        float inv[kRows];
        for (int64_t r = 0; r < rows; ++r) {
          float *sr = scores.data() + r * tpad;
          int64_t seen = row0 + r + 1;
          // The row maximum, in kLanes partial maxima so that it vectorizes.
          float lanes[kLanes];
          for (int64_t l = 0; l < kLanes; ++l)
            lanes[l] = -INFINITY;
          int64_t whole = seen / kLanes * kLanes;
          for (int64_t j0 = 0; j0 < whole; j0 += kLanes)
            for (int64_t l = 0; l < kLanes; ++l)
              lanes[l] = sr[j0 + l] > lanes[l] ? sr[j0 + l] : lanes[l];
          float mx = -INFINITY;
          for (int64_t l = 0; l < kLanes; ++l)
            mx = std::max(mx, lanes[l]);
          for (int64_t j = whole; j < seen; ++j)
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
        // P V: a kRows x kLanes tile of accumulators per vector of values.
        for (int64_t c0 = 0; c0 < s.m; c0 += kLanes) {
          int64_t width = std::min(kLanes, s.m - c0);
          float acc[kRows][kLanes] = {};
          if (width == kLanes) {
            for (int64_t j = 0; j < len; ++j) {
              const float *vj = vh + j * s.m + c0;
              for (int64_t r = 0; r < kRows; ++r) {
                float p = scores[r * tpad + j];
#pragma omp simd
                for (int64_t l = 0; l < kLanes; ++l)
                  acc[r][l] += p * vj[l];
              }
            }
          } else {
            for (int64_t j = 0; j < len; ++j)
              for (int64_t r = 0; r < rows; ++r)
                for (int64_t l = 0; l < width; ++l)
                  acc[r][l] += scores[r * tpad + j] * vh[j * s.m + c0 + l];
          }
          for (int64_t r = 0; r < rows; ++r) {
            float *o = out + (head * s.t + row0 + r) * s.m + c0;
            for (int64_t l = 0; l < width; ++l)
              o[l] = acc[r][l] * inv[r];
          }
        }
      }
    }
  }
  return out;
}
