// RUN: linattn-opt %s --split-input-file --convert-linattn-to-linalg | FileCheck %s

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
