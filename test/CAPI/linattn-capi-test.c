//===- linattn-capi-test.c - exercise the linattn C API -------------------===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

// RUN: linattn-capi-test 2>&1 | FileCheck %s

#include "linattn-c/Dialects.h"
#include "linattn-c/Passes.h"

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"
#include "mlir-c/RegisterEverything.h"
#include "mlir-c/Support.h"

#include <stdio.h>
#include <stdlib.h>

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

int main(void) {
  testDialectHandle();
  testDecomposePipeline();
  testCreatePass();
  fprintf(stderr, "@done\n");
  return 0;
}
// CHECK-LABEL: @done
