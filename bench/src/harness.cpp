//===- harness.cpp - times the C++ peers of the CPU benchmark -------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
//   bench-peers <ft|softmax|ft-step> B H T D M [--repeat=N] [--seed=S]
//               [--input=a.npy ...] [--output=o.npy]
//
// Runs one peer on inputs read from .npy files (q, k, v; plus s, z for
// ft-step) or drawn uniformly from [-1, 1), and prints the median time of N
// calls after one warm-up call in linattn-run's words ("median time: X ms
// over N calls"). Like the functions linattn-run calls, a peer allocates its
// output inside the timed call; it is freed outside. With --output the
// output of the last call is written as .npy.
//
//===----------------------------------------------------------------------===//

#include "npy.h"
#include "peers.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace bench;

static int usage() {
  std::fprintf(stderr, "usage: bench-peers <ft|softmax|ft-step> B H T D M "
                       "[--repeat=N] [--seed=S] [--input=x.npy ...] "
                       "[--output=o.npy]\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 7)
    return usage();
  std::string method = argv[1];
  if (method != "ft" && method != "softmax" && method != "ft-step")
    return usage();
  Shape s;
  int64_t *dims[] = {&s.b, &s.h, &s.t, &s.d, &s.m};
  for (int i = 0; i < 5; ++i) {
    *dims[i] = std::atoll(argv[2 + i]);
    if (*dims[i] <= 0)
      return usage();
  }
  unsigned repeat = 0;
  uint64_t seed = 0;
  std::vector<std::string> inputs;
  std::string output;
  for (int i = 7; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--repeat=", 0) == 0)
      repeat = std::atoi(arg.c_str() + 9);
    else if (arg.rfind("--seed=", 0) == 0)
      seed = std::atoll(arg.c_str() + 7);
    else if (arg.rfind("--input=", 0) == 0)
      inputs.push_back(arg.substr(8));
    else if (arg.rfind("--output=", 0) == 0)
      output = arg.substr(9);
    else
      return usage();
  }
  bool step = method == "ft-step";
  int64_t tokens = step ? 1 : s.t;
  std::vector<std::vector<int64_t>> shapes = {{s.b, s.h, tokens, s.d},
                                              {s.b, s.h, tokens, s.d},
                                              {s.b, s.h, tokens, s.m}};
  if (step) {
    for (auto &shape : shapes)
      shape.erase(shape.begin() + 2);
    shapes.push_back({s.b, s.h, s.d, s.m});
    shapes.push_back({s.b, s.h, s.d});
  }
  if (!inputs.empty() && inputs.size() != shapes.size()) {
    std::fprintf(stderr, "bench-peers: %s takes %zu inputs, got %zu\n",
                 method.c_str(), shapes.size(), inputs.size());
    return 2;
  }
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<std::vector<float>> args;
  for (size_t a = 0; a < shapes.size(); ++a) {
    int64_t n = 1;
    for (int64_t d : shapes[a])
      n *= d;
    if (!inputs.empty()) {
      NpyArray array;
      if (!readNpy(inputs[a], array))
        return 1;
      if (array.shape != shapes[a]) {
        std::fprintf(stderr, "bench-peers: %s has the wrong shape\n",
                     inputs[a].c_str());
        return 1;
      }
      args.push_back(std::move(array.data));
    } else {
      std::vector<float> data(n);
      for (float &x : data)
        x = uniform(generator);
      args.push_back(std::move(data));
    }
  }

  const float eps = 1e-6f;
  float *result = nullptr;
  auto call = [&] {
    if (method == "ft") {
      result = ftCausalLinearAttention(args[0].data(), args[1].data(),
                                       args[2].data(), s, eps);
    } else if (method == "softmax") {
      result = softmaxCausalAttention(args[0].data(), args[1].data(),
                                      args[2].data(), s);
    } else {
      float *newS, *newZ;
      result =
          ftRecurrentStep(args[0].data(), args[1].data(), args[2].data(),
                          args[3].data(), args[4].data(), s, eps, &newS, &newZ);
      std::free(newS);
      std::free(newZ);
    }
  };

  std::vector<double> times;
  for (unsigned i = 0; i < repeat + 1; ++i) {
    if (result)
      std::free(result);
    auto start = std::chrono::steady_clock::now();
    call();
    auto end = std::chrono::steady_clock::now();
    if (i > 0)
      times.push_back(std::chrono::duration<double>(end - start).count());
  }
  if (!output.empty()) {
    std::vector<int64_t> shape = shapes[2];
    if (!writeNpy(output, shape, result)) {
      std::fprintf(stderr, "bench-peers: cannot write %s\n", output.c_str());
      return 1;
    }
  }
  std::free(result);
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    size_t n = times.size();
    double median =
        n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
    std::printf("median time: %.6f ms over %zu calls\n", median * 1e3, n);
  }
  return 0;
}
