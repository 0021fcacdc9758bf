//===- peak_fma.cpp - the machine's fp32 FMA peak -------------------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Measures the fp32 fused multiply-add throughput of one core and of all
// cores (OpenMP, one thread per core) with kChains independent FMA chains
// per thread: enough to cover the FMA latency times the number of FMA pipes
// on current x86 cores. Built with -O3 -march=native -fopenmp; uses the
// widest of AVX-512, AVX2 (+FMA) or plain vector extensions the build
// targets, and also measures 256-bit vectors where AVX-512 is available.
// Prints one "key: value" line per measurement.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <omp.h>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace {
constexpr int kChains = 16;
} // namespace

/// kChains chains of `iters` FMAs each on `Vec` (lanes floats); returns a
/// value that depends on every chain so nothing is optimized away.
template <typename Vec, typename Set1, typename Fma, typename Sum>
static float fmaChains(int64_t iters, Set1 set1, Fma fma, Sum sum) {
  Vec acc[kChains];
  for (int c = 0; c < kChains; ++c)
    acc[c] = set1(1.0f + 1e-3f * c);
  Vec a = set1(0.999999f), b = set1(1e-6f);
  for (int64_t i = 0; i < iters; ++i) {
    for (int c = 0; c < kChains; ++c) {
      acc[c] = fma(acc[c], a, b);
      // Opaque to the optimizer, free at run time: the chains stay FMAs.
      asm volatile("" : "+v"(acc[c]));
    }
  }
  float total = 0;
  for (int c = 0; c < kChains; ++c)
    total += sum(acc[c]);
  return total;
}

using Kernel = float (*)(int64_t);

#if defined(__AVX512F__)
static float kernel512(int64_t iters) {
  return fmaChains<__m512>(
      iters, [](float x) { return _mm512_set1_ps(x); },
      [](__m512 x, __m512 y, __m512 z) { return _mm512_fmadd_ps(x, y, z); },
      [](__m512 x) { return _mm512_reduce_add_ps(x); });
}
#endif
#if defined(__AVX2__) && defined(__FMA__)
static float kernel256(int64_t iters) {
  return fmaChains<__m256>(
      iters, [](float x) { return _mm256_set1_ps(x); },
      [](__m256 x, __m256 y, __m256 z) { return _mm256_fmadd_ps(x, y, z); },
      [](__m256 x) {
        alignas(32) float lanes[8];
        _mm256_store_ps(lanes, x);
        float s = 0;
        for (float l : lanes)
          s += l;
        return s;
      });
}
#endif
typedef float Vec4 __attribute__((vector_size(16)));
static float kernelGeneric(int64_t iters) {
  return fmaChains<Vec4>(
      iters,
      [](float x) {
        return Vec4{x, x, x, x};
      },
      [](Vec4 x, Vec4 y, Vec4 z) { return x * y + z; },
      [](Vec4 x) { return x[0] + x[1] + x[2] + x[3]; });
}

/// Best GFLOP/s of `trials` runs of `kernel` on `threads` threads.
static double measure(Kernel kernel, int lanes, int threads, int64_t iters,
                      int trials) {
  double best = 0;
  volatile float sink = 0;
  for (int trial = 0; trial < trials; ++trial) {
    auto start = std::chrono::steady_clock::now();
    float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    total += kernel(iters);
    auto end = std::chrono::steady_clock::now();
    sink = sink + total;
    double seconds = std::chrono::duration<double>(end - start).count();
    double flops = 2.0 * lanes * kChains * static_cast<double>(iters) * threads;
    best = std::max(best, flops / seconds * 1e-9);
  }
  return best;
}

int main(int argc, char **argv) {
  // About 0.05 s per trial at 100 GFLOP/s per core with AVX-512; the best
  // of several trials, as other processes may share the cores.
  int64_t iters = argc > 1 ? std::atoll(argv[1]) : 10000000;
  int trials = argc > 2 ? std::atoi(argv[2]) : 10;
  int cores = omp_get_num_procs();
  Kernel widest = kernelGeneric;
  int lanes = 4;
  const char *isa = "vector extensions (128-bit)";
#if defined(__AVX512F__)
  widest = kernel512;
  lanes = 16;
  isa = "AVX-512";
#elif defined(__AVX2__) && defined(__FMA__)
  widest = kernel256;
  lanes = 8;
  isa = "AVX2+FMA";
#endif
  // Warm up (clock ramp, OpenMP thread pool).
  measure(widest, lanes, cores, iters / 10, 1);
  double one = measure(widest, lanes, 1, iters, trials);
  double all = measure(widest, lanes, cores, iters, trials);
  std::printf("isa: %s\n", isa);
  std::printf("threads: %d\n", cores);
  std::printf("peak_1core_gflops: %.2f\n", one);
  std::printf("peak_allcore_gflops: %.2f\n", all);
#if defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__)
  std::printf("avx2_1core_gflops: %.2f\n",
              measure(kernel256, 8, 1, iters, trials));
  std::printf("avx2_allcore_gflops: %.2f\n",
              measure(kernel256, 8, cores, iters, trials));
#endif
  return 0;
}
