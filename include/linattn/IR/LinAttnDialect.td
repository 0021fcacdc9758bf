//===- LinAttnDialect.td - linattn dialect definition -----*- tablegen -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_IR_LINATTNDIALECT_TD
#define LINATTN_IR_LINATTNDIALECT_TD

include "mlir/IR/OpBase.td"

def LinAttn_Dialect : Dialect {
  let name = "linattn";
  let cppNamespace = "::mlir::linattn";
  let summary = "Kernel-feature-map (linear) attention";
  let description = [{
    The `linattn` dialect represents the linear attention of Katharopoulos et
    al., "Transformers are RNNs" (ICML 2020): attention whose similarity is a
    dot product of non-negative feature maps, sim(q, k) = φ(q)ᵀφ(k).

    Its ops spell out the forms one computation takes on its way to fast code:

    * `linattn.attention`, the one-op form a user writes;
    * `linattn.feature_map`, φ applied to queries or keys;
    * the quadratic form, `linattn.scores` (φ(Q)φ(K)ᵀ, optionally causally
      masked) followed by `linattn.apply_scores` (applied to V, optionally
      normalized by the row sums);
    * the linear form, `linattn.kv_summary` (S = φ(K)ᵀV, z = Σⱼ φ(kⱼ))
      followed by `linattn.query_readout` (φ(Q)S, optionally divided by
      φ(Q)z + eps);
    * the causal form, `linattn.scan`, a prefix sum of outer products whose
      state is a matrix per batch element: the RNN view of causal linear
      attention;
    * `linattn.step`, one token of that recurrence, for autoregressive
      decoding.

    All ops work on ranked tensors whose trailing one or two dimensions are
    the token and feature dimensions and whose leading dimensions (any
    number, typically batch and heads) are batch dimensions that every
    operand shares. Sizes may be static or dynamic.
  }];
  // The scan's canonicalizations build tensor reshapes and zero constants.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 0;
}

class LinAttn_Op<string mnemonic, list<Trait> traits = []>
    : Op<LinAttn_Dialect, mnemonic, traits>;

#endif // LINATTN_IR_LINATTNDIALECT_TD
