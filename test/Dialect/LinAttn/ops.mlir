// RUN: linattn-opt %s | FileCheck %s
// RUN: linattn-opt %s | linattn-opt | FileCheck %s
// RUN: linattn-opt %s -mlir-print-op-generic | linattn-opt | FileCheck %s

// Round trip of every linattn op and every attribute and assembly variant.
// Cases whose dynamic sizes meet static ones in another operand check that a
// dynamic size agrees with anything.

//===----------------------------------------------------------------------===//
// linattn.feature_map
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @feature_map_elu
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x128x64xf32>)
// CHECK: %[[R:.*]] = linattn.feature_map elu %[[X]] : tensor<2x8x128x64xf32> -> tensor<2x8x128x64xf32>
// CHECK: return %[[R]] :
func.func @feature_map_elu(%x: tensor<2x8x128x64xf32>) -> tensor<2x8x128x64xf32> {
  %0 = linattn.feature_map elu %x : tensor<2x8x128x64xf32> -> tensor<2x8x128x64xf32>
  return %0 : tensor<2x8x128x64xf32>
}

// CHECK-LABEL: func.func @feature_map_relu_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<?x8x?x64xf16>)
// CHECK: %[[R:.*]] = linattn.feature_map relu %[[X]] : tensor<?x8x?x64xf16> -> tensor<?x8x?x64xf16>
// CHECK: return %[[R]] :
func.func @feature_map_relu_dynamic(%x: tensor<?x8x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %0 = linattn.feature_map relu %x : tensor<?x8x?x64xf16> -> tensor<?x8x?x64xf16>
  return %0 : tensor<?x8x?x64xf16>
}

// CHECK-LABEL: func.func @feature_map_identity
// CHECK-SAME: (%[[X:.*]]: tensor<128x64xbf16>)
// CHECK: %[[R:.*]] = linattn.feature_map identity %[[X]] : tensor<128x64xbf16> -> tensor<128x64xbf16>
// CHECK: return %[[R]] :
func.func @feature_map_identity(%x: tensor<128x64xbf16>) -> tensor<128x64xbf16> {
  %0 = linattn.feature_map identity %x : tensor<128x64xbf16> -> tensor<128x64xbf16>
  return %0 : tensor<128x64xbf16>
}

// The result may be more static than the input: dynamic sizes agree with
// static ones.
// CHECK-LABEL: func.func @feature_map_identity_refines_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x?xf32>)
// CHECK: %[[R:.*]] = linattn.feature_map identity %[[X]] : tensor<?x?x?xf32> -> tensor<4x128x64xf32>
// CHECK: return %[[R]] :
func.func @feature_map_identity_refines_dynamic(%x: tensor<?x?x?xf32>) -> tensor<4x128x64xf32> {
  %0 = linattn.feature_map identity %x : tensor<?x?x?xf32> -> tensor<4x128x64xf32>
  return %0 : tensor<4x128x64xf32>
}

// A single token: no batch or sequence dimension at all.
// CHECK-LABEL: func.func @feature_map_rank1
// CHECK-SAME: (%[[X:.*]]: tensor<64xf64>)
// CHECK: %[[R:.*]] = linattn.feature_map elu %[[X]] : tensor<64xf64> -> tensor<64xf64>
// CHECK: return %[[R]] :
func.func @feature_map_rank1(%x: tensor<64xf64>) -> tensor<64xf64> {
  %0 = linattn.feature_map elu %x : tensor<64xf64> -> tensor<64xf64>
  return %0 : tensor<64xf64>
}

// F = 1 + D + D^2 = 1 + 4 + 16 = 21.
// CHECK-LABEL: func.func @feature_map_poly2
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x4xf32>)
// CHECK: %[[R:.*]] = linattn.feature_map poly2 %[[X]] : tensor<2x16x4xf32> -> tensor<2x16x21xf32>
// CHECK: return %[[R]] :
func.func @feature_map_poly2(%x: tensor<2x16x4xf32>) -> tensor<2x16x21xf32> {
  %0 = linattn.feature_map poly2 %x : tensor<2x16x4xf32> -> tensor<2x16x21xf32>
  return %0 : tensor<2x16x21xf32>
}

// F = 1 + 64 + 64^2 = 4161.
// CHECK-LABEL: func.func @feature_map_poly2_d64
// CHECK-SAME: (%[[X:.*]]: tensor<?x64xbf16>)
// CHECK: %[[R:.*]] = linattn.feature_map poly2 %[[X]] : tensor<?x64xbf16> -> tensor<?x4161xbf16>
// CHECK: return %[[R]] :
func.func @feature_map_poly2_d64(%x: tensor<?x64xbf16>) -> tensor<?x4161xbf16> {
  %0 = linattn.feature_map poly2 %x : tensor<?x64xbf16> -> tensor<?x4161xbf16>
  return %0 : tensor<?x4161xbf16>
}

// With a dynamic D or F, the poly2 feature count cannot be checked.
// CHECK-LABEL: func.func @feature_map_poly2_dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x?xf32>, %[[Y:.*]]: tensor<2x16x4xf32>)
// CHECK: %[[R0:.*]] = linattn.feature_map poly2 %[[X]] : tensor<2x16x?xf32> -> tensor<2x16x21xf32>
// CHECK: %[[R1:.*]] = linattn.feature_map poly2 %[[Y]] : tensor<2x16x4xf32> -> tensor<2x16x?xf32>
// CHECK: return %[[R0]], %[[R1]] :
func.func @feature_map_poly2_dynamic(%x: tensor<2x16x?xf32>, %y: tensor<2x16x4xf32>)
    -> (tensor<2x16x21xf32>, tensor<2x16x?xf32>) {
  %0 = linattn.feature_map poly2 %x : tensor<2x16x?xf32> -> tensor<2x16x21xf32>
  %1 = linattn.feature_map poly2 %y : tensor<2x16x4xf32> -> tensor<2x16x?xf32>
  return %0, %1 : tensor<2x16x21xf32>, tensor<2x16x?xf32>
}

// CHECK-LABEL: func.func @feature_map_favor
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x?x64xf32>, %[[P:.*]]: tensor<64x256xf32>)
// CHECK: %[[R:.*]] = linattn.feature_map favor %[[X]] projection(%[[P]]) : tensor<2x8x?x64xf32>, tensor<64x256xf32> -> tensor<2x8x?x256xf32>
// CHECK: return %[[R]] :
func.func @feature_map_favor(%x: tensor<2x8x?x64xf32>, %p: tensor<64x256xf32>) -> tensor<2x8x?x256xf32> {
  %0 = linattn.feature_map favor %x projection(%p) : tensor<2x8x?x64xf32>, tensor<64x256xf32> -> tensor<2x8x?x256xf32>
  return %0 : tensor<2x8x?x256xf32>
}

// CHECK-LABEL: func.func @feature_map_favor_dynamic_projection
// CHECK-SAME: (%[[X:.*]]: tensor<3x2x8x16x32xf64>, %[[P:.*]]: tensor<?x?xf64>)
// CHECK: %[[R:.*]] = linattn.feature_map favor %[[X]] projection(%[[P]]) : tensor<3x2x8x16x32xf64>, tensor<?x?xf64> -> tensor<3x2x8x16x?xf64>
// CHECK: return %[[R]] :
func.func @feature_map_favor_dynamic_projection(%x: tensor<3x2x8x16x32xf64>, %p: tensor<?x?xf64>) -> tensor<3x2x8x16x?xf64> {
  %0 = linattn.feature_map favor %x projection(%p) : tensor<3x2x8x16x32xf64>, tensor<?x?xf64> -> tensor<3x2x8x16x?xf64>
  return %0 : tensor<3x2x8x16x?xf64>
}

//===----------------------------------------------------------------------===//
// linattn.scores
//===----------------------------------------------------------------------===//

// Cross-attention: N = 128 queries, M = 96 keys.
// CHECK-LABEL: func.func @scores_cross
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x128x64xf32>, %[[K:.*]]: tensor<2x8x96x64xf32>)
// CHECK: %[[A:.*]] = linattn.scores %[[Q]], %[[K]] : tensor<2x8x128x64xf32>, tensor<2x8x96x64xf32> -> tensor<2x8x128x96xf32>
// CHECK: return %[[A]] :
func.func @scores_cross(%q: tensor<2x8x128x64xf32>, %k: tensor<2x8x96x64xf32>) -> tensor<2x8x128x96xf32> {
  %0 = linattn.scores %q, %k : tensor<2x8x128x64xf32>, tensor<2x8x96x64xf32> -> tensor<2x8x128x96xf32>
  return %0 : tensor<2x8x128x96xf32>
}

// CHECK-LABEL: func.func @scores_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x128x64xf32>, %[[K:.*]]: tensor<2x8x128x64xf32>)
// CHECK: %[[A:.*]] = linattn.scores %[[Q]], %[[K]] causal : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32> -> tensor<2x8x128x128xf32>
// CHECK: return %[[A]] :
func.func @scores_causal(%q: tensor<2x8x128x64xf32>, %k: tensor<2x8x128x64xf32>) -> tensor<2x8x128x128xf32> {
  %0 = linattn.scores %q, %k causal : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32> -> tensor<2x8x128x128xf32>
  return %0 : tensor<2x8x128x128xf32>
}

// CHECK-LABEL: func.func @scores_scale
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x128x64xf32>, %[[K:.*]]: tensor<2x8x96x64xf32>)
// CHECK: %[[A:.*]] = linattn.scores %[[Q]], %[[K]] scale(1.250000e-01) : tensor<2x8x128x64xf32>, tensor<2x8x96x64xf32> -> tensor<2x8x128x96xf32>
// CHECK: return %[[A]] :
func.func @scores_scale(%q: tensor<2x8x128x64xf32>, %k: tensor<2x8x96x64xf32>) -> tensor<2x8x128x96xf32> {
  %0 = linattn.scores %q, %k scale(0.125) : tensor<2x8x128x64xf32>, tensor<2x8x96x64xf32> -> tensor<2x8x128x96xf32>
  return %0 : tensor<2x8x128x96xf32>
}

// Parsing does not fold: an explicit scale of 1 survives the round trip.
// CHECK-LABEL: func.func @scores_causal_scale
// CHECK-SAME: (%[[Q:.*]]: tensor<128x64xbf16>, %[[K:.*]]: tensor<128x64xbf16>)
// CHECK: %[[A0:.*]] = linattn.scores %[[Q]], %[[K]] causal scale(1.250000e-01) : tensor<128x64xbf16>, tensor<128x64xbf16> -> tensor<128x128xbf16>
// CHECK: %[[A1:.*]] = linattn.scores %[[Q]], %[[K]] causal scale(1.000000e+00) : tensor<128x64xbf16>, tensor<128x64xbf16> -> tensor<128x128xbf16>
// CHECK: %[[A2:.*]] = linattn.scores %[[Q]], %[[K]] scale(-2.500000e+00) : tensor<128x64xbf16>, tensor<128x64xbf16> -> tensor<128x128xbf16>
// CHECK: return %[[A0]], %[[A1]], %[[A2]] :
func.func @scores_causal_scale(%q: tensor<128x64xbf16>, %k: tensor<128x64xbf16>)
    -> (tensor<128x128xbf16>, tensor<128x128xbf16>, tensor<128x128xbf16>) {
  %0 = linattn.scores %q, %k causal scale(0.125) : tensor<128x64xbf16>, tensor<128x64xbf16> -> tensor<128x128xbf16>
  %1 = linattn.scores %q, %k causal scale(1.0) : tensor<128x64xbf16>, tensor<128x64xbf16> -> tensor<128x128xbf16>
  %2 = linattn.scores %q, %k scale(-2.5) : tensor<128x64xbf16>, tensor<128x64xbf16> -> tensor<128x128xbf16>
  return %0, %1, %2 : tensor<128x128xbf16>, tensor<128x128xbf16>, tensor<128x128xbf16>
}

// Causal scores with a dynamic query length and a static key length: the
// lengths may agree at run time.
// CHECK-LABEL: func.func @scores_causal_dynamic
// CHECK-SAME: (%[[Q:.*]]: tensor<?x8x?x64xf16>, %[[K:.*]]: tensor<4x?x128x64xf16>)
// CHECK: %[[A:.*]] = linattn.scores %[[Q]], %[[K]] causal : tensor<?x8x?x64xf16>, tensor<4x?x128x64xf16> -> tensor<4x8x?x?xf16>
// CHECK: return %[[A]] :
func.func @scores_causal_dynamic(%q: tensor<?x8x?x64xf16>, %k: tensor<4x?x128x64xf16>) -> tensor<4x8x?x?xf16> {
  %0 = linattn.scores %q, %k causal : tensor<?x8x?x64xf16>, tensor<4x?x128x64xf16> -> tensor<4x8x?x?xf16>
  return %0 : tensor<4x8x?x?xf16>
}

// Three batch dimensions, f64.
// CHECK-LABEL: func.func @scores_three_batch_dims
// CHECK-SAME: (%[[Q:.*]]: tensor<3x2x8x16x32xf64>, %[[K:.*]]: tensor<3x2x8x24x32xf64>)
// CHECK: %[[A:.*]] = linattn.scores %[[Q]], %[[K]] : tensor<3x2x8x16x32xf64>, tensor<3x2x8x24x32xf64> -> tensor<3x2x8x16x24xf64>
// CHECK: return %[[A]] :
func.func @scores_three_batch_dims(%q: tensor<3x2x8x16x32xf64>, %k: tensor<3x2x8x24x32xf64>) -> tensor<3x2x8x16x24xf64> {
  %0 = linattn.scores %q, %k : tensor<3x2x8x16x32xf64>, tensor<3x2x8x24x32xf64> -> tensor<3x2x8x16x24xf64>
  return %0 : tensor<3x2x8x16x24xf64>
}

//===----------------------------------------------------------------------===//
// linattn.apply_scores
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @apply_scores
// CHECK-SAME: (%[[A:.*]]: tensor<2x8x128x96xf32>, %[[V:.*]]: tensor<2x8x96x32xf32>)
// CHECK: %[[O:.*]] = linattn.apply_scores %[[A]], %[[V]] : tensor<2x8x128x96xf32>, tensor<2x8x96x32xf32> -> tensor<2x8x128x32xf32>
// CHECK: return %[[O]] :
func.func @apply_scores(%a: tensor<2x8x128x96xf32>, %v: tensor<2x8x96x32xf32>) -> tensor<2x8x128x32xf32> {
  %0 = linattn.apply_scores %a, %v : tensor<2x8x128x96xf32>, tensor<2x8x96x32xf32> -> tensor<2x8x128x32xf32>
  return %0 : tensor<2x8x128x32xf32>
}

// CHECK-LABEL: func.func @apply_scores_normalize
// CHECK-SAME: (%[[A:.*]]: tensor<128x128xbf16>, %[[V:.*]]: tensor<128x32xbf16>)
// CHECK: %[[O0:.*]] = linattn.apply_scores %[[A]], %[[V]] normalize(eps = 9.9999999999999995E-7) : tensor<128x128xbf16>, tensor<128x32xbf16> -> tensor<128x32xbf16>
// CHECK: %[[O1:.*]] = linattn.apply_scores %[[A]], %[[V]] normalize(eps = 5.000000e-01) : tensor<128x128xbf16>, tensor<128x32xbf16> -> tensor<128x32xbf16>
// CHECK: return %[[O0]], %[[O1]] :
func.func @apply_scores_normalize(%a: tensor<128x128xbf16>, %v: tensor<128x32xbf16>)
    -> (tensor<128x32xbf16>, tensor<128x32xbf16>) {
  %0 = linattn.apply_scores %a, %v normalize(eps = 1.0e-6) : tensor<128x128xbf16>, tensor<128x32xbf16> -> tensor<128x32xbf16>
  %1 = linattn.apply_scores %a, %v normalize(eps = 0.5) : tensor<128x128xbf16>, tensor<128x32xbf16> -> tensor<128x32xbf16>
  return %0, %1 : tensor<128x32xbf16>, tensor<128x32xbf16>
}

// Dynamic batch dimensions, dynamic sizes meeting static ones.
// CHECK-LABEL: func.func @apply_scores_dynamic
// CHECK-SAME: (%[[A:.*]]: tensor<?x?x?x96xf64>, %[[V:.*]]: tensor<2x?x?x32xf64>)
// CHECK: %[[O:.*]] = linattn.apply_scores %[[A]], %[[V]] normalize(eps = 9.9999999999999995E-7) : tensor<?x?x?x96xf64>, tensor<2x?x?x32xf64> -> tensor<?x8x128x?xf64>
// CHECK: return %[[O]] :
func.func @apply_scores_dynamic(%a: tensor<?x?x?x96xf64>, %v: tensor<2x?x?x32xf64>) -> tensor<?x8x128x?xf64> {
  %0 = linattn.apply_scores %a, %v normalize(eps = 1.0e-6) : tensor<?x?x?x96xf64>, tensor<2x?x?x32xf64> -> tensor<?x8x128x?xf64>
  return %0 : tensor<?x8x128x?xf64>
}

//===----------------------------------------------------------------------===//
// linattn.kv_summary
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @kv_summary
// CHECK-SAME: (%[[K:.*]]: tensor<2x8x96x64xf32>, %[[V:.*]]: tensor<2x8x96x32xf32>)
// CHECK: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary %[[K]], %[[V]] : tensor<2x8x96x64xf32>, tensor<2x8x96x32xf32> -> tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
// CHECK: return %[[S]], %[[Z]] :
func.func @kv_summary(%k: tensor<2x8x96x64xf32>, %v: tensor<2x8x96x32xf32>)
    -> (tensor<2x8x64x32xf32>, tensor<2x8x64xf32>) {
  %s, %z = linattn.kv_summary %k, %v : tensor<2x8x96x64xf32>, tensor<2x8x96x32xf32> -> tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
  return %s, %z : tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
}

// bf16 inputs with f32 state, dynamic sequence length.
// CHECK-LABEL: func.func @kv_summary_bf16_f32_state
// CHECK-SAME: (%[[K:.*]]: tensor<2x8x?x64xbf16>, %[[V:.*]]: tensor<2x8x?x32xbf16>)
// CHECK: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary %[[K]], %[[V]] : tensor<2x8x?x64xbf16>, tensor<2x8x?x32xbf16> -> tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
// CHECK: return %[[S]], %[[Z]] :
func.func @kv_summary_bf16_f32_state(%k: tensor<2x8x?x64xbf16>, %v: tensor<2x8x?x32xbf16>)
    -> (tensor<2x8x64x32xf32>, tensor<2x8x64xf32>) {
  %s, %z = linattn.kv_summary %k, %v : tensor<2x8x?x64xbf16>, tensor<2x8x?x32xbf16> -> tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
  return %s, %z : tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
}

// f16 inputs with f64 state, no batch dimensions.
// CHECK-LABEL: func.func @kv_summary_f16_rank2
// CHECK-SAME: (%[[K:.*]]: tensor<96x64xf16>, %[[V:.*]]: tensor<96x32xf16>)
// CHECK: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary %[[K]], %[[V]] : tensor<96x64xf16>, tensor<96x32xf16> -> tensor<64x32xf64>, tensor<64xf64>
// CHECK: return %[[S]], %[[Z]] :
func.func @kv_summary_f16_rank2(%k: tensor<96x64xf16>, %v: tensor<96x32xf16>)
    -> (tensor<64x32xf64>, tensor<64xf64>) {
  %s, %z = linattn.kv_summary %k, %v : tensor<96x64xf16>, tensor<96x32xf16> -> tensor<64x32xf64>, tensor<64xf64>
  return %s, %z : tensor<64x32xf64>, tensor<64xf64>
}

// Dynamic batch dimensions and feature sizes known from a single operand.
// CHECK-LABEL: func.func @kv_summary_dynamic
// CHECK-SAME: (%[[K:.*]]: tensor<?x?x?x?xf32>, %[[V:.*]]: tensor<?x8x96x?xf32>)
// CHECK: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary %[[K]], %[[V]] : tensor<?x?x?x?xf32>, tensor<?x8x96x?xf32> -> tensor<2x?x64x?xf32>, tensor<?x?x64xf32>
// CHECK: return %[[S]], %[[Z]] :
func.func @kv_summary_dynamic(%k: tensor<?x?x?x?xf32>, %v: tensor<?x8x96x?xf32>)
    -> (tensor<2x?x64x?xf32>, tensor<?x?x64xf32>) {
  %s, %z = linattn.kv_summary %k, %v : tensor<?x?x?x?xf32>, tensor<?x8x96x?xf32> -> tensor<2x?x64x?xf32>, tensor<?x?x64xf32>
  return %s, %z : tensor<2x?x64x?xf32>, tensor<?x?x64xf32>
}

//===----------------------------------------------------------------------===//
// linattn.query_readout
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @query_readout
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x128x64xf32>, %[[S:.*]]: tensor<2x8x64x32xf32>)
// CHECK: %[[O:.*]] = linattn.query_readout %[[Q]], %[[S]] : tensor<2x8x128x64xf32>, tensor<2x8x64x32xf32> -> tensor<2x8x128x32xf32>
// CHECK: return %[[O]] :
func.func @query_readout(%q: tensor<2x8x128x64xf32>, %s: tensor<2x8x64x32xf32>) -> tensor<2x8x128x32xf32> {
  %0 = linattn.query_readout %q, %s : tensor<2x8x128x64xf32>, tensor<2x8x64x32xf32> -> tensor<2x8x128x32xf32>
  return %0 : tensor<2x8x128x32xf32>
}

// CHECK-LABEL: func.func @query_readout_normalize
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x128x64xf32>, %[[S:.*]]: tensor<2x8x64x32xf32>, %[[Z:.*]]: tensor<2x8x64xf32>)
// CHECK: %[[O:.*]] = linattn.query_readout %[[Q]], %[[S]] normalize(%[[Z]], eps = 9.9999999999999995E-7) : tensor<2x8x128x64xf32>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32> -> tensor<2x8x128x32xf32>
// CHECK: return %[[O]] :
func.func @query_readout_normalize(%q: tensor<2x8x128x64xf32>, %s: tensor<2x8x64x32xf32>, %z: tensor<2x8x64xf32>) -> tensor<2x8x128x32xf32> {
  %0 = linattn.query_readout %q, %s normalize(%z, eps = 1.0e-6) : tensor<2x8x128x64xf32>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32> -> tensor<2x8x128x32xf32>
  return %0 : tensor<2x8x128x32xf32>
}

// bf16 queries read an f32 state; the result keeps the query element type.
// CHECK-LABEL: func.func @query_readout_bf16_f32_state
// CHECK-SAME: (%[[Q:.*]]: tensor<?x8x?x64xbf16>, %[[S:.*]]: tensor<2x?x64x32xf32>, %[[Z:.*]]: tensor<?x?x?xf32>)
// CHECK: %[[O:.*]] = linattn.query_readout %[[Q]], %[[S]] normalize(%[[Z]], eps = 1.000000e-03) : tensor<?x8x?x64xbf16>, tensor<2x?x64x32xf32>, tensor<?x?x?xf32> -> tensor<2x8x?x32xbf16>
// CHECK: return %[[O]] :
func.func @query_readout_bf16_f32_state(%q: tensor<?x8x?x64xbf16>, %s: tensor<2x?x64x32xf32>, %z: tensor<?x?x?xf32>) -> tensor<2x8x?x32xbf16> {
  %0 = linattn.query_readout %q, %s normalize(%z, eps = 1.0e-3) : tensor<?x8x?x64xbf16>, tensor<2x?x64x32xf32>, tensor<?x?x?xf32> -> tensor<2x8x?x32xbf16>
  return %0 : tensor<2x8x?x32xbf16>
}

// No batch dimensions, f16 queries with f16 state.
// CHECK-LABEL: func.func @query_readout_rank2
// CHECK-SAME: (%[[Q:.*]]: tensor<128x64xf16>, %[[S:.*]]: tensor<64x32xf16>)
// CHECK: %[[O:.*]] = linattn.query_readout %[[Q]], %[[S]] : tensor<128x64xf16>, tensor<64x32xf16> -> tensor<128x32xf16>
// CHECK: return %[[O]] :
func.func @query_readout_rank2(%q: tensor<128x64xf16>, %s: tensor<64x32xf16>) -> tensor<128x32xf16> {
  %0 = linattn.query_readout %q, %s : tensor<128x64xf16>, tensor<64x32xf16> -> tensor<128x32xf16>
  return %0 : tensor<128x32xf16>
}

//===----------------------------------------------------------------------===//
// linattn.scan
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @scan_forward
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x128x64xf32>, %[[K:.*]]: tensor<2x8x128x64xf32>, %[[V:.*]]: tensor<2x8x128x32xf32>)
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan forward %[[Q]], %[[K]], %[[V]] : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x32xf32> -> tensor<2x8x128x32xf32>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @scan_forward(%q: tensor<2x8x128x64xf32>, %k: tensor<2x8x128x64xf32>, %v: tensor<2x8x128x32xf32>)
    -> (tensor<2x8x128x32xf32>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32>) {
  %o, %s, %z = linattn.scan forward %q, %k, %v : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x32xf32> -> tensor<2x8x128x32xf32>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
  return %o, %s, %z : tensor<2x8x128x32xf32>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
}

// CHECK-LABEL: func.func @scan_reverse
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x128x64xf32>, %[[K:.*]]: tensor<2x8x128x64xf32>, %[[V:.*]]: tensor<2x8x128x32xf32>)
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan reverse %[[Q]], %[[K]], %[[V]] : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x32xf32> -> tensor<2x8x128x32xf32>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @scan_reverse(%q: tensor<2x8x128x64xf32>, %k: tensor<2x8x128x64xf32>, %v: tensor<2x8x128x32xf32>)
    -> (tensor<2x8x128x32xf32>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32>) {
  %o, %s, %z = linattn.scan reverse %q, %k, %v : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x32xf32> -> tensor<2x8x128x32xf32>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
  return %o, %s, %z : tensor<2x8x128x32xf32>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
}

// CHECK-LABEL: func.func @scan_init
// CHECK-SAME: (%[[Q:.*]]: tensor<128x64xf32>, %[[K:.*]]: tensor<128x64xf32>, %[[V:.*]]: tensor<128x32xf32>, %[[S0:.*]]: tensor<64x32xf32>, %[[Z0:.*]]: tensor<64xf32>)
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan forward %[[Q]], %[[K]], %[[V]] init(%[[S0]], %[[Z0]]) : tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x32xf32>, tensor<64x32xf32>, tensor<64xf32> -> tensor<128x32xf32>, tensor<64x32xf32>, tensor<64xf32>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @scan_init(%q: tensor<128x64xf32>, %k: tensor<128x64xf32>, %v: tensor<128x32xf32>, %s0: tensor<64x32xf32>, %z0: tensor<64xf32>)
    -> (tensor<128x32xf32>, tensor<64x32xf32>, tensor<64xf32>) {
  %o, %s, %z = linattn.scan forward %q, %k, %v init(%s0, %z0) : tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x32xf32>, tensor<64x32xf32>, tensor<64xf32> -> tensor<128x32xf32>, tensor<64x32xf32>, tensor<64xf32>
  return %o, %s, %z : tensor<128x32xf32>, tensor<64x32xf32>, tensor<64xf32>
}

// CHECK-LABEL: func.func @scan_normalize
// CHECK-SAME: (%[[Q:.*]]: tensor<4x?x64xf64>, %[[K:.*]]: tensor<4x?x64xf64>, %[[V:.*]]: tensor<4x?x32xf64>)
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan reverse %[[Q]], %[[K]], %[[V]] normalize(eps = 9.9999999999999995E-7) : tensor<4x?x64xf64>, tensor<4x?x64xf64>, tensor<4x?x32xf64> -> tensor<4x?x32xf64>, tensor<4x64x32xf64>, tensor<4x64xf64>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @scan_normalize(%q: tensor<4x?x64xf64>, %k: tensor<4x?x64xf64>, %v: tensor<4x?x32xf64>)
    -> (tensor<4x?x32xf64>, tensor<4x64x32xf64>, tensor<4x64xf64>) {
  %o, %s, %z = linattn.scan reverse %q, %k, %v normalize(eps = 1.0e-6) : tensor<4x?x64xf64>, tensor<4x?x64xf64>, tensor<4x?x32xf64> -> tensor<4x?x32xf64>, tensor<4x64x32xf64>, tensor<4x64xf64>
  return %o, %s, %z : tensor<4x?x32xf64>, tensor<4x64x32xf64>, tensor<4x64xf64>
}

// CHECK-LABEL: func.func @scan_chunk_size
// CHECK-SAME: (%[[Q:.*]]: tensor<8x1024x64xf16>, %[[K:.*]]: tensor<8x1024x64xf16>, %[[V:.*]]: tensor<8x1024x64xf16>)
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan forward %[[Q]], %[[K]], %[[V]] chunk_size(64) : tensor<8x1024x64xf16>, tensor<8x1024x64xf16>, tensor<8x1024x64xf16> -> tensor<8x1024x64xf16>, tensor<8x64x64xf32>, tensor<8x64xf32>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @scan_chunk_size(%q: tensor<8x1024x64xf16>, %k: tensor<8x1024x64xf16>, %v: tensor<8x1024x64xf16>)
    -> (tensor<8x1024x64xf16>, tensor<8x64x64xf32>, tensor<8x64xf32>) {
  %o, %s, %z = linattn.scan forward %q, %k, %v chunk_size(64) : tensor<8x1024x64xf16>, tensor<8x1024x64xf16>, tensor<8x1024x64xf16> -> tensor<8x1024x64xf16>, tensor<8x64x64xf32>, tensor<8x64xf32>
  return %o, %s, %z : tensor<8x1024x64xf16>, tensor<8x64x64xf32>, tensor<8x64xf32>
}

// Everything at once: init, normalize, chunk_size, bf16 inputs with f32
// state, dynamic batch and sequence dimensions.
// CHECK-LABEL: func.func @scan_all_bf16_f32_state
// CHECK-SAME: (%[[Q:.*]]: tensor<?x8x?x64xbf16>, %[[K:.*]]: tensor<2x?x?x64xbf16>, %[[V:.*]]: tensor<?x?x?x32xbf16>, %[[S0:.*]]: tensor<2x8x64x32xf32>, %[[Z0:.*]]: tensor<?x8x64xf32>)
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan reverse %[[Q]], %[[K]], %[[V]] init(%[[S0]], %[[Z0]]) normalize(eps = 9.9999999999999995E-7) chunk_size(128) : tensor<?x8x?x64xbf16>, tensor<2x?x?x64xbf16>, tensor<?x?x?x32xbf16>, tensor<2x8x64x32xf32>, tensor<?x8x64xf32> -> tensor<2x8x?x32xbf16>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @scan_all_bf16_f32_state(%q: tensor<?x8x?x64xbf16>, %k: tensor<2x?x?x64xbf16>, %v: tensor<?x?x?x32xbf16>, %s0: tensor<2x8x64x32xf32>, %z0: tensor<?x8x64xf32>)
    -> (tensor<2x8x?x32xbf16>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32>) {
  %o, %s, %z = linattn.scan reverse %q, %k, %v init(%s0, %z0) normalize(eps = 1.0e-6) chunk_size(128) : tensor<?x8x?x64xbf16>, tensor<2x?x?x64xbf16>, tensor<?x?x?x32xbf16>, tensor<2x8x64x32xf32>, tensor<?x8x64xf32> -> tensor<2x8x?x32xbf16>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
  return %o, %s, %z : tensor<2x8x?x32xbf16>, tensor<2x8x64x32xf32>, tensor<2x8x64xf32>
}

// A dynamic query length meets static key, value and result lengths.
// CHECK-LABEL: func.func @scan_mixed_static_dynamic
// CHECK-SAME: (%[[Q:.*]]: tensor<?x?xf32>, %[[K:.*]]: tensor<16x?xf32>, %[[V:.*]]: tensor<?x8xf32>)
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan forward %[[Q]], %[[K]], %[[V]] : tensor<?x?xf32>, tensor<16x?xf32>, tensor<?x8xf32> -> tensor<16x?xf32>, tensor<4x?xf32>, tensor<?xf32>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @scan_mixed_static_dynamic(%q: tensor<?x?xf32>, %k: tensor<16x?xf32>, %v: tensor<?x8xf32>)
    -> (tensor<16x?xf32>, tensor<4x?xf32>, tensor<?xf32>) {
  %o, %s, %z = linattn.scan forward %q, %k, %v : tensor<?x?xf32>, tensor<16x?xf32>, tensor<?x8xf32> -> tensor<16x?xf32>, tensor<4x?xf32>, tensor<?xf32>
  return %o, %s, %z : tensor<16x?xf32>, tensor<4x?xf32>, tensor<?xf32>
}

// Three batch dimensions.
// CHECK-LABEL: func.func @scan_three_batch_dims
// CHECK-SAME: (%[[Q:.*]]: tensor<3x2x8x16x4xf32>, %[[K:.*]]: tensor<3x2x8x16x4xf32>, %[[V:.*]]: tensor<3x2x8x16x6xf32>, %[[S0:.*]]: tensor<3x2x8x4x6xf32>, %[[Z0:.*]]: tensor<3x2x8x4xf32>)
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.scan forward %[[Q]], %[[K]], %[[V]] init(%[[S0]], %[[Z0]]) chunk_size(1) : tensor<3x2x8x16x4xf32>, tensor<3x2x8x16x4xf32>, tensor<3x2x8x16x6xf32>, tensor<3x2x8x4x6xf32>, tensor<3x2x8x4xf32> -> tensor<3x2x8x16x6xf32>, tensor<3x2x8x4x6xf32>, tensor<3x2x8x4xf32>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @scan_three_batch_dims(%q: tensor<3x2x8x16x4xf32>, %k: tensor<3x2x8x16x4xf32>, %v: tensor<3x2x8x16x6xf32>, %s0: tensor<3x2x8x4x6xf32>, %z0: tensor<3x2x8x4xf32>)
    -> (tensor<3x2x8x16x6xf32>, tensor<3x2x8x4x6xf32>, tensor<3x2x8x4xf32>) {
  %o, %s, %z = linattn.scan forward %q, %k, %v init(%s0, %z0) chunk_size(1) : tensor<3x2x8x16x4xf32>, tensor<3x2x8x16x4xf32>, tensor<3x2x8x16x6xf32>, tensor<3x2x8x4x6xf32>, tensor<3x2x8x4xf32> -> tensor<3x2x8x16x6xf32>, tensor<3x2x8x4x6xf32>, tensor<3x2x8x4xf32>
  return %o, %s, %z : tensor<3x2x8x16x6xf32>, tensor<3x2x8x4x6xf32>, tensor<3x2x8x4xf32>
}

//===----------------------------------------------------------------------===//
// linattn.feature_map_grad
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @feature_map_grad_elu
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x?x64xf32>, %[[D:.*]]: tensor<2x8x?x64xf32>)
// CHECK: %[[DX:.*]] = linattn.feature_map_grad elu %[[X]], %[[D]] : tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32> -> tensor<2x8x?x64xf32>
// CHECK: return %[[DX]] :
func.func @feature_map_grad_elu(%x: tensor<2x8x?x64xf32>, %d: tensor<2x8x?x64xf32>) -> tensor<2x8x?x64xf32> {
  %dx = linattn.feature_map_grad elu %x, %d : tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32> -> tensor<2x8x?x64xf32>
  return %dx : tensor<2x8x?x64xf32>
}

// CHECK-LABEL: func.func @feature_map_grad_poly2
// CHECK: linattn.feature_map_grad poly2 %{{.*}}, %{{.*}} : tensor<5x3xbf16>, tensor<5x13xbf16> -> tensor<5x3xbf16>
func.func @feature_map_grad_poly2(%x: tensor<5x3xbf16>, %d: tensor<5x13xbf16>) -> tensor<5x3xbf16> {
  %dx = linattn.feature_map_grad poly2 %x, %d : tensor<5x3xbf16>, tensor<5x13xbf16> -> tensor<5x3xbf16>
  return %dx : tensor<5x3xbf16>
}

// CHECK-LABEL: func.func @feature_map_grad_favor
// CHECK-SAME: (%[[X:.*]]: tensor<?x16xf32>, %[[D:.*]]: tensor<?x?xf32>, %[[P:.*]]: tensor<16x32xf32>)
// CHECK: linattn.feature_map_grad favor %[[X]], %[[D]] projection(%[[P]]) : tensor<?x16xf32>, tensor<?x?xf32>, tensor<16x32xf32> -> tensor<?x16xf32>
func.func @feature_map_grad_favor(%x: tensor<?x16xf32>, %d: tensor<?x?xf32>, %p: tensor<16x32xf32>) -> tensor<?x16xf32> {
  %dx = linattn.feature_map_grad favor %x, %d projection(%p) : tensor<?x16xf32>, tensor<?x?xf32>, tensor<16x32xf32> -> tensor<?x16xf32>
  return %dx : tensor<?x16xf32>
}

//===----------------------------------------------------------------------===//
// linattn.attention_grad
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @attention_grad_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<1x8x?x64xf32>, %[[K:.*]]: tensor<1x8x?x64xf32>, %[[V:.*]]: tensor<1x8x?x32xf32>, %[[DO:.*]]: tensor<1x8x?x32xf32>)
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = linattn.attention_grad elu %[[Q]], %[[K]], %[[V]], %[[DO]] causal normalize(eps = 9.9999999999999995E-7) : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x32xf32>, tensor<1x8x?x32xf32> -> tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x32xf32>
// CHECK: return %[[DQ]], %[[DK]], %[[DV]] :
func.func @attention_grad_causal(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x32xf32>, %do: tensor<1x8x?x32xf32>)
    -> (tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x32xf32>) {
  %dq, %dk, %dv = linattn.attention_grad elu %q, %k, %v, %do causal normalize(eps = 1.0e-6) : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x32xf32>, tensor<1x8x?x32xf32> -> tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x32xf32>
  return %dq, %dk, %dv : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x32xf32>
}

// Non-causal, unnormalized, favor with its projection, keys of another
// length than the queries.
// CHECK-LABEL: func.func @attention_grad_favor
// CHECK: linattn.attention_grad favor %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} projection(%{{.*}}) : tensor<2x7x8xf16>, tensor<2x11x8xf16>, tensor<2x11x5xf16>, tensor<2x7x5xf16>, tensor<8x16xf16> -> tensor<2x7x8xf16>, tensor<2x11x8xf16>, tensor<2x11x5xf16>
func.func @attention_grad_favor(%q: tensor<2x7x8xf16>, %k: tensor<2x11x8xf16>, %v: tensor<2x11x5xf16>, %do: tensor<2x7x5xf16>, %p: tensor<8x16xf16>)
    -> (tensor<2x7x8xf16>, tensor<2x11x8xf16>, tensor<2x11x5xf16>) {
  %dq, %dk, %dv = linattn.attention_grad favor %q, %k, %v, %do projection(%p) : tensor<2x7x8xf16>, tensor<2x11x8xf16>, tensor<2x11x5xf16>, tensor<2x7x5xf16>, tensor<8x16xf16> -> tensor<2x7x8xf16>, tensor<2x11x8xf16>, tensor<2x11x5xf16>
  return %dq, %dk, %dv : tensor<2x7x8xf16>, tensor<2x11x8xf16>, tensor<2x11x5xf16>
}

//===----------------------------------------------------------------------===//
// linattn.scan_grad
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @scan_grad
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x?x64xf32>, %[[K:.*]]: tensor<2x8x?x64xf32>, %[[V:.*]]: tensor<2x8x?x32xf32>, %[[DO:.*]]: tensor<2x8x?x32xf32>)
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = linattn.scan_grad forward %[[Q]], %[[K]], %[[V]], %[[DO]] : tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32>, tensor<2x8x?x32xf32>, tensor<2x8x?x32xf32> -> tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32>, tensor<2x8x?x32xf32>
// CHECK: return %[[DQ]], %[[DK]], %[[DV]] :
func.func @scan_grad(%q: tensor<2x8x?x64xf32>, %k: tensor<2x8x?x64xf32>, %v: tensor<2x8x?x32xf32>, %do: tensor<2x8x?x32xf32>)
    -> (tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32>, tensor<2x8x?x32xf32>) {
  %dq, %dk, %dv = linattn.scan_grad forward %q, %k, %v, %do : tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32>, tensor<2x8x?x32xf32>, tensor<2x8x?x32xf32> -> tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32>, tensor<2x8x?x32xf32>
  return %dq, %dk, %dv : tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32>, tensor<2x8x?x32xf32>
}

// A reverse scan's gradients, 16-bit data, sizes static in some operands
// only, no batch dimensions.
// CHECK-LABEL: func.func @scan_grad_reverse_bf16
// CHECK: linattn.scan_grad reverse %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x?xbf16>, tensor<?x4xbf16>, tensor<16x3xbf16>, tensor<?x?xbf16> -> tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16x3xbf16>
func.func @scan_grad_reverse_bf16(%q: tensor<16x?xbf16>, %k: tensor<?x4xbf16>, %v: tensor<16x3xbf16>, %do: tensor<?x?xbf16>)
    -> (tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16x3xbf16>) {
  %dq, %dk, %dv = linattn.scan_grad reverse %q, %k, %v, %do : tensor<16x?xbf16>, tensor<?x4xbf16>, tensor<16x3xbf16>, tensor<?x?xbf16> -> tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16x3xbf16>
  return %dq, %dk, %dv : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16x3xbf16>
}

// CHECK-LABEL: func.func @scan_grad_normalize
// CHECK: linattn.scan_grad forward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} normalize(eps = 9.9999999999999995E-7) : tensor<7x4xf64>
func.func @scan_grad_normalize(%q: tensor<7x4xf64>, %v: tensor<7x3xf64>)
    -> (tensor<7x4xf64>, tensor<7x4xf64>, tensor<7x3xf64>) {
  %dq, %dk, %dv = linattn.scan_grad forward %q, %q, %v, %v normalize(eps = 1.0e-6) : tensor<7x4xf64>, tensor<7x4xf64>, tensor<7x3xf64>, tensor<7x3xf64> -> tensor<7x4xf64>, tensor<7x4xf64>, tensor<7x3xf64>
  return %dq, %dk, %dv : tensor<7x4xf64>, tensor<7x4xf64>, tensor<7x3xf64>
}

// CHECK-LABEL: func.func @scan_grad_states
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %[[DS0:.*]], %[[DZ0:.*]] = linattn.scan_grad reverse %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} init(%{{.*}}, %{{.*}} : tensor<2x4x3xf32>, tensor<2x4xf32>) final_grad(%{{.*}}, %{{.*}} : tensor<2x4x3xf32>, tensor<2x4xf32>) normalize(eps = 1.000000e-03) : tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>, tensor<2x?x3xbf16> -> tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>, tensor<2x4x3xf32>, tensor<2x4xf32>
// CHECK: linattn.scan_grad forward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} init(%{{.*}}, %{{.*}} : tensor<2x4x3xf32>, tensor<2x4xf32>) : tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>, tensor<2x?x3xbf16> -> tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>, tensor<2x4x3xf32>, tensor<2x4xf32>
// CHECK: linattn.scan_grad forward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} final_grad(%{{.*}}, %{{.*}} : tensor<2x4x3xf32>, tensor<2x4xf32>) : tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>, tensor<2x?x3xbf16> -> tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>{{$}}
func.func @scan_grad_states(%q: tensor<2x?x4xbf16>, %v: tensor<2x?x3xbf16>,
                            %s: tensor<2x4x3xf32>, %z: tensor<2x4xf32>)
    -> (tensor<2x4x3xf32>, tensor<2x4xf32>) {
  %dq, %dk, %dv, %ds0, %dz0 = linattn.scan_grad reverse %q, %q, %v, %v init(%s, %z : tensor<2x4x3xf32>, tensor<2x4xf32>) final_grad(%s, %z : tensor<2x4x3xf32>, tensor<2x4xf32>) normalize(eps = 1.0e-3) : tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>, tensor<2x?x3xbf16> -> tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>, tensor<2x4x3xf32>, tensor<2x4xf32>
  %a:5 = linattn.scan_grad forward %q, %q, %v, %v init(%s, %z : tensor<2x4x3xf32>, tensor<2x4xf32>) : tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>, tensor<2x?x3xbf16> -> tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>, tensor<2x4x3xf32>, tensor<2x4xf32>
  %b:3 = linattn.scan_grad forward %q, %q, %v, %v final_grad(%s, %z : tensor<2x4x3xf32>, tensor<2x4xf32>) : tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>, tensor<2x?x3xbf16> -> tensor<2x?x4xbf16>, tensor<2x?x4xbf16>, tensor<2x?x3xbf16>
  return %ds0, %dz0 : tensor<2x4x3xf32>, tensor<2x4xf32>
}

//===----------------------------------------------------------------------===//
// linattn.step
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[Q:.*]]: tensor<1x16x64xf32>, %[[K:.*]]: tensor<1x16x64xf32>, %[[V:.*]]: tensor<1x16x32xf32>, %[[S0:.*]]: tensor<1x16x64x32xf32>, %[[Z0:.*]]: tensor<1x16x64xf32>)
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.step %[[Q]], %[[K]], %[[V]], %[[S0]], %[[Z0]] : tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<1x16x32xf32>, tensor<1x16x64x32xf32>, tensor<1x16x64xf32> -> tensor<1x16x32xf32>, tensor<1x16x64x32xf32>, tensor<1x16x64xf32>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @step(%q: tensor<1x16x64xf32>, %k: tensor<1x16x64xf32>, %v: tensor<1x16x32xf32>, %s0: tensor<1x16x64x32xf32>, %z0: tensor<1x16x64xf32>)
    -> (tensor<1x16x32xf32>, tensor<1x16x64x32xf32>, tensor<1x16x64xf32>) {
  %o, %s, %z = linattn.step %q, %k, %v, %s0, %z0 : tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<1x16x32xf32>, tensor<1x16x64x32xf32>, tensor<1x16x64xf32> -> tensor<1x16x32xf32>, tensor<1x16x64x32xf32>, tensor<1x16x64xf32>
  return %o, %s, %z : tensor<1x16x32xf32>, tensor<1x16x64x32xf32>, tensor<1x16x64xf32>
}

// CHECK-LABEL: func.func @step_normalize_bf16_f32_state
// CHECK-SAME: (%[[Q:.*]]: tensor<?x16x64xbf16>, %[[K:.*]]: tensor<?x16x64xbf16>, %[[V:.*]]: tensor<?x16x32xbf16>, %[[S0:.*]]: tensor<4x16x64x32xf32>, %[[Z0:.*]]: tensor<4x?x?xf32>)
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.step %[[Q]], %[[K]], %[[V]], %[[S0]], %[[Z0]] normalize(eps = 9.9999999999999995E-7) : tensor<?x16x64xbf16>, tensor<?x16x64xbf16>, tensor<?x16x32xbf16>, tensor<4x16x64x32xf32>, tensor<4x?x?xf32> -> tensor<?x16x32xbf16>, tensor<4x16x64x32xf32>, tensor<4x16x64xf32>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @step_normalize_bf16_f32_state(%q: tensor<?x16x64xbf16>, %k: tensor<?x16x64xbf16>, %v: tensor<?x16x32xbf16>, %s0: tensor<4x16x64x32xf32>, %z0: tensor<4x?x?xf32>)
    -> (tensor<?x16x32xbf16>, tensor<4x16x64x32xf32>, tensor<4x16x64xf32>) {
  %o, %s, %z = linattn.step %q, %k, %v, %s0, %z0 normalize(eps = 1.0e-6) : tensor<?x16x64xbf16>, tensor<?x16x64xbf16>, tensor<?x16x32xbf16>, tensor<4x16x64x32xf32>, tensor<4x?x?xf32> -> tensor<?x16x32xbf16>, tensor<4x16x64x32xf32>, tensor<4x16x64xf32>
  return %o, %s, %z : tensor<?x16x32xbf16>, tensor<4x16x64x32xf32>, tensor<4x16x64xf32>
}

// One token with no batch dimensions: rank-1 features and values.
// CHECK-LABEL: func.func @step_rank1
// CHECK-SAME: (%[[Q:.*]]: tensor<64xf64>, %[[K:.*]]: tensor<64xf64>, %[[V:.*]]: tensor<32xf64>, %[[S0:.*]]: tensor<64x32xf64>, %[[Z0:.*]]: tensor<64xf64>)
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.step %[[Q]], %[[K]], %[[V]], %[[S0]], %[[Z0]] normalize(eps = 2.500000e-01) : tensor<64xf64>, tensor<64xf64>, tensor<32xf64>, tensor<64x32xf64>, tensor<64xf64> -> tensor<32xf64>, tensor<64x32xf64>, tensor<64xf64>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @step_rank1(%q: tensor<64xf64>, %k: tensor<64xf64>, %v: tensor<32xf64>, %s0: tensor<64x32xf64>, %z0: tensor<64xf64>)
    -> (tensor<32xf64>, tensor<64x32xf64>, tensor<64xf64>) {
  %o, %s, %z = linattn.step %q, %k, %v, %s0, %z0 normalize(eps = 0.25) : tensor<64xf64>, tensor<64xf64>, tensor<32xf64>, tensor<64x32xf64>, tensor<64xf64> -> tensor<32xf64>, tensor<64x32xf64>, tensor<64xf64>
  return %o, %s, %z : tensor<32xf64>, tensor<64x32xf64>, tensor<64xf64>
}

// Three batch dimensions, f16 throughout, fully dynamic feature sizes.
// CHECK-LABEL: func.func @step_three_batch_dims
// CHECK-SAME: (%[[Q:.*]]: tensor<2x3x4x?xf16>, %[[K:.*]]: tensor<2x3x4x?xf16>, %[[V:.*]]: tensor<2x3x4x?xf16>, %[[S0:.*]]: tensor<2x3x4x?x?xf16>, %[[Z0:.*]]: tensor<2x3x4x?xf16>)
// CHECK: %[[O:.*]], %[[S:.*]], %[[Z:.*]] = linattn.step %[[Q]], %[[K]], %[[V]], %[[S0]], %[[Z0]] : tensor<2x3x4x?xf16>, tensor<2x3x4x?xf16>, tensor<2x3x4x?xf16>, tensor<2x3x4x?x?xf16>, tensor<2x3x4x?xf16> -> tensor<2x3x4x?xf16>, tensor<2x3x4x?x?xf16>, tensor<2x3x4x?xf16>
// CHECK: return %[[O]], %[[S]], %[[Z]] :
func.func @step_three_batch_dims(%q: tensor<2x3x4x?xf16>, %k: tensor<2x3x4x?xf16>, %v: tensor<2x3x4x?xf16>, %s0: tensor<2x3x4x?x?xf16>, %z0: tensor<2x3x4x?xf16>)
    -> (tensor<2x3x4x?xf16>, tensor<2x3x4x?x?xf16>, tensor<2x3x4x?xf16>) {
  %o, %s, %z = linattn.step %q, %k, %v, %s0, %z0 : tensor<2x3x4x?xf16>, tensor<2x3x4x?xf16>, tensor<2x3x4x?xf16>, tensor<2x3x4x?x?xf16>, tensor<2x3x4x?xf16> -> tensor<2x3x4x?xf16>, tensor<2x3x4x?x?xf16>, tensor<2x3x4x?xf16>
  return %o, %s, %z : tensor<2x3x4x?xf16>, tensor<2x3x4x?x?xf16>, tensor<2x3x4x?xf16>
}

//===----------------------------------------------------------------------===//
// linattn.attention
//===----------------------------------------------------------------------===//

// Cross-attention with the elu feature map.
// CHECK-LABEL: func.func @attention_elu_cross
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x128x64xf32>, %[[K:.*]]: tensor<2x8x96x64xf32>, %[[V:.*]]: tensor<2x8x96x32xf32>)
// CHECK: %[[O:.*]] = linattn.attention elu %[[Q]], %[[K]], %[[V]] : tensor<2x8x128x64xf32>, tensor<2x8x96x64xf32>, tensor<2x8x96x32xf32> -> tensor<2x8x128x32xf32>
// CHECK: return %[[O]] :
func.func @attention_elu_cross(%q: tensor<2x8x128x64xf32>, %k: tensor<2x8x96x64xf32>, %v: tensor<2x8x96x32xf32>) -> tensor<2x8x128x32xf32> {
  %0 = linattn.attention elu %q, %k, %v : tensor<2x8x128x64xf32>, tensor<2x8x96x64xf32>, tensor<2x8x96x32xf32> -> tensor<2x8x128x32xf32>
  return %0 : tensor<2x8x128x32xf32>
}

// CHECK-LABEL: func.func @attention_elu_causal_normalize
// CHECK-SAME: (%[[Q:.*]]: tensor<1x8x1024x64xf32>, %[[K:.*]]: tensor<1x8x1024x64xf32>, %[[V:.*]]: tensor<1x8x1024x64xf32>)
// CHECK: %[[O:.*]] = linattn.attention elu %[[Q]], %[[K]], %[[V]] causal normalize(eps = 9.9999999999999995E-7) : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32> -> tensor<1x8x1024x64xf32>
// CHECK: return %[[O]] :
func.func @attention_elu_causal_normalize(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>, %v: tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32> {
  %0 = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6) : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32> -> tensor<1x8x1024x64xf32>
  return %0 : tensor<1x8x1024x64xf32>
}

// CHECK-LABEL: func.func @attention_relu_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<128x64xbf16>, %[[K:.*]]: tensor<128x64xbf16>, %[[V:.*]]: tensor<128x32xbf16>)
// CHECK: %[[O:.*]] = linattn.attention relu %[[Q]], %[[K]], %[[V]] causal : tensor<128x64xbf16>, tensor<128x64xbf16>, tensor<128x32xbf16> -> tensor<128x32xbf16>
// CHECK: return %[[O]] :
func.func @attention_relu_causal(%q: tensor<128x64xbf16>, %k: tensor<128x64xbf16>, %v: tensor<128x32xbf16>) -> tensor<128x32xbf16> {
  %0 = linattn.attention relu %q, %k, %v causal : tensor<128x64xbf16>, tensor<128x64xbf16>, tensor<128x32xbf16> -> tensor<128x32xbf16>
  return %0 : tensor<128x32xbf16>
}

// CHECK-LABEL: func.func @attention_identity_normalize
// CHECK-SAME: (%[[Q:.*]]: tensor<?x?x?x?xf16>, %[[K:.*]]: tensor<2x?x96x64xf16>, %[[V:.*]]: tensor<?x8x?x32xf16>)
// CHECK: %[[O:.*]] = linattn.attention identity %[[Q]], %[[K]], %[[V]] normalize(eps = 1.000000e-02) : tensor<?x?x?x?xf16>, tensor<2x?x96x64xf16>, tensor<?x8x?x32xf16> -> tensor<?x?x128x?xf16>
// CHECK: return %[[O]] :
func.func @attention_identity_normalize(%q: tensor<?x?x?x?xf16>, %k: tensor<2x?x96x64xf16>, %v: tensor<?x8x?x32xf16>) -> tensor<?x?x128x?xf16> {
  %0 = linattn.attention identity %q, %k, %v normalize(eps = 1.0e-2) : tensor<?x?x?x?xf16>, tensor<2x?x96x64xf16>, tensor<?x8x?x32xf16> -> tensor<?x?x128x?xf16>
  return %0 : tensor<?x?x128x?xf16>
}

// CHECK-LABEL: func.func @attention_poly2
// CHECK-SAME: (%[[Q:.*]]: tensor<3x2x8x16x4xf64>, %[[K:.*]]: tensor<3x2x8x16x4xf64>, %[[V:.*]]: tensor<3x2x8x16x6xf64>)
// CHECK: %[[O:.*]] = linattn.attention poly2 %[[Q]], %[[K]], %[[V]] causal normalize(eps = 9.9999999999999995E-7) : tensor<3x2x8x16x4xf64>, tensor<3x2x8x16x4xf64>, tensor<3x2x8x16x6xf64> -> tensor<3x2x8x16x6xf64>
// CHECK: return %[[O]] :
func.func @attention_poly2(%q: tensor<3x2x8x16x4xf64>, %k: tensor<3x2x8x16x4xf64>, %v: tensor<3x2x8x16x6xf64>) -> tensor<3x2x8x16x6xf64> {
  %0 = linattn.attention poly2 %q, %k, %v causal normalize(eps = 1.0e-6) : tensor<3x2x8x16x4xf64>, tensor<3x2x8x16x4xf64>, tensor<3x2x8x16x6xf64> -> tensor<3x2x8x16x6xf64>
  return %0 : tensor<3x2x8x16x6xf64>
}

// CHECK-LABEL: func.func @attention_favor
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x?x64xf32>, %[[K:.*]]: tensor<2x8x?x64xf32>, %[[V:.*]]: tensor<2x8x?x32xf32>, %[[P:.*]]: tensor<64x256xf32>)
// CHECK: %[[O:.*]] = linattn.attention favor %[[Q]], %[[K]], %[[V]] projection(%[[P]]) causal normalize(eps = 9.9999999999999995E-7) : tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32>, tensor<2x8x?x32xf32>, tensor<64x256xf32> -> tensor<2x8x?x32xf32>
// CHECK: return %[[O]] :
func.func @attention_favor(%q: tensor<2x8x?x64xf32>, %k: tensor<2x8x?x64xf32>, %v: tensor<2x8x?x32xf32>, %p: tensor<64x256xf32>) -> tensor<2x8x?x32xf32> {
  %0 = linattn.attention favor %q, %k, %v projection(%p) causal normalize(eps = 1.0e-6) : tensor<2x8x?x64xf32>, tensor<2x8x?x64xf32>, tensor<2x8x?x32xf32>, tensor<64x256xf32> -> tensor<2x8x?x32xf32>
  return %0 : tensor<2x8x?x32xf32>
}

// Cross-attention with favor, no causal mask, no normalization, and a
// projection whose sizes are dynamic.
// CHECK-LABEL: func.func @attention_favor_cross
// CHECK-SAME: (%[[Q:.*]]: tensor<16x32xf32>, %[[K:.*]]: tensor<24x32xf32>, %[[V:.*]]: tensor<24x8xf32>, %[[P:.*]]: tensor<?x?xf32>)
// CHECK: %[[O:.*]] = linattn.attention favor %[[Q]], %[[K]], %[[V]] projection(%[[P]]) : tensor<16x32xf32>, tensor<24x32xf32>, tensor<24x8xf32>, tensor<?x?xf32> -> tensor<16x8xf32>
// CHECK: return %[[O]] :
func.func @attention_favor_cross(%q: tensor<16x32xf32>, %k: tensor<24x32xf32>, %v: tensor<24x8xf32>, %p: tensor<?x?xf32>) -> tensor<16x8xf32> {
  %0 = linattn.attention favor %q, %k, %v projection(%p) : tensor<16x32xf32>, tensor<24x32xf32>, tensor<24x8xf32>, tensor<?x?xf32> -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// Causal with a dynamic key length and a static query length.
// CHECK-LABEL: func.func @attention_causal_dynamic
// CHECK-SAME: (%[[Q:.*]]: tensor<4x128x64xf32>, %[[K:.*]]: tensor<4x?x64xf32>, %[[V:.*]]: tensor<4x?x64xf32>)
// CHECK: %[[O:.*]] = linattn.attention relu %[[Q]], %[[K]], %[[V]] causal : tensor<4x128x64xf32>, tensor<4x?x64xf32>, tensor<4x?x64xf32> -> tensor<4x128x64xf32>
// CHECK: return %[[O]] :
func.func @attention_causal_dynamic(%q: tensor<4x128x64xf32>, %k: tensor<4x?x64xf32>, %v: tensor<4x?x64xf32>) -> tensor<4x128x64xf32> {
  %0 = linattn.attention relu %q, %k, %v causal : tensor<4x128x64xf32>, tensor<4x?x64xf32>, tensor<4x?x64xf32> -> tensor<4x128x64xf32>
  return %0 : tensor<4x128x64xf32>
}

// The largest D whose poly2 features of one f32 token (4 (1 + D + D^2)
// bytes) take fewer than 2^63 bytes.
// CHECK-LABEL: func.func @attention_poly2_largest_feature_size
// CHECK: linattn.attention poly2 %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x1518500249xf32>, tensor<1x1518500249xf32>, tensor<1x4xf32> -> tensor<1x4xf32>
func.func @attention_poly2_largest_feature_size(%q: tensor<1x1518500249xf32>, %v: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = linattn.attention poly2 %q, %q, %v : tensor<1x1518500249xf32>, tensor<1x1518500249xf32>, tensor<1x4xf32> -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

//===----------------------------------------------------------------------===//
// linattn.read_buffer
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @read_buffer
// CHECK: linattn.read_buffer %{{.*}} : tensor<4x?xf32> to memref<4x?xf32>
func.func @read_buffer(%t: tensor<4x?xf32>) -> memref<4x?xf32> {
  %m = linattn.read_buffer %t : tensor<4x?xf32> to memref<4x?xf32>
  return %m : memref<4x?xf32>
}
