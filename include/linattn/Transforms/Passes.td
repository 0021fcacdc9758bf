//===- Passes.td - linattn transformation passes ----------*- tablegen -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_TRANSFORMS_PASSES_TD
#define LINATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LinAttnDecomposePass : Pass<"linattn-decompose"> {
  let summary = "Rewrite linattn.attention into feature maps and the quadratic form";
  let description = [{
    Expands every `linattn.attention` into its definition: the feature map
    applied to queries and keys, the (optionally causal) scores and their
    application to the values, normalized or not. The other passes start
    from this form: `linattn-reassociate` turns it into the linear form and
    `linattn-masked-to-scan` turns its causal variant into a scan.

    Before:

    ```mlir
    %o = linattn.attention elu %q, %k, %v causal normalize(eps = 1.000000e-06)
        : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>,
          tensor<1x8x128x32xf32> -> tensor<1x8x128x32xf32>
    ```

    After:

    ```mlir
    %fq = linattn.feature_map elu %q
        : tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
    %fk = linattn.feature_map elu %k
        : tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
    %a = linattn.scores %fq, %fk causal
        : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>
        -> tensor<1x8x128x128xf32>
    %o = linattn.apply_scores %a, %v normalize(eps = 1.000000e-06)
        : tensor<1x8x128x128xf32>, tensor<1x8x128x32xf32>
        -> tensor<1x8x128x32xf32>
    ```
  }];
}

def LinAttnReassociatePass : Pass<"linattn-reassociate"> {
  let summary = "Reassociate the quadratic form (φ(Q)φ(K)ᵀ)V into φ(Q)(φ(K)ᵀV)";
  let description = [{
    Rewrites `linattn.apply_scores` of a `linattn.scores` into the linear
    form: `linattn.kv_summary` computes S = φ(K)ᵀV and z = Σⱼ φ(kⱼ) once,
    `linattn.query_readout` reads it out per query. Normalization carries
    over (the row sums of the scores are φ(qᵢ)ᵀz).

    Legality: the scores operand must be produced directly by
    `linattn.scores` (anything in between, such as a softmax, an exp or a
    bias, is not linear in the scores and the pattern does not match), and
    the scores must not be `causal` (causal masks are handled by
    `linattn-masked-to-scan`). A `scale` s is kept exactly:

    * normalized, s > 0: s·A normalized with eps equals A normalized with
      eps/s, so the readout gets eps/s (when eps/s is a positive finite
      number; otherwise as below);
    * normalized, s ≤ 0, or unnormalized: S (and z when normalized) is
      multiplied by s with one elementwise `linalg.generic` on the F×Dv
      summary, the smallest tensor of the linear form.

    Cost model (`mode=auto`): the rewrite happens when the linear form needs
    fewer operations than the quadratic one, per batch element

      quadratic = N·M·F + N·M·Dv [+ N·M + N·Dv normalized] [+ N·M scaled]
      linear    = M·F·Dv + N·F·Dv [+ M·F + N·F + N·Dv normalized]
                  [+ F·Dv (+ F) when the scale goes into the summary]

    Dynamic sizes count as long (65536). When the scores have other uses
    they are computed anyway, so their N·M·F (and scale) terms are not
    saved. `mode=always` rewrites whenever it is legal, `mode=never` never.

    Before:

    ```mlir
    %a = linattn.scores %fq, %fk scale(1.250000e-01)
        : tensor<2x8x1024x64xf32>, tensor<2x8x1024x64xf32>
        -> tensor<2x8x1024x1024xf32>
    %o = linattn.apply_scores %a, %v normalize(eps = 1.000000e-06)
        : tensor<2x8x1024x1024xf32>, tensor<2x8x1024x32xf32>
        -> tensor<2x8x1024x32xf32>
    ```

    After:

    ```mlir
    %s, %z = linattn.kv_summary %fk, %v
        : tensor<2x8x1024x64xf32>, tensor<2x8x1024x32xf32>
        -> tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
    %o = linattn.query_readout %fq, %s normalize(%z, eps = 7.9999999999999996E-6)
        : tensor<2x8x1024x64xf32>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
        -> tensor<2x8x1024x32xf32>
    ```
  }];
  let options = [
    Option<"mode", "mode", "::mlir::linattn::ReassociateMode",
           /*default=*/"::mlir::linattn::ReassociateMode::Auto",
           "When to rewrite: auto (by the cost model), always, never",
           [{::llvm::cl::values(
             clEnumValN(::mlir::linattn::ReassociateMode::Auto, "auto",
                        "rewrite when the linear form needs fewer operations"),
             clEnumValN(::mlir::linattn::ReassociateMode::Always, "always",
                        "rewrite whenever it is legal"),
             clEnumValN(::mlir::linattn::ReassociateMode::Never, "never",
                        "never rewrite"))}]>
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def LinAttnRaisePass : Pass<"linattn-raise"> {
  let summary = "Raise attention written in linalg, tensor, arith and math to linattn ops";
  let description = [{
    Finds kernelized attention in IR made of upstream dialects, as importers
    (torch-mlir, StableHLO lowered to linalg) emit it, and raises it to
    `linattn.feature_map`, `linattn.scores` and `linattn.apply_scores`:

    * two chained contractions (`linalg.matmul`, with default or transposed
      indexing maps, `linalg.batch_matmul`, or an einsum-style
      `linalg.generic`) with zero-filled accumulators, the second taking the
      first's result as its left operand: the scores and their application
      to the values. The key operand may be transposed by a
      `linalg.transpose`, also behind a `tensor.collapse_shape` that keeps
      the two trailing dimensions;
    * between them, an elementwise multiplication (or division) by a
      constant, kept as the `scale` of the scores, and an inclusive causal
      mask (j ≤ i): a `select` on a comparison of `linalg.index` values, or
      a multiplication by a lower-triangular ones constant;
    * a division of the result by the row sums of the scores plus a
      positive eps (or a multiplication by its reciprocal): normalization;
    * elementwise feature maps feeding the scores: elu + 1 and relu.

    Raising is exact: only computations equal to the raised ops are
    matched. Softmax attention (`linalg.softmax`, or exp of the scores then
    a division by the row sums), strict or shifted masks, biased scores and
    maps that are not exactly elu + 1 or relu are left untouched.

    Before:

    ```mlir
    %kt = linalg.transpose ins(%k : tensor<128x64xf32>)
        outs(%e : tensor<64x128xf32>) permutation = [1, 0]
    %a = linalg.matmul ins(%q, %kt : tensor<128x64xf32>, tensor<64x128xf32>)
        outs(%zero_a : tensor<128x128xf32>) -> tensor<128x128xf32>
    %o = linalg.matmul ins(%a, %v : tensor<128x128xf32>, tensor<128x32xf32>)
        outs(%zero_o : tensor<128x32xf32>) -> tensor<128x32xf32>
    ```

    After:

    ```mlir
    %a = linattn.scores %q, %k
        : tensor<128x64xf32>, tensor<128x64xf32> -> tensor<128x128xf32>
    %o = linattn.apply_scores %a, %v
        : tensor<128x128xf32>, tensor<128x32xf32> -> tensor<128x32xf32>
    ```
  }];
  let dependentDialects = ["::mlir::linattn::LinAttnDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // LINATTN_TRANSFORMS_PASSES_TD
