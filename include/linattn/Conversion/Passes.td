//===- Passes.td - linattn conversion passes --------------*- tablegen -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_CONVERSION_PASSES_TD
#define LINATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertLinAttnToLinalgPass : Pass<"convert-linattn-to-linalg"> {
  let summary = "Lower every linattn op to linalg, tensor, arith, math and scf";
  let description = [{
    Lowers the linattn ops to destination-passing-style tensor code: products
    and reductions become `linalg.generic` ops over all batch dimensions,
    results start from `tensor.empty` (zero-filled with `linalg.fill` when
    they accumulate), dynamic sizes are read with `tensor.dim`. Products
    accumulate in the state element type, or in f32 for f16/bf16 inputs of
    the quadratic form, and are truncated at the end.

    `linattn.attention` is decomposed first (the `linattn-decompose`
    patterns). `linattn.scan` becomes an `scf.for` over the sequence that
    carries the output and the state (S, z) as tensors and applies the
    `linattn.step` lowering to one token per iteration; a reverse scan walks
    the sequence from its end.

    An op that cannot be lowered is reported as an error and the pass fails.

    Before:

    ```mlir
    %s, %z = linattn.kv_summary %fk, %v
        : tensor<2x?x64xf32>, tensor<2x?x32xf32>
        -> tensor<2x64x32xf32>, tensor<2x64xf32>
    ```

    After (the state part):

    ```mlir
    %empty = tensor.empty() : tensor<2x64x32xf32>
    %zero = linalg.fill ins(%cst : f32) outs(%empty : tensor<2x64x32xf32>)
        -> tensor<2x64x32xf32>
    %s = linalg.generic {
        indexing_maps = [affine_map<(b, f, d, m) -> (b, m, f)>,
                         affine_map<(b, f, d, m) -> (b, m, d)>,
                         affine_map<(b, f, d, m) -> (b, f, d)>],
        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
        ins(%fk, %v : tensor<2x?x64xf32>, tensor<2x?x32xf32>)
        outs(%zero : tensor<2x64x32xf32>) { ... } -> tensor<2x64x32xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def LinAttnCheckLoweredPass : Pass<"linattn-check-lowered"> {
  let summary = "Fail when a linattn op is left";
  let description = [{
    Ends the lowering pipelines: reports every linattn op still in the IR as
    an error and fails, so that a pipeline that did not reach the promised
    form says so instead of handing on IR that later tools reject.
  }];
}

#endif // LINATTN_CONVERSION_PASSES_TD
