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

#endif // LINATTN_TRANSFORMS_PASSES_TD
