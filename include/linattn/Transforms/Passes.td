//===- Passes.td - linattn transformation passes ----------*- tablegen -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_TRANSFORMS_PASSES_TD
#define LINATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LinAttnDecomposePass : Pass<"linattn-decompose"> {
  let summary = "Rewrite linattn.attention into feature maps and the quadratic form, and the gradient ops into primitives";
  let description = [{
    Expands every `linattn.attention` into its definition: the feature map
    applied to queries and keys, the (optionally causal) scores and their
    application to the values, normalized or not. The other passes start
    from this form: `linattn-reassociate` turns it into the linear form and
    `linattn-masked-to-scan` turns its causal variant into a scan.

    Every `linattn.scan_grad` becomes the three scans its description
    derives (dφ(Q) in the op's direction, dφ(K) and dV in the other), which
    the lowerings have kernels for; a normalized one a fourth scan before
    them (the numerators and denominators) and elementwise `linalg.generic`s
    for the scaled gradients. Every `linattn.attention_grad` becomes the
    feature maps, a `linattn.scan_grad` (causal) or the linear form's
    summaries and readouts, and `linattn.feature_map_grad` for Q and K; and
    every `linattn.feature_map_grad` becomes `linalg.generic`s, but those of
    the elementwise maps with `keep-elementwise-grads`. The normalized
    gradients take [V, 1] and [g, h] (Dv + 1 columns) as queries and keys;
    `column-multiple` pads them with zero columns to a multiple of its value
    (for f16 and bf16 data; f32 too with `column-multiple-f32`), the feature
    sizes a backend's fast kernels take (the GPU's tensor-core scans: 16).

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
  let options = [
    Option<"keepElementwiseGrads", "keep-elementwise-grads", "bool",
           /*default=*/"false",
           "Leave linattn.feature_map_grad of the elementwise maps (elu, relu, "
           "identity) as it is, for a backend with a kernel of it (the GPU's)">,
    Option<"columnMultiple", "column-multiple", "int64_t", /*default=*/"1",
           "Round the width of the normalized gradients' [V, 1] and [g, h] "
           "(Dv + 1) up to a multiple of this with zero columns, for f16 and "
           "bf16 data of a static Dv (the GPU's tensor-core scans take "
           "multiples of 16 features)">,
    Option<"columnMultipleF32", "column-multiple-f32", "bool",
           /*default=*/"false",
           "Also for f32 data (the GPU's scans on tf32 tensor cores)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
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
    `linattn.feature_map`, `linattn.scores` and `linattn.apply_scores` (the
    quadratic form as written) or `linattn.kv_summary` and
    `linattn.query_readout` (the linear form as written):

    * two chained contractions (`linalg.matmul`, with default or transposed
      indexing maps, `linalg.batch_matmul`, or an einsum-style
      `linalg.generic`) with zero-filled accumulators, the second taking the
      first's result as its left operand: the scores and their application
      to the values. The key operand may be transposed by a
      `linalg.transpose`, also behind a `tensor.collapse_shape` that keeps
      the two trailing dimensions; a transpose that also permutes other
      dimensions ([N, L, H, D] to [N, H, D, L]) is replaced by one that
      leaves the last two in place;
    * operands and results in any layout of their batch dimensions, such as
      the [B, N, H, D] tensors of JAX, Flax and the reference code of
      "Transformers are RNNs" (einsum "bnhd,bmhd->bhnm", "nshd,nshm->nhmd",
      "nlhd,nhmd->nlhm"): each operand is transposed into the
      [batch..., N, D] layout of the linattn ops and the result back, as
      long as an operand's last dimension stays last (an operand read with
      its trailing dimensions swapped needs a transpose of its own to
      reuse, so that a chain of products X·W₁·W₂ is not taken for
      attention); the scores themselves must be [batch..., N, M];
    * between them, an elementwise multiplication (or division) by a
      constant, kept as the `scale` of the scores, and an inclusive causal
      mask (j ≤ i): a `select` on a comparison of `linalg.index` values, or
      a multiplication by a lower-triangular ones constant;
    * a division of the result by the row sums of the scores plus a
      positive eps (or a multiplication by its reciprocal): normalization,
      also of a result transposed into another layout, with the row sums
      read in theirs or transposed into the result's;
    * the linear form φ(Q)(φ(K)ᵀV): a contraction whose right operand is a
      contraction of the transposed keys (by a `linalg.transpose` or by its
      indexing maps) with the values, or the transposed summary (values by
      keys) read transposed; torch-mlir's expansion of that summary to
      [B, H, ...] and collapse back between the two is looked through;
      either contraction may list its operands in either order;
    * a division of the linear form's result by φ(Q)·Σₘ φ(kₘ) plus a
      positive eps: the token sum of the same keys (a reduction of their
      token dimension), multiplied with the same queries as a
      matrix-vector product [..., N] or a product with it as a column
      [..., N, 1], also across an expansion of the batch dimensions, or
      with the queries, keys, sum and product in a layout of their own
      ("nlhd,nhd->nlh" with K.sum(dim=1)); normalization by the summary's z;
    * elementwise feature maps feeding the scores, the summary's keys or the
      readout's queries: elu + 1 and relu. A feature map whose only use
      (besides `tensor.dim`s of its leading dimensions) transposes its
      leading dimensions is applied after that transpose, next to the op
      that reads it, where the kernels fuse it.

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

def LinAttnMaskedToScanPass : Pass<"linattn-masked-to-scan"> {
  let summary = "Rewrite causally masked quadratic attention into a scan";
  let description = [{
    Rewrites `linattn.apply_scores` of causal `linattn.scores` into
    `linattn.scan forward` (result #0), which computes the same thing in
    linear time. The causal mask is the inclusive lower triangle (j ≤ i), the
    inclusive forward prefix of the scan with zero initial state:

      Σ_{j≤i} s·φ(qᵢ)ᵀφ(kⱼ) vⱼ = s·φ(qᵢ)ᵀ Sᵢ,   Sᵢ = Σ_{j≤i} φ(kⱼ) vⱼᵀ.

    The state S (F×Dv) and normalizer z (F) accumulate in f32 for f16 and
    bf16 inputs, in the input type otherwise.

    A score scale s is kept exact. Normalized, s cancels between numerator
    and denominator except against eps, so the scan uses eps/s; this needs
    s > 0. Unnormalized, the scan's output is multiplied by s with an
    elementwise `linalg.generic`.

    The pattern declines, with a reason, when the scores are not made by
    `linattn.scores` directly, are not causal (unmasked attention is
    `linattn-reassociate`'s job), are normalized with a scale s ≤ 0, or have
    a user other than `linattn.apply_scores`. In that last case the N×N
    score matrix would stay live, and the scan would only add work beside
    it; when every user is an `apply_scores`, each becomes a scan and the
    scores die.

    Before:

    ```mlir
    %a = linattn.scores %fq, %fk causal scale(2.000000e+00)
        : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>
        -> tensor<1x8x128x128xf32>
    %o = linattn.apply_scores %a, %v normalize(eps = 1.000000e-06)
        : tensor<1x8x128x128xf32>, tensor<1x8x128x32xf32>
        -> tensor<1x8x128x32xf32>
    ```

    After:

    ```mlir
    %o, %s, %z = linattn.scan forward %fq, %fk, %v
        normalize(eps = 5.000000e-07)
        : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>,
          tensor<1x8x128x32xf32>
        -> tensor<1x8x128x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def LinAttnChunkScanPass : Pass<"linattn-chunk-scan"> {
  let summary = "Rewrite linattn.scan into the chunkwise form";
  let description = [{
    Rewrites every `linattn.scan` into an `scf.for` over chunks of C tokens
    that carries the output tensor and the state (S, z) as iter_args. C is
    the scan's `chunk_size` hint when present, else the `chunk-size` option.
    For the chunk of tokens t..t+L-1, L = min(C, N − t), entering with state
    (S, z) (the initial state, or zeros, for the first chunk):

      A      = φ(Q_c) φ(K_c)ᵀ ⊙ L_c            L×L, L_c lower-triangular ones
      num    = A V_c + φ(Q_c) S                 intra- plus inter-chunk part
      den    = rowsum(A) + φ(Q_c) z
      O_c    = num, or num / (den + eps) with normalize
      S ← S + φ(K_c)ᵀ V_c,   z ← z + Σ_{j∈c} φ(kⱼ)

    This is the scan exactly: for token i of chunk c,
    Sᵢ = S + Σ_{j∈c, j≤i} φ(kⱼ)vⱼᵀ, so φ(qᵢ)ᵀSᵢ is row i of
    φ(Q_c)S + (A V_c); the denominator splits the same way with z. Numerator
    and denominator are accumulated separately and divided once per row, so
    normalization matches the scan's definition, not a mix of normalized
    partial results.

    In IR: `tensor.extract_slice` takes the chunk tiles of φQ, φK and V,
    `linattn.scores causal` and `linattn.apply_scores` form the intra-chunk
    part, `linattn.query_readout` reads the carried state,
    `linattn.kv_summary` and `linalg.add` update it, `linalg.generic`
    reductions form the denominator, one elementwise `linalg.generic`
    combines and divides, and `tensor.insert_slice` writes the chunk out.
    Inside a chunk everything is computed in the state's element type (the
    tiles are widened with `arith.extf` and the output narrowed with
    `arith.truncf`), so bf16 inputs with f32 state accumulate in f32.

    When N is not a multiple of C, or dynamic, the last chunk is shorter:
    L = `affine.min(C, N − t)` and the tiles are dynamically sized. A
    static N that C divides gives static tiles; a static N < C is one chunk.
    A `reverse` scan visits the chunks from the end (the chunk ending at
    N − t) and masks with the upper triangle (j ≥ i), built as the transpose
    of the keys' causal scores against the queries. The final state is the
    state after the last chunk visited.

    Before:

    ```mlir
    %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6)
        : tensor<2x256x16xf32>, tensor<2x256x16xf32>, tensor<2x256x8xf32>
        -> tensor<2x256x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32>
    ```

    After (with `chunk-size=64`, bodies elided):

    ```mlir
    %r:3 = scf.for %t = %c0 to %c256 step %c64
        iter_args(%out = %empty, %st = %s0, %nz = %z0)
        -> (tensor<2x256x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32>) {
      %qc = tensor.extract_slice %fq[0, %t, 0] [2, 64, 16] [1, 1, 1]
      %kc = tensor.extract_slice %fk[0, %t, 0] [2, 64, 16] [1, 1, 1]
      %vc = tensor.extract_slice %v[0, %t, 0] [2, 64, 8] [1, 1, 1]
      %a = linattn.scores %qc, %kc causal
      %intra = linattn.apply_scores %a, %vc
      %inter = linattn.query_readout %qc, %st
      %den = linalg.generic ... // rowsum(%a) + %qc · %nz
      %oc = linalg.generic ...  // (%intra + %inter) / (%den + eps)
      %out1 = tensor.insert_slice %oc into %out[0, %t, 0] [2, 64, 8] [1, 1, 1]
      %ds, %dz = linattn.kv_summary %kc, %vc
      %st1 = linalg.add ins(%st, %ds) outs(%st)
      %nz1 = linalg.add ins(%nz, %dz) outs(%nz)
      scf.yield %out1, %st1, %nz1
    }
    ```
  }];
  let options = [
    Option<"chunkSize", "chunk-size", "int64_t", /*default=*/"64",
           "Tokens per chunk for scans without a chunk_size hint">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def LinAttnScanToStepsPass : Pass<"linattn-scan-to-steps"> {
  let summary = "Unroll scans over short static sequences into linattn.step chains";
  let description = [{
    A scan over N tokens is N recurrent steps that thread the state. This
    pass spells that relation out for scans whose sequence length is static
    and at most `max-length`: token t of the query features, key features
    and values is sliced out, `linattn.step` updates and reads the state,
    and the outputs are concatenated back along the sequence. Forward scans
    visit t = 0..N-1, reverse scans t = N-1..0; the state starts from the
    scan's `init` (zeros when absent) and the last step's state is the
    scan's final state. Longer or dynamic sequences are left alone.

    Before:

    ```mlir
    %o, %s, %z = linattn.scan forward %fq, %fk, %v
        : tensor<8x2x16xf32>, tensor<8x2x16xf32>, tensor<8x2x4xf32>
        -> tensor<8x2x4xf32>, tensor<8x16x4xf32>, tensor<8x16xf32>
    ```

    After (zero state %s0, %z0):

    ```mlir
    %q0 = tensor.extract_slice %fq[0, 0, 0] [8, 1, 16] [1, 1, 1]
        : tensor<8x2x16xf32> to tensor<8x16xf32>
    ...
    %o0, %s1, %z1 = linattn.step %q0, %k0, %v0, %s0, %z0 : ...
    %o1, %s2, %z2 = linattn.step %q1, %k1, %v1, %s1, %z1 : ...
    %e0 = tensor.expand_shape %o0 [[0], [1, 2]] output_shape [8, 1, 4] : ...
    %e1 = tensor.expand_shape %o1 [[0], [1, 2]] output_shape [8, 1, 4] : ...
    %o = tensor.concat dim(1) %e0, %e1
        : (tensor<8x1x4xf32>, tensor<8x1x4xf32>) -> tensor<8x2x4xf32>
    ```
  }];
  let options = [
    Option<"maxLength", "max-length", "int64_t", /*default=*/"16",
           "Longest static sequence to unroll">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def LinAttnCheckDimIndicesPass : Pass<"linattn-check-dim-indices"> {
  let summary = "Fail on tensor.dim and memref.dim whose constant index is "
                "not a dimension of the operand";
  let description = [{
    A `tensor.dim` or `memref.dim` whose index is outside the operand's
    dimensions is undefined behavior that the verifiers accept. Upstream's
    patterns do not all check it: a negative index reaches the GPU
    dialect's `memref.dim` canonicalization, which then reads out of bounds
    and crashes the compiler, and the CPU pipeline would generate code that
    reads past a memref descriptor. Both lowering pipelines run this pass
    first: every such index that is constant, or that constant folding
    makes constant (sparse constant propagation over the whole operation),
    is reported as an error at its op, in code that runs or not (the
    canonicalizer may meet a dim before it folds its branch away).

    ```mlir
    %c-1 = arith.constant -1 : index
    %d = tensor.dim %t, %c-1 : tensor<?x?xf32>
    ```

    fails with "dimension index -1 is out of range for 'tensor<?x?xf32>'
    (rank 2)".
  }];
}

def LinAttnCheckSizesPass : Pass<"linattn-check-sizes"> {
  let summary = "Check at run time that the dynamic sizes of linattn ops agree";
  let description = [{
    The verifiers check every size an op's shape signature relates when both
    are static; a dynamic size agrees with anything there. This pass adds
    the run-time half: before each linattn op, for every pair of sizes that
    must agree and that the IR does not fix (batch dimensions, sequence
    lengths, feature and value sizes, N = M under a causal mask, poly2's
    1 + D + D² features), a `cf.assert` that names the op, its location and
    the two dimensions. A call with mismatched arrays then stops with that
    message instead of reading or writing past a buffer. Both lowering
    pipelines run it first.

    ```mlir
    %o = linattn.attention elu %q, %k, %v causal
        : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
    ```

    gets, before the op:

    ```mlir
    %n = tensor.dim %q, %c0 : tensor<?x8xf32>
    %m = tensor.dim %k, %c0 : tensor<?x8xf32>
    %eq = arith.cmpi eq, %m, %n : index
    cf.assert %eq, "linattn.attention: key sequence length does not match query sequence length"
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // LINATTN_TRANSFORMS_PASSES_TD
