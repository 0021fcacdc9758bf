//===- ft_causal.cpp - fast-transformers' CPU causal linear attention -----===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// The algorithm of fast-transformers (Katharopoulos et al.) for causal linear
// attention on the CPU, reimplemented from its description and built with
// the flags its extension uses: -O3 -fopenmp -ffast-math, no -march.
//
// The library computes `CausalLinearAttention` as a sequence of PyTorch ops
// around one C++ kernel, each op a pass over memory into a new tensor:
//   Q = elu(q) + 1, K = elu(k) + 1          (feature map, two ops each)
//   Z = 1 / (einsum(Q, cumsum_T(K)) + eps)  (normalizer)
//   V = causal_dot_product(Q, K, v)         (the kernel below)
//   out = V * Z
// The kernel parallelizes over batch x heads with OpenMP; per head it keeps
// a D x M state zeroed at the start and, token by token, adds the rank-1
// update k v^T to it and then reads out q^T kv. We pass our [B, H, T, D]
// layout straight to the kernel, without the permute copies the library
// makes from its [B, T, H, D] layout (this favors the peer).
//
//===----------------------------------------------------------------------===//

#include "peers.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace bench;

static float *allocate(int64_t n) {
  return static_cast<float *>(std::malloc(sizeof(float) * (n ? n : 1)));
}

/// torch.nn.functional.elu followed by `+ 1`: two elementwise ops.
static float *eluPlusOne(const float *x, int64_t n) {
  float *elu = allocate(n);
#pragma omp parallel for
  for (int64_t i = 0; i < n; ++i)
    elu[i] = x[i] > 0.0f ? x[i] : std::exp(x[i]) - 1.0f;
  float *out = allocate(n);
#pragma omp parallel for
  for (int64_t i = 0; i < n; ++i)
    out[i] = elu[i] + 1.0f;
  std::free(elu);
  return out;
}

/// kv += a b^T for a in R^A, b in R^B, kv row-major A x B.
static inline void rankOneUpdate(const float *a, const float *b, float *kv,
                                 int64_t sizeA, int64_t sizeB) {
  for (int64_t i = 0; i < sizeA; ++i) {
    float ai = a[i];
    float *row = kv + i * sizeB;
    for (int64_t j = 0; j < sizeB; ++j)
      row[j] += ai * b[j];
  }
}

/// out = a^T kv for a in R^A, kv row-major A x B.
static inline void vectorMatrix(const float *a, const float *kv, float *out,
                                int64_t sizeA, int64_t sizeB) {
  for (int64_t j = 0; j < sizeB; ++j)
    out[j] = 0.0f;
  for (int64_t i = 0; i < sizeA; ++i) {
    float ai = a[i];
    const float *row = kv + i * sizeB;
    for (int64_t j = 0; j < sizeB; ++j)
      out[j] += ai * row[j];
  }
}

/// The library's causal_dot_product kernel: out[b,h,t] = q_t^T sum_{s<=t}
/// k_s v_s^T, out zero-filled by the caller (torch.zeros).
static void causalDotProduct(const float *q, const float *k, const float *v,
                             float *out, const Shape &s) {
#pragma omp parallel for collapse(2)
  for (int64_t b = 0; b < s.b; ++b) {
    for (int64_t h = 0; h < s.h; ++h) {
      int64_t head = b * s.h + h;
      float *kv = static_cast<float *>(std::calloc(s.d * s.m, sizeof(float)));
      const float *qh = q + head * s.t * s.d;
      const float *kh = k + head * s.t * s.d;
      const float *vh = v + head * s.t * s.m;
      float *oh = out + head * s.t * s.m;
      for (int64_t t = 0; t < s.t; ++t) {
        rankOneUpdate(kh + t * s.d, vh + t * s.m, kv, s.d, s.m);
        vectorMatrix(qh + t * s.d, kv, oh + t * s.m, s.d, s.m);
      }
      std::free(kv);
    }
  }
}

float *bench::ftCausalLinearAttention(const float *q, const float *k,
                                      const float *v, const Shape &s,
                                      float eps) {
  int64_t heads = s.b * s.h;
  int64_t nqk = heads * s.t * s.d, nv = heads * s.t * s.m;
  float *fq = eluPlusOne(q, nqk);
  float *fk = eluPlusOne(k, nqk);

  // K.cumsum over the sequence, materialized.
  float *kcum = allocate(nqk);
#pragma omp parallel for
  for (int64_t head = 0; head < heads; ++head) {
    const float *kh = fk + head * s.t * s.d;
    float *ch = kcum + head * s.t * s.d;
    for (int64_t i = 0; i < s.d; ++i)
      ch[i] = s.t ? kh[i] : 0.0f;
    for (int64_t t = 1; t < s.t; ++t)
      for (int64_t i = 0; i < s.d; ++i)
        ch[t * s.d + i] = ch[(t - 1) * s.d + i] + kh[t * s.d + i];
  }
  // Z = 1 / (einsum("nlhi,nlhi->nlh", Q, cumsum K) + eps).
  int64_t tokens = heads * s.t;
  float *dot = allocate(tokens);
#pragma omp parallel for
  for (int64_t r = 0; r < tokens; ++r) {
    float acc = 0.0f;
    for (int64_t i = 0; i < s.d; ++i)
      acc += fq[r * s.d + i] * kcum[r * s.d + i];
    dot[r] = acc;
  }
  float *z = allocate(tokens);
#pragma omp parallel for
  for (int64_t r = 0; r < tokens; ++r)
    z[r] = 1.0f / (dot[r] + eps);

  // The causal product into a zero-filled tensor.
  float *product =
      static_cast<float *>(std::calloc(nv ? nv : 1, sizeof(float)));
  causalDotProduct(fq, fk, v, product, s);

  // V * Z[..., None].
  float *out = allocate(nv);
#pragma omp parallel for
  for (int64_t r = 0; r < tokens; ++r)
    for (int64_t j = 0; j < s.m; ++j)
      out[r * s.m + j] = product[r * s.m + j] * z[r];

  std::free(fq);
  std::free(fk);
  std::free(kcum);
  std::free(dot);
  std::free(z);
  std::free(product);
  return out;
}

float *bench::ftRecurrentStep(const float *q, const float *k, const float *v,
                              const float *s, const float *z, const Shape &sh,
                              float eps, float **sOut, float **zOut) {
  // RecurrentLinearAttention: feature maps, Si = Si + einsum(K, V),
  // Zi = Zi + K, Z = 1 / (einsum(Q, Zi) + eps), V = einsum(Q, Si, Z).
  int64_t heads = sh.b * sh.h;
  float *fq = eluPlusOne(q, heads * sh.d);
  float *fk = eluPlusOne(k, heads * sh.d);
  float *outer = allocate(heads * sh.d * sh.m);
#pragma omp parallel for
  for (int64_t head = 0; head < heads; ++head)
    for (int64_t i = 0; i < sh.d; ++i)
      for (int64_t j = 0; j < sh.m; ++j)
        outer[(head * sh.d + i) * sh.m + j] =
            fk[head * sh.d + i] * v[head * sh.m + j];
  float *newS = allocate(heads * sh.d * sh.m);
#pragma omp parallel for
  for (int64_t e = 0; e < heads * sh.d * sh.m; ++e)
    newS[e] = s[e] + outer[e];
  float *newZ = allocate(heads * sh.d);
  for (int64_t e = 0; e < heads * sh.d; ++e)
    newZ[e] = z[e] + fk[e];
  float *out = allocate(heads * sh.m);
#pragma omp parallel for
  for (int64_t head = 0; head < heads; ++head) {
    float dot = 0.0f;
    for (int64_t i = 0; i < sh.d; ++i)
      dot += fq[head * sh.d + i] * newZ[head * sh.d + i];
    float norm = 1.0f / (dot + eps);
    float *o = out + head * sh.m;
    for (int64_t j = 0; j < sh.m; ++j)
      o[j] = 0.0f;
    for (int64_t i = 0; i < sh.d; ++i) {
      float qi = fq[head * sh.d + i] * norm;
      const float *row = newS + (head * sh.d + i) * sh.m;
      for (int64_t j = 0; j < sh.m; ++j)
        o[j] += qi * row[j];
    }
  }
  std::free(fq);
  std::free(fk);
  std::free(outer);
  *sOut = newS;
  *zOut = newZ;
  return out;
}
