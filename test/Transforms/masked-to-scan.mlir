// RUN: linattn-opt %s -linattn-masked-to-scan -split-input-file | FileCheck %s

// The causal quadratic form becomes a forward scan with zero initial state;
// the score matrix is gone.
// CHECK-LABEL: func.func @causal_normalized
// CHECK-SAME: (%[[FQ:.*]]: tensor<2x8x128x64xf32>, %[[FK:.*]]: tensor<2x8x128x64xf32>, %[[V:.*]]: tensor<2x8x128x32xf32>)
// CHECK-NOT: linattn.scores
// CHECK: %[[O:.*]], %{{.*}}, %{{.*}} = linattn.scan forward %[[FQ]], %[[FK]], %[[V]] normalize(eps = 9.9999999999999995E-7) : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x32xf32> -> tensor<2x8x128x32xf32>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
// CHECK-NOT: linattn.apply_scores
// CHECK: return %[[O]]
func.func @causal_normalized(%fq: tensor<2x8x128x64xf32>, %fk: tensor<2x8x128x64xf32>,
                             %v: tensor<2x8x128x32xf32>) -> tensor<2x8x128x32xf32> {
  %a = linattn.scores %fq, %fk causal
      : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32> -> tensor<2x8x128x128xf32>
  %o = linattn.apply_scores %a, %v normalize(eps = 1.0e-6)
      : tensor<2x8x128x128xf32>, tensor<2x8x128x32xf32> -> tensor<2x8x128x32xf32>
  return %o : tensor<2x8x128x32xf32>
}

// -----

// Normalized with scale 2: the scale cancels except against eps, which the
// scan takes divided by 2.
// CHECK-LABEL: func.func @scaled_normalized
// CHECK: linattn.scan forward %{{.*}}, %{{.*}}, %{{.*}} normalize(eps = 5.000000e-01)
// CHECK-NOT: linalg.generic
func.func @scaled_normalized(%fq: tensor<16x4xf32>, %fk: tensor<16x4xf32>,
                             %v: tensor<16x3xf32>) -> tensor<16x3xf32> {
  %a = linattn.scores %fq, %fk causal scale(2.0)
      : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x16xf32>
  %o = linattn.apply_scores %a, %v normalize(eps = 1.0)
      : tensor<16x16xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return %o : tensor<16x3xf32>
}

// -----

// Unnormalized with a scale: the scan's output is multiplied by it. Dynamic
// sizes stay dynamic; bf16 inputs get an f32 state.
// CHECK-LABEL: func.func @scaled_unnormalized_dynamic_bf16
// CHECK-SAME: (%[[FQ:.*]]: tensor<?x?x8xbf16>, %[[FK:.*]]: tensor<?x?x8xbf16>, %[[V:.*]]: tensor<?x?x4xbf16>)
// CHECK-DAG: %[[S:.*]] = arith.constant 1.250000e-01 : bf16
// CHECK-DAG: %[[O:.*]], %{{.*}}, %{{.*}} = linattn.scan forward %[[FQ]], %[[FK]], %[[V]] : tensor<?x?x8xbf16>, tensor<?x?x8xbf16>, tensor<?x?x4xbf16> -> tensor<?x?x4xbf16>, tensor<?x8x4xf32>, tensor<?x8xf32>
// CHECK: %[[SCALED:.*]] = linalg.generic {{.*}} outs(%[[O]] : tensor<?x?x4xbf16>)
// CHECK: arith.mulf %{{.*}}, %[[S]] : bf16
// CHECK: return %[[SCALED]]
func.func @scaled_unnormalized_dynamic_bf16(%fq: tensor<?x?x8xbf16>, %fk: tensor<?x?x8xbf16>,
                                            %v: tensor<?x?x4xbf16>) -> tensor<?x?x4xbf16> {
  %a = linattn.scores %fq, %fk causal scale(0.125)
      : tensor<?x?x8xbf16>, tensor<?x?x8xbf16> -> tensor<?x?x?xbf16>
  %o = linattn.apply_scores %a, %v
      : tensor<?x?x?xbf16>, tensor<?x?x4xbf16> -> tensor<?x?x4xbf16>
  return %o : tensor<?x?x4xbf16>
}

// -----

// The state takes static sizes from whichever operand has them.
// CHECK-LABEL: func.func @state_sizes_from_any_operand
// CHECK: linattn.scan forward {{.*}} -> tensor<?x16x4xf64>, tensor<3x8x4xf64>, tensor<3x8xf64>
func.func @state_sizes_from_any_operand(%fq: tensor<?x16x8xf64>, %fk: tensor<3x16x?xf64>,
                                        %v: tensor<?x16x4xf64>) -> tensor<?x16x4xf64> {
  %a = linattn.scores %fq, %fk causal
      : tensor<?x16x8xf64>, tensor<3x16x?xf64> -> tensor<?x16x16xf64>
  %o = linattn.apply_scores %a, %v
      : tensor<?x16x16xf64>, tensor<?x16x4xf64> -> tensor<?x16x4xf64>
  return %o : tensor<?x16x4xf64>
}

// -----

// Two apply_scores share the scores: both become scans and the scores die.
// CHECK-LABEL: func.func @shared_scores
// CHECK-NOT: linattn.scores
// CHECK: linattn.scan forward {{.*}} normalize(eps = 1.000000e-03)
// CHECK: linattn.scan forward
// CHECK-NOT: linattn.scores
func.func @shared_scores(%fq: tensor<16x4xf32>, %fk: tensor<16x4xf32>,
                         %v: tensor<16x3xf32>, %w: tensor<16x5xf32>)
    -> (tensor<16x3xf32>, tensor<16x5xf32>) {
  %a = linattn.scores %fq, %fk causal
      : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x16xf32>
  %o = linattn.apply_scores %a, %v normalize(eps = 1.0e-3)
      : tensor<16x16xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  %p = linattn.apply_scores %a, %w
      : tensor<16x16xf32>, tensor<16x5xf32> -> tensor<16x5xf32>
  return %o, %p : tensor<16x3xf32>, tensor<16x5xf32>
}

// -----

// Unmasked scores are reassociated, not scanned.
// CHECK-LABEL: func.func @negative_not_causal
// CHECK: linattn.scores
// CHECK: linattn.apply_scores
// CHECK-NOT: linattn.scan
func.func @negative_not_causal(%fq: tensor<16x4xf32>, %fk: tensor<16x4xf32>,
                               %v: tensor<16x3xf32>) -> tensor<16x3xf32> {
  %a = linattn.scores %fq, %fk
      : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x16xf32>
  %o = linattn.apply_scores %a, %v normalize(eps = 1.0e-6)
      : tensor<16x16xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return %o : tensor<16x3xf32>
}

// -----

// The score matrix is also returned: it stays, so the scan would only add
// work beside it.
// CHECK-LABEL: func.func @negative_scores_other_use
// CHECK: %[[A:.*]] = linattn.scores
// CHECK: linattn.apply_scores %[[A]]
// CHECK-NOT: linattn.scan
func.func @negative_scores_other_use(%fq: tensor<16x4xf32>, %fk: tensor<16x4xf32>,
                                     %v: tensor<16x3xf32>)
    -> (tensor<16x3xf32>, tensor<16x16xf32>) {
  %a = linattn.scores %fq, %fk causal
      : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x16xf32>
  %o = linattn.apply_scores %a, %v
      : tensor<16x16xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return %o, %a : tensor<16x3xf32>, tensor<16x16xf32>
}

// -----

// Scores that come from elsewhere (here an argument) are not known causal.
// CHECK-LABEL: func.func @negative_not_scores
// CHECK: linattn.apply_scores
// CHECK-NOT: linattn.scan
func.func @negative_not_scores(%a: tensor<16x16xf32>, %v: tensor<16x3xf32>) -> tensor<16x3xf32> {
  %o = linattn.apply_scores %a, %v normalize(eps = 1.0e-6)
      : tensor<16x16xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return %o : tensor<16x3xf32>
}

// -----

// Something between the scores and their application (here an exp) breaks
// the chain.
// CHECK-LABEL: func.func @negative_not_direct
// CHECK: linattn.scores
// CHECK: math.exp
// CHECK: linattn.apply_scores
// CHECK-NOT: linattn.scan
func.func @negative_not_direct(%fq: tensor<16x4xf32>, %fk: tensor<16x4xf32>,
                               %v: tensor<16x3xf32>) -> tensor<16x3xf32> {
  %a = linattn.scores %fq, %fk causal
      : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x16xf32>
  %e = math.exp %a : tensor<16x16xf32>
  %o = linattn.apply_scores %e, %v
      : tensor<16x16xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return %o : tensor<16x3xf32>
}

// -----

// Normalized with a negative scale: eps/s would be negative.
// CHECK-LABEL: func.func @negative_normalized_negative_scale
// CHECK: linattn.scores
// CHECK: linattn.apply_scores
// CHECK-NOT: linattn.scan
func.func @negative_normalized_negative_scale(%fq: tensor<16x4xf32>, %fk: tensor<16x4xf32>,
                                              %v: tensor<16x3xf32>) -> tensor<16x3xf32> {
  %a = linattn.scores %fq, %fk causal scale(-1.0)
      : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x16xf32>
  %o = linattn.apply_scores %a, %v normalize(eps = 1.0e-6)
      : tensor<16x16xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return %o : tensor<16x3xf32>
}
