// RUN: linattn-opt %s -linattn-scan-to-steps -split-input-file | FileCheck %s
// RUN: linattn-opt %s -linattn-scan-to-steps=max-length=2 -split-input-file | FileCheck %s --check-prefix=MAX2

// Three forward steps thread the state from the scan's init; the last
// state is the scan's final state and the outputs are concatenated in order.
// CHECK-LABEL: func.func @forward_with_init
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x3x4xf32>, %[[K:[^:]*]]: tensor<2x3x4xf32>, %[[V:[^:]*]]: tensor<2x3x5xf32>, %[[S0:[^:]*]]: tensor<2x4x5xf32>, %[[Z0:[^:]*]]: tensor<2x4xf32>)
// CHECK-NOT: linattn.scan
// Each token is a slice that keeps its unit dimension, collapsed into the
// features (a rank-reducing slice is ambiguous beside a batch of 1).
// CHECK: %[[QS0:.*]] = tensor.extract_slice %[[Q]][0, 0, 0] [2, 1, 4] [1, 1, 1] : tensor<2x3x4xf32> to tensor<2x1x4xf32>
// CHECK: %[[Q0:.*]] = tensor.collapse_shape %[[QS0]] {{\[}}[0], [1, 2]] : tensor<2x1x4xf32> into tensor<2x4xf32>
// CHECK: %[[KS0:.*]] = tensor.extract_slice %[[K]][0, 0, 0] [2, 1, 4] [1, 1, 1]
// CHECK: %[[K0:.*]] = tensor.collapse_shape %[[KS0]]
// CHECK: %[[VS0:.*]] = tensor.extract_slice %[[V]][0, 0, 0] [2, 1, 5] [1, 1, 1] : tensor<2x3x5xf32> to tensor<2x1x5xf32>
// CHECK: %[[V0:.*]] = tensor.collapse_shape %[[VS0]] {{\[}}[0], [1, 2]] : tensor<2x1x5xf32> into tensor<2x5xf32>
// CHECK: %[[O0:.*]], %[[S1:.*]], %[[Z1:.*]] = linattn.step %[[Q0]], %[[K0]], %[[V0]], %[[S0]], %[[Z0]] normalize(eps = 9.9999999999999995E-7) : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x5xf32>, tensor<2x4x5xf32>, tensor<2x4xf32> -> tensor<2x5xf32>, tensor<2x4x5xf32>, tensor<2x4xf32>
// CHECK: %[[E0:.*]] = tensor.expand_shape %[[O0]] {{\[}}[0], [1, 2]] output_shape [2, 1, 5] : tensor<2x5xf32> into tensor<2x1x5xf32>
// CHECK: %[[QS1:.*]] = tensor.extract_slice %[[Q]][0, 1, 0] [2, 1, 4] [1, 1, 1]
// CHECK: %[[Q1:.*]] = tensor.collapse_shape %[[QS1]]
// CHECK: %[[O1:.*]], %[[S2:.*]], %[[Z2:.*]] = linattn.step %[[Q1]], %{{.*}}, %{{.*}}, %[[S1]], %[[Z1]] normalize
// CHECK: %[[E1:.*]] = tensor.expand_shape %[[O1]]
// CHECK: %[[QS2:.*]] = tensor.extract_slice %[[Q]][0, 2, 0] [2, 1, 4] [1, 1, 1]
// CHECK: %[[Q2:.*]] = tensor.collapse_shape %[[QS2]]
// CHECK: %[[O2:.*]], %[[S3:.*]], %[[Z3:.*]] = linattn.step %[[Q2]], %{{.*}}, %{{.*}}, %[[S2]], %[[Z2]] normalize
// CHECK: %[[E2:.*]] = tensor.expand_shape %[[O2]]
// CHECK: %[[O:.*]] = tensor.concat dim(1) %[[E0]], %[[E1]], %[[E2]] : (tensor<2x1x5xf32>, tensor<2x1x5xf32>, tensor<2x1x5xf32>) -> tensor<2x3x5xf32>
// CHECK: return %[[O]], %[[S3]], %[[Z3]]
// The same scan is longer than max-length=2: left alone.
// MAX2-LABEL: func.func @forward_with_init
// MAX2: linattn.scan forward
// MAX2-NOT: linattn.step
func.func @forward_with_init(%q: tensor<2x3x4xf32>, %k: tensor<2x3x4xf32>, %v: tensor<2x3x5xf32>,
                             %s0: tensor<2x4x5xf32>, %z0: tensor<2x4xf32>)
    -> (tensor<2x3x5xf32>, tensor<2x4x5xf32>, tensor<2x4xf32>) {
  %o, %s, %z = linattn.scan forward %q, %k, %v init(%s0, %z0) normalize(eps = 1.0e-6)
      : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x5xf32>, tensor<2x4x5xf32>, tensor<2x4xf32>
      -> tensor<2x3x5xf32>, tensor<2x4x5xf32>, tensor<2x4xf32>
  return %o, %s, %z : tensor<2x3x5xf32>, tensor<2x4x5xf32>, tensor<2x4xf32>
}

// -----

// A reverse scan visits the last token first and starts from zero state
// (sized from the operands); its outputs still concatenate in sequence order.
// CHECK-LABEL: func.func @reverse_zero_state_dynamic_batch
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<?x2x4xbf16>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<?x2x4xbf16>
// CHECK: %[[S0:.*]] = tensor.splat %{{.*}}[%{{.*}}] : tensor<?x4x3xf32>
// CHECK: %[[Z0:.*]] = tensor.splat %{{.*}}[%{{.*}}] : tensor<?x4xf32>
// CHECK: %[[QS1:.*]] = tensor.extract_slice %[[Q]][0, 1, 0] [%{{.*}}, 1, 4] [1, 1, 1] : tensor<?x2x4xbf16> to tensor<?x1x4xbf16>
// CHECK: %[[Q1:.*]] = tensor.collapse_shape %[[QS1]]
// CHECK: %[[O1:.*]], %[[S1:.*]], %[[Z1:.*]] = linattn.step %[[Q1]], %{{.*}}, %{{.*}}, %[[S0]], %[[Z0]] : tensor<?x4xbf16>, tensor<?x4xbf16>, tensor<?x3xbf16>, tensor<?x4x3xf32>, tensor<?x4xf32> -> tensor<?x3xbf16>, tensor<?x4x3xf32>, tensor<?x4xf32>
// CHECK: %[[E1:.*]] = tensor.expand_shape %[[O1]]
// CHECK: %[[QS0:.*]] = tensor.extract_slice %[[Q]][0, 0, 0]
// CHECK: %[[Q0:.*]] = tensor.collapse_shape %[[QS0]]
// CHECK: %[[O0:.*]], %[[S2:.*]], %{{.*}} = linattn.step %[[Q0]], %{{.*}}, %{{.*}}, %[[S1]], %[[Z1]]
// CHECK: %[[E0:.*]] = tensor.expand_shape %[[O0]]
// CHECK: %[[O:.*]] = tensor.concat dim(1) %[[E0]], %[[E1]] : (tensor<?x1x3xbf16>, tensor<?x1x3xbf16>) -> tensor<?x2x3xbf16>
// CHECK: return %[[O]], %[[S2]]
// MAX2-LABEL: func.func @reverse_zero_state_dynamic_batch
// MAX2-NOT: linattn.scan
// MAX2-COUNT-2: linattn.step
// MAX2-NOT: linattn.scan
// MAX2: return
func.func @reverse_zero_state_dynamic_batch(%q: tensor<?x2x4xbf16>, %k: tensor<?x2x4xbf16>, %v: tensor<?x2x3xbf16>)
    -> (tensor<?x2x3xbf16>, tensor<?x4x3xf32>) {
  %o, %s, %z = linattn.scan reverse %q, %k, %v
      : tensor<?x2x4xbf16>, tensor<?x2x4xbf16>, tensor<?x2x3xbf16>
      -> tensor<?x2x3xbf16>, tensor<?x4x3xf32>, tensor<?x4xf32>
  return %o, %s : tensor<?x2x3xbf16>, tensor<?x4x3xf32>
}

// -----

// negative_: a dynamic sequence length cannot be unrolled.
// CHECK-LABEL: func.func @negative_dynamic_length
// MAX2-LABEL: func.func @negative_dynamic_length
// CHECK-NEXT: linattn.scan forward
// CHECK-NOT: linattn.step
func.func @negative_dynamic_length(%q: tensor<?x4xf32>, %v: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %o, %s, %z = linattn.scan forward %q, %q, %v
      : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>, tensor<4x4xf32>, tensor<4xf32>
  return %o : tensor<?x4xf32>
}

// -----

// negative_: 17 tokens is longer than the default max-length of 16.
// CHECK-LABEL: func.func @negative_longer_than_max
// CHECK-NEXT: linattn.scan forward
// CHECK-NOT: linattn.step
func.func @negative_longer_than_max(%q: tensor<17x4xf32>, %v: tensor<17x4xf32>) -> tensor<17x4xf32> {
  %o, %s, %z = linattn.scan forward %q, %q, %v
      : tensor<17x4xf32>, tensor<17x4xf32>, tensor<17x4xf32> -> tensor<17x4xf32>, tensor<4x4xf32>, tensor<4xf32>
  return %o : tensor<17x4xf32>
}

// -----

// negative_: an empty sequence has no step to take.
// CHECK-LABEL: func.func @negative_empty
// CHECK-NEXT: linattn.scan forward
func.func @negative_empty(%q: tensor<0x4xf32>, %v: tensor<0x4xf32>) -> tensor<0x4xf32> {
  %o, %s, %z = linattn.scan forward %q, %q, %v
      : tensor<0x4xf32>, tensor<0x4xf32>, tensor<0x4xf32> -> tensor<0x4xf32>, tensor<4x4xf32>, tensor<4xf32>
  return %o : tensor<0x4xf32>
}

// -----

// No values: the steps still thread the state and normalizer, and the
// output, which has no elements, is an empty tensor rather than a
// concatenation (upstream bufferizes a tensor.concat of empty pieces into
// invalid subviews).
// CHECK-LABEL: func.func @no_values
// CHECK: %[[VS0:.*]] = tensor.empty() : tensor<2x1x0xf32>
// CHECK: %[[E0:.*]] = tensor.collapse_shape %[[VS0]] {{\[}}[0], [1, 2]] : tensor<2x1x0xf32> into tensor<2x0xf32>
// CHECK: %{{.*}}, %[[S1:.*]], %[[Z1:.*]] = linattn.step %{{.*}}, %{{.*}}, %[[E0]]
// CHECK: %{{.*}}, %[[S2:.*]], %[[Z2:.*]] = linattn.step %{{.*}}, %{{.*}}, %{{.*}}, %[[S1]], %[[Z1]]
// CHECK-NOT: tensor.concat
// CHECK: %[[O:.*]] = tensor.empty() : tensor<2x2x0xf32>
// CHECK: return %[[O]], %[[S2]], %[[Z2]]
func.func @no_values(%q: tensor<2x2x4xf32>, %k: tensor<2x2x4xf32>, %v: tensor<2x2x0xf32>)
    -> (tensor<2x2x0xf32>, tensor<2x4x0xf32>, tensor<2x4xf32>) {
  %o, %s, %z = linattn.scan forward %q, %k, %v normalize(eps = 1.0e-6)
      : tensor<2x2x4xf32>, tensor<2x2x4xf32>, tensor<2x2x0xf32>
      -> tensor<2x2x0xf32>, tensor<2x4x0xf32>, tensor<2x4xf32>
  return %o, %s, %z : tensor<2x2x0xf32>, tensor<2x4x0xf32>, tensor<2x4xf32>
}

// -----

// No features, with a dynamic batch: the feature tokens are empty tensors
// sized from the operand.
// CHECK-LABEL: func.func @no_features_dynamic_batch
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<?x2x0xf32>
// CHECK-NOT: tensor.extract_slice %[[Q]]
// CHECK: tensor.splat %{{.*}} : tensor<?x0xf32>
// CHECK: %[[B:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<?x2x0xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty(%[[B]]) : tensor<?x1x0xf32>
// CHECK-NEXT: tensor.collapse_shape %[[E]] {{\[}}[0], [1, 2]] : tensor<?x1x0xf32> into tensor<?x0xf32>
// CHECK: linattn.step
func.func @no_features_dynamic_batch(%q: tensor<?x2x0xf32>, %k: tensor<?x2x0xf32>, %v: tensor<?x2x3xf32>)
    -> (tensor<?x2x3xf32>, tensor<?x0x3xf32>, tensor<?x0xf32>) {
  %o, %s, %z = linattn.scan reverse %q, %k, %v
      : tensor<?x2x0xf32>, tensor<?x2x0xf32>, tensor<?x2x3xf32>
      -> tensor<?x2x3xf32>, tensor<?x0x3xf32>, tensor<?x0xf32>
  return %o, %s, %z : tensor<?x2x3xf32>, tensor<?x0x3xf32>, tensor<?x0xf32>
}
