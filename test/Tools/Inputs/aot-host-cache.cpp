// Calls the ahead-of-time compiled @attention_grad of aot-grad.mlir
// `calls` times on the same random inputs (T tokens) and prints the median
// time, a checksum of the gradients and, built with -DHOST_CACHE (the code
// compiled with --host-allocator=caching), the cache's statistics. The
// results are released with the C library's free either way.
//
//   aot-host-cache T calls

#include "aot-grad.h"

#ifdef HOST_CACHE
#include "linattn-c/HostAllocator.h"
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

static linattn_memref_f32_3d view(std::vector<float> &data, int64_t t) {
  return {data.data(), data.data(), 0, {8, t, 64}, {t * 64, 64, 1}};
}

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s T calls\n", argv[0]);
    return 2;
  }
  int64_t t = std::atoll(argv[1]);
  int calls = std::atoi(argv[2]);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<std::vector<float>> inputs(4, std::vector<float>(8 * t * 64));
  for (auto &input : inputs)
    for (float &x : input)
      x = uniform(rng);
  linattn_memref_f32_3d q = view(inputs[0], t), k = view(inputs[1], t),
                        v = view(inputs[2], t), dout = view(inputs[3], t);

  std::vector<double> times;
  double checksum = 0.0;
  for (int call = 0; call < calls; ++call) {
    linattn_attention_grad_results grads;
    auto start = std::chrono::steady_clock::now();
    _mlir_ciface_attention_grad(&grads, &q, &k, &v, &dout);
    auto stop = std::chrono::steady_clock::now();
    times.push_back(
        std::chrono::duration<double, std::milli>(stop - start).count());
    checksum = 0.0;
    for (linattn_memref_f32_3d *g :
         {&grads.result0, &grads.result1, &grads.result2}) {
      for (int64_t i = 0; i < 8 * t * 64; ++i)
        checksum += g->aligned[g->offset + i] * (1 + i % 7);
      std::free(g->allocated);
    }
  }
  std::sort(times.begin(), times.end());
  std::printf("median time: %.3f ms over %d calls\n", times[calls / 2], calls);
  std::printf("checksum: %.6e\n", checksum);
#ifdef HOST_CACHE
  LinattnHostCacheStats stats = linattnHostCacheGetStats();
  std::printf("host cache: %llu hits, %llu misses\n",
              (unsigned long long)stats.hits, (unsigned long long)stats.misses);
#endif
  return 0;
}
