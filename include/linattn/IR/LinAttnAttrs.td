//===- LinAttnAttrs.td - linattn attributes and enums -----*- tablegen -*-===//
//
// Part of the linattn project.
//
//===----------------------------------------------------------------------===//

#ifndef LINATTN_IR_LINATTNATTRS_TD
#define LINATTN_IR_LINATTNATTRS_TD

include "linattn/IR/LinAttnDialect.td"
include "mlir/IR/EnumAttr.td"

def LinAttn_FeatureMapKind : I32EnumAttr<"FeatureMapKind",
    "the feature map φ of linear attention", [
      I32EnumAttrCase<"Elu", 0, "elu">,
      I32EnumAttrCase<"Relu", 1, "relu">,
      I32EnumAttrCase<"Identity", 2, "identity">,
      I32EnumAttrCase<"Poly2", 3, "poly2">,
      I32EnumAttrCase<"Favor", 4, "favor">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::linattn";
  let description = [{
    * `elu`: φ(x) = elu(x) + 1, elementwise (the paper's default); F = D.
    * `relu`: φ(x) = max(x, 0), elementwise; F = D.
    * `identity`: φ(x) = x; F = D. For features computed elsewhere.
    * `poly2`: the degree-2 Taylor features φ(x) = [1, x, vec(x xᵀ)/√2],
      so that φ(q)ᵀφ(k) = 1 + qᵀk + (qᵀk)²/2; F = 1 + D + D².
    * `favor`: positive random features (FAVOR+) with a projection P of shape
      D×m: φ(x) = exp(xP - ‖x‖²/2) / √m; F = m.
  }];
}

def LinAttn_FeatureMapKindAttr
    : EnumAttr<LinAttn_Dialect, LinAttn_FeatureMapKind, "feature_map">;

def LinAttn_ScanDirection : I32EnumAttr<"ScanDirection",
    "the direction of a causal scan", [
      I32EnumAttrCase<"Forward", 0, "forward">,
      I32EnumAttrCase<"Reverse", 1, "reverse">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::linattn";
}

def LinAttn_ScanDirectionAttr
    : EnumAttr<LinAttn_Dialect, LinAttn_ScanDirection, "direction">;

#endif // LINATTN_IR_LINATTNATTRS_TD
