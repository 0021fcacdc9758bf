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
// ones), gives N and D - eps; generics make dO·N, g = dO / D and
// h = -(dO·N) / D²; [g, h] and [V, 1] are the queries and keys of the
// first two gradient scans, g the values of dV's.
// CHECK-LABEL: func.func @scan_grad_normalized
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x4xf32>, %[[K:.*]]: tensor<2x?x4xf32>, %[[V:.*]]: tensor<2x?x3xf32>, %[[DO:.*]]: tensor<2x?x3xf32>)
// CHECK: %[[ONES:.*]] = linalg.fill
// CHECK: %[[V1:.*]] = tensor.insert_slice %[[V]] into %[[ONES]][0, 0, 0] [2, %{{.*}}, 3] [1, 1, 1] : tensor<2x?x3xf32> into tensor<2x?x4xf32>
// CHECK: %[[SUMS:.*]], %{{.*}}, %{{.*}} = linattn.scan forward %[[Q]], %[[K]], %[[V1]] :
// CHECK: %[[N:.*]] = tensor.extract_slice %[[SUMS]][0, 0, 0] [2, %{{.*}}, 3]
// CHECK: %[[D:.*]] = tensor.extract_slice %[[SUMS]][0, 0, 3] [2, %{{.*}}, 1]
// CHECK: %[[DOT:.*]] = linalg.generic {{.*}} ins(%[[DO]], %[[N]] :
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[DO]], %[[D]] :
// CHECK: arith.divf
// CHECK: %[[H:.*]] = linalg.generic {{.*}} ins(%[[DOT]], %[[D]] :
// CHECK: arith.negf
// CHECK: %[[G1:.*]] = tensor.insert_slice %[[G]]
// CHECK: %[[GH:.*]] = tensor.insert_slice %[[H]] into %[[G1]][0, 0, 3]
// CHECK: %[[DQ:.*]], %{{.*}}, %{{.*}} = linattn.scan forward %[[GH]], %[[V1]], %[[K]] :
// CHECK: %[[DK:.*]], %{{.*}}, %{{.*}} = linattn.scan reverse %[[V1]], %[[GH]], %[[Q]] :
// CHECK: %[[DV:.*]], %{{.*}}, %{{.*}} = linattn.scan reverse %[[K]], %[[Q]], %[[G]] :
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
func.func @scan_grad_normalized(%q: tensor<2x?x4xf32>, %k: tensor<2x?x4xf32>, %v: tensor<2x?x3xf32>, %do: tensor<2x?x3xf32>)
    -> (tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32>) {
  %dq, %dk, %dv = linattn.scan_grad forward %q, %k, %v, %do normalize(eps = 1.0e-6)
      : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32>, tensor<2x?x3xf32>
      -> tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32>
  return %dq, %dk, %dv : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2x?x3xf32>
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
