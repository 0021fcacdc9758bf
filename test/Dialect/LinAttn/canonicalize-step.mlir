// RUN: linattn-opt %s -canonicalize -split-input-file | FileCheck %s

// A forward scan over one token with an initial state is one step.
// CHECK-LABEL: func.func @single_token_forward
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x1x16xf32>, %[[K:.*]]: tensor<2x8x1x16xf32>, %[[V:.*]]: tensor<2x8x1x4xf32>, %[[S0:.*]]: tensor<2x8x16x4xf32>, %[[Z0:.*]]: tensor<2x8x16xf32>)
// CHECK-DAG: %[[QT:.*]] = tensor.collapse_shape %[[Q]] {{\[\[}}0], [1], [2, 3]] : tensor<2x8x1x16xf32> into tensor<2x8x16xf32>
// CHECK-DAG: %[[KT:.*]] = tensor.collapse_shape %[[K]] {{\[\[}}0], [1], [2, 3]] : tensor<2x8x1x16xf32> into tensor<2x8x16xf32>
// CHECK-DAG: %[[VT:.*]] = tensor.collapse_shape %[[V]] {{\[\[}}0], [1], [2, 3]] : tensor<2x8x1x4xf32> into tensor<2x8x4xf32>
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.step %[[QT]], %[[KT]], %[[VT]], %[[S0]], %[[Z0]] normalize(eps = 9.9999999999999995E-7)
// CHECK: %[[OE:.*]] = tensor.expand_shape %[[O]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 8, 1, 4] : tensor<2x8x4xf32> into tensor<2x8x1x4xf32>
// CHECK-NOT: linattn.scan
// CHECK: return %[[OE]], %[[S]], %[[Z]]
func.func @single_token_forward(%q: tensor<2x8x1x16xf32>, %k: tensor<2x8x1x16xf32>,
                                %v: tensor<2x8x1x4xf32>, %s0: tensor<2x8x16x4xf32>,
                                %z0: tensor<2x8x16xf32>)
    -> (tensor<2x8x1x4xf32>, tensor<2x8x16x4xf32>, tensor<2x8x16xf32>) {
  %o, %s, %z = linattn.scan forward %q, %k, %v init(%s0, %z0) normalize(eps = 1.0e-6)
      : tensor<2x8x1x16xf32>, tensor<2x8x1x16xf32>, tensor<2x8x1x4xf32>,
        tensor<2x8x16x4xf32>, tensor<2x8x16xf32>
      -> tensor<2x8x1x4xf32>, tensor<2x8x16x4xf32>, tensor<2x8x16xf32>
  return %o, %s, %z : tensor<2x8x1x4xf32>, tensor<2x8x16x4xf32>, tensor<2x8x16xf32>
}

// -----

// Reverse is the same for one token. Without an initial state the step
// starts from zeros, sized from the query and the values where the state
// type leaves sizes open; the bf16 data keeps its f32 state.
// CHECK-LABEL: func.func @single_token_reverse_no_init
// CHECK-SAME: (%[[Q:.*]]: tensor<?x1x16xbf16>, %[[K:.*]]: tensor<?x1x16xbf16>, %[[V:.*]]: tensor<?x1x?xbf16>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<?x1x16xbf16>
// CHECK-DAG: %[[DV:.*]] = tensor.dim %[[V]], %{{.*}} : tensor<?x1x?xbf16>
// CHECK-DAG: %[[S0:.*]] = tensor.splat %[[ZERO]][%[[B]], %[[DV]]] : tensor<?x16x?xf32>
// CHECK-DAG: %[[B2:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<?x1x16xbf16>
// CHECK-DAG: %[[Z0:.*]] = tensor.splat %[[ZERO]][%[[B2]]] : tensor<?x16xf32>
// CHECK: linattn.step %{{.*}}, %{{.*}}, %{{.*}}, %[[S0]], %[[Z0]] : tensor<?x16xbf16>, tensor<?x16xbf16>, tensor<?x?xbf16>, tensor<?x16x?xf32>, tensor<?x16xf32>
// CHECK-NOT: linattn.scan
func.func @single_token_reverse_no_init(%q: tensor<?x1x16xbf16>, %k: tensor<?x1x16xbf16>,
                                        %v: tensor<?x1x?xbf16>)
    -> (tensor<?x1x?xbf16>, tensor<?x16x?xf32>, tensor<?x16xf32>) {
  %o, %s, %z = linattn.scan reverse %q, %k, %v
      : tensor<?x1x16xbf16>, tensor<?x1x16xbf16>, tensor<?x1x?xbf16>
      -> tensor<?x1x?xbf16>, tensor<?x16x?xf32>, tensor<?x16xf32>
  return %o, %s, %z : tensor<?x1x?xbf16>, tensor<?x16x?xf32>, tensor<?x16xf32>
}

// -----

// Unbatched, with a result type less static than the token: the expanded
// result is cast back to it.
// CHECK-LABEL: func.func @single_token_unbatched_cast
// CHECK: %[[O:.*]], %{{.*}}, %{{.*}} = linattn.step
// CHECK: %[[OE:.*]] = tensor.expand_shape %[[O]] {{\[\[}}0, 1]] output_shape [1, 3] : tensor<3xf64> into tensor<1x3xf64>
// CHECK: %[[OC:.*]] = tensor.cast %[[OE]] : tensor<1x3xf64> to tensor<?x3xf64>
// CHECK: return %[[OC]]
func.func @single_token_unbatched_cast(%q: tensor<1x4xf64>, %k: tensor<1x4xf64>, %v: tensor<1x3xf64>)
    -> tensor<?x3xf64> {
  %o, %s, %z = linattn.scan forward %q, %k, %v
      : tensor<1x4xf64>, tensor<1x4xf64>, tensor<1x3xf64>
      -> tensor<?x3xf64>, tensor<4x3xf64>, tensor<4xf64>
  return %o : tensor<?x3xf64>
}

// -----

// Two tokens are a scan, not a step.
// CHECK-LABEL: func.func @no_fold_two_tokens
// CHECK: linattn.scan forward
// CHECK-NOT: linattn.step
func.func @no_fold_two_tokens(%q: tensor<2x4xf32>, %k: tensor<2x4xf32>, %v: tensor<2x3xf32>)
    -> tensor<2x3xf32> {
  %o, %s, %z = linattn.scan forward %q, %k, %v
      : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>
      -> tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return %o : tensor<2x3xf32>
}

// -----

// A dynamic length may be 1 or not: left alone.
// CHECK-LABEL: func.func @no_fold_dynamic_length
// CHECK: linattn.scan forward
// CHECK-NOT: linattn.step
func.func @no_fold_dynamic_length(%q: tensor<?x4xf32>, %k: tensor<?x4xf32>, %v: tensor<?x3xf32>)
    -> tensor<?x3xf32> {
  %o, %s, %z = linattn.scan forward %q, %k, %v
      : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x3xf32>
      -> tensor<?x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return %o : tensor<?x3xf32>
}

// -----

// Only the query is known to have one token; the keys' length is dynamic.
// The verifier only compares static sizes, so this is left alone.
// CHECK-LABEL: func.func @no_fold_partly_static
// CHECK: linattn.scan forward
// CHECK-NOT: linattn.step
func.func @no_fold_partly_static(%q: tensor<1x4xf32>, %k: tensor<?x4xf32>, %v: tensor<?x3xf32>)
    -> tensor<1x3xf32> {
  %o, %s, %z = linattn.scan forward %q, %k, %v
      : tensor<1x4xf32>, tensor<?x4xf32>, tensor<?x3xf32>
      -> tensor<1x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return %o : tensor<1x3xf32>
}
