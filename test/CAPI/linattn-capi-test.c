//===- linattn-capi-test.c - exercise the linattn C API -------------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

// RUN: linattn-capi-test 2>&1 | FileCheck %s

#include "linattn-c/Dialects.h"
#include "linattn-c/HostAllocator.h"
#include "linattn-c/IR.h"
#include "linattn-c/Passes.h"

#include "mlir-c/Diagnostics.h"
#include "mlir-c/ExecutionEngine.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/RegisterEverything.h"
#include "mlir-c/Support.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// The JIT-compiled code may call MLIR's C runner utilities (memrefCopy).
#ifndef LINATTN_OMP_LIBRARY
#define LINATTN_OMP_LIBRARY "/usr/lib/llvm-22/lib/libomp.so"
#endif
#ifndef LINATTN_C_RUNNER_UTILS
#define LINATTN_C_RUNNER_UTILS "/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so"
#endif

static const char *kModule =
    "func.func @attn(%q: tensor<1x4x16x8xf32>, %k: tensor<1x4x16x8xf32>,\n"
    "                %v: tensor<1x4x16x2xf32>) -> tensor<1x4x16x2xf32> {\n"
    "  %o = linattn.attention elu %q, %k, %v causal\n"
    "      : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>,\n"
    "        tensor<1x4x16x2xf32> -> tensor<1x4x16x2xf32>\n"
    "  return %o : tensor<1x4x16x2xf32>\n"
    "}\n";

static void printToStderr(MlirStringRef str, void *userData) {
  (void)userData;
  fwrite(str.data, 1, str.length, stderr);
}

static void fail(const char *what) {
  fprintf(stderr, "FAILED: %s\n", what);
  exit(1);
}

/// The dialect handle alone: register linattn (and func through the upstream
/// registration), load it and check that the context knows its namespace.
static void testDialectHandle(void) {
  fprintf(stderr, "@dialect_handle\n");
  MlirContext ctx = mlirContextCreate();
  MlirDialectHandle handle = mlirGetDialectHandle__linattn__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(handle);
  fprintf(stderr, "namespace: %.*s\n", (int)ns.length, ns.data);
  MlirDialect dialect = mlirDialectHandleLoadDialect(handle, ctx);
  if (mlirDialectIsNull(dialect))
    fail("loading the linattn dialect");
  MlirStringRef loaded = mlirDialectGetNamespace(dialect);
  fprintf(stderr, "loaded: %.*s\n", (int)loaded.length, loaded.data);
  mlirContextDestroy(ctx);
}
// CHECK-LABEL: @dialect_handle
// CHECK: namespace: linattn
// CHECK: loaded: linattn

/// Parse, run `linattn-decompose` (by name, through the global pass registry)
/// and print.
static void testDecomposePipeline(void) {
  fprintf(stderr, "@decompose_pipeline\n");
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  linattnRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreate();
  mlirContextAppendDialectRegistry(ctx, registry);
  mlirDialectRegistryDestroy(registry);
  mlirRegisterAllPasses();
  linattnRegisterAllPasses();

  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kModule));
  if (mlirModuleIsNull(module))
    fail("parsing the module");

  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  MlirLogicalResult parsed = mlirParsePassPipeline(
      opm,
      mlirStringRefCreateFromCString(
          "builtin.module(linattn-decompose,canonicalize)"),
      printToStderr, NULL);
  if (mlirLogicalResultIsFailure(parsed))
    fail("parsing the pass pipeline");

  MlirOperation op = mlirModuleGetOperation(module);
  if (mlirLogicalResultIsFailure(mlirPassManagerRunOnOp(pm, op)))
    fail("running the pass pipeline");
  mlirOperationPrint(op, printToStderr, NULL);

  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
}
// CHECK-LABEL: @decompose_pipeline
// CHECK: func.func @attn(%[[Q:.*]]: tensor<1x4x16x8xf32>, %[[K:.*]]: tensor<1x4x16x8xf32>, %[[V:.*]]: tensor<1x4x16x2xf32>)
// CHECK: %[[FQ:.*]] = linattn.feature_map elu %[[Q]]
// CHECK: %[[FK:.*]] = linattn.feature_map elu %[[K]]
// CHECK: %[[A:.*]] = linattn.scores %[[FQ]], %[[FK]] causal
// CHECK: %[[O:.*]] = linattn.apply_scores %[[A]], %[[V]]
// CHECK: return %[[O]]
// CHECK-NOT: linattn.attention

/// The generated per-pass entry points: create the pass object directly.
static void testCreatePass(void) {
  fprintf(stderr, "@create_pass\n");
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  linattnRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreate();
  mlirContextAppendDialectRegistry(ctx, registry);
  mlirDialectRegistryDestroy(registry);

  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kModule));
  if (mlirModuleIsNull(module))
    fail("parsing the module");
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  mlirPassManagerAddOwnedPass(pm, mlirCreateLinAttnLinAttnDecomposePass());
  MlirOperation op = mlirModuleGetOperation(module);
  if (mlirLogicalResultIsFailure(mlirPassManagerRunOnOp(pm, op)))
    fail("running the pass");
  mlirOperationPrint(op, printToStderr, NULL);

  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
}
// CHECK-LABEL: @create_pass
// CHECK: linattn.scores
// CHECK-NOT: linattn.attention

static MlirLogicalResult printDiagnostic(MlirDiagnostic diag, void *userData) {
  (void)userData;
  mlirLocationPrint(mlirDiagnosticGetLocation(diag), printToStderr, NULL);
  fprintf(stderr, ": ");
  mlirDiagnosticPrint(diag, printToStderr, NULL);
  fprintf(stderr, "\n");
  return mlirLogicalResultSuccess();
}

/// Parsing with a source name: diagnostics and locations carry the name.
static void testParseWithName(void) {
  fprintf(stderr, "@parse_with_name\n");
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  linattnRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreate();
  mlirContextAppendDialectRegistry(ctx, registry);
  mlirDialectRegistryDestroy(registry);
  mlirContextAttachDiagnosticHandler(ctx, printDiagnostic, NULL, NULL);

  MlirModule module = linattnModuleCreateParseWithName(
      ctx, mlirStringRefCreateFromCString(kModule),
      mlirStringRefCreateFromCString("attn.mlir"));
  if (mlirModuleIsNull(module))
    fail("parsing the module with a name");
  MlirOpPrintingFlags flags = mlirOpPrintingFlagsCreate();
  mlirOpPrintingFlagsEnableDebugInfo(flags, true, false);
  mlirOperationPrintWithFlags(mlirModuleGetOperation(module), flags,
                              printToStderr, NULL);
  mlirOpPrintingFlagsDestroy(flags);
  mlirModuleDestroy(module);

  // A feature size the verifier rejects, on line 2 of "bad.mlir".
  MlirModule bad = linattnModuleCreateParseWithName(
      ctx,
      mlirStringRefCreateFromCString(
          "func.func @f(%x: tensor<4x8xf32>) -> tensor<4x9xf32> {\n"
          "  %0 = linattn.feature_map elu %x\n"
          "      : tensor<4x8xf32> -> tensor<4x9xf32>\n"
          "  return %0 : tensor<4x9xf32>\n"
          "}\n"),
      mlirStringRefCreateFromCString("bad.mlir"));
  fprintf(stderr, "bad module is null: %s\n",
          mlirModuleIsNull(bad) ? "yes" : "no");
  mlirContextDestroy(ctx);
}
// CHECK-LABEL: @parse_with_name
// CHECK: linattn.attention
// CHECK: loc("attn.mlir":3:8)
// CHECK: loc("bad.mlir":2:8): 'linattn.feature_map' op result feature size 9 does not match input feature size 8
// CHECK: bad module is null: yes

/// Destination-passing form of causal, normalized elu attention on 1x2x5x3
/// queries and keys and 1x2x5x2 values: inputs and the output are memrefs the
/// caller owns; the result is written into %o.
static const char *kJitModule =
    "func.func @attn(%q: memref<1x2x5x3xf32>, %k: memref<1x2x5x3xf32>,\n"
    "                %v: memref<1x2x5x2xf32>, %o: memref<1x2x5x2xf32>) {\n"
    "  %tq = bufferization.to_tensor %q restrict\n"
    "      : memref<1x2x5x3xf32> to tensor<1x2x5x3xf32>\n"
    "  %tk = bufferization.to_tensor %k restrict\n"
    "      : memref<1x2x5x3xf32> to tensor<1x2x5x3xf32>\n"
    "  %tv = bufferization.to_tensor %v restrict\n"
    "      : memref<1x2x5x2xf32> to tensor<1x2x5x2xf32>\n"
    "  %r = linattn.attention elu %tq, %tk, %tv causal\n"
    "      normalize(eps = 1.0e-6)\n"
    "      : tensor<1x2x5x3xf32>, tensor<1x2x5x3xf32>,\n"
    "        tensor<1x2x5x2xf32> -> tensor<1x2x5x2xf32>\n"
    "  bufferization.materialize_in_destination %r in restrict writable %o\n"
    "      : (tensor<1x2x5x2xf32>, memref<1x2x5x2xf32>) -> ()\n"
    "  return\n"
    "}\n";

/// A rank-4 f32 memref descriptor, as `_mlir_ciface_` functions take it.
typedef struct {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[4];
  int64_t strides[4];
} MemRef4D;

static MemRef4D wrap4D(float *data, int64_t n0, int64_t n1, int64_t n2,
                       int64_t n3) {
  MemRef4D m = {data, data, 0, {n0, n1, n2, n3},
                {n1 * n2 * n3, n2 * n3, n3, 1}};
  return m;
}

static double elu1(double x) { return x > 0 ? x + 1.0 : exp(x); }

/// Lower with `linattn-lower-to-cpu`, JIT-compile through the bundled
/// ExecutionEngine C API, call the C interface wrapper and compare with the
/// scan computed here in double.
static void testJit(void) {
  fprintf(stderr, "@jit\n");
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  linattnRegisterAllDialects(registry);
  MlirContext ctx = mlirContextCreate();
  mlirContextAppendDialectRegistry(ctx, registry);
  mlirDialectRegistryDestroy(registry);
  mlirRegisterAllLLVMTranslations(ctx);
  mlirRegisterAllPasses();
  linattnRegisterAllPasses();

  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kJitModule));
  if (mlirModuleIsNull(module))
    fail("parsing the module");
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  if (mlirLogicalResultIsFailure(mlirParsePassPipeline(
          mlirPassManagerGetAsOpPassManager(pm),
          mlirStringRefCreateFromCString(
              "builtin.module(linattn-lower-to-cpu)"),
          printToStderr, NULL)))
    fail("parsing linattn-lower-to-cpu");
  if (mlirLogicalResultIsFailure(
          mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module))))
    fail("lowering to LLVM");
  mlirPassManagerDestroy(pm);
  // Lowered for the host: nothing it may use is missing.
  if (mlirLogicalResultIsFailure(linattnVerifyRunsOnHost(module)))
    fail("checking the host CPU");

  // The lowered code calls the OpenMP runtime for its parallel loops.
  MlirStringRef libs[] = {
      mlirStringRefCreateFromCString(LINATTN_C_RUNNER_UTILS),
      mlirStringRefCreateFromCString(LINATTN_OMP_LIBRARY)};
  MlirExecutionEngine jit = mlirExecutionEngineCreate(
      module, /*optLevel=*/2, /*numPaths=*/2, libs,
      /*enableObjectDump=*/false, /*enablePIC=*/false);
  if (mlirExecutionEngineIsNull(jit))
    fail("creating the execution engine");
  // The compiled code's malloc and free: the caching host allocator's.
  mlirExecutionEngineRegisterSymbol(
      jit, mlirStringRefCreateFromCString("malloc"), (void *)linattnHostMalloc);
  mlirExecutionEngineRegisterSymbol(
      jit, mlirStringRefCreateFromCString("aligned_alloc"),
      (void *)linattnHostAlignedAlloc);
  mlirExecutionEngineRegisterSymbol(jit, mlirStringRefCreateFromCString("free"),
                                    (void *)linattnHostFree);
  mlirExecutionEngineInitialize(jit);
  mlirModuleDestroy(module);

  typedef void (*AttnFn)(MemRef4D *, MemRef4D *, MemRef4D *, MemRef4D *);
  AttnFn attn = (AttnFn)mlirExecutionEngineLookup(
      jit, mlirStringRefCreateFromCString("_mlir_ciface_attn"));
  if (!attn)
    fail("looking up _mlir_ciface_attn");

  enum { H = 2, N = 5, D = 3, DV = 2 };
  float q[H * N * D], k[H * N * D], v[H * N * DV], o[H * N * DV];
  for (int i = 0; i < H * N * D; ++i) {
    q[i] = (float)((i * 7 % 11) - 5) / 4.0f;
    k[i] = (float)((i * 5 % 13) - 6) / 5.0f;
  }
  for (int i = 0; i < H * N * DV; ++i) {
    v[i] = (float)((i * 3 % 7) - 3) / 2.0f;
    o[i] = NAN;
  }
  MemRef4D mq = wrap4D(q, 1, H, N, D), mk = wrap4D(k, 1, H, N, D);
  MemRef4D mv = wrap4D(v, 1, H, N, DV), mo = wrap4D(o, 1, H, N, DV);
  attn(&mq, &mk, &mv, &mo);

  double maxErr = 0.0;
  for (int h = 0; h < H; ++h) {
    double s[D][DV] = {{0}}, z[D] = {0};
    for (int i = 0; i < N; ++i) {
      const float *qi = q + (h * N + i) * D, *ki = k + (h * N + i) * D;
      const float *vi = v + (h * N + i) * DV;
      for (int f = 0; f < D; ++f) {
        z[f] += elu1(ki[f]);
        for (int d = 0; d < DV; ++d)
          s[f][d] += elu1(ki[f]) * vi[d];
      }
      double den = 1e-6;
      for (int f = 0; f < D; ++f)
        den += elu1(qi[f]) * z[f];
      for (int d = 0; d < DV; ++d) {
        double num = 0.0;
        for (int f = 0; f < D; ++f)
          num += elu1(qi[f]) * s[f][d];
        double err = fabs(num / den - o[(h * N + i) * DV + d]);
        if (isnan(err) || err > maxErr)
          maxErr = err; // A NaN (an output never written) sticks.
      }
    }
  }
  fprintf(stderr, "max error below 1e-5: %s\n",
          maxErr < 1e-5 ? "yes" : "no");
  mlirExecutionEngineDestroy(jit);
  mlirContextDestroy(ctx);
}
// CHECK-LABEL: @jit
// CHECK: max error below 1e-5: yes

/// The caching host allocator's policy: small blocks pass through, freed
/// blocks come back to requests at most a quarter smaller, the alignment of
/// an aligned request is kept, the blocks cached longest ago leave first
/// when the limit is reached.
static void testHostAllocator(void) {
  fprintf(stderr, "@host_allocator\n");
  enum { KiB = 1024, MiB = 1024 * 1024 };
  linattnHostCacheRelease();
  uint64_t previous = linattnHostCacheSetLimit(4 * MiB);
  LinattnHostCacheStats start = linattnHostCacheGetStats();

  linattnHostFree(linattnHostMalloc(KiB));
  fprintf(stderr, "small block cached: %s\n",
          linattnHostCacheGetStats().cachedBlocks ? "yes" : "no");

  void *a = linattnHostMalloc(MiB);
  linattnHostFree(a);
  LinattnHostCacheStats held = linattnHostCacheGetStats();
  fprintf(stderr, "1 MiB block cached: %s\n",
          held.cachedBlocks == 1 && held.cachedBytes >= MiB ? "yes" : "no");
  void *larger = linattnHostMalloc(2 * MiB);
  fprintf(stderr, "2 MiB request takes it: %s\n", larger == a ? "yes" : "no");
  void *smaller = linattnHostMalloc(700 * KiB);
  fprintf(stderr, "700 KiB request takes it: %s\n",
          smaller == a ? "yes" : "no");
  void *similar = linattnHostMalloc(900 * KiB);
  fprintf(stderr, "900 KiB request takes it: %s\n",
          similar == a ? "yes" : "no");
  linattnHostFree(larger);
  linattnHostFree(smaller);
  linattnHostFree(similar);

  linattnHostCacheRelease();
  void *aligned = linattnHostAlignedAlloc(4096, MiB);
  linattnHostFree(aligned);
  void *again = linattnHostAlignedAlloc(4096, MiB);
  fprintf(stderr, "aligned block reused and aligned: %s\n",
          again == aligned && (uintptr_t)again % 4096 == 0 ? "yes" : "no");
  linattnHostFree(again);

  linattnHostCacheRelease();
  void *x = linattnHostMalloc(3 * MiB / 2);
  void *y = linattnHostMalloc(3 * MiB / 2);
  void *z = linattnHostMalloc(3 * MiB / 2);
  linattnHostFree(x);
  linattnHostFree(y);
  linattnHostFree(z);
  LinattnHostCacheStats full = linattnHostCacheGetStats();
  fprintf(stderr, "blocks under the 4 MiB limit: %d\n", (int)full.cachedBlocks);
  void *first = linattnHostMalloc(3 * MiB / 2);
  fprintf(stderr, "the oldest was evicted: %s\n", first == y ? "yes" : "no");
  linattnHostFree(first);

  LinattnHostCacheStats end = linattnHostCacheGetStats();
  fprintf(stderr, "hits: %d\n", (int)(end.hits - start.hits));
  fprintf(stderr, "limit restored from 4 MiB: %s\n",
          linattnHostCacheSetLimit(previous) == 4 * MiB ? "yes" : "no");
  linattnHostCacheSetLimit(0);
  fprintf(stderr, "limit 0 holds nothing: %s\n",
          linattnHostCacheGetStats().cachedBytes == 0 ? "yes" : "no");
  linattnHostCacheSetLimit(previous);
}
// CHECK-LABEL: @host_allocator
// CHECK-NEXT: small block cached: no
// CHECK-NEXT: 1 MiB block cached: yes
// CHECK-NEXT: 2 MiB request takes it: no
// CHECK-NEXT: 700 KiB request takes it: no
// CHECK-NEXT: 900 KiB request takes it: yes
// CHECK-NEXT: aligned block reused and aligned: yes
// CHECK-NEXT: blocks under the 4 MiB limit: 2
// CHECK-NEXT: the oldest was evicted: yes
// CHECK-NEXT: hits: 3
// CHECK-NEXT: limit restored from 4 MiB: yes
// CHECK-NEXT: limit 0 holds nothing: yes

int main(void) {
  testDialectHandle();
  testDecomposePipeline();
  testCreatePass();
  testParseWithName();
  testJit();
  testHostAllocator();
  fprintf(stderr, "@done\n");
  return 0;
}
// CHECK-LABEL: @done
