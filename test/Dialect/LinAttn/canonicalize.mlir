// RUN: linattn-opt %s -canonicalize -split-input-file | FileCheck %s

//===----------------------------------------------------------------------===//
// linattn.feature_map: identity folds away when it does not refine the type
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @feature_map_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x?x64xf32>)
// CHECK-NOT: linattn.feature_map
// CHECK: return %[[X]] :
func.func @feature_map_identity(%x: tensor<2x8x?x64xf32>) -> tensor<2x8x?x64xf32> {
  %0 = linattn.feature_map identity %x : tensor<2x8x?x64xf32> -> tensor<2x8x?x64xf32>
  return %0 : tensor<2x8x?x64xf32>
}

// -----

// A chain of identities folds to its input; the consumer reads the input.
// CHECK-LABEL: func.func @feature_map_identity_chain
// CHECK-SAME: (%[[X:.*]]: tensor<16x4xbf16>)
// CHECK-NOT: linattn.feature_map identity
// CHECK: %[[R:.*]] = linattn.feature_map elu %[[X]] : tensor<16x4xbf16> -> tensor<16x4xbf16>
// CHECK-NOT: linattn.feature_map identity
// CHECK: return %[[R]] :
func.func @feature_map_identity_chain(%x: tensor<16x4xbf16>) -> tensor<16x4xbf16> {
  %0 = linattn.feature_map identity %x : tensor<16x4xbf16> -> tensor<16x4xbf16>
  %1 = linattn.feature_map identity %0 : tensor<16x4xbf16> -> tensor<16x4xbf16>
  %2 = linattn.feature_map elu %1 : tensor<16x4xbf16> -> tensor<16x4xbf16>
  return %2 : tensor<16x4xbf16>
}

// -----

// The result type is more static than the input type: folding would change
// the type of the value, so the op stays.
// CHECK-LABEL: func.func @no_fold_feature_map_identity_refines
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xf32>)
// CHECK: %[[R:.*]] = linattn.feature_map identity %[[X]] : tensor<?x64xf32> -> tensor<128x64xf32>
// CHECK: return %[[R]] :
func.func @no_fold_feature_map_identity_refines(%x: tensor<?x64xf32>) -> tensor<128x64xf32> {
  %0 = linattn.feature_map identity %x : tensor<?x64xf32> -> tensor<128x64xf32>
  return %0 : tensor<128x64xf32>
}

// -----

// CHECK-LABEL: func.func @no_fold_feature_map_identity_generalizes
// CHECK-SAME: (%[[X:.*]]: tensor<128x64xf32>)
// CHECK: %[[R:.*]] = linattn.feature_map identity %[[X]] : tensor<128x64xf32> -> tensor<?x64xf32>
// CHECK: return %[[R]] :
func.func @no_fold_feature_map_identity_generalizes(%x: tensor<128x64xf32>) -> tensor<?x64xf32> {
  %0 = linattn.feature_map identity %x : tensor<128x64xf32> -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

// Only identity folds; the other kinds compute something.
// CHECK-LABEL: func.func @no_fold_feature_map_other_kinds
// CHECK-SAME: (%[[X:.*]]: tensor<16x4xf32>, %[[P:.*]]: tensor<4x4xf32>)
// CHECK: %[[E:.*]] = linattn.feature_map elu %[[X]] : tensor<16x4xf32> -> tensor<16x4xf32>
// CHECK: %[[R:.*]] = linattn.feature_map relu %[[X]] : tensor<16x4xf32> -> tensor<16x4xf32>
// CHECK: %[[F:.*]] = linattn.feature_map favor %[[X]] projection(%[[P]]) : tensor<16x4xf32>, tensor<4x4xf32> -> tensor<16x4xf32>
// CHECK: %[[Y:.*]] = linattn.feature_map poly2 %[[X]] : tensor<16x4xf32> -> tensor<16x21xf32>
// CHECK: return %[[E]], %[[R]], %[[F]], %[[Y]] :
func.func @no_fold_feature_map_other_kinds(%x: tensor<16x4xf32>, %p: tensor<4x4xf32>)
    -> (tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x21xf32>) {
  %0 = linattn.feature_map elu %x : tensor<16x4xf32> -> tensor<16x4xf32>
  %1 = linattn.feature_map relu %x : tensor<16x4xf32> -> tensor<16x4xf32>
  %2 = linattn.feature_map favor %x projection(%p) : tensor<16x4xf32>, tensor<4x4xf32> -> tensor<16x4xf32>
  %3 = linattn.feature_map poly2 %x : tensor<16x4xf32> -> tensor<16x21xf32>
  return %0, %1, %2, %3 : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x21xf32>
}

// -----

//===----------------------------------------------------------------------===//
// linattn.scores: a scale of 1 is dropped
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @scores_scale_one
// CHECK-SAME: (%[[Q:.*]]: tensor<2x16x4xf32>, %[[K:.*]]: tensor<2x12x4xf32>)
// CHECK: %[[A:.*]] = linattn.scores %[[Q]], %[[K]] : tensor<2x16x4xf32>, tensor<2x12x4xf32> -> tensor<2x16x12xf32>
// CHECK: return %[[A]] :
func.func @scores_scale_one(%q: tensor<2x16x4xf32>, %k: tensor<2x12x4xf32>) -> tensor<2x16x12xf32> {
  %0 = linattn.scores %q, %k scale(1.0) : tensor<2x16x4xf32>, tensor<2x12x4xf32> -> tensor<2x16x12xf32>
  return %0 : tensor<2x16x12xf32>
}

// -----

// The causal flag survives the dropped scale.
// CHECK-LABEL: func.func @scores_causal_scale_one
// CHECK-SAME: (%[[Q:.*]]: tensor<16x4xbf16>, %[[K:.*]]: tensor<16x4xbf16>)
// CHECK: %[[A:.*]] = linattn.scores %[[Q]], %[[K]] causal : tensor<16x4xbf16>, tensor<16x4xbf16> -> tensor<16x16xbf16>
// CHECK: return %[[A]] :
func.func @scores_causal_scale_one(%q: tensor<16x4xbf16>, %k: tensor<16x4xbf16>) -> tensor<16x16xbf16> {
  %0 = linattn.scores %q, %k causal scale(1.0) : tensor<16x4xbf16>, tensor<16x4xbf16> -> tensor<16x16xbf16>
  return %0 : tensor<16x16xbf16>
}

// -----

// CHECK-LABEL: func.func @no_fold_scores_scale_half
// CHECK-SAME: (%[[Q:.*]]: tensor<16x4xf32>, %[[K:.*]]: tensor<16x4xf32>)
// CHECK: %[[A:.*]] = linattn.scores %[[Q]], %[[K]] causal scale(5.000000e-01) : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x16xf32>
// CHECK: return %[[A]] :
func.func @no_fold_scores_scale_half(%q: tensor<16x4xf32>, %k: tensor<16x4xf32>) -> tensor<16x16xf32> {
  %0 = linattn.scores %q, %k causal scale(0.5) : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

// -1 is not 1.
// CHECK-LABEL: func.func @no_fold_scores_scale_minus_one
// CHECK-SAME: (%[[Q:.*]]: tensor<16x4xf32>, %[[K:.*]]: tensor<16x4xf32>)
// CHECK: %[[A:.*]] = linattn.scores %[[Q]], %[[K]] scale(-1.000000e+00) : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x16xf32>
// CHECK: return %[[A]] :
func.func @no_fold_scores_scale_minus_one(%q: tensor<16x4xf32>, %k: tensor<16x4xf32>) -> tensor<16x16xf32> {
  %0 = linattn.scores %q, %k scale(-1.0) : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
}

// -----

//===----------------------------------------------------------------------===//
// linattn.scan: an all-zero initial state is dropped
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @scan_zero_init
// CHECK-SAME: (%[[Q:.*]]: tensor<2x16x4xf32>, %[[K:.*]]: tensor<2x16x4xf32>, %[[V:.*]]: tensor<2x16x3xf32>)
// CHECK-NOT: arith.constant
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan forward %[[Q]], %[[K]], %[[V]] : tensor<2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x16x3xf32> -> tensor<2x16x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
// CHECK-NOT: arith.constant
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @scan_zero_init(%q: tensor<2x16x4xf32>, %k: tensor<2x16x4xf32>, %v: tensor<2x16x3xf32>)
    -> (tensor<2x16x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>) {
  %s0 = arith.constant dense<0.0> : tensor<2x4x3xf32>
  %z0 = arith.constant dense<0.0> : tensor<2x4xf32>
  %o, %s, %z = linattn.scan forward %q, %k, %v init(%s0, %z0) : tensor<2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x16x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32> -> tensor<2x16x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return %o, %s, %z : tensor<2x16x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
}

// -----

// Direction, normalization and chunk size are kept; bf16 inputs with an f32
// state.
// CHECK-LABEL: func.func @scan_zero_init_keeps_attributes
// CHECK-SAME: (%[[Q:.*]]: tensor<?x4xbf16>, %[[K:.*]]: tensor<?x4xbf16>, %[[V:.*]]: tensor<?x3xbf16>)
// CHECK-NOT: arith.constant
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan reverse %[[Q]], %[[K]], %[[V]] normalize(eps = 9.9999999999999995E-7) chunk_size(64) : tensor<?x4xbf16>, tensor<?x4xbf16>, tensor<?x3xbf16> -> tensor<?x3xbf16>, tensor<4x3xf32>, tensor<4xf32>
// CHECK-NOT: arith.constant
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @scan_zero_init_keeps_attributes(%q: tensor<?x4xbf16>, %k: tensor<?x4xbf16>, %v: tensor<?x3xbf16>)
    -> (tensor<?x3xbf16>, tensor<4x3xf32>, tensor<4xf32>) {
  %s0 = arith.constant dense<0.0> : tensor<4x3xf32>
  %z0 = arith.constant dense<0.0> : tensor<4xf32>
  %o, %s, %z = linattn.scan reverse %q, %k, %v init(%s0, %z0) normalize(eps = 1.0e-6) chunk_size(64) : tensor<?x4xbf16>, tensor<?x4xbf16>, tensor<?x3xbf16>, tensor<4x3xf32>, tensor<4xf32> -> tensor<?x3xbf16>, tensor<4x3xf32>, tensor<4xf32>
  return %o, %s, %z : tensor<?x3xbf16>, tensor<4x3xf32>, tensor<4xf32>
}

// -----

// Negative zero is a zero too.
// CHECK-LABEL: func.func @scan_negative_zero_init
// CHECK-SAME: (%[[Q:.*]]: tensor<16x4xf64>, %[[V:.*]]: tensor<16x3xf64>)
// CHECK-NOT: arith.constant
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan forward %[[Q]], %[[Q]], %[[V]] : tensor<16x4xf64>, tensor<16x4xf64>, tensor<16x3xf64> -> tensor<16x3xf64>, tensor<4x3xf64>, tensor<4xf64>
// CHECK-NOT: arith.constant
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @scan_negative_zero_init(%q: tensor<16x4xf64>, %v: tensor<16x3xf64>)
    -> (tensor<16x3xf64>, tensor<4x3xf64>, tensor<4xf64>) {
  %s0 = arith.constant dense<-0.0> : tensor<4x3xf64>
  %z0 = arith.constant dense<0.0> : tensor<4xf64>
  %o, %s, %z = linattn.scan forward %q, %q, %v init(%s0, %z0) : tensor<16x4xf64>, tensor<16x4xf64>, tensor<16x3xf64>, tensor<4x3xf64>, tensor<4xf64> -> tensor<16x3xf64>, tensor<4x3xf64>, tensor<4xf64>
  return %o, %s, %z : tensor<16x3xf64>, tensor<4x3xf64>, tensor<4xf64>
}

// -----

// CHECK-LABEL: func.func @no_fold_scan_nonzero_init
// CHECK-SAME: (%[[Q:.*]]: tensor<16x4xf32>, %[[V:.*]]: tensor<16x3xf32>)
// CHECK-DAG: %[[S0:.*]] = arith.constant dense<1.000000e+00> : tensor<4x3xf32>
// CHECK-DAG: %[[Z0:.*]] = arith.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan forward %[[Q]], %[[Q]], %[[V]] init(%[[S0]], %[[Z0]]) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @no_fold_scan_nonzero_init(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>)
    -> (tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>) {
  %s0 = arith.constant dense<1.0> : tensor<4x3xf32>
  %z0 = arith.constant dense<1.0> : tensor<4xf32>
  %o, %s, %z = linattn.scan forward %q, %q, %v init(%s0, %z0) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return %o, %s, %z : tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
}

// -----

// Zero state, nonzero normalizer.
// CHECK-LABEL: func.func @no_fold_scan_zero_state_only
// CHECK-SAME: (%[[Q:.*]]: tensor<16x4xf32>, %[[V:.*]]: tensor<16x3xf32>)
// CHECK-DAG: %[[S0:.*]] = arith.constant dense<0.000000e+00> : tensor<4x3xf32>
// CHECK-DAG: %[[Z0:.*]] = arith.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan forward %[[Q]], %[[Q]], %[[V]] init(%[[S0]], %[[Z0]]) normalize(eps = 9.9999999999999995E-7) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @no_fold_scan_zero_state_only(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>)
    -> (tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>) {
  %s0 = arith.constant dense<0.0> : tensor<4x3xf32>
  %z0 = arith.constant dense<2.0> : tensor<4xf32>
  %o, %s, %z = linattn.scan forward %q, %q, %v init(%s0, %z0) normalize(eps = 1.0e-6) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return %o, %s, %z : tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
}

// -----

// Nonzero state, zero normalizer.
// CHECK-LABEL: func.func @no_fold_scan_zero_normalizer_only
// CHECK-SAME: (%[[Q:.*]]: tensor<16x4xf32>, %[[V:.*]]: tensor<16x3xf32>)
// CHECK-DAG: %[[S0:.*]] = arith.constant dense<5.000000e-01> : tensor<4x3xf32>
// CHECK-DAG: %[[Z0:.*]] = arith.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan reverse %[[Q]], %[[Q]], %[[V]] init(%[[S0]], %[[Z0]]) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @no_fold_scan_zero_normalizer_only(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>)
    -> (tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>) {
  %s0 = arith.constant dense<0.5> : tensor<4x3xf32>
  %z0 = arith.constant dense<0.0> : tensor<4xf32>
  %o, %s, %z = linattn.scan reverse %q, %q, %v init(%s0, %z0) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return %o, %s, %z : tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
}

// -----

// A constant that is not a splat: zero almost everywhere is not zero.
// CHECK-LABEL: func.func @no_fold_scan_non_splat_init
// CHECK-SAME: (%[[Q:.*]]: tensor<16x2xf32>, %[[V:.*]]: tensor<16x2xf32>)
// CHECK-DAG: %[[S0:.*]] = arith.constant dense<{{\[}}[0.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: %[[Z0:.*]] = arith.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan forward %[[Q]], %[[Q]], %[[V]] init(%[[S0]], %[[Z0]]) : tensor<16x2xf32>, tensor<16x2xf32>, tensor<16x2xf32>, tensor<2x2xf32>, tensor<2xf32> -> tensor<16x2xf32>, tensor<2x2xf32>, tensor<2xf32>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @no_fold_scan_non_splat_init(%q: tensor<16x2xf32>, %v: tensor<16x2xf32>)
    -> (tensor<16x2xf32>, tensor<2x2xf32>, tensor<2xf32>) {
  %s0 = arith.constant dense<[[0.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>
  %z0 = arith.constant dense<0.0> : tensor<2xf32>
  %o, %s, %z = linattn.scan forward %q, %q, %v init(%s0, %z0) : tensor<16x2xf32>, tensor<16x2xf32>, tensor<16x2xf32>, tensor<2x2xf32>, tensor<2xf32> -> tensor<16x2xf32>, tensor<2x2xf32>, tensor<2xf32>
  return %o, %s, %z : tensor<16x2xf32>, tensor<2x2xf32>, tensor<2xf32>
}

// -----

// An initial state that is not a constant may be anything.
// CHECK-LABEL: func.func @no_fold_scan_init_argument
// CHECK-SAME: (%[[Q:.*]]: tensor<16x4xf32>, %[[V:.*]]: tensor<16x3xf32>, %[[S0:.*]]: tensor<4x3xf32>, %[[Z0:.*]]: tensor<4xf32>)
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan forward %[[Q]], %[[Q]], %[[V]] init(%[[S0]], %[[Z0]]) chunk_size(16) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @no_fold_scan_init_argument(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>, %s0: tensor<4x3xf32>, %z0: tensor<4xf32>)
    -> (tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>) {
  %o, %s, %z = linattn.scan forward %q, %q, %v init(%s0, %z0) chunk_size(16) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return %o, %s, %z : tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
}

// -----

// A zero normalizer with a state that is a function argument.
// CHECK-LABEL: func.func @no_fold_scan_zero_normalizer_argument_state
// CHECK-SAME: (%[[Q:.*]]: tensor<16x4xf32>, %[[V:.*]]: tensor<16x3xf32>, %[[S0:.*]]: tensor<4x3xf32>)
// CHECK: %[[Z0:.*]] = arith.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan forward %[[Q]], %[[Q]], %[[V]] init(%[[S0]], %[[Z0]]) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @no_fold_scan_zero_normalizer_argument_state(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>, %s0: tensor<4x3xf32>)
    -> (tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>) {
  %z0 = arith.constant dense<0.0> : tensor<4xf32>
  %o, %s, %z = linattn.scan forward %q, %q, %v init(%s0, %z0) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return %o, %s, %z : tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
}
