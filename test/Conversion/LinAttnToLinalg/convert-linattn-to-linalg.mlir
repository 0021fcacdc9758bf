// RUN: linattn-opt %s --split-input-file --convert-linattn-to-linalg | FileCheck %s
// RUN: linattn-opt %s --split-input-file --convert-linattn-to-linalg --canonicalize | FileCheck %s --check-prefix=CANON

// CHECK-LABEL: func @kv_summary
//  CHECK-SAME: (%[[K:.*]]: tensor<2x?x8xbf16>, %[[V:.*]]: tensor<2x?x4xbf16>)
//   CHECK-NOT: linattn.
//       CHECK: %[[S:.*]] = linalg.generic
//  CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
//  CHECK-SAME: ins(%[[K]], %[[V]] : tensor<2x?x8xbf16>, tensor<2x?x4xbf16>)
//  CHECK-SAME: outs({{.*}} : tensor<2x8x4xf32>)
//       CHECK:   arith.extf
//       CHECK: %[[Z:.*]] = linalg.generic
//       CHECK: return %[[S]], %[[Z]]
func.func @kv_summary(%k: tensor<2x?x8xbf16>, %v: tensor<2x?x4xbf16>)
    -> (tensor<2x8x4xf32>, tensor<2x8xf32>) {
  %s, %z = linattn.kv_summary %k, %v
      : tensor<2x?x8xbf16>, tensor<2x?x4xbf16> -> tensor<2x8x4xf32>, tensor<2x8xf32>
  return %s, %z : tensor<2x8x4xf32>, tensor<2x8xf32>
}

// -----

// The scan is a loop over the sequence carrying the output and the state.
// CHECK-LABEL: func @scan_reverse
//       CHECK: %[[LAST:.*]] = arith.subi %[[N:[^,]*]], %{{.*}} : index
//  CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(
//       CHECK:   arith.subi %[[LAST]]
//       CHECK:   tensor.extract_slice
//       CHECK:   tensor.insert_slice
//       CHECK:   scf.yield
func.func @scan_reverse(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x4xf32>,
                        %s0: tensor<8x4xf32>, %z0: tensor<8xf32>)
    -> (tensor<?x4xf32>, tensor<8x4xf32>, tensor<8xf32>) {
  %o, %s, %z = linattn.scan reverse %q, %k, %v init(%s0, %z0) normalize(eps = 1.0e-06)
      : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32>, tensor<8x4xf32>, tensor<8xf32>
      -> tensor<?x4xf32>, tensor<8x4xf32>, tensor<8xf32>
  return %o, %s, %z : tensor<?x4xf32>, tensor<8x4xf32>, tensor<8xf32>
}

// -----

// Causal scores: the mask compares the loop indices.
// CHECK-LABEL: func @scores_causal
//       CHECK: linalg.generic
//       CHECK: linalg.generic
//       CHECK:   linalg.index 1
//       CHECK:   linalg.index 2
//       CHECK:   arith.cmpi ule
//       CHECK:   arith.select
func.func @scores_causal(%q: tensor<3x?x8xf32>, %k: tensor<3x?x8xf32>) -> tensor<3x?x?xf32> {
  %a = linattn.scores %q, %k causal scale(1.250000e-01)
      : tensor<3x?x8xf32>, tensor<3x?x8xf32> -> tensor<3x?x?xf32>
  return %a : tensor<3x?x?xf32>
}

// -----

// CHECK-LABEL: func @attention
//   CHECK-NOT: linattn.
//       CHECK: math.exp
func.func @attention(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x2xf32>) -> tensor<4x2xf32> {
  %o = linattn.attention elu %q, %k, %v normalize(eps = 1.0e-06)
      : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x2xf32> -> tensor<4x2xf32>
  return %o : tensor<4x2xf32>
}

// -----

// poly2 of a head of size 0 is the constant feature alone: the empty input
// and products are not inserted (upstream rejects an offset at the end of a
// dimension, even for an empty slice).
// CHECK-LABEL: func @poly2_empty_head
//       CHECK: %[[ONES:.*]] = linalg.fill
//  CHECK-SAME: -> tensor<2x5x1xf32>
//       CHECK: %[[R:.*]] = tensor.insert_slice %[[ONES]] into %{{.*}}[0, 0, 0] [2, 5, 1] [1, 1, 1]
//   CHECK-NOT: tensor.insert_slice
//       CHECK: return %[[R]]
func.func @poly2_empty_head(%x: tensor<2x5x0xf32>) -> tensor<2x5x1xf32> {
  %0 = linattn.feature_map poly2 %x : tensor<2x5x0xf32> -> tensor<2x5x1xf32>
  return %0 : tensor<2x5x1xf32>
}

// -----

// A scan without features: the loop reads no feature slices, only values.
// CHECK-LABEL: func @scan_no_features
//  CHECK-SAME: (%[[Q:[^:]*]]: tensor<3x7x0xf32>, %[[K:[^:]*]]: tensor<3x7x0xf32>, %[[V:[^:]*]]: tensor<3x7x5xf32>)
//       CHECK: scf.for
//   CHECK-NOT: tensor.extract_slice %[[Q]]
//   CHECK-NOT: tensor.extract_slice %[[K]]
//       CHECK:   %[[E:.*]] = tensor.empty() : tensor<3x1x0xf32>
//       CHECK:   tensor.collapse_shape %[[E]] {{\[}}[0], [1, 2]] : tensor<3x1x0xf32> into tensor<3x0xf32>
//       CHECK:   tensor.extract_slice %[[V]]
//       CHECK:   tensor.expand_shape
//       CHECK:   tensor.insert_slice
//       CHECK:   scf.yield
func.func @scan_no_features(%q: tensor<3x7x0xf32>, %k: tensor<3x7x0xf32>, %v: tensor<3x7x5xf32>)
    -> (tensor<3x7x5xf32>, tensor<3x0x5xf32>, tensor<3x0xf32>) {
  %o, %s, %z = linattn.scan forward %q, %k, %v normalize(eps = 1.0e-06)
      : tensor<3x7x0xf32>, tensor<3x7x0xf32>, tensor<3x7x5xf32>
      -> tensor<3x7x5xf32>, tensor<3x0x5xf32>, tensor<3x0xf32>
  return %o, %s, %z : tensor<3x7x5xf32>, tensor<3x0x5xf32>, tensor<3x0xf32>
}

// -----

// A batch of 1, known only from the state's type, beside the dynamic
// sequence: each token is a slice that keeps its unit dimension, collapsed
// into the features, so when the canonicalizer casts it to the state's
// static batch no other unit dimension can have been dropped in its place.
// CHECK-LABEL: func @scan_unit_batch
//       CHECK: scf.for
//       CHECK:   %[[Q:.*]] = tensor.extract_slice %{{.*}} : tensor<?x2x?x4xf32> to tensor<?x2x1x4xf32>
//       CHECK:   tensor.collapse_shape %[[Q]] {{\[}}[0], [1], [2, 3]] : tensor<?x2x1x4xf32> into tensor<?x2x4xf32>
//       CHECK:   tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]]
//       CHECK:   tensor.insert_slice %{{.*}} : tensor<?x2x1x3xf32> into tensor<?x2x?x3xf32>
// CANON-LABEL: func @scan_unit_batch
//       CANON: scf.for
//       CANON:   %[[K:.*]] = tensor.extract_slice %{{.*}} : tensor<?x2x?x4xf32> to tensor<?x2x1x4xf32>
//       CANON:   %[[KT:.*]] = tensor.collapse_shape %[[K]] {{\[}}[0], [1], [2, 3]] : tensor<?x2x1x4xf32> into tensor<?x2x4xf32>
//       CANON:   tensor.cast %[[KT]] : tensor<?x2x4xf32> to tensor<1x2x4xf32>
func.func @scan_unit_batch(%q: tensor<?x2x?x4xf32>, %k: tensor<?x2x?x4xf32>, %v: tensor<?x2x?x3xf32>)
    -> (tensor<?x2x?x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4xf32>) {
  %o, %s, %z = linattn.scan forward %q, %k, %v normalize(eps = 1.0e-06)
      : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x3xf32>
      -> tensor<?x2x?x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4xf32>
  return %o, %s, %z : tensor<?x2x?x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4xf32>
}
