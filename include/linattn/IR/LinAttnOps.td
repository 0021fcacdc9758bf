//===- LinAttnOps.td - linattn operations -----------------*- tablegen -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_IR_LINATTNOPS_TD
#define LINATTN_IR_LINATTNOPS_TD

include "linattn/IR/LinAttnDialect.td"
include "linattn/IR/LinAttnAttrs.td"
include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Every value the dialect computes with: ranked tensors of the floating-point
// types the lowerings support. Sizes may be static or dynamic.
def LinAttn_Tensor : RankedTensorOf<[F16, BF16, F32, F64]>;

//===----------------------------------------------------------------------===//
// FeatureMapOp
//===----------------------------------------------------------------------===//

def LinAttn_FeatureMapOp : LinAttn_Op<"feature_map", [Pure]> {
  let summary = "applies a feature map φ to the last dimension";
  let description = [{
    Maps every row x ∈ R^D of `input` (the last dimension) to φ(x) ∈ R^F.
    Leading dimensions are carried through unchanged. The kind selects φ:

    | kind       | φ(x)                          | F           |
    |------------|-------------------------------|-------------|
    | `elu`      | elu(x) + 1                    | D           |
    | `relu`     | max(x, 0)                     | D           |
    | `identity` | x                             | D           |
    | `poly2`    | [1, x, vec(x xᵀ) / √2]        | 1 + D + D²  |
    | `favor`    | exp(xP − ‖x‖²/2) / √F         | P is D×F    |

    `poly2` is the second-order Taylor expansion of exp(qᵀk):
    φ(q)ᵀφ(k) = 1 + qᵀk + (qᵀk)²/2. Its quadratic block is ordered row-major,
    feature 1 + D + i·D + j being xᵢxⱼ/√2. `favor` (FAVOR+ positive random
    features) takes the projection P, whose columns are the random features,
    as its only extra operand; every other kind takes none.

    Example:

    ```mlir
    %fq = linattn.feature_map elu %q
        : tensor<2x8x128x64xf32> -> tensor<2x8x128x64xf32>
    %fk = linattn.feature_map favor %k projection(%p)
        : tensor<2x8x?x64xf32>, tensor<64x256xf32> -> tensor<2x8x?x256xf32>
    ```
  }];

  let arguments = (ins LinAttn_FeatureMapKindAttr:$kind,
                       LinAttn_Tensor:$input,
                       Optional<LinAttn_Tensor>:$projection);
  let results = (outs LinAttn_Tensor:$result);

  let assemblyFormat = [{
    `` $kind $input (`projection` `(` $projection^ `)`)? attr-dict
    `:` type($input) (`,` type($projection)^)? `->` type($result)
  }];

  let extraClassDeclaration = [{
    /// Returns the feature size F that this op's kind produces from an input
    /// feature size `inputSize` (D), or ShapedType::kDynamic when unknown.
    static int64_t getFeatureSize(FeatureMapKind kind, int64_t inputSize,
                                  int64_t projectionSize);
  }];

  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// FeatureMapGradOp
//===----------------------------------------------------------------------===//

def LinAttn_FeatureMapGradOp : LinAttn_Op<"feature_map_grad", [Pure]> {
  let summary = "the chain rule through a feature map, for training";
  let description = [{
    The backward form of `linattn.feature_map`: given the map's input
    X [..., D] and the gradient dΦ [..., F] of a loss with respect to its
    result Φ = φ(X), returns the gradient dX [..., D] with respect to the
    input, row by row:

    | kind       | dx                                                  |
    |------------|-----------------------------------------------------|
    | `elu`      | dφ ⊙ (1 where x > 0, exp(x) elsewhere)              |
    | `relu`     | dφ ⊙ (1 where x > 0, 0 elsewhere)                   |
    | `identity` | dφ                                                  |
    | `poly2`    | dφ₁..D + (G + Gᵀ) x / √2, G the D×D block of dφ     |
    | `favor`    | P (dφ ⊙ φ) − x Σ_f (dφ ⊙ φ)_f                       |

    (`poly2`'s quadratic block G is dφ's features 1 + D … D + D², row-major
    as `linattn.feature_map` orders them; `favor` recomputes φ(x) from the
    projection P, which it takes as `projection(%p)`, and returns no
    gradient with respect to P: its random features are drawn, not
    learned.) 16-bit data is computed in f32 and rounded once.
    `linattn-decompose` rewrites the op into elementwise and reducing
    `linalg.generic`s (and, for `favor`, the feature map).

    Example:

    ```mlir
    %dq = linattn.feature_map_grad elu %q, %dfq
        : tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32> -> tensor<2x8x?x64xf32>
    ```
  }];

  let arguments = (ins LinAttn_FeatureMapKindAttr:$kind,
                       LinAttn_Tensor:$input,
                       LinAttn_Tensor:$result_grad,
                       Optional<LinAttn_Tensor>:$projection);
  let results = (outs LinAttn_Tensor:$input_grad);

  let assemblyFormat = [{
    `` $kind $input `,` $result_grad (`projection` `(` $projection^ `)`)?
    attr-dict `:` type($input) `,` type($result_grad)
    (`,` type($projection)^)? `->` type($input_grad)
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ScoresOp
//===----------------------------------------------------------------------===//

def LinAttn_ScoresOp : LinAttn_Op<"scores", [Pure]> {
  let summary = "attention scores φ(Q)φ(K)ᵀ, optionally causally masked";
  let description = [{
    Computes the N×M score matrix A = scale · φ(Q)φ(K)ᵀ of the quadratic form
    from query features [..., N, F] and key features [..., M, F]. With
    `causal`, scores above the diagonal are zero: Aᵢⱼ = 0 for j > i (token i
    sees tokens 0..i, itself included); causal scores need N = M.

    `scale` defaults to 1 and multiplies every score. It is how a constant
    factor found anywhere in the chain is kept exact; the canonical form
    omits a scale of 1.

    This op and `linattn.apply_scores` are the quadratic form that
    `linattn-reassociate` and `linattn-masked-to-scan` start from.

    Example:

    ```mlir
    %a = linattn.scores %fq, %fk causal scale(1.250000e-01)
        : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32> -> tensor<2x8x128x128xf32>
    ```
  }];

  let arguments = (ins LinAttn_Tensor:$query_features,
                       LinAttn_Tensor:$key_features,
                       UnitAttr:$causal,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs LinAttn_Tensor:$result);

  let assemblyFormat = [{
    $query_features `,` $key_features (`causal` $causal^)?
    (`scale` `(` $scale^ `)`)? attr-dict
    `:` type($query_features) `,` type($key_features) `->` type($result)
  }];

  let extraClassDeclaration = [{
    /// The scale factor, 1 when absent.
    double getScaleValue() {
      std::optional<::llvm::APFloat> scale = getScale();
      return scale ? scale->convertToDouble() : 1.0;
    }
  }];

  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// ApplyScoresOp
//===----------------------------------------------------------------------===//

def LinAttn_ApplyScoresOp : LinAttn_Op<"apply_scores", [Pure]> {
  let summary = "applies attention scores to the values, optionally normalized";
  let description = [{
    Computes O = A V from scores A [..., N, M] and values V [..., M, Dv].
    With `normalize`, every output row is divided by its row sum of scores
    plus `eps` (eps > 0):

      Oᵢ = Σⱼ Aᵢⱼ vⱼ / (Σⱼ Aᵢⱼ + eps).

    This is the paper's normalized linear attention when A comes from
    `linattn.scores`.

    Example:

    ```mlir
    %o = linattn.apply_scores %a, %v normalize(eps = 1.000000e-06)
        : tensor<2x8x128x128xf32>, tensor<2x8x128x32xf32> -> tensor<2x8x128x32xf32>
    ```
  }];

  let arguments = (ins LinAttn_Tensor:$scores,
                       LinAttn_Tensor:$values,
                       OptionalAttr<F64Attr>:$eps);
  let results = (outs LinAttn_Tensor:$result);

  let assemblyFormat = [{
    $scores `,` $values (`normalize` `(` `eps` `=` $eps^ `)`)? attr-dict
    `:` type($scores) `,` type($values) `->` type($result)
  }];

  let extraClassDeclaration = [{
    bool isNormalized() { return getEps().has_value(); }
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// KvSummaryOp
//===----------------------------------------------------------------------===//

def LinAttn_KvSummaryOp : LinAttn_Op<"kv_summary", [Pure]> {
  let summary = "key-value summary S = φ(K)ᵀV and normalizer z = Σⱼ φ(kⱼ)";
  let description = [{
    The first half of the linear form. From key features [..., M, F] and
    values [..., M, Dv] computes

      S = φ(K)ᵀV   of shape [..., F, Dv],
      z = Σⱼ φ(kⱼ) of shape [..., F].

    S and z may use a wider element type than the inputs (for example f32
    state for bf16 inputs); they accumulate in that type. When z has no use
    a lowering need not compute it.

    Example:

    ```mlir
    %s, %z = linattn.kv_summary %fk, %v
        : tensor<2x8x?x64xbf16>, tensor<2x8x?x32xbf16>
        -> tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
    ```
  }];

  let arguments = (ins LinAttn_Tensor:$key_features, LinAttn_Tensor:$values);
  let results = (outs LinAttn_Tensor:$state, LinAttn_Tensor:$normalizer);

  let assemblyFormat = [{
    $key_features `,` $values attr-dict
    `:` type($key_features) `,` type($values)
    `->` type($state) `,` type($normalizer)
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// QueryReadoutOp
//===----------------------------------------------------------------------===//

def LinAttn_QueryReadoutOp : LinAttn_Op<"query_readout", [Pure]> {
  let summary = "reads a key-value summary out with the query features";
  let description = [{
    The second half of the linear form. From query features [..., N, F] and a
    summary S [..., F, Dv] computes O = φ(Q) S. With `normalize`, which takes
    the normalizer z [..., F] and eps > 0,

      Oᵢ = φ(qᵢ)ᵀ S / (φ(qᵢ)ᵀ z + eps).

    The result has the element type of the query features; the products are
    accumulated in the state's element type.

    Example:

    ```mlir
    %o = linattn.query_readout %fq, %s normalize(%z, eps = 1.000000e-06)
        : tensor<2x8x128x64xf32>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
        -> tensor<2x8x128x32xf32>
    ```
  }];

  let arguments = (ins LinAttn_Tensor:$query_features,
                       LinAttn_Tensor:$state,
                       Optional<LinAttn_Tensor>:$normalizer,
                       OptionalAttr<F64Attr>:$eps);
  let results = (outs LinAttn_Tensor:$result);

  let assemblyFormat = [{
    $query_features `,` $state
    (`normalize` `(` $normalizer^ `,` `eps` `=` $eps `)`)? attr-dict
    `:` type($query_features) `,` type($state) (`,` type($normalizer)^)?
    `->` type($result)
  }];

  let extraClassDeclaration = [{
    bool isNormalized() { return getNormalizer() != nullptr; }
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ScanOp
//===----------------------------------------------------------------------===//

def LinAttn_ScanOp : LinAttn_Op<"scan", [Pure, AttrSizedOperandSegments]> {
  let summary = "causal linear attention as a prefix scan with matrix state";
  let description = [{
    Causal linear attention computed as a recurrence over the sequence, the
    RNN view of the paper. Per batch element, with query features
    [..., N, F], key features [..., N, F] and values [..., N, Dv], a
    `forward` scan visits tokens i = 0, 1, ..., N-1 and keeps the state

      Sᵢ = Sᵢ₋₁ + φ(kᵢ) vᵢᵀ   (F×Dv),     zᵢ = zᵢ₋₁ + φ(kᵢ)   (F),

    starting from S₋₁ = S0 and z₋₁ = z0 (`init`; zero when absent). The
    prefix is inclusive: token i reads the state that already holds token i,

      Oᵢ = φ(qᵢ)ᵀ Sᵢ                          without `normalize`,
      Oᵢ = φ(qᵢ)ᵀ Sᵢ / (φ(qᵢ)ᵀ zᵢ + eps)      with `normalize` (eps > 0).

    A `reverse` scan visits i = N-1, ..., 0 instead (suffix sums: token i
    sees tokens i..N-1); it is the anti-causal form the backward pass needs:

      Sᵢ = Sᵢ₊₁ + φ(kᵢ) vᵢᵀ,   zᵢ = zᵢ₊₁ + φ(kᵢ),   S_N = S0, z_N = z0,

    with the same readout of Sᵢ and zᵢ.

    The results are the outputs [..., N, Dv] and the final state (S, z) after
    the last token visited (S_{N-1} forward, S_0 reverse; the initial state
    when N = 0), which can seed a later scan or `linattn.step`. The outputs
    are accumulated in the state type and rounded to the data type.
    The state may use a wider element type than the inputs and accumulates
    in that type; initial and final state have the same element type and
    compatible shapes.

    `chunk_size` is a hint for the lowering: the chunkwise form processes
    that many tokens at a time with dense products inside a chunk and the
    recurrence between chunks. It does not change the result.

    With zero initial state a forward scan's result equals
    `linattn.apply_scores(linattn.scores(%fq, %fk causal), %v)` with the
    same normalization (`linattn-masked-to-scan` rewrites the latter into
    the former); a reverse scan's equals the same with the mask transposed
    (j ≥ i). A scan over one token is a `linattn.step` (a canonicalization),
    and a scan over tokens a..c with initial state (S0, z0) equals a scan
    over a..b whose final state seeds a scan over b+1..c.

    Example:

    ```mlir
    %o, %s, %z = linattn.scan forward %fq, %fk, %v init(%s0, %z0)
        normalize(eps = 1.000000e-06) chunk_size(64)
        : tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32>,
          tensor<2x8x64x64xf32>, tensor<2x8x64xf32>
        -> tensor<2x8x?x64xf32>, tensor<2x8x64x64xf32>, tensor<2x8x64xf32>
    ```
  }];

  let arguments = (ins LinAttn_ScanDirectionAttr:$direction,
                       LinAttn_Tensor:$query_features,
                       LinAttn_Tensor:$key_features,
                       LinAttn_Tensor:$values,
                       Optional<LinAttn_Tensor>:$initial_state,
                       Optional<LinAttn_Tensor>:$initial_normalizer,
                       OptionalAttr<F64Attr>:$eps,
                       OptionalAttr<I64Attr>:$chunk_size);
  let results = (outs LinAttn_Tensor:$result,
                      LinAttn_Tensor:$final_state,
                      LinAttn_Tensor:$final_normalizer);

  let assemblyFormat = [{
    `` $direction $query_features `,` $key_features `,` $values
    (`init` `(` $initial_state^ `,` $initial_normalizer `)`)?
    (`normalize` `(` `eps` `=` $eps^ `)`)?
    (`chunk_size` `(` $chunk_size^ `)`)? attr-dict
    `:` type($query_features) `,` type($key_features) `,` type($values)
    (`,` type($initial_state)^ `,` type($initial_normalizer))?
    `->` type($result) `,` type($final_state) `,` type($final_normalizer)
  }];

  let extraClassDeclaration = [{
    bool isNormalized() { return getEps().has_value(); }
    bool isReverse() { return getDirection() == ScanDirection::Reverse; }
    bool hasInitialState() { return getInitialState() != nullptr; }

    /// Returns the state the scan starts from: the `init` operands, or zero
    /// tensors of the final state's types (sizes the types leave open are
    /// read from the operands) when there are none.
    std::pair<::mlir::Value, ::mlir::Value>
    buildInitialState(::mlir::OpBuilder &builder);
  }];

  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// StepOp
//===----------------------------------------------------------------------===//

def LinAttn_StepOp : LinAttn_Op<"step", [Pure]> {
  let summary = "one token of the causal recurrence, for decoding";
  let description = [{
    One step of `linattn.scan forward` for a single token per batch element:
    from query features [..., F], key features [..., F], values [..., Dv]
    and the state S [..., F, Dv], z [..., F] computes

      S' = S + φ(k) vᵀ,   z' = z + φ(k),
      o  = φ(q)ᵀ S'                      without `normalize`,
      o  = φ(q)ᵀ S' / (φ(q)ᵀ z' + eps)   with `normalize` (eps > 0),

    and returns (o, S', z'). Threading the state through N steps gives the
    same outputs and final state as a scan over N tokens.

    Example:

    ```mlir
    %o, %s1, %z1 = linattn.step %fq, %fk, %v, %s0, %z0
        normalize(eps = 1.000000e-06)
        : tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<1x16x64xf32>,
          tensor<1x16x64x64xf32>, tensor<1x16x64xf32>
        -> tensor<1x16x64xf32>, tensor<1x16x64x64xf32>, tensor<1x16x64xf32>
    ```
  }];

  let arguments = (ins LinAttn_Tensor:$query_features,
                       LinAttn_Tensor:$key_features,
                       LinAttn_Tensor:$values,
                       LinAttn_Tensor:$state,
                       LinAttn_Tensor:$normalizer,
                       OptionalAttr<F64Attr>:$eps);
  let results = (outs LinAttn_Tensor:$result,
                      LinAttn_Tensor:$new_state,
                      LinAttn_Tensor:$new_normalizer);

  let assemblyFormat = [{
    $query_features `,` $key_features `,` $values `,` $state `,` $normalizer
    (`normalize` `(` `eps` `=` $eps^ `)`)? attr-dict
    `:` type($query_features) `,` type($key_features) `,` type($values) `,`
        type($state) `,` type($normalizer)
    `->` type($result) `,` type($new_state) `,` type($new_normalizer)
  }];

  let extraClassDeclaration = [{
    bool isNormalized() { return getEps().has_value(); }
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ScanGradOp
//===----------------------------------------------------------------------===//

def LinAttn_ScanGradOp : LinAttn_Op<"scan_grad",
    [Pure, AttrSizedOperandSegments, AttrSizedResultSegments]> {
  let summary = "gradients of a scan, for training";
  let description = [{
    The backward form of `linattn.scan`, with the same `normalize` (or none)
    and initial state (or none): given the scan's operands, query features φ(Q) and key
    features φ(K) [..., N, F] and values V [..., N, Dv], and the gradient
    dO [..., N, Dv] of a loss with respect to the scan's outputs, returns the
    gradients with respect to φ(Q), φ(K) and V. For a `forward` scan,
    Oᵢ = Σ_{j ≤ i} (φ(qᵢ)·φ(kⱼ)) vⱼ, so

      dφ(qᵢ) = Σ_{j ≤ i} (dOᵢ·vⱼ) φ(kⱼ),
      dφ(kⱼ) = Σ_{i ≥ j} (dOᵢ·vⱼ) φ(qᵢ),
      dvⱼ    = Σ_{i ≥ j} (φ(qᵢ)·φ(kⱼ)) dOᵢ.

    Each is a scan again, with the operands' roles exchanged: the first a
    scan in the same direction (queries dO, keys V, values φ(K)), the other
    two in the opposite one (queries V, keys dO, values φ(Q); queries φ(K),
    keys φ(Q), values dO): linear in N, with a state of Dv×F or F×Dv per
    batch element, and no N×N matrix. For a `reverse` scan the directions
    swap. `linattn-decompose` rewrites the op into those three scans, which
    every lowering has kernels for.

    With `normalize`, Oᵢ = Nᵢ / Dᵢ, Nᵢ = Σ_{j ≤ i} (φ(qᵢ)·φ(kⱼ)) vⱼ and
    Dᵢ = Σ_{j ≤ i} φ(qᵢ)·φ(kⱼ) + eps. With gᵢ = dOᵢ / Dᵢ and
    hᵢ = −(dOᵢ·Nᵢ) / Dᵢ², the gradients are the same three scans with
    [gᵢ, hᵢ] in place of dOᵢ and [vⱼ, 1] in place of vⱼ where they are
    queries or keys, and gᵢ as dV's values:

      dφ(qᵢ) = Σ_{j ≤ i} (gᵢ·vⱼ + hᵢ) φ(kⱼ),
      dφ(kⱼ) = Σ_{i ≥ j} (gᵢ·vⱼ + hᵢ) φ(qᵢ),
      dvⱼ    = Σ_{i ≥ j} (φ(qᵢ)·φ(kⱼ)) gᵢ,

    after a fourth scan (values [vⱼ, 1], unnormalized) that recomputes N and
    D − eps.

    The gradients have the data type of the operands and are accumulated in
    the scans' state type (f32 for 16-bit data). The gradient with respect
    to the inputs of a feature map is the chain rule's elementwise product
    with its derivative, left to the caller.

    States, for training over a sequence in segments (the scan of one
    segment starting from the state the previous one ended with):
    `init(S₀, z₀)`, the scan's initial state, makes the op also return their
    gradients dS₀ [..., F, Dv] and dz₀ [..., F], and `final_grad(dS, dz)`
    takes the gradients of a loss with respect to the scan's final state
    and normalizer (zero when absent), all in the state type. With
    Sᵢ = S₀ + Σ_{j ≤ i} φ(kⱼ)vⱼᵀ, zᵢ = z₀ + Σ_{j ≤ i} φ(kⱼ) and
    Rⱼ = dS + Σ_{i ≥ j} φ(qᵢ)gᵢᵀ, rⱼ = dz + Σ_{i ≥ j} φ(qᵢ)hᵢ (g = dO and
    h = 0 unnormalized):

      dφ(qᵢ) = Sᵢgᵢ + zᵢhᵢ,  dφ(kⱼ) = Rⱼvⱼ + rⱼ,  dvⱼ = Rⱼᵀφ(kⱼ),
      dS₀ = R₀,  dz₀ = r₀,

    the same scans started from [S₀, z₀]ᵀ, [dS, dz]ᵀ and dS (for a
    `reverse` scan, R and r sum over i ≤ j and end at the last token).

    Example:

    ```mlir
    %dfq, %dfk, %dv = linattn.scan_grad forward %fq, %fk, %v, %do
        : tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32>, tensor<2x8x?x32xf32>,
          tensor<2x8x?x32xf32>
        -> tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32>, tensor<2x8x?x32xf32>

    // One segment of a longer sequence: from the previous segment's state,
    // with the next segment's gradient of the state it ends with.
    %dfq, %dfk, %dv, %ds0, %dz0 = linattn.scan_grad forward %fq, %fk, %v, %do
        init(%s0, %z0 : tensor<2x8x64x32xf32>, tensor<2x8x64xf32>)
        final_grad(%ds, %dz : tensor<2x8x64x32xf32>, tensor<2x8x64xf32>)
        normalize(eps = 1.0e-6)
        : tensor<2x8x?x64xbf16>, tensor<2x8x?x64xbf16>, tensor<2x8x?x32xbf16>,
          tensor<2x8x?x32xbf16>
        -> tensor<2x8x?x64xbf16>, tensor<2x8x?x64xbf16>,
           tensor<2x8x?x32xbf16>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
    ```
  }];

  let arguments = (ins LinAttn_ScanDirectionAttr:$direction,
                       LinAttn_Tensor:$query_features,
                       LinAttn_Tensor:$key_features,
                       LinAttn_Tensor:$values,
                       LinAttn_Tensor:$result_grad,
                       Optional<LinAttn_Tensor>:$initial_state,
                       Optional<LinAttn_Tensor>:$initial_normalizer,
                       Optional<LinAttn_Tensor>:$final_state_grad,
                       Optional<LinAttn_Tensor>:$final_normalizer_grad,
                       OptionalAttr<F64Attr>:$eps);
  let results = (outs LinAttn_Tensor:$query_features_grad,
                      LinAttn_Tensor:$key_features_grad,
                      LinAttn_Tensor:$values_grad,
                      Optional<LinAttn_Tensor>:$initial_state_grad,
                      Optional<LinAttn_Tensor>:$initial_normalizer_grad);

  let assemblyFormat = [{
    `` $direction $query_features `,` $key_features `,` $values `,`
    $result_grad
    (`init` `(` $initial_state^ `,` $initial_normalizer `:`
         type($initial_state) `,` type($initial_normalizer) `)`)?
    (`final_grad` `(` $final_state_grad^ `,` $final_normalizer_grad `:`
         type($final_state_grad) `,` type($final_normalizer_grad) `)`)?
    (`normalize` `(` `eps` `=` $eps^ `)`)? attr-dict
    `:` type($query_features) `,` type($key_features) `,` type($values) `,`
        type($result_grad)
    `->` type($query_features_grad) `,` type($key_features_grad) `,`
         type($values_grad)
    (`,` type($initial_state_grad)^ `,` type($initial_normalizer_grad))?
  }];

  let extraClassDeclaration = [{
    bool isNormalized() { return getEps().has_value(); }
    bool isReverse() { return getDirection() == ScanDirection::Reverse; }
    bool hasInitialState() { return getInitialState() != nullptr; }
    bool hasFinalStateGrad() { return getFinalStateGrad() != nullptr; }
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

def LinAttn_AttentionOp : LinAttn_Op<"attention", [Pure]> {
  let summary = "linear attention in one op: the form users write";
  let description = [{
    Linear attention of queries Q [..., N, D], keys K [..., M, D] and values
    V [..., M, Dv] with feature map φ (see `linattn.feature_map`):

      O = (φ(Q)φ(K)ᵀ ⊙ L) V,   optionally with every row divided by its row
                               sum of φ(Q)φ(K)ᵀ ⊙ L plus eps,

    where L is all ones, or lower-triangular ones with `causal` (N = M).
    `favor` takes its projection as `projection(%p)`.

    `linattn-decompose` rewrites it into `linattn.feature_map`,
    `linattn.scores` and `linattn.apply_scores`, the definition above, which
    the other passes turn into the linear or scan form.

    Example:

    ```mlir
    %o = linattn.attention elu %q, %k, %v causal normalize(eps = 1.000000e-06)
        : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>,
          tensor<1x8x1024x64xf32> -> tensor<1x8x1024x64xf32>
    ```
  }];

  let arguments = (ins LinAttn_FeatureMapKindAttr:$feature_map,
                       LinAttn_Tensor:$query,
                       LinAttn_Tensor:$key,
                       LinAttn_Tensor:$values,
                       Optional<LinAttn_Tensor>:$projection,
                       UnitAttr:$causal,
                       OptionalAttr<F64Attr>:$eps);
  let results = (outs LinAttn_Tensor:$result);

  let assemblyFormat = [{
    `` $feature_map $query `,` $key `,` $values
    (`projection` `(` $projection^ `)`)? (`causal` $causal^)?
    (`normalize` `(` `eps` `=` $eps^ `)`)? attr-dict
    `:` type($query) `,` type($key) `,` type($values)
    (`,` type($projection)^)? `->` type($result)
  }];

  let extraClassDeclaration = [{
    bool isNormalized() { return getEps().has_value(); }
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

def LinAttn_AttentionGradOp : LinAttn_Op<"attention_grad", [Pure]> {
  let summary = "gradients of linear attention in one op, for training";
  let description = [{
    The backward form of `linattn.attention`, with the same feature map,
    `projection`, `causal` and `normalize`: given its operands Q [..., N, D],
    K [..., M, D], V [..., M, Dv] and the gradient dO [..., N, Dv] of a loss
    with respect to its result, returns the gradients dQ, dK and dV with
    respect to Q, K and V (none with respect to a `favor` projection).

    `linattn-decompose` rewrites it into the feature maps of Q and K, the
    gradients with respect to the features, and `linattn.feature_map_grad`
    for each of Q and K. With `causal` the middle part is a
    `linattn.scan_grad`, linear in N. Without it, it is the linear form's
    gradient, with S = φ(K)ᵀV:

      dφ(Q) = dO Sᵀ,   dV = φ(K) (φ(Q)ᵀdO),   dφ(K) = V (φ(Q)ᵀdO)ᵀ,

    three `linattn.kv_summary` and three `linattn.query_readout` (state
    F×Dv or Dv×F, no N×M matrix); normalized, the same with [V, 1] for V and
    [dO / D, −(dO·N) / D²] for dO, where Oᵢ = Nᵢ / Dᵢ (see
    `linattn.scan_grad`).

    The gradients with respect to the features and the scaled dO are
    operands and results of those ops, so they are rounded to the data type
    (their sums are formed in f32 for 16-bit data). With f16 data, dO / D
    overflows where a row's denominator is near eps (queries whose features
    are all zero, as relu can make them), and the gradients of that row's
    keys and values become inf or NaN; bf16 has f32's range.

    Example:

    ```mlir
    %dq, %dk, %dv = linattn.attention_grad elu %q, %k, %v, %do causal
        : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>,
          tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>
        -> tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>,
           tensor<1x8x1024x64xf32>
    ```
  }];

  let arguments = (ins LinAttn_FeatureMapKindAttr:$feature_map,
                       LinAttn_Tensor:$query,
                       LinAttn_Tensor:$key,
                       LinAttn_Tensor:$values,
                       LinAttn_Tensor:$result_grad,
                       Optional<LinAttn_Tensor>:$projection,
                       UnitAttr:$causal,
                       OptionalAttr<F64Attr>:$eps);
  let results = (outs LinAttn_Tensor:$query_grad,
                      LinAttn_Tensor:$key_grad,
                      LinAttn_Tensor:$values_grad);

  let assemblyFormat = [{
    `` $feature_map $query `,` $key `,` $values `,` $result_grad
    (`projection` `(` $projection^ `)`)? (`causal` $causal^)?
    (`normalize` `(` `eps` `=` $eps^ `)`)? attr-dict
    `:` type($query) `,` type($key) `,` type($values) `,` type($result_grad)
    (`,` type($projection)^)?
    `->` type($query_grad) `,` type($key_grad) `,` type($values_grad)
  }];

  let extraClassDeclaration = [{
    bool isNormalized() { return getEps().has_value(); }
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// ReadBufferOp
//===----------------------------------------------------------------------===//

def LinAttn_ReadBufferOp : LinAttn_Op<"read_buffer", [
    MemoryEffects<[MemRead]>,
    DeclareOpInterfaceMethods<BufferizableOpInterface,
        ["bufferizesToMemoryRead", "bufferizesToMemoryWrite",
         "getAliasingValues", "bufferize"]>]> {
  let summary = "the buffer of a tensor, read by the code after it";
  let description = [{
    The lowerings' kernels read their tensor operands through this op: its
    result is the buffer the tensor bufferizes to where that has the
    identity layout (cast to the result's sizes), and a copy of it into a
    buffer of its own where it is a view of another layout (a slice, whose
    strides the kernels, which address operands as contiguous rows, would
    not see). One-Shot Bufferize counts the tensor as read here, so that no
    op after it writes that buffer in place.

    It is `bufferization.to_buffer read_only` with one difference that makes
    it safe: a read effect. `to_buffer` is pure, so CSE merges two of them on
    one tensor and loop-invariant code motion hoists one, which moves the
    point where bufferization takes the tensor as read to before writes
    that the code reading the buffer comes after: a tensor read by two
    kernels, with a tensor written in place into its buffer between them,
    was read clobbered by the second.

    ```mlir
    %m = linattn.read_buffer %t : tensor<4x?xf32> to memref<4x?xf32>
    ```
  }];

  let arguments = (ins AnyRankedTensor:$tensor);
  let results = (outs AnyMemRef:$buffer);
  let assemblyFormat = "$tensor attr-dict `:` type($tensor) `to` type($buffer)";
  let builders = [
    // The buffer of the tensor's shape and element type, identity layout.
    OpBuilder<(ins "::mlir::Value":$tensor), [{
      auto type = ::llvm::cast<::mlir::RankedTensorType>(tensor.getType());
      build($_builder, $_state,
            ::mlir::MemRefType::get(type.getShape(), type.getElementType()),
            tensor);
    }]>
  ];
  let hasVerifier = 1;
}

#endif // LINATTN_IR_LINATTNOPS_TD
