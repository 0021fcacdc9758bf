//===- decode_graph.cpp - decode latency with CUDA graph replay -----------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//
//
// Per-token latency of linattn's decode step on an NVIDIA GPU. The step
// (bench/gpu/decode_step.mlir: B x 32 heads x 128 features, elu+1,
// normalized, f32) is compiled ahead of time with
//
//   linattn-compile decode_step.mlir --target=cuda -o decode_step.o
//       --header=decode_step.h --link-flags=decode_step.flags
//
// into an entry point on the caller's device buffers and stream. For each
// batch size this program
//   1. captures one call in a CUDA graph (global capture mode: any call that
//      is illegal during capture fails the capture), twice, for the two
//      directions of a ping-pong pair of state buffers; and twice more with
//      the state updated in place (the new state written over the one read,
//      which the step kernel allows: each element is read and written by one
//      thread; the small normalizer still ping-pongs), so that a batch's
//      state is one buffer, half the memory and half the L2 footprint;
//   2. replays the graphs over --check-tokens distinct tokens (each token's
//      q, k, v copied into the graph's input buffers first) and compares
//      every output and the final state and normalizer with a float64
//      recurrence on the CPU; then the same with plain calls;
//   3. times --tokens replays back to back (µs per token), ping-pong and in
//      place, the same number of plain calls, and the floor: an empty kernel
//      launched plainly and replayed as a one-node graph; and the state's
//      HBM floor (the state and normalizer read and written once, at the
//      device-to-device copy bandwidth measured here).
//
// Results are printed as text and, one line per batch size, as JSON after
// "RESULT " (bench/gpu/bench.py reads those). --dry-run touches no GPU: it
// prints the plan and checks the CPU reference against the closed form of
// the recurrence.
//
// Build (bench/gpu/bench.py does this):
//   c++ -O2 -std=c++17 -I<dir of decode_step.h> -I<cuda>/include
//       decode_graph.cpp decode_step.o @decode_step.flags -ldl
//
//===----------------------------------------------------------------------===//

#include "decode_step.h"

#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <random>
#include <string>
#include <vector>

// The runtime library the entry point calls (liblinattn_cuda_runtime.so).
extern "C" const char *linattnCudaGetLastError(void);

namespace {

constexpr int64_t kHeads = 32, kDim = 128;
constexpr double kEps = 1.0e-6;

//===----------------------------------------------------------------------===//
// The driver, opened with dlopen (versioned names from cuda.h's macros)
//===----------------------------------------------------------------------===//

#define BENCH_STR(x) #x
#define BENCH_XSTR(x) BENCH_STR(x)
#define BENCH_DRIVER_FUNCTIONS(X)                                              \
  X(cuInit)                                                                    \
  X(cuGetErrorName)                                                            \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxSetCurrent)                                                           \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamBeginCapture)                                                      \
  X(cuStreamEndCapture)                                                        \
  X(cuGraphInstantiate)                                                        \
  X(cuGraphLaunch)                                                             \
  X(cuGraphExecDestroy)                                                        \
  X(cuGraphDestroy)                                                            \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemcpyDtoDAsync)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)                                                        \
  X(cuModuleLoadData)                                                          \
  X(cuModuleGetFunction)                                                       \
  X(cuLaunchKernel)

struct Driver {
#define BENCH_DECLARE(name) decltype(&::name) name = nullptr;
  BENCH_DRIVER_FUNCTIONS(BENCH_DECLARE)
#undef BENCH_DECLARE
} cu;

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "decode-bench: %s\n", message.c_str());
  std::exit(1);
}

void check(CUresult result, const char *what) {
  if (result == CUDA_SUCCESS)
    return;
  const char *name = nullptr;
  if (cu.cuGetErrorName)
    cu.cuGetErrorName(result, &name);
  die(std::string(what) +
      " failed: " + (name ? name : std::to_string(static_cast<int>(result))));
}

/// The linattn runtime's sticky error, if a call of the entry point failed.
void checkRuntime(const char *what) {
  if (const char *error = linattnCudaGetLastError())
    die(std::string(what) + ": the GPU runtime reported: " + error);
}

#define CU(call) check(cu.call, #call)

CUcontext openDriver() {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    die(std::string("cannot load libcuda.so.1: ") + dlerror());
#define BENCH_LOAD(name)                                                       \
  cu.name =                                                                    \
      reinterpret_cast<decltype(&::name)>(dlsym(library, BENCH_XSTR(name)));   \
  if (!cu.name)                                                                \
    die("the CUDA driver has no " BENCH_XSTR(name));
  BENCH_DRIVER_FUNCTIONS(BENCH_LOAD)
#undef BENCH_LOAD
  CU(cuInit(0));
  CUdevice device;
  CU(cuDeviceGet(&device, 0));
  // The primary context: the one linattn's runtime uses.
  CUcontext context;
  CU(cuDevicePrimaryCtxRetain(&context, device));
  CU(cuCtxSetCurrent(context));
  char name[256] = {0};
  CU(cuDeviceGetName(name, sizeof(name), device));
  std::printf("device: %s\n", name);
  return context;
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

struct DeviceBuffer {
  CUdeviceptr pointer = 0;
  size_t count = 0;
  explicit DeviceBuffer(size_t count) : count(count) {
    CU(cuMemAlloc(&pointer, count * sizeof(float)));
  }
  ~DeviceBuffer() { cu.cuMemFree(pointer); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  float *at(size_t element) const {
    return reinterpret_cast<float *>(pointer) + element;
  }
  // Copies on the benchmark's stream, waited for: the stream does not
  // synchronize with the legacy default stream (CU_STREAM_NON_BLOCKING), and
  // a plain cuMemcpyHtoD from pageable memory may return before its DMA has
  // landed, so the next kernel on the stream could read stale state.
  void upload(const std::vector<float> &host, CUstream stream) {
    CU(cuMemcpyHtoDAsync(pointer, host.data(), host.size() * sizeof(float),
                         stream));
    CU(cuStreamSynchronize(stream));
  }
  std::vector<float> download(CUstream stream) const {
    std::vector<float> host(count);
    CU(cuMemcpyDtoHAsync(host.data(), pointer, count * sizeof(float), stream));
    CU(cuStreamSynchronize(stream));
    return host;
  }
};

/// A dense row-major descriptor of `data` (offset 0: the entry point's
/// memrefs have the identity layout).
template <typename Descriptor, int Rank>
Descriptor describe(float *data, const int64_t (&sizes)[Rank]) {
  Descriptor d{};
  d.allocated = d.aligned = data;
  int64_t stride = 1;
  for (int i = Rank - 1; i >= 0; --i) {
    d.sizes[i] = sizes[i];
    d.strides[i] = stride;
    stride *= sizes[i];
  }
  return d;
}

using D3 = linattn_memref_f32_3d;
using D4 = linattn_memref_f32_4d;

//===----------------------------------------------------------------------===//
// The float64 reference
//===----------------------------------------------------------------------===//

double elu1(double x) { return x > 0 ? x + 1 : std::exp(x); }

/// One step for every (batch, head): S += φ(k) vᵀ, z += φ(k),
/// o = φ(q)ᵀ S / (φ(q)·z + eps), on S (heads x D x D) and z (heads x D).
void referenceStep(int64_t heads, const float *q, const float *k,
                   const float *v, std::vector<double> &s,
                   std::vector<double> &z, double *o) {
  std::vector<double> fq(kDim), fk(kDim);
  for (int64_t h = 0; h < heads; ++h) {
    const float *qh = q + h * kDim, *kh = k + h * kDim, *vh = v + h * kDim;
    double *sh = s.data() + h * kDim * kDim, *zh = z.data() + h * kDim;
    double denominator = kEps;
    for (int64_t f = 0; f < kDim; ++f) {
      fq[f] = elu1(qh[f]);
      fk[f] = elu1(kh[f]);
      zh[f] += fk[f];
      denominator += fq[f] * zh[f];
    }
    double *oh = o + h * kDim;
    std::fill(oh, oh + kDim, 0.0);
    for (int64_t f = 0; f < kDim; ++f) {
      double *row = sh + f * kDim;
      for (int64_t j = 0; j < kDim; ++j) {
        row[j] += fk[f] * vh[j];
        oh[j] += fq[f] * row[j];
      }
    }
    for (int64_t j = 0; j < kDim; ++j)
      oh[j] /= denominator;
  }
}

/// max |a - b| / max |b|.
double relativeError(const float *a, const double *b, size_t n) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < n; ++i) {
    diff = std::max(diff, std::fabs(a[i] - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

struct Problem {
  int64_t batch, tokens;
  std::vector<float> q, k, v, s0, z0; // q, k, v: [tokens][batch][heads][D]
  std::vector<double> o;              // reference outputs, as q
  std::vector<double> s, z;           // reference final state

  Problem(int64_t batch, int64_t tokens, uint32_t seed)
      : batch(batch), tokens(tokens) {
    size_t token = batch * kHeads * kDim;
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (auto *x : {&q, &k, &v}) {
      x->resize(tokens * token);
      for (float &e : *x)
        e = uniform(gen);
    }
    // A state after some history: z > 0 as elu+1 features make it.
    s0.resize(batch * kHeads * kDim * kDim);
    z0.resize(token);
    for (float &e : s0)
      e = 0.1f * uniform(gen);
    for (float &e : z0)
      e = 2.0f + uniform(gen);
  }

  void computeReference() {
    size_t token = batch * kHeads * kDim;
    s.assign(s0.begin(), s0.end());
    z.assign(z0.begin(), z0.end());
    o.assign(tokens * token, 0.0);
    for (int64_t t = 0; t < tokens; ++t)
      referenceStep(batch * kHeads, &q[t * token], &k[t * token], &v[t * token],
                    s, z, &o[t * token]);
  }
};

/// The closed form of the recurrence for one head (the dry run's check of
/// the reference): o_t = φ(q_t)ᵀ(S0 + Σ_{j≤t} φ(k_j) v_jᵀ) / (φ(q_t)·(z0 +
/// Σ_{j≤t} φ(k_j)) + eps).
double checkReferenceClosedForm(const Problem &p) {
  size_t token = p.batch * kHeads * kDim;
  double worst = 0;
  for (int64_t t = 0; t < p.tokens; ++t) {
    std::vector<double> num(kDim, 0.0);
    double den = kEps;
    for (int64_t f = 0; f < kDim; ++f) {
      double fq = elu1(p.q[t * token + f]);
      double zf = p.z0[f];
      for (int64_t j = 0; j <= t; ++j)
        zf += elu1(p.k[j * token + f]);
      den += fq * zf;
      for (int64_t c = 0; c < kDim; ++c) {
        double sfc = p.s0[f * kDim + c];
        for (int64_t j = 0; j <= t; ++j)
          sfc += elu1(p.k[j * token + f]) * p.v[j * token + c];
        num[c] += fq * sfc;
      }
    }
    for (int64_t c = 0; c < kDim; ++c)
      worst = std::max(worst, std::fabs(num[c] / den - p.o[t * token + c]) /
                                  std::max(1e-30, std::fabs(num[c] / den)));
  }
  return worst;
}

//===----------------------------------------------------------------------===//
// The measurement
//===----------------------------------------------------------------------===//

/// An empty kernel, for the launch floor (PTX the driver compiles).
const char *kEmptyKernelPtx = ".version 7.0\n"
                              ".target sm_70\n"
                              ".address_size 64\n"
                              ".visible .entry linattn_bench_empty()\n"
                              "{\n"
                              "  ret;\n"
                              "}\n";

struct Timer {
  CUevent start, stop;
  Timer() {
    CU(cuEventCreate(&start, CU_EVENT_DEFAULT));
    CU(cuEventCreate(&stop, CU_EVENT_DEFAULT));
  }
  ~Timer() {
    cu.cuEventDestroy(start);
    cu.cuEventDestroy(stop);
  }
  /// Milliseconds `body` takes on `stream`.
  template <typename F>
  double time(CUstream stream, F body) {
    CU(cuEventRecord(start, stream));
    body();
    CU(cuEventRecord(stop, stream));
    CU(cuEventSynchronize(stop));
    float ms = 0;
    CU(cuEventElapsedTime(&ms, start, stop));
    return ms;
  }
};

/// Captures `body` on `stream` into an instantiated graph.
template <typename F>
CUgraphExec capture(CUstream stream, F body) {
  CU(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  body();
  CUgraph graph = nullptr;
  CUresult ended = cu.cuStreamEndCapture(stream, &graph);
  checkRuntime("the captured call");
  check(ended, "cuStreamEndCapture");
  CUgraphExec exec = nullptr;
  CU(cuGraphInstantiate(&exec, graph, 0));
  CU(cuGraphDestroy(graph));
  return exec;
}

struct Options {
  std::vector<int64_t> batches{1, 8, 64};
  int64_t tokens = 2000, checkTokens = 16, warmup = 50;
  bool dryRun = false;
};

struct LaunchFloor {
  double launchUs, graphUs;
};

LaunchFloor measureLaunchFloor(CUstream stream, Timer &timer, int64_t n) {
  CUmodule module;
  CU(cuModuleLoadData(&module, kEmptyKernelPtx));
  CUfunction empty;
  CU(cuModuleGetFunction(&empty, module, "linattn_bench_empty"));
  auto launch = [&] {
    CU(cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr));
  };
  for (int i = 0; i < 20; ++i)
    launch();
  double launchMs = timer.time(stream, [&] {
    for (int64_t i = 0; i < n; ++i)
      launch();
  });
  CUgraphExec graph = capture(stream, launch);
  for (int i = 0; i < 20; ++i)
    CU(cuGraphLaunch(graph, stream));
  double graphMs = timer.time(stream, [&] {
    for (int64_t i = 0; i < n; ++i)
      CU(cuGraphLaunch(graph, stream));
  });
  CU(cuGraphExecDestroy(graph));
  return {launchMs * 1e3 / n, graphMs * 1e3 / n};
}

/// Device-to-device copy bandwidth (bytes read + written per second).
double measureCopyBandwidth(CUstream stream, Timer &timer) {
  size_t count = size_t(64) << 20; // 256 MiB of floats
  DeviceBuffer a(count), b(count);
  CU(cuMemcpyDtoDAsync(b.pointer, a.pointer, count * 4, stream));
  double ms = timer.time(stream, [&] {
    for (int i = 0; i < 10; ++i)
      CU(cuMemcpyDtoDAsync(b.pointer, a.pointer, count * 4, stream));
  });
  return 2.0 * count * 4 * 10 / (ms * 1e-3);
}

/// Bytes one step must move: the state and normalizer read and written, q,
/// k, v read and o written.
double stepBytes(int64_t batch) {
  return 4.0 * batch * kHeads * (2 * (kDim * kDim + kDim) + 4 * kDim);
}

int runBatch(int64_t batch, const Options &options, CUstream stream,
             Timer &timer, const LaunchFloor &floor, double copyBandwidth) {
  const size_t token = batch * kHeads * kDim;
  const size_t state = token * kDim;
  Problem p(batch, options.checkTokens, 1234 + batch);
  p.computeReference();

  DeviceBuffer qAll(p.q.size()), kAll(p.k.size()), vAll(p.v.size());
  qAll.upload(p.q, stream);
  kAll.upload(p.k, stream);
  vAll.upload(p.v, stream);
  DeviceBuffer qIn(token), kIn(token), vIn(token), o(token);
  DeviceBuffer oAll(p.q.size());
  DeviceBuffer s0(state), s1(state), z0(token), z1(token);

  const int64_t tokenSizes[3] = {batch, kHeads, kDim};
  const int64_t stateSizes[4] = {batch, kHeads, kDim, kDim};
  D3 dq = describe<D3>(qIn.at(0), tokenSizes);
  D3 dk = describe<D3>(kIn.at(0), tokenSizes);
  D3 dv = describe<D3>(vIn.at(0), tokenSizes);
  D3 dout = describe<D3>(o.at(0), tokenSizes);
  D4 ds[2] = {describe<D4>(s0.at(0), stateSizes),
              describe<D4>(s1.at(0), stateSizes)};
  D3 dz[2] = {describe<D3>(z0.at(0), tokenSizes),
              describe<D3>(z1.at(0), tokenSizes)};
  // Step `i` goes from state i % 2 to state (i + 1) % 2; in place, from
  // state 0 to state 0 (the normalizer from i % 2 to (i + 1) % 2 either way).
  auto step = [&](int64_t i, D3 *q, D3 *k, D3 *v, bool inPlace = false) {
    int from = i % 2, to = 1 - from;
    _mlir_ciface_decode_step(q, k, v, &ds[inPlace ? 0 : from], &dz[from], &dout,
                             &ds[inPlace ? 0 : to], &dz[to], stream);
  };
  auto resetState = [&] {
    s0.upload(p.s0, stream);
    z0.upload(p.z0, stream);
  };
  auto checkAgainstReference = [&](const char *how, bool inPlace = false) {
    CU(cuStreamSynchronize(stream));
    checkRuntime(how);
    int last = p.tokens % 2;
    std::vector<float> outs = oAll.download(stream);
    std::vector<float> s = (last && !inPlace ? s1 : s0).download(stream);
    std::vector<float> z = (last ? z1 : z0).download(stream);
    double errO = relativeError(outs.data(), p.o.data(), outs.size());
    double errS = relativeError(s.data(), p.s.data(), s.size());
    double errZ = relativeError(z.data(), p.z.data(), z.size());
    double worst = std::max({errO, errS, errZ});
    bool ok = worst <= 1e-4;
    std::printf("decode B%lld: %s over %lld tokens: max relative error o "
                "%.1e, S %.1e, z %.1e: %s\n",
                static_cast<long long>(batch), how,
                static_cast<long long>(p.tokens), errO, errS, errZ,
                ok ? "ok" : "FAIL");
    return std::make_pair(ok, worst);
  };

  // Warm up with a plain call (loads the kernel), then capture.
  resetState();
  step(0, &dq, &dk, &dv);
  CU(cuStreamSynchronize(stream));
  checkRuntime("the first call");
  CUgraphExec graphs[2], inPlaceGraphs[2];
  for (int i = 0; i < 2; ++i)
    graphs[i] = capture(stream, [&] { step(i, &dq, &dk, &dv); });
  for (int i = 0; i < 2; ++i)
    inPlaceGraphs[i] =
        capture(stream, [&] { step(i, &dq, &dk, &dv, /*inPlace=*/true); });

  // Correctness: graph replays over distinct tokens.
  auto replay = [&](CUgraphExec *pair) {
    resetState();
    for (int64_t t = 0; t < p.tokens; ++t) {
      CU(cuMemcpyDtoDAsync(qIn.pointer, qAll.pointer + t * token * 4, token * 4,
                           stream));
      CU(cuMemcpyDtoDAsync(kIn.pointer, kAll.pointer + t * token * 4, token * 4,
                           stream));
      CU(cuMemcpyDtoDAsync(vIn.pointer, vAll.pointer + t * token * 4, token * 4,
                           stream));
      CU(cuGraphLaunch(pair[t % 2], stream));
      CU(cuMemcpyDtoDAsync(oAll.pointer + t * token * 4, o.pointer, token * 4,
                           stream));
    }
  };
  replay(graphs);
  auto [graphOk, graphErr] = checkAgainstReference("graph replay");
  replay(inPlaceGraphs);
  auto [inPlaceOk, inPlaceErr] =
      checkAgainstReference("graph replay, state in place", /*inPlace=*/true);

  // Correctness: plain calls on each token's slice of the inputs.
  resetState();
  for (int64_t t = 0; t < p.tokens; ++t) {
    D3 q = describe<D3>(qAll.at(t * token), tokenSizes);
    D3 k = describe<D3>(kAll.at(t * token), tokenSizes);
    D3 v = describe<D3>(vAll.at(t * token), tokenSizes);
    step(t, &q, &k, &v);
    CU(cuMemcpyDtoDAsync(oAll.pointer + t * token * 4, o.pointer, token * 4,
                         stream));
  }
  auto [plainOk, plainErr] = checkAgainstReference("plain calls");

  // Timing (the values no longer matter; an even count keeps the pairs).
  int64_t n = (options.tokens + 1) / 2 * 2;
  for (int64_t i = 0; i < options.warmup; ++i)
    CU(cuGraphLaunch(graphs[i % 2], stream));
  double graphMs = timer.time(stream, [&] {
    for (int64_t i = 0; i < n; ++i)
      CU(cuGraphLaunch(graphs[i % 2], stream));
  });
  for (int64_t i = 0; i < options.warmup; ++i)
    CU(cuGraphLaunch(inPlaceGraphs[i % 2], stream));
  double inPlaceMs = timer.time(stream, [&] {
    for (int64_t i = 0; i < n; ++i)
      CU(cuGraphLaunch(inPlaceGraphs[i % 2], stream));
  });
  for (int64_t i = 0; i < options.warmup; ++i)
    step(i, &dq, &dk, &dv);
  double plainMs = timer.time(stream, [&] {
    for (int64_t i = 0; i < n; ++i)
      step(i, &dq, &dk, &dv);
  });
  checkRuntime("the timed calls");
  for (CUgraphExec graph : graphs)
    CU(cuGraphExecDestroy(graph));
  for (CUgraphExec graph : inPlaceGraphs)
    CU(cuGraphExecDestroy(graph));

  double graphUs = graphMs * 1e3 / n, plainUs = plainMs * 1e3 / n,
         inPlaceUs = inPlaceMs * 1e3 / n;
  double hbmUs = stepBytes(batch) / copyBandwidth * 1e6;
  std::printf("decode B%lld H%lld D%lld: graph replay %.2f us/token (state "
              "in place %.2f), plain calls %.2f us/token; empty kernel %.2f "
              "us (graph) / %.2f us (launch); HBM floor %.2f us; graph "
              "replay is %.2fx the launch floor\n",
              static_cast<long long>(batch), static_cast<long long>(kHeads),
              static_cast<long long>(kDim), graphUs, inPlaceUs, plainUs,
              floor.graphUs, floor.launchUs, hbmUs,
              graphUs / std::max(floor.graphUs, floor.launchUs));
  std::printf("RESULT {\"batch\": %lld, \"heads\": %lld, \"dim\": %lld, "
              "\"graph_us\": %.4f, \"graph_in_place_us\": %.4f, "
              "\"plain_us\": %.4f, \"empty_graph_us\": "
              "%.4f, \"empty_launch_us\": %.4f, \"hbm_floor_us\": %.4f, "
              "\"bytes\": %.0f, \"check_tokens\": %lld, \"graph_error\": "
              "%.3e, \"in_place_error\": %.3e, \"plain_error\": %.3e, "
              "\"correct\": %s}\n",
              static_cast<long long>(batch), static_cast<long long>(kHeads),
              static_cast<long long>(kDim), graphUs, inPlaceUs, plainUs,
              floor.graphUs, floor.launchUs, hbmUs, stepBytes(batch),
              static_cast<long long>(p.tokens), graphErr, inPlaceErr, plainErr,
              graphOk && inPlaceOk && plainOk ? "true" : "false");
  std::fflush(stdout);
  return graphOk && inPlaceOk && plainOk ? 0 : 1;
}

bool parseInt(const char *text, int64_t &value) {
  char *end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (!*text || *end || v < 0)
    return false;
  value = v;
  return true;
}

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *name) -> const char * {
      size_t n = std::strlen(name);
      return arg.compare(0, n, name) == 0 ? argv[i] + n : nullptr;
    };
    int64_t number;
    if (arg == "--dry-run") {
      o.dryRun = true;
    } else if (const char *list = value("--batch=")) {
      o.batches.clear();
      std::string text = list;
      for (size_t start = 0; start <= text.size();) {
        size_t comma = std::min(text.find(',', start), text.size());
        if (!parseInt(text.substr(start, comma - start).c_str(), number) ||
            number == 0)
          die("bad --batch: " + text);
        o.batches.push_back(number);
        start = comma + 1;
      }
    } else if (const char *v = value("--tokens=")) {
      if (!parseInt(v, o.tokens) || o.tokens == 0)
        die("bad --tokens");
    } else if (const char *v = value("--check-tokens=")) {
      if (!parseInt(v, o.checkTokens) || o.checkTokens == 0)
        die("bad --check-tokens");
    } else if (const char *v = value("--warmup=")) {
      if (!parseInt(v, o.warmup))
        die("bad --warmup");
    } else {
      die("unknown argument " + arg +
          " (--batch=1,8,64 --tokens=N --check-tokens=N --warmup=N "
          "--dry-run)");
    }
  }
  return o;
}

} // namespace

int main(int argc, char **argv) {
  Options options = parseOptions(argc, argv);
  if (options.dryRun) {
    std::printf("plan (dry run: no GPU is used)\n");
    for (int64_t batch : options.batches)
      std::printf("decode B%lld H%lld D%lld: %.2f MiB per step, %lld timed "
                  "tokens, %lld checked\n",
                  static_cast<long long>(batch), static_cast<long long>(kHeads),
                  static_cast<long long>(kDim), stepBytes(batch) / (1 << 20),
                  static_cast<long long>(options.tokens),
                  static_cast<long long>(options.checkTokens));
    Problem p(1, 6, 7);
    p.computeReference();
    double error = checkReferenceClosedForm(p);
    std::printf("reference: recurrence vs closed form over %lld tokens: max "
                "relative error %.1e: %s\n",
                static_cast<long long>(p.tokens), error,
                error <= 1e-12 ? "ok" : "FAIL");
    return error <= 1e-12 ? 0 : 1;
  }

  openDriver();
  checkRuntime("loading the kernels");
  CUstream stream;
  CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  Timer timer;
  double copyBandwidth = measureCopyBandwidth(stream, timer);
  LaunchFloor floor = measureLaunchFloor(stream, timer, options.tokens);
  std::printf("copy bandwidth (device to device, read + write): %.1f GB/s; "
              "empty kernel: %.2f us launched, %.2f us as a graph\n",
              copyBandwidth / 1e9, floor.launchUs, floor.graphUs);
  int status = 0;
  for (int64_t batch : options.batches)
    status |= runBatch(batch, options, stream, timer, floor, copyBandwidth);
  CU(cuStreamDestroy(stream));
  return status;
}
