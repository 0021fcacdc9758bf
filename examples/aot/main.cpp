//===- main.cpp - calls ahead-of-time compiled linear attention -----------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Links the object linattn-compile made from attention.mlir and calls its
// C entry points on plain arrays: the causal attention over a whole sequence,
// checked against a float64 reference, then the decoding step token by
// token from a zero state, checked against the sequence's outputs (the
// recurrent form computes the same attention).
//
//   linattn-compile attention.mlir -o attention.o --header=attention.h \
//       --link-flags=attention.flags
//   clang++ -O2 main.cpp attention.o @attention.flags -o attention
//   ./attention [T]
//
//===----------------------------------------------------------------------===//

#include "attention.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {
constexpr int64_t kHeads = 4, kFeatures = 32;
constexpr double kEps = 1e-6;

/// A descriptor viewing a dense row-major array (no copy, no ownership).
template <typename Descriptor, size_t Rank>
Descriptor view(std::vector<float> &data, const int64_t (&sizes)[Rank]) {
  Descriptor d;
  d.allocated = d.aligned = data.data();
  d.offset = 0;
  int64_t stride = 1;
  for (size_t i = Rank; i-- > 0;) {
    d.sizes[i] = sizes[i];
    d.strides[i] = stride;
    stride *= sizes[i];
  }
  return d;
}

double elu1(double x) { return x > 0 ? x + 1 : std::exp(x); }

/// max |x - ref| / max |ref|.
double relativeError(const float *x, const std::vector<double> &ref) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(x[i]))
      return INFINITY;
    err = std::max(err, std::fabs(x[i] - ref[i]));
    scale = std::max(scale, std::fabs(ref[i]));
  }
  return err / std::max(scale, 1e-30);
}
} // namespace

int main(int argc, char **argv) {
  const int64_t t = argc > 1 ? std::atoll(argv[1]) : 100;
  const int64_t h = kHeads, d = kFeatures, n = h * t * d;
  std::vector<float> q(n), k(n), v(n);
  uint32_t seed = 12345;
  auto uniform = [&seed] { // [-1, 1), a fixed LCG: same inputs everywhere
    seed = seed * 1664525u + 1013904223u;
    return static_cast<float>(seed >> 8) / (1 << 23) - 1.0f;
  };
  for (std::vector<float> *x : {&q, &k, &v})
    for (float &e : *x)
      e = uniform();

  // The whole sequence.
  auto qd = view<linattn_memref_f32_3d>(q, {h, t, d});
  auto kd = view<linattn_memref_f32_3d>(k, {h, t, d});
  auto vd = view<linattn_memref_f32_3d>(v, {h, t, d});
  linattn_memref_f32_3d out;
  _mlir_ciface_causal_attention(&out, &qd, &kd, &vd);
  if (out.sizes[0] != h || out.sizes[1] != t || out.sizes[2] != d) {
    std::printf("unexpected output shape\n");
    return 1;
  }
  // The output is dense row-major here; read it through its strides anyway.
  std::vector<float> o(n);
  for (int64_t a = 0; a < h; ++a)
    for (int64_t b = 0; b < t; ++b)
      for (int64_t c = 0; c < d; ++c)
        o[(a * t + b) * d + c] =
            out.aligned[out.offset + a * out.strides[0] + b * out.strides[1] +
                        c * out.strides[2]];
  std::free(out.allocated);

  // float64 reference: o_i = sum_{j<=i} (fq_i . fk_j) v_j / (sum ... + eps).
  std::vector<double> ref(n);
  for (int64_t a = 0; a < h; ++a) {
    for (int64_t i = 0; i < t; ++i) {
      std::vector<double> num(d, 0.0);
      double den = 0;
      for (int64_t j = 0; j <= i; ++j) {
        double s = 0;
        for (int64_t c = 0; c < d; ++c)
          s += elu1(q[(a * t + i) * d + c]) * elu1(k[(a * t + j) * d + c]);
        den += s;
        for (int64_t c = 0; c < d; ++c)
          num[c] += s * v[(a * t + j) * d + c];
      }
      for (int64_t c = 0; c < d; ++c)
        ref[(a * t + i) * d + c] = num[c] / (den + kEps);
    }
  }
  double forwardErr = relativeError(o.data(), ref);
  std::printf("causal_attention: T = %lld, max relative error vs float64 "
              "reference: %.3e\n",
              static_cast<long long>(t), forwardErr);

  // Token by token with the decoding step, from a zero state.
  std::vector<float> s(h * d * d, 0.0f), z(h * d, 0.0f);
  std::vector<float> qt(h * d), kt(h * d), vt(h * d), steps(n);
  for (int64_t i = 0; i < t; ++i) {
    for (int64_t a = 0; a < h; ++a)
      for (int64_t c = 0; c < d; ++c) {
        qt[a * d + c] = q[(a * t + i) * d + c];
        kt[a * d + c] = k[(a * t + i) * d + c];
        vt[a * d + c] = v[(a * t + i) * d + c];
      }
    auto qs = view<linattn_memref_f32_2d>(qt, {h, d});
    auto ks = view<linattn_memref_f32_2d>(kt, {h, d});
    auto vs = view<linattn_memref_f32_2d>(vt, {h, d});
    auto ss = view<linattn_memref_f32_3d>(s, {h, d, d});
    auto zs = view<linattn_memref_f32_2d>(z, {h, d});
    linattn_decode_step_results r;
    _mlir_ciface_decode_step(&r, &qs, &ks, &vs, &ss, &zs);
    // Dense row-major results (identity layouts at function boundaries).
    for (int64_t a = 0; a < h; ++a)
      for (int64_t c = 0; c < d; ++c)
        steps[(a * t + i) * d + c] =
            r.result0.aligned[r.result0.offset + a * d + c];
    std::copy(r.result1.aligned + r.result1.offset,
              r.result1.aligned + r.result1.offset + h * d * d, s.begin());
    std::copy(r.result2.aligned + r.result2.offset,
              r.result2.aligned + r.result2.offset + h * d, z.begin());
    std::free(r.result0.allocated);
    std::free(r.result1.allocated);
    std::free(r.result2.allocated);
  }
  double stepErr = relativeError(steps.data(), ref);
  std::printf("decode_step: %lld steps, max relative error vs float64 "
              "reference: %.3e\n",
              static_cast<long long>(t), stepErr);

  bool ok = forwardErr <= 1e-5 && stepErr <= 1e-5;
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
