// RUN: linattn-opt %s -linattn-decompose -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @causal_normalized
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x128x64xf32>, %[[K:.*]]: tensor<2x8x128x64xf32>, %[[V:.*]]: tensor<2x8x128x32xf32>)
// CHECK: %[[FQ:.*]] = linattn.feature_map elu %[[Q]] : tensor<2x8x128x64xf32> -> tensor<2x8x128x64xf32>
// CHECK: %[[FK:.*]] = linattn.feature_map elu %[[K]] : tensor<2x8x128x64xf32> -> tensor<2x8x128x64xf32>
// CHECK: %[[A:.*]] = linattn.scores %[[FQ]], %[[FK]] causal : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32> -> tensor<2x8x128x128xf32>
// CHECK: %[[O:.*]] = linattn.apply_scores %[[A]], %[[V]] normalize(eps = 9.9999999999999995E-7) : tensor<2x8x128x128xf32>, tensor<2x8x128x32xf32> -> tensor<2x8x128x32xf32>
// CHECK: return %[[O]]
// CHECK-NOT: linattn.attention
func.func @causal_normalized(%q: tensor<2x8x128x64xf32>, %k: tensor<2x8x128x64xf32>,
                             %v: tensor<2x8x128x32xf32>) -> tensor<2x8x128x32xf32> {
  %o = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6)
      : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x32xf32>
      -> tensor<2x8x128x32xf32>
  return %o : tensor<2x8x128x32xf32>
}

// -----

// Cross-attention with dynamic key length, unnormalized: the scores take the
// key length as their last dimension and no normalization is added.
// CHECK-LABEL: func.func @cross_dynamic_unnormalized
// CHECK-SAME: (%[[Q:.*]]: tensor<4x?x16xf32>, %[[K:.*]]: tensor<4x?x16xf32>, %[[V:.*]]: tensor<4x?x8xf32>)
// CHECK: %[[FQ:.*]] = linattn.feature_map relu %[[Q]] : tensor<4x?x16xf32> -> tensor<4x?x16xf32>
// CHECK: %[[FK:.*]] = linattn.feature_map relu %[[K]] : tensor<4x?x16xf32> -> tensor<4x?x16xf32>
// CHECK: %[[A:.*]] = linattn.scores %[[FQ]], %[[FK]] : tensor<4x?x16xf32>, tensor<4x?x16xf32> -> tensor<4x?x?xf32>
// CHECK: %[[O:.*]] = linattn.apply_scores %[[A]], %[[V]] : tensor<4x?x?xf32>, tensor<4x?x8xf32> -> tensor<4x?x8xf32>
// CHECK: return %[[O]]
func.func @cross_dynamic_unnormalized(%q: tensor<4x?x16xf32>, %k: tensor<4x?x16xf32>,
                                      %v: tensor<4x?x8xf32>) -> tensor<4x?x8xf32> {
  %o = linattn.attention relu %q, %k, %v
      : tensor<4x?x16xf32>, tensor<4x?x16xf32>, tensor<4x?x8xf32> -> tensor<4x?x8xf32>
  return %o : tensor<4x?x8xf32>
}

// -----

// The feature size follows the kind: poly2 makes 1 + D + D^2 features, favor
// as many as the projection has columns (and passes the projection on).
// CHECK-LABEL: func.func @feature_sizes
// CHECK-SAME: %[[P:[^:]*]]: tensor<4x32xbf16>
// CHECK: linattn.feature_map poly2 %{{.*}} : tensor<1x10x4xbf16> -> tensor<1x10x21xbf16>
// CHECK: linattn.feature_map poly2 %{{.*}} : tensor<1x12x4xbf16> -> tensor<1x12x21xbf16>
// CHECK: linattn.scores %{{.*}}, %{{.*}} : tensor<1x10x21xbf16>, tensor<1x12x21xbf16> -> tensor<1x10x12xbf16>
// CHECK: linattn.feature_map favor %{{.*}} projection(%[[P]]) : tensor<1x10x4xbf16>, tensor<4x32xbf16> -> tensor<1x10x32xbf16>
// CHECK: linattn.feature_map favor %{{.*}} projection(%[[P]]) : tensor<1x12x4xbf16>, tensor<4x32xbf16> -> tensor<1x12x32xbf16>
// CHECK: linattn.scores %{{.*}}, %{{.*}} : tensor<1x10x32xbf16>, tensor<1x12x32xbf16> -> tensor<1x10x12xbf16>
func.func @feature_sizes(%q: tensor<1x10x4xbf16>, %k: tensor<1x12x4xbf16>,
                         %v: tensor<1x12x3xbf16>, %p: tensor<4x32xbf16>)
    -> (tensor<1x10x3xbf16>, tensor<1x10x3xbf16>) {
  %a = linattn.attention poly2 %q, %k, %v
      : tensor<1x10x4xbf16>, tensor<1x12x4xbf16>, tensor<1x12x3xbf16> -> tensor<1x10x3xbf16>
  %b = linattn.attention favor %q, %k, %v projection(%p)
      : tensor<1x10x4xbf16>, tensor<1x12x4xbf16>, tensor<1x12x3xbf16>, tensor<4x32xbf16>
      -> tensor<1x10x3xbf16>
  return %a, %b : tensor<1x10x3xbf16>, tensor<1x10x3xbf16>
}

// -----

// scan_grad: three unnormalized scans without initial state. dφ(Q) in the
// op's direction (queries dO, keys V, values φ(K)); dφ(K) (queries V, keys
// dO, values φ(Q)) and dV (queries φ(K), keys φ(Q), values dO) in the other.
// The states are F×Dv or Dv×F in the accumulator type (f32 for bf16), their
// sizes as static as any operand or result has them.
// CHECK-LABEL: func.func @scan_grad_forward_bf16
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x4xbf16>, %[[K:.*]]: tensor<2x?x?xbf16>, %[[V:.*]]: tensor<2x?x3xbf16>, %[[DO:.*]]: tensor<?x?x3xbf16>)
// CHECK: %[[DQ:.*]], %{{.*}}, %{{.*}} = linattn.scan forward %[[DO]], %[[V]], %[[K]] : tensor<?x?x3xbf16>, tensor<2x?x3xbf16>, tensor<2x?x?xbf16> -> tensor<2x?x4xbf16>, tensor<2x3x4xf32>, tensor<2x3xf32>
// CHECK: %[[DK:.*]], %{{.*}}, %{{.*}} = linattn.scan reverse %[[V]], %[[DO]], %[[Q]] : tensor<2x?x3xbf16>, tensor<?x?x3xbf16>, tensor<2x?x4xbf16> -> tensor<2x?x4xbf16>, tensor<2x3x4xf32>, tensor<2x3xf32>
// CHECK: %[[DV:.*]], %{{.*}}, %{{.*}} = linattn.scan reverse %[[K]], %[[Q]], %[[DO]] : tensor<2x?x?xbf16>, tensor<2x?x4xbf16>, tensor<?x?x3xbf16> -> tensor<2x?x3xbf16>, tensor<2x4x3xf32>, tensor<2x4xf32>
// CHECK-NOT: linattn.scan_grad
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
func.func @scan_grad_forward_bf16(%q: tensor<2x?x4xbf16>, %k: tensor<2x?x?xbf16>, %v: tensor<2x?x3xbf16>, %do: tensor<?x?x3xbf16>)
    -> (tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>) {
  %dq, %dk, %dv = linattn.scan_grad forward %q, %k, %v, %do
      : tensor<2x?x4xbf16>, tensor<2x?x?xbf16>, tensor<2x?x3xbf16>, tensor<?x?x3xbf16>
      -> tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>
  return %dq, %dk, %dv : tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>
}

// -----

// A reverse scan's gradients: the directions swap. f64 states stay f64.
// CHECK-LABEL: func.func @scan_grad_reverse_f64
// CHECK: linattn.scan reverse {{.*}} -> tensor<5x6xf64>, tensor<2x6xf64>, tensor<2xf64>
// CHECK: linattn.scan forward {{.*}} -> tensor<5x6xf64>, tensor<2x6xf64>, tensor<2xf64>
// CHECK: linattn.scan forward {{.*}} -> tensor<5x2xf64>, tensor<6x2xf64>, tensor<6xf64>
func.func @scan_grad_reverse_f64(%q: tensor<5x6xf64>, %v: tensor<5x2xf64>)
    -> (tensor<5x6xf64>, tensor<5x6xf64>, tensor<5x2xf64>) {
  %dq, %dk, %dv = linattn.scan_grad reverse %q, %q, %v, %v
      : tensor<5x6xf64>, tensor<5x6xf64>, tensor<5x2xf64>, tensor<5x2xf64>
      -> tensor<5x6xf64>, tensor<5x6xf64>, tensor<5x2xf64>
  return %dq, %dk, %dv : tensor<5x6xf64>, tensor<5x6xf64>, tensor<5x2xf64>
}

// -----

// Normalized: a fourth scan first, of φ(Q), φ(K) and [V, 1] (V inserted into
// an empty tensor, ones filled into its last column only), gives N and
// D - eps; generics make dO·N, g = dO / D (written alone and into the
// columns of [g, h] by one generic) and h = -(dO·N) / D²; [g, h] and [V, 1]
// are the queries and keys of the first two gradient scans, g the values of
// dV's.
// CHECK-LABEL: func.func @scan_grad_normalized
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x4xf32>, %[[K:.*]]: tensor<2x?x4xf32>, %[[V:.*]]: tensor<2x?x3xf32>, %[[DO:.*]]: tensor<2x?x3xf32>)
// CHECK: %[[ONES:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x?x1xf32>)
// CHECK: %[[VE:.*]] = tensor.insert_slice %[[V]] into %{{.*}}[0, 0, 0] [2, %{{.*}}, 3] [1, 1, 1] : tensor<2x?x3xf32> into tensor<2x?x4xf32>
// CHECK: %[[V1:.*]] = tensor.insert_slice %[[ONES]] into %[[VE]][0, 0, 3] [2, %{{.*}}, 1] [1, 1, 1] : tensor<2x?x1xf32> into tensor<2x?x4xf32>
// CHECK: %[[SUMS:.*]], %{{.*}}, %{{.*}} = linattn.scan forward %[[Q]], %[[K]], %[[V1]] :
// CHECK: %[[N:.*]] = tensor.extract_slice %[[SUMS]][0, 0, 0] [2, %{{.*}}, 3]
// CHECK: %[[D:.*]] = tensor.extract_slice %[[SUMS]][0, 0, 3] [2, %{{.*}}, 1]
// CHECK: %[[DOT:.*]] = linalg.generic {{.*}} ins(%[[DO]], %[[N]] :
// CHECK: %[[WIDE:.*]] = tensor.empty(%{{.*}}) : tensor<2x?x4xf32>
// CHECK: %[[COLS:.*]] = tensor.extract_slice %[[WIDE]][0, 0, 0] [2, %{{.*}}, 3]
// CHECK: %[[G:.*]]:2 = linalg.generic {{.*}} ins(%[[DO]], %[[D]] : {{.*}}) outs(%[[COLS]], %{{.*}} :
// CHECK: arith.divf
// CHECK: linalg.yield %[[QUOT:.*]], %[[QUOT]] : f32, f32
// CHECK: %[[G1:.*]] = tensor.insert_slice %[[G]]#0 into %[[WIDE]][0, 0, 0]
// CHECK: %[[H:.*]] = linalg.generic {{.*}} ins(%[[DOT]], %[[D]] :
// CHECK: arith.negf
// CHECK: %[[GH:.*]] = tensor.insert_slice %[[H]] into %[[G1]][0, 0, 3]
// CHECK: %[[DQ:.*]], %{{.*}}, %{{.*}} = linattn.scan forward %[[GH]], %[[V1]], %[[K]] :
// CHECK: %[[DK:.*]], %{{.*}}, %{{.*}} = linattn.scan reverse %[[V1]], %[[GH]], %[[Q]] :
// CHECK: %[[DV:.*]], %{{.*}}, %{{.*}} = linattn.scan reverse %[[K]], %[[Q]], %[[G]]#1 :
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
func.func @scan_grad_normalized(%q: tensor<2x?x4xf32>, %k: tensor<2x?x4xf32>, %v: tensor<2x?x3xf32>, %do: tensor<2x?x3xf32>)
    -> (tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32>) {
  %dq, %dk, %dv = linattn.scan_grad forward %q, %k, %v, %do normalize(eps = 1.0e-6)
      : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32>, tensor<2x?x3xf32>
      -> tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32>
  return %dq, %dk, %dv : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32>
}

// -----

// Causal attention's gradients: the feature maps, scan_grad's three scans
// (dφ(Q) forward, dφ(K) and dV reverse), then the chain rule through elu
// for Q and K, in f32 for bf16 data, with the features as the slope where
// x ≤ 0 (no second feature map, no exp).
// CHECK-LABEL: func.func @attention_grad_causal_bf16
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x4xbf16>, %[[K:.*]]: tensor<2x?x4xbf16>, %[[V:.*]]: tensor<2x?x3xbf16>, %[[DO:.*]]: tensor<2x?x3xbf16>)
// CHECK: %[[FQ:.*]] = linattn.feature_map elu %[[Q]]
// CHECK: %[[FK:.*]] = linattn.feature_map elu %[[K]]
// CHECK: %[[DFQ:.*]], %{{.*}}, %{{.*}} = linattn.scan forward %[[DO]], %[[V]], %[[FK]] :
// CHECK: %[[DFK:.*]], %{{.*}}, %{{.*}} = linattn.scan reverse %[[V]], %[[DO]], %[[FQ]] :
// CHECK: %[[DV:.*]], %{{.*}}, %{{.*}} = linattn.scan reverse %[[FK]], %[[FQ]], %[[DO]] :
// CHECK-NOT: linattn.feature_map
// CHECK: %[[DQ:.*]] = linalg.generic {{.*}} ins(%[[Q]], %[[DFQ]], %[[FQ]] : tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x4xbf16>)
// CHECK: %[[X:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[DPHI:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[PHI:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[POS:.*]] = arith.cmpf ogt, %[[X]]
// CHECK: %[[SCALED:.*]] = arith.mulf %[[DPHI]], %[[PHI]]
// CHECK: arith.select %[[POS]], %[[DPHI]], %[[SCALED]]
// CHECK: arith.truncf
// CHECK: %[[DK:.*]] = linalg.generic {{.*}} ins(%[[K]], %[[DFK]], %[[FK]] : tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x4xbf16>)
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
// CHECK-NOT: linattn.scan_grad
// CHECK-NOT: linattn.feature_map_grad
func.func @attention_grad_causal_bf16(%q: tensor<2x?x4xbf16>, %k: tensor<2x?x4xbf16>, %v: tensor<2x?x3xbf16>, %do: tensor<2x?x3xbf16>)
    -> (tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>) {
  %dq, %dk, %dv = linattn.attention_grad elu %q, %k, %v, %do causal
      : tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>, tensor<2x?x3xbf16>
      -> tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>
  return %dq, %dk, %dv : tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>
}

// -----

// Non-causal normalized gradients with keys of another length: the linear
// form of [V, 1] recomputes [N, D - eps], [g, h] replaces dO, and three
// summaries and readouts give dφ(Q) = [g, h] S'ᵀ, dφ(K) = [V, 1] dS'ᵀ and
// dV = φ(K) dS' without its column of h; no N×M scores.
// CHECK-LABEL: func.func @attention_grad_full_normalized
// CHECK-SAME: (%[[Q:.*]]: tensor<2x5x4xf32>, %[[K:.*]]: tensor<2x7x4xf32>, %[[V:.*]]: tensor<2x7x3xf32>, %[[DO:.*]]: tensor<2x5x3xf32>)
// CHECK: %[[FQ:.*]] = linattn.feature_map relu %[[Q]]
// CHECK: %[[FK:.*]] = linattn.feature_map relu %[[K]]
// CHECK: %[[VE:.*]] = tensor.insert_slice %[[V]] into %{{.*}}[0, 0, 0] [2, 7, 3] [1, 1, 1] : tensor<2x7x3xf32> into tensor<2x7x4xf32>
// CHECK: %[[V1:.*]] = tensor.insert_slice %{{.*}} into %[[VE]][0, 0, 3] [2, 7, 1] [1, 1, 1] : tensor<2x7x1xf32> into tensor<2x7x4xf32>
// CHECK: %[[S:.*]], %{{.*}} = linattn.kv_summary %[[FK]], %[[V1]] : tensor<2x7x4xf32>, tensor<2x7x4xf32> -> tensor<2x4x4xf32>, tensor<2x4xf32>
// CHECK: %[[SUMS:.*]] = linattn.query_readout %[[FQ]], %[[S]] : tensor<2x5x4xf32>, tensor<2x4x4xf32> -> tensor<2x5x4xf32>
// CHECK: %[[NUM:.*]] = tensor.extract_slice %[[SUMS]][0, 0, 0] [2, 5, 3]
// CHECK: %[[DEN:.*]] = tensor.extract_slice %[[SUMS]][0, 0, 3] [2, 5, 1]
// CHECK: %[[DOTS:.*]] = linalg.generic {{.*}} ins(%[[DO]], %[[NUM]] :
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[DO]], %[[DEN]] : {{.*}}) outs(%{{.*}} : tensor<2x5x3xf32>)
// CHECK: %[[G1:.*]] = tensor.insert_slice %[[G]] into
// CHECK: %[[H:.*]] = linalg.generic {{.*}} ins(%[[DOTS]], %[[DEN]] :
// CHECK: %[[GH:.*]] = tensor.insert_slice %[[H]] into %[[G1]][0, 0, 3] [2, 5, 1]
// CHECK: %[[ST:.*]] = linalg.transpose ins(%[[S]] : tensor<2x4x4xf32>) outs(%{{.*}} : tensor<2x4x4xf32>) permutation = [0, 2, 1]
// CHECK: %[[DFQ:.*]] = linattn.query_readout %[[GH]], %[[ST]] : tensor<2x5x4xf32>, tensor<2x4x4xf32> -> tensor<2x5x4xf32>
// CHECK: %[[DS:.*]], %{{.*}} = linattn.kv_summary %[[FQ]], %[[GH]] : tensor<2x5x4xf32>, tensor<2x5x4xf32> -> tensor<2x4x4xf32>, tensor<2x4xf32>
// CHECK: %[[DST:.*]] = linalg.transpose ins(%[[DS]] :
// CHECK: %[[DFK:.*]] = linattn.query_readout %[[V1]], %[[DST]] : tensor<2x7x4xf32>, tensor<2x4x4xf32> -> tensor<2x7x4xf32>
// CHECK: %[[DSV:.*]] = tensor.extract_slice %[[DS]][0, 0, 0] [2, 4, 3] [1, 1, 1] : tensor<2x4x4xf32> to tensor<2x4x3xf32>
// CHECK: %[[DV:.*]] = linattn.query_readout %[[FK]], %[[DSV]] : tensor<2x7x4xf32>, tensor<2x4x3xf32> -> tensor<2x7x3xf32>
// CHECK: %[[DQ:.*]] = linalg.generic {{.*}} ins(%[[Q]], %[[DFQ]] :
// CHECK: %[[DK:.*]] = linalg.generic {{.*}} ins(%[[K]], %[[DFK]] :
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
// CHECK-NOT: linattn.scores
func.func @attention_grad_full_normalized(%q: tensor<2x5x4xf32>, %k: tensor<2x7x4xf32>, %v: tensor<2x7x3xf32>, %do: tensor<2x5x3xf32>)
    -> (tensor<2x5x4xf32>, tensor<2x7x4xf32>, tensor<2x7x3xf32>) {
  %dq, %dk, %dv = linattn.attention_grad relu %q, %k, %v, %do normalize(eps = 1.0e-6)
      : tensor<2x5x4xf32>, tensor<2x7x4xf32>, tensor<2x7x3xf32>, tensor<2x5x3xf32>
      -> tensor<2x5x4xf32>, tensor<2x7x4xf32>, tensor<2x7x3xf32>
  return %dq, %dk, %dv : tensor<2x5x4xf32>, tensor<2x7x4xf32>, tensor<2x7x3xf32>
}

// -----

// Unnormalized: S = φ(K)ᵀV and dS = φ(Q)ᵀdO directly, no [V, 1].
// CHECK-LABEL: func.func @attention_grad_full_plain
// CHECK-SAME: (%[[Q:.*]]: tensor<?x6xf64>, %[[K:.*]]: tensor<?x6xf64>, %[[V:.*]]: tensor<?x2xf64>, %[[DO:.*]]: tensor<?x2xf64>)
// CHECK: %[[FQ:.*]] = linattn.feature_map identity %[[Q]]
// CHECK: %[[FK:.*]] = linattn.feature_map identity %[[K]]
// CHECK: %[[S:.*]], %{{.*}} = linattn.kv_summary %[[FK]], %[[V]] : tensor<?x6xf64>, tensor<?x2xf64> -> tensor<6x2xf64>, tensor<6xf64>
// CHECK: %[[ST:.*]] = linalg.transpose ins(%[[S]] : tensor<6x2xf64>) outs(%{{.*}} : tensor<2x6xf64>) permutation = [1, 0]
// CHECK: %[[DFQ:.*]] = linattn.query_readout %[[DO]], %[[ST]] : tensor<?x2xf64>, tensor<2x6xf64> -> tensor<?x6xf64>
// CHECK: %[[DS:.*]], %{{.*}} = linattn.kv_summary %[[FQ]], %[[DO]] : tensor<?x6xf64>, tensor<?x2xf64> -> tensor<6x2xf64>, tensor<6xf64>
// CHECK: %[[DST:.*]] = linalg.transpose ins(%[[DS]] :
// CHECK: %[[DFK:.*]] = linattn.query_readout %[[V]], %[[DST]] : tensor<?x2xf64>, tensor<2x6xf64> -> tensor<?x6xf64>
// CHECK: %[[DV:.*]] = linattn.query_readout %[[FK]], %[[DS]] : tensor<?x6xf64>, tensor<6x2xf64> -> tensor<?x2xf64>
// CHECK: return %[[DFQ]], %[[DFK]], %[[DV]]
func.func @attention_grad_full_plain(%q: tensor<?x6xf64>, %k: tensor<?x6xf64>, %v: tensor<?x2xf64>, %do: tensor<?x2xf64>)
    -> (tensor<?x6xf64>, tensor<?x6xf64>, tensor<?x2xf64>) {
  %dq, %dk, %dv = linattn.attention_grad identity %q, %k, %v, %do
      : tensor<?x6xf64>, tensor<?x6xf64>, tensor<?x2xf64>, tensor<?x2xf64>
      -> tensor<?x6xf64>, tensor<?x6xf64>, tensor<?x2xf64>
  return %dq, %dk, %dv : tensor<?x6xf64>, tensor<?x6xf64>, tensor<?x2xf64>
}

// -----

// favor: φ recomputed (no features precede the op), then
// dx_d = Σ_f dφ_f φ_f (P_df − x_d) in one reduction over the features.
// CHECK-DAG: #[[ROW_F:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[P_MAP:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[ROW_D:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @feature_map_grad_favor
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[D:.*]]: tensor<?x16xf32>, %[[P:.*]]: tensor<8x16xf32>)
// CHECK: %[[PHI:.*]] = linattn.feature_map favor %[[X]] projection(%[[P]]) : tensor<?x8xf32>, tensor<8x16xf32> -> tensor<?x16xf32>
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [#[[ROW_F]], #[[ROW_F]], #[[P_MAP]], #[[ROW_D]], #[[ROW_D]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[D]], %[[PHI]], %[[P]], %[[X]] :
// CHECK: ^bb0(%[[DPHI:.*]]: f32, %[[F:.*]]: f32, %[[PDF:.*]]: f32, %[[XD:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[W:.*]] = arith.mulf %[[DPHI]], %[[F]]
// CHECK: %[[SLOPE:.*]] = arith.subf %[[PDF]], %[[XD]]
// CHECK: math.fma %[[W]], %[[SLOPE]], %[[ACC]]
// CHECK: return %[[DX]]
func.func @feature_map_grad_favor(%x: tensor<?x8xf32>, %d: tensor<?x16xf32>, %p: tensor<8x16xf32>) -> tensor<?x8xf32> {
  %dx = linattn.feature_map_grad favor %x, %d projection(%p) : tensor<?x8xf32>, tensor<?x16xf32>, tensor<8x16xf32> -> tensor<?x8xf32>
  return %dx : tensor<?x8xf32>
}

// -----

// poly2: dφ's features 1 … D plus (G + Gᵀ) x / √2, G's elements read from
// dφ at 1 + D + m·D + j and 1 + D + j·D + m.
// CHECK-LABEL: func.func @feature_map_grad_poly2
// CHECK-SAME: (%[[X:.*]]: tensor<5x3xf32>, %[[D:.*]]: tensor<5x13xf32>)
// CHECK: %[[LIN:.*]] = tensor.extract_slice %[[D]][0, 1] [5, 3] [1, 1]
// CHECK: %[[SUMS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<5x3xf32>)
// CHECK: %[[M:.*]] = linalg.index 1
// CHECK: %[[J:.*]] = linalg.index 2
// CHECK: tensor.extract %[[D]]
// CHECK: tensor.extract %[[D]]
// CHECK: math.fma
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} ins(%[[LIN]], %[[SUMS]] :
// CHECK: arith.constant 0.707106769 : f32
// CHECK: return %[[DX]]
func.func @feature_map_grad_poly2(%x: tensor<5x3xf32>, %d: tensor<5x13xf32>) -> tensor<5x3xf32> {
  %dx = linattn.feature_map_grad poly2 %x, %d : tensor<5x3xf32>, tensor<5x13xf32> -> tensor<5x3xf32>
  return %dx : tensor<5x3xf32>
}

// -----

// identity: the gradient itself, cast to the result's type.
// CHECK-LABEL: func.func @feature_map_grad_identity
// CHECK-SAME: (%[[X:.*]]: tensor<5x3xf32>, %[[D:.*]]: tensor<?x3xf32>)
// CHECK-NEXT: %[[DX:.*]] = tensor.cast %[[D]] : tensor<?x3xf32> to tensor<5x3xf32>
// CHECK-NEXT: return %[[DX]]
func.func @feature_map_grad_identity(%x: tensor<5x3xf32>, %d: tensor<?x3xf32>) -> tensor<5x3xf32> {
  %dx = linattn.feature_map_grad identity %x, %d : tensor<5x3xf32>, tensor<?x3xf32> -> tensor<5x3xf32>
  return %dx : tensor<5x3xf32>
}

// -----

// negative_: the primitives are left alone.
// CHECK-LABEL: func.func @negative_primitives
// CHECK-NEXT: linattn.feature_map identity
// CHECK-NEXT: linattn.scores
// CHECK-NEXT: linattn.apply_scores
// CHECK-NEXT: return
func.func @negative_primitives(%q: tensor<8x4xf32>, %v: tensor<8x2xf32>) -> tensor<8x2xf32> {
  %f = linattn.feature_map identity %q : tensor<8x4xf32> -> tensor<8x?xf32>
  %a = linattn.scores %f, %f : tensor<8x?xf32>, tensor<8x?xf32> -> tensor<8x8xf32>
  %o = linattn.apply_scores %a, %v : tensor<8x8xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
  return %o : tensor<8x2xf32>
}

// -----

// With an initial state and final-state gradients, unnormalized: dφ(Q)'s
// scan starts from S₀ᵀ, dφ(K)'s from dSᵀ (and adds dz to every row), dV's
// from dS; dS₀ is dV's final state and dz₀ = dz.
// CHECK-LABEL: func.func @scan_grad_states
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x4xf32>, %[[V:.*]]: tensor<2x?x3xf32>, %[[S0:.*]]: tensor<2x4x3xf32>, %[[Z0:.*]]: tensor<2x4xf32>, %[[DS:.*]]: tensor<2x4x3xf32>, %[[DZ:.*]]: tensor<2x4xf32>)
// CHECK: %[[S0T:.*]] = linalg.transpose ins(%[[S0]] : tensor<2x4x3xf32>) outs(%{{.*}} : tensor<2x3x4xf32>) permutation = [0, 2, 1]
// CHECK: %[[DQ:.*]], %{{.*}}, %{{.*}} = linattn.scan forward %{{.*}}, %[[V]], %[[Q]] init(%[[S0T]], %{{.*}}) :
// CHECK: %[[DST:.*]] = linalg.transpose ins(%[[DS]] : tensor<2x4x3xf32>) outs(%{{.*}} : tensor<2x3x4xf32>) permutation = [0, 2, 1]
// CHECK: %[[DK0:.*]], %{{.*}}, %{{.*}} = linattn.scan reverse %[[V]], %{{.*}}, %[[Q]] init(%[[DST]], %{{.*}}) :
// CHECK: %[[DK:.*]] = linalg.generic {{.*}} ins(%[[DK0]], %[[DZ]] :
// CHECK: arith.addf
// CHECK: %[[DV:.*]], %[[DS0:.*]], %{{.*}} = linattn.scan reverse %[[Q]], %[[Q]], %{{.*}} init(%[[DS]], %{{.*}}) :
// CHECK-NOT: linattn.scan_grad
// CHECK: return %[[DQ]], %[[DK]], %[[DV]], %[[DS0]], %[[DZ]]
func.func @scan_grad_states(%q: tensor<2x?x4xf32>, %v: tensor<2x?x3xf32>,
                            %s0: tensor<2x4x3xf32>, %z0: tensor<2x4xf32>,
                            %ds: tensor<2x4x3xf32>, %dz: tensor<2x4xf32>)
    -> (tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>) {
  %dq, %dk, %dv, %ds0, %dz0 = linattn.scan_grad forward %q, %q, %v, %v
      init(%s0, %z0 : tensor<2x4x3xf32>, tensor<2x4xf32>)
      final_grad(%ds, %dz : tensor<2x4x3xf32>, tensor<2x4xf32>)
      : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32>, tensor<2x?x3xf32>
      -> tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return %dq, %dk, %dv, %ds0, %dz0 : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
}

// -----

// Normalized, from [S₀, z₀]: the recomputing scan starts from it, dφ(Q)'s
// scan from its transpose, dφ(K)'s from [dS, dz]ᵀ; dz₀ is row Dv of dφ(K)'s
// final state. Without final_grad the reversed scans start from zero.
// CHECK-LABEL: func.func @scan_grad_states_normalized
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x4xf32>, %[[V:.*]]: tensor<2x?x3xf32>, %[[S0:.*]]: tensor<2x4x3xf32>, %[[Z0:.*]]: tensor<2x4xf32>)
// CHECK: %[[COLUMN:.*]] = linalg.generic {{.*}} ins(%[[Z0]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4x1xf32>)
// CHECK: %[[WIDE:.*]] = tensor.insert_slice %[[S0]] into %{{.*}}[0, 0, 0] [2, 4, 3] [1, 1, 1] : tensor<2x4x3xf32> into tensor<2x4x4xf32>
// CHECK: %[[INIT:.*]] = tensor.insert_slice %[[COLUMN]] into %[[WIDE]][0, 0, 3] [2, 4, 1] [1, 1, 1]
// CHECK: %[[SUMS:.*]], %{{.*}}, %{{.*}} = linattn.scan forward %[[Q]], %[[Q]], %{{.*}} init(%[[INIT]], %{{.*}}) :
// CHECK: %[[INITT:.*]] = linalg.transpose ins(%[[INIT]] : tensor<2x4x4xf32>)
// CHECK: %[[DQ:.*]], %{{.*}}, %{{.*}} = linattn.scan forward %{{.*}}, %{{.*}}, %[[Q]] init(%[[INITT]], %{{.*}}) :
// CHECK: %[[DK:.*]], %[[DKS:.*]], %{{.*}} = linattn.scan reverse %{{.*}}, %{{.*}}, %[[Q]] : {{.*}} -> tensor<2x?x4xf32>, tensor<2x4x4xf32>, tensor<2x4xf32>
// CHECK: %[[DV:.*]], %[[DS0:.*]], %{{.*}} = linattn.scan reverse %[[Q]], %[[Q]], %{{.*}} : {{.*}} -> tensor<2x?x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
// CHECK: %[[DZ0:.*]] = tensor.extract_slice %[[DKS]][0, 3, 0] [2, 1, 4] [1, 1, 1] : tensor<2x4x4xf32> to tensor<2x4xf32>
// CHECK: return %[[DQ]], %[[DK]], %[[DV]], %[[DS0]], %[[DZ0]]
func.func @scan_grad_states_normalized(%q: tensor<2x?x4xf32>, %v: tensor<2x?x3xf32>,
                                       %s0: tensor<2x4x3xf32>, %z0: tensor<2x4xf32>)
    -> (tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>) {
  %dq, %dk, %dv, %ds0, %dz0 = linattn.scan_grad forward %q, %q, %v, %v
      init(%s0, %z0 : tensor<2x4x3xf32>, tensor<2x4xf32>) normalize(eps = 1.0e-6)
      : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32>, tensor<2x?x3xf32>
      -> tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return %dq, %dk, %dv, %ds0, %dz0 : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
}
