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
