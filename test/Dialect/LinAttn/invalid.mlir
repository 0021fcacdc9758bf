// RUN: linattn-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the linattn verifiers and, for a few ops, of the
// ODS type constraints and the custom parsers. Pairings that the custom
// syntax cannot spell (a scan init with only one of its two operands, a
// query_readout normalizer without eps) use the generic form.

//===----------------------------------------------------------------------===//
// linattn.feature_map
//===----------------------------------------------------------------------===//

func.func @feature_map_rank_too_small(%x: tensor<f32>) {
  // expected-error @+1 {{'linattn.feature_map' op expected input to have rank at least 1, got rank 0}}
  %0 = linattn.feature_map elu %x : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @feature_map_result_rank(%x: tensor<2x16x4xf32>) {
  // expected-error @+1 {{'linattn.feature_map' op expected result to have rank 3 (2 batch dimensions like the input, then 1), got rank 2}}
  %0 = linattn.feature_map relu %x : tensor<2x16x4xf32> -> tensor<16x4xf32>
  return
}

// -----

func.func @feature_map_batch_dim(%x: tensor<2x16x4xf32>) {
  // expected-error @+1 {{'linattn.feature_map' op result batch dimension 1 (8) does not match input batch dimension 1 (16)}}
  %0 = linattn.feature_map elu %x : tensor<2x16x4xf32> -> tensor<2x8x4xf32>
  return
}

// -----

func.func @feature_map_elementwise_feature_size(%x: tensor<2x16x4xf32>) {
  // expected-error @+1 {{'linattn.feature_map' op result feature size 5 does not match input feature size 4}}
  %0 = linattn.feature_map identity %x : tensor<2x16x4xf32> -> tensor<2x16x5xf32>
  return
}

// -----

func.func @feature_map_element_type(%x: tensor<2x16x4xf32>) {
  // expected-error @+1 {{'linattn.feature_map' op result element type 'f16' does not match input element type 'f32'}}
  %0 = linattn.feature_map elu %x : tensor<2x16x4xf32> -> tensor<2x16x4xf16>
  return
}

// -----

func.func @feature_map_favor_without_projection(%x: tensor<2x16x4xf32>) {
  // expected-error @+1 {{'linattn.feature_map' op the favor feature map needs a projection operand (projection(%p) with P of shape D x m)}}
  %0 = linattn.feature_map favor %x : tensor<2x16x4xf32> -> tensor<2x16x8xf32>
  return
}

// -----

func.func @feature_map_elu_with_projection(%x: tensor<2x16x4xf32>, %p: tensor<4x8xf32>) {
  // expected-error @+1 {{'linattn.feature_map' op the elu feature map takes no projection operand}}
  %0 = linattn.feature_map elu %x projection(%p) : tensor<2x16x4xf32>, tensor<4x8xf32> -> tensor<2x16x4xf32>
  return
}

// -----

func.func @feature_map_poly2_with_projection(%x: tensor<2x16x4xf32>, %p: tensor<4x8xf32>) {
  // expected-error @+1 {{'linattn.feature_map' op the poly2 feature map takes no projection operand}}
  %0 = linattn.feature_map poly2 %x projection(%p) : tensor<2x16x4xf32>, tensor<4x8xf32> -> tensor<2x16x21xf32>
  return
}

// -----

func.func @feature_map_projection_rank3(%x: tensor<2x16x4xf32>, %p: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'linattn.feature_map' op expected projection to have rank 2, got rank 3}}
  %0 = linattn.feature_map favor %x projection(%p) : tensor<2x16x4xf32>, tensor<2x4x8xf32> -> tensor<2x16x8xf32>
  return
}

// -----

func.func @feature_map_projection_rank1(%x: tensor<2x16x4xf32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'linattn.feature_map' op expected projection to have rank 2, got rank 1}}
  %0 = linattn.feature_map favor %x projection(%p) : tensor<2x16x4xf32>, tensor<4xf32> -> tensor<2x16x8xf32>
  return
}

// -----

func.func @feature_map_projection_input_size(%x: tensor<2x16x4xf32>, %p: tensor<5x8xf32>) {
  // expected-error @+1 {{'linattn.feature_map' op projection input size 5 does not match input feature size 4}}
  %0 = linattn.feature_map favor %x projection(%p) : tensor<2x16x4xf32>, tensor<5x8xf32> -> tensor<2x16x8xf32>
  return
}

// -----

func.func @feature_map_projection_feature_count(%x: tensor<2x16x4xf32>, %p: tensor<4x8xf32>) {
  // expected-error @+1 {{'linattn.feature_map' op projection feature count 8 does not match result feature size 16}}
  %0 = linattn.feature_map favor %x projection(%p) : tensor<2x16x4xf32>, tensor<4x8xf32> -> tensor<2x16x16xf32>
  return
}

// -----

func.func @feature_map_projection_element_type(%x: tensor<2x16x4xf32>, %p: tensor<4x8xf16>) {
  // expected-error @+1 {{'linattn.feature_map' op projection element type 'f16' does not match input element type 'f32'}}
  %0 = linattn.feature_map favor %x projection(%p) : tensor<2x16x4xf32>, tensor<4x8xf16> -> tensor<2x16x8xf32>
  return
}

// -----

// 1 + D + D^2 does not fit in 64 bits.
func.func @feature_map_poly2_overflow(%x: tensor<1x4294967296xf32>) {
  // expected-error @+1 {{'linattn.feature_map' op the poly2 feature map of input feature size 4294967296 would produce more than 2^63 features}}
  %0 = linattn.feature_map poly2 %x : tensor<1x4294967296xf32> -> tensor<1x4294967297xf32>
  return
}

// -----

func.func @feature_map_poly2_feature_count(%x: tensor<2x16x4xf32>) {
  // expected-error @+1 {{'linattn.feature_map' op the poly2 feature map of input feature size 4 produces 1 + D + D^2 = 21 features, but the result feature size is 20}}
  %0 = linattn.feature_map poly2 %x : tensor<2x16x4xf32> -> tensor<2x16x20xf32>
  return
}

// -----

// poly2 is not elementwise: F = D is wrong too.
func.func @feature_map_poly2_same_size(%x: tensor<?x64xbf16>) {
  // expected-error @+1 {{'linattn.feature_map' op the poly2 feature map of input feature size 64 produces 1 + D + D^2 = 4161 features, but the result feature size is 64}}
  %0 = linattn.feature_map poly2 %x : tensor<?x64xbf16> -> tensor<?x64xbf16>
  return
}

// -----

func.func @feature_map_integer_element_type(%x: tensor<2x16x4xi32>) {
  // expected-error @+1 {{'linattn.feature_map' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<2x16x4xi32>'}}
  %0 = linattn.feature_map elu %x : tensor<2x16x4xi32> -> tensor<2x16x4xi32>
  return
}

// -----

func.func @feature_map_unranked_generic(%x: tensor<*xf32>) {
  // expected-error @+1 {{'linattn.feature_map' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<*xf32>'}}
  %0 = "linattn.feature_map"(%x) <{kind = #linattn<feature_map elu>}> : (tensor<*xf32>) -> tensor<2x16x4xf32>
  return
}

// -----

func.func @feature_map_vector_result_generic(%x: tensor<2x16x4xf32>) {
  // expected-error @+1 {{'linattn.feature_map' op result #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'vector<2x16x4xf32>'}}
  %0 = "linattn.feature_map"(%x) <{kind = #linattn<feature_map elu>}> : (tensor<2x16x4xf32>) -> vector<2x16x4xf32>
  return
}

// -----

func.func @feature_map_unknown_kind(%x: tensor<2x16x4xf32>) {
  // expected-error @+2 {{expected ::mlir::linattn::FeatureMapKind to be one of: elu, relu, identity, poly2, favor}}
  // expected-error @+1 {{failed to parse LinAttn_FeatureMapKindAttr parameter 'value'}}
  %0 = linattn.feature_map softmax %x : tensor<2x16x4xf32> -> tensor<2x16x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// linattn.scores
//===----------------------------------------------------------------------===//

func.func @scores_rank_too_small(%q: tensor<4xf32>, %k: tensor<16x4xf32>) {
  // expected-error @+1 {{'linattn.scores' op expected query to have rank at least 2, got rank 1}}
  %0 = linattn.scores %q, %k : tensor<4xf32>, tensor<16x4xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @scores_key_rank(%q: tensor<16x4xf32>, %k: tensor<2x16x4xf32>) {
  // expected-error @+1 {{'linattn.scores' op expected key to have rank 2 (0 batch dimensions like the query, then 2), got rank 3}}
  %0 = linattn.scores %q, %k : tensor<16x4xf32>, tensor<2x16x4xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @scores_result_rank(%q: tensor<2x8x16x4xf32>, %k: tensor<2x8x16x4xf32>) {
  // expected-error @+1 {{'linattn.scores' op expected result to have rank 4 (2 batch dimensions like the query, then 2), got rank 3}}
  %0 = linattn.scores %q, %k : tensor<2x8x16x4xf32>, tensor<2x8x16x4xf32> -> tensor<2x16x16xf32>
  return
}

// -----

func.func @scores_batch_dim(%q: tensor<2x8x16x4xf32>, %k: tensor<3x8x16x4xf32>) {
  // expected-error @+1 {{'linattn.scores' op key batch dimension 0 (3) does not match query batch dimension 0 (2)}}
  %0 = linattn.scores %q, %k : tensor<2x8x16x4xf32>, tensor<3x8x16x4xf32> -> tensor<2x8x16x16xf32>
  return
}

// -----

// A dynamic query batch dimension: the key is the first static occurrence.
func.func @scores_batch_dim_first_static(%q: tensor<2x?x16x4xf32>, %k: tensor<2x8x16x4xf32>) {
  // expected-error @+1 {{'linattn.scores' op result batch dimension 1 (4) does not match key batch dimension 1 (8)}}
  %0 = linattn.scores %q, %k : tensor<2x?x16x4xf32>, tensor<2x8x16x4xf32> -> tensor<2x4x16x16xf32>
  return
}

// -----

func.func @scores_key_feature_size(%q: tensor<16x4xf32>, %k: tensor<16x5xf32>) {
  // expected-error @+1 {{'linattn.scores' op key feature size 5 does not match query feature size 4}}
  %0 = linattn.scores %q, %k : tensor<16x4xf32>, tensor<16x5xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @scores_result_query_dimension(%q: tensor<16x4xf32>, %k: tensor<12x4xf32>) {
  // expected-error @+1 {{'linattn.scores' op result query dimension 12 does not match query sequence length 16}}
  %0 = linattn.scores %q, %k : tensor<16x4xf32>, tensor<12x4xf32> -> tensor<12x12xf32>
  return
}

// -----

func.func @scores_result_key_dimension(%q: tensor<16x4xf32>, %k: tensor<12x4xf32>) {
  // expected-error @+1 {{'linattn.scores' op result key dimension 16 does not match key sequence length 12}}
  %0 = linattn.scores %q, %k : tensor<16x4xf32>, tensor<12x4xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @scores_key_element_type(%q: tensor<16x4xf32>, %k: tensor<16x4xbf16>) {
  // expected-error @+1 {{'linattn.scores' op key element type 'bf16' does not match query element type 'f32'}}
  %0 = linattn.scores %q, %k : tensor<16x4xf32>, tensor<16x4xbf16> -> tensor<16x16xf32>
  return
}

// -----

func.func @scores_result_element_type(%q: tensor<16x4xbf16>, %k: tensor<16x4xbf16>) {
  // expected-error @+1 {{'linattn.scores' op result element type 'f32' does not match query element type 'bf16'}}
  %0 = linattn.scores %q, %k : tensor<16x4xbf16>, tensor<16x4xbf16> -> tensor<16x16xf32>
  return
}

// -----

func.func @scores_causal_lengths(%q: tensor<2x16x4xf32>, %k: tensor<2x12x4xf32>) {
  // expected-error @+1 {{'linattn.scores' op causal attention needs as many queries as keys, got query sequence length 16 and key sequence length 12}}
  %0 = linattn.scores %q, %k causal : tensor<2x16x4xf32>, tensor<2x12x4xf32> -> tensor<2x16x12xf32>
  return
}

// -----

// The lengths may come from the result when the operands are dynamic.
func.func @scores_causal_lengths_from_result(%q: tensor<?x4xf32>, %k: tensor<?x4xf32>) {
  // expected-error @+1 {{'linattn.scores' op causal attention needs as many queries as keys, got query sequence length 16 and key sequence length 12}}
  %0 = linattn.scores %q, %k causal : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<16x12xf32>
  return
}

// -----

func.func @scores_scale_inf(%q: tensor<16x4xf32>, %k: tensor<16x4xf32>) {
  // expected-error @+1 {{'linattn.scores' op scale must be finite, got INF}}
  %0 = linattn.scores %q, %k scale(0x7FF0000000000000) : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @scores_scale_neg_inf(%q: tensor<16x4xf32>, %k: tensor<16x4xf32>) {
  // expected-error @+1 {{'linattn.scores' op scale must be finite, got -INF}}
  %0 = linattn.scores %q, %k causal scale(0xFFF0000000000000) : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @scores_scale_nan(%q: tensor<16x4xf32>, %k: tensor<16x4xf32>) {
  // expected-error @+1 {{'linattn.scores' op scale must be finite, got nan}}
  %0 = linattn.scores %q, %k scale(0x7FF8000000000000) : tensor<16x4xf32>, tensor<16x4xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @scores_unranked_generic(%q: tensor<*xf32>, %k: tensor<16x4xf32>) {
  // expected-error @+1 {{'linattn.scores' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<*xf32>'}}
  %0 = "linattn.scores"(%q, %k) : (tensor<*xf32>, tensor<16x4xf32>) -> tensor<16x16xf32>
  return
}

// -----

func.func @scores_unranked_custom(%q: tensor<*xf32>, %k: tensor<16x4xf32>) {
  // expected-error @+1 {{custom op 'linattn.scores' invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = linattn.scores %q, %k : tensor<*xf32>, tensor<16x4xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @scores_scale_not_f64_generic(%q: tensor<16x4xf32>, %k: tensor<16x4xf32>) {
  // expected-error @+1 {{'linattn.scores' op attribute 'scale' failed to satisfy constraint: 64-bit float attribute}}
  %0 = "linattn.scores"(%q, %k) <{scale = 5.000000e-01 : f32}> : (tensor<16x4xf32>, tensor<16x4xf32>) -> tensor<16x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// linattn.apply_scores
//===----------------------------------------------------------------------===//

func.func @apply_scores_rank_too_small(%a: tensor<16xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.apply_scores' op expected scores to have rank at least 2, got rank 1}}
  %0 = linattn.apply_scores %a, %v : tensor<16xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @apply_scores_value_rank(%a: tensor<2x16x16xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.apply_scores' op expected value to have rank 3 (1 batch dimension like the scores, then 2), got rank 2}}
  %0 = linattn.apply_scores %a, %v : tensor<2x16x16xf32>, tensor<16x3xf32> -> tensor<2x16x3xf32>
  return
}

// -----

func.func @apply_scores_result_rank(%a: tensor<2x16x16xf32>, %v: tensor<2x16x3xf32>) {
  // expected-error @+1 {{'linattn.apply_scores' op expected result to have rank 3 (1 batch dimension like the scores, then 2), got rank 4}}
  %0 = linattn.apply_scores %a, %v : tensor<2x16x16xf32>, tensor<2x16x3xf32> -> tensor<1x2x16x3xf32>
  return
}

// -----

func.func @apply_scores_batch_dim(%a: tensor<2x16x16xf32>, %v: tensor<4x16x3xf32>) {
  // expected-error @+1 {{'linattn.apply_scores' op value batch dimension 0 (4) does not match scores batch dimension 0 (2)}}
  %0 = linattn.apply_scores %a, %v : tensor<2x16x16xf32>, tensor<4x16x3xf32> -> tensor<2x16x3xf32>
  return
}

// -----

func.func @apply_scores_value_sequence_length(%a: tensor<16x12xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.apply_scores' op value sequence length 16 does not match scores key dimension 12}}
  %0 = linattn.apply_scores %a, %v : tensor<16x12xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @apply_scores_result_sequence_length(%a: tensor<16x12xf32>, %v: tensor<12x3xf32>) {
  // expected-error @+1 {{'linattn.apply_scores' op result sequence length 12 does not match scores query dimension 16}}
  %0 = linattn.apply_scores %a, %v : tensor<16x12xf32>, tensor<12x3xf32> -> tensor<12x3xf32>
  return
}

// -----

func.func @apply_scores_result_feature_size(%a: tensor<16x12xf32>, %v: tensor<12x3xf32>) {
  // expected-error @+1 {{'linattn.apply_scores' op result feature size 4 does not match value feature size 3}}
  %0 = linattn.apply_scores %a, %v : tensor<16x12xf32>, tensor<12x3xf32> -> tensor<16x4xf32>
  return
}

// -----

func.func @apply_scores_value_element_type(%a: tensor<16x16xf32>, %v: tensor<16x3xf64>) {
  // expected-error @+1 {{'linattn.apply_scores' op value element type 'f64' does not match scores element type 'f32'}}
  %0 = linattn.apply_scores %a, %v : tensor<16x16xf32>, tensor<16x3xf64> -> tensor<16x3xf32>
  return
}

// -----

func.func @apply_scores_result_element_type(%a: tensor<16x16xf16>, %v: tensor<16x3xf16>) {
  // expected-error @+1 {{'linattn.apply_scores' op result element type 'f32' does not match scores element type 'f16'}}
  %0 = linattn.apply_scores %a, %v : tensor<16x16xf16>, tensor<16x3xf16> -> tensor<16x3xf32>
  return
}

// -----

func.func @apply_scores_eps_zero(%a: tensor<16x16xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.apply_scores' op normalization eps must be positive and finite, got 0.000000e+00}}
  %0 = linattn.apply_scores %a, %v normalize(eps = 0.0) : tensor<16x16xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @apply_scores_eps_negative_zero(%a: tensor<16x16xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.apply_scores' op normalization eps must be positive and finite, got -0.000000e+00}}
  %0 = linattn.apply_scores %a, %v normalize(eps = -0.0) : tensor<16x16xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @apply_scores_eps_negative(%a: tensor<16x16xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.apply_scores' op normalization eps must be positive and finite, got -1.000000e-06}}
  %0 = linattn.apply_scores %a, %v normalize(eps = -1.0e-6) : tensor<16x16xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @apply_scores_eps_inf(%a: tensor<16x16xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.apply_scores' op normalization eps must be positive and finite, got INF}}
  %0 = linattn.apply_scores %a, %v normalize(eps = 0x7FF0000000000000) : tensor<16x16xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @apply_scores_eps_nan(%a: tensor<16x16xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.apply_scores' op normalization eps must be positive and finite, got nan}}
  %0 = linattn.apply_scores %a, %v normalize(eps = 0x7FF8000000000000) : tensor<16x16xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @apply_scores_integer_element_type(%a: tensor<16x16xf32>, %v: tensor<16x3xi8>) {
  // expected-error @+1 {{'linattn.apply_scores' op operand #1 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<16x3xi8>'}}
  %0 = linattn.apply_scores %a, %v : tensor<16x16xf32>, tensor<16x3xi8> -> tensor<16x3xf32>
  return
}

// -----

func.func @apply_scores_f8_result(%a: tensor<16x16xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.apply_scores' op result #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<16x3xf8E4M3FN>'}}
  %0 = linattn.apply_scores %a, %v : tensor<16x16xf32>, tensor<16x3xf32> -> tensor<16x3xf8E4M3FN>
  return
}

// -----

//===----------------------------------------------------------------------===//
// linattn.kv_summary
//===----------------------------------------------------------------------===//

func.func @kv_summary_rank_too_small(%k: tensor<4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{'linattn.kv_summary' op expected key to have rank at least 2, got rank 1}}
  %s, %z = linattn.kv_summary %k, %v : tensor<4xf32>, tensor<3xf32> -> tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @kv_summary_value_rank(%k: tensor<2x16x4xf32>, %v: tensor<2x2x16x3xf32>) {
  // expected-error @+1 {{'linattn.kv_summary' op expected value to have rank 3 (1 batch dimension like the key, then 2), got rank 4}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x16x4xf32>, tensor<2x2x16x3xf32> -> tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @kv_summary_state_rank(%k: tensor<2x16x4xf32>, %v: tensor<2x16x3xf32>) {
  // expected-error @+1 {{'linattn.kv_summary' op expected state to have rank 3 (1 batch dimension like the key, then 2), got rank 2}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x16x4xf32>, tensor<2x16x3xf32> -> tensor<4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @kv_summary_normalizer_rank(%k: tensor<2x16x4xf32>, %v: tensor<2x16x3xf32>) {
  // expected-error @+1 {{'linattn.kv_summary' op expected normalizer to have rank 2 (1 batch dimension like the key, then 1), got rank 3}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x16x4xf32>, tensor<2x16x3xf32> -> tensor<2x4x3xf32>, tensor<2x4x1xf32>
  return
}

// -----

func.func @kv_summary_batch_dim(%k: tensor<2x16x4xf32>, %v: tensor<2x16x3xf32>) {
  // expected-error @+1 {{'linattn.kv_summary' op normalizer batch dimension 0 (3) does not match key batch dimension 0 (2)}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x16x4xf32>, tensor<2x16x3xf32> -> tensor<2x4x3xf32>, tensor<3x4xf32>
  return
}

// -----

func.func @kv_summary_value_sequence_length(%k: tensor<2x16x4xf32>, %v: tensor<2x12x3xf32>) {
  // expected-error @+1 {{'linattn.kv_summary' op value sequence length 12 does not match key sequence length 16}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x16x4xf32>, tensor<2x12x3xf32> -> tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @kv_summary_state_key_feature_size(%k: tensor<2x16x4xf32>, %v: tensor<2x16x3xf32>) {
  // expected-error @+1 {{'linattn.kv_summary' op state key feature size 3 does not match key feature size 4}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x16x4xf32>, tensor<2x16x3xf32> -> tensor<2x3x4xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @kv_summary_state_value_size(%k: tensor<2x16x4xf32>, %v: tensor<2x16x3xf32>) {
  // expected-error @+1 {{'linattn.kv_summary' op state value size 4 does not match value feature size 3}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x16x4xf32>, tensor<2x16x3xf32> -> tensor<2x4x4xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @kv_summary_normalizer_feature_size(%k: tensor<2x16x4xf32>, %v: tensor<2x16x3xf32>) {
  // expected-error @+1 {{'linattn.kv_summary' op normalizer feature size 3 does not match key feature size 4}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x16x4xf32>, tensor<2x16x3xf32> -> tensor<2x4x3xf32>, tensor<2x3xf32>
  return
}

// -----

// With a dynamic key feature size, the state binds F first.
func.func @kv_summary_normalizer_vs_state(%k: tensor<2x16x?xf32>, %v: tensor<2x16x3xf32>) {
  // expected-error @+1 {{'linattn.kv_summary' op normalizer feature size 5 does not match state key feature size 4}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x16x?xf32>, tensor<2x16x3xf32> -> tensor<2x4x3xf32>, tensor<2x5xf32>
  return
}

// -----

func.func @kv_summary_value_element_type(%k: tensor<2x16x4xf32>, %v: tensor<2x16x3xbf16>) {
  // expected-error @+1 {{'linattn.kv_summary' op value element type 'bf16' does not match key element type 'f32'}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x16x4xf32>, tensor<2x16x3xbf16> -> tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @kv_summary_normalizer_element_type(%k: tensor<2x16x4xbf16>, %v: tensor<2x16x3xbf16>) {
  // expected-error @+1 {{'linattn.kv_summary' op normalizer element type 'bf16' does not match state element type 'f32'}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x16x4xbf16>, tensor<2x16x3xbf16> -> tensor<2x4x3xf32>, tensor<2x4xbf16>
  return
}

// -----

func.func @kv_summary_narrower_state(%k: tensor<2x16x4xf32>, %v: tensor<2x16x3xf32>) {
  // expected-error @+1 {{'linattn.kv_summary' op state element type 'f16' cannot accumulate 'f32' inputs: use 'f32' or a wider float type}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x16x4xf32>, tensor<2x16x3xf32> -> tensor<2x4x3xf16>, tensor<2x4xf16>
  return
}

// -----

// bf16 and f16 have the same width: neither accumulates the other.
func.func @kv_summary_same_width_state(%k: tensor<2x16x4xf16>, %v: tensor<2x16x3xf16>) {
  // expected-error @+1 {{'linattn.kv_summary' op state element type 'bf16' cannot accumulate 'f16' inputs: use 'f16' or a wider float type}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x16x4xf16>, tensor<2x16x3xf16> -> tensor<2x4x3xbf16>, tensor<2x4xbf16>
  return
}

// -----

func.func @kv_summary_integer_state(%k: tensor<2x16x4xf32>, %v: tensor<2x16x3xf32>) {
  // expected-error @+1 {{'linattn.kv_summary' op result #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<2x4x3xi32>'}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x16x4xf32>, tensor<2x16x3xf32> -> tensor<2x4x3xi32>, tensor<2x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// linattn.query_readout
//===----------------------------------------------------------------------===//

func.func @query_readout_rank_too_small(%q: tensor<4xf32>, %s: tensor<4x3xf32>) {
  // expected-error @+1 {{'linattn.query_readout' op expected query to have rank at least 2, got rank 1}}
  %0 = linattn.query_readout %q, %s : tensor<4xf32>, tensor<4x3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @query_readout_state_rank(%q: tensor<2x16x4xf32>, %s: tensor<4x3xf32>) {
  // expected-error @+1 {{'linattn.query_readout' op expected state to have rank 3 (1 batch dimension like the query, then 2), got rank 2}}
  %0 = linattn.query_readout %q, %s : tensor<2x16x4xf32>, tensor<4x3xf32> -> tensor<2x16x3xf32>
  return
}

// -----

func.func @query_readout_normalizer_rank(%q: tensor<2x16x4xf32>, %s: tensor<2x4x3xf32>, %z: tensor<4xf32>) {
  // expected-error @+1 {{'linattn.query_readout' op expected normalizer to have rank 2 (1 batch dimension like the query, then 1), got rank 1}}
  %0 = linattn.query_readout %q, %s normalize(%z, eps = 1.0e-6) : tensor<2x16x4xf32>, tensor<2x4x3xf32>, tensor<4xf32> -> tensor<2x16x3xf32>
  return
}

// -----

func.func @query_readout_result_rank(%q: tensor<2x16x4xf32>, %s: tensor<2x4x3xf32>) {
  // expected-error @+1 {{'linattn.query_readout' op expected result to have rank 3 (1 batch dimension like the query, then 2), got rank 2}}
  %0 = linattn.query_readout %q, %s : tensor<2x16x4xf32>, tensor<2x4x3xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @query_readout_batch_dim(%q: tensor<2x16x4xf32>, %s: tensor<2x4x3xf32>, %z: tensor<5x4xf32>) {
  // expected-error @+1 {{'linattn.query_readout' op normalizer batch dimension 0 (5) does not match query batch dimension 0 (2)}}
  %0 = linattn.query_readout %q, %s normalize(%z, eps = 1.0e-6) : tensor<2x16x4xf32>, tensor<2x4x3xf32>, tensor<5x4xf32> -> tensor<2x16x3xf32>
  return
}

// -----

func.func @query_readout_state_key_feature_size(%q: tensor<2x16x4xf32>, %s: tensor<2x5x3xf32>) {
  // expected-error @+1 {{'linattn.query_readout' op state key feature size 5 does not match query feature size 4}}
  %0 = linattn.query_readout %q, %s : tensor<2x16x4xf32>, tensor<2x5x3xf32> -> tensor<2x16x3xf32>
  return
}

// -----

func.func @query_readout_normalizer_feature_size(%q: tensor<2x16x4xf32>, %s: tensor<2x4x3xf32>, %z: tensor<2x3xf32>) {
  // expected-error @+1 {{'linattn.query_readout' op normalizer feature size 3 does not match query feature size 4}}
  %0 = linattn.query_readout %q, %s normalize(%z, eps = 1.0e-6) : tensor<2x16x4xf32>, tensor<2x4x3xf32>, tensor<2x3xf32> -> tensor<2x16x3xf32>
  return
}

// -----

func.func @query_readout_result_sequence_length(%q: tensor<2x16x4xf32>, %s: tensor<2x4x3xf32>) {
  // expected-error @+1 {{'linattn.query_readout' op result sequence length 8 does not match query sequence length 16}}
  %0 = linattn.query_readout %q, %s : tensor<2x16x4xf32>, tensor<2x4x3xf32> -> tensor<2x8x3xf32>
  return
}

// -----

func.func @query_readout_result_feature_size(%q: tensor<2x16x4xf32>, %s: tensor<2x4x3xf32>) {
  // expected-error @+1 {{'linattn.query_readout' op result feature size 4 does not match state value size 3}}
  %0 = linattn.query_readout %q, %s : tensor<2x16x4xf32>, tensor<2x4x3xf32> -> tensor<2x16x4xf32>
  return
}

// -----

func.func @query_readout_result_element_type(%q: tensor<2x16x4xbf16>, %s: tensor<2x4x3xf32>) {
  // expected-error @+1 {{'linattn.query_readout' op result element type 'f32' does not match query element type 'bf16'}}
  %0 = linattn.query_readout %q, %s : tensor<2x16x4xbf16>, tensor<2x4x3xf32> -> tensor<2x16x3xf32>
  return
}

// -----

func.func @query_readout_normalizer_element_type(%q: tensor<2x16x4xbf16>, %s: tensor<2x4x3xf32>, %z: tensor<2x4xbf16>) {
  // expected-error @+1 {{'linattn.query_readout' op normalizer element type 'bf16' does not match state element type 'f32'}}
  %0 = linattn.query_readout %q, %s normalize(%z, eps = 1.0e-6) : tensor<2x16x4xbf16>, tensor<2x4x3xf32>, tensor<2x4xbf16> -> tensor<2x16x3xbf16>
  return
}

// -----

func.func @query_readout_narrower_state(%q: tensor<2x16x4xf64>, %s: tensor<2x4x3xf32>) {
  // expected-error @+1 {{'linattn.query_readout' op state element type 'f32' cannot accumulate 'f64' inputs: use 'f64' or a wider float type}}
  %0 = linattn.query_readout %q, %s : tensor<2x16x4xf64>, tensor<2x4x3xf32> -> tensor<2x16x3xf64>
  return
}

// -----

func.func @query_readout_same_width_state(%q: tensor<2x16x4xbf16>, %s: tensor<2x4x3xf16>) {
  // expected-error @+1 {{'linattn.query_readout' op state element type 'f16' cannot accumulate 'bf16' inputs: use 'bf16' or a wider float type}}
  %0 = linattn.query_readout %q, %s : tensor<2x16x4xbf16>, tensor<2x4x3xf16> -> tensor<2x16x3xbf16>
  return
}

// -----

func.func @query_readout_eps_zero(%q: tensor<2x16x4xf32>, %s: tensor<2x4x3xf32>, %z: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.query_readout' op normalization eps must be positive and finite, got 0.000000e+00}}
  %0 = linattn.query_readout %q, %s normalize(%z, eps = 0.0) : tensor<2x16x4xf32>, tensor<2x4x3xf32>, tensor<2x4xf32> -> tensor<2x16x3xf32>
  return
}

// -----

func.func @query_readout_eps_inf(%q: tensor<2x16x4xf32>, %s: tensor<2x4x3xf32>, %z: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.query_readout' op normalization eps must be positive and finite, got INF}}
  %0 = linattn.query_readout %q, %s normalize(%z, eps = 0x7FF0000000000000) : tensor<2x16x4xf32>, tensor<2x4x3xf32>, tensor<2x4xf32> -> tensor<2x16x3xf32>
  return
}

// -----

func.func @query_readout_normalizer_without_eps(%q: tensor<2x16x4xf32>, %s: tensor<2x4x3xf32>, %z: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.query_readout' op a normalizer needs an eps}}
  %0 = "linattn.query_readout"(%q, %s, %z) : (tensor<2x16x4xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>) -> tensor<2x16x3xf32>
  return
}

// -----

func.func @query_readout_eps_without_normalizer(%q: tensor<2x16x4xf32>, %s: tensor<2x4x3xf32>) {
  // expected-error @+1 {{'linattn.query_readout' op eps is given without a normalizer}}
  %0 = "linattn.query_readout"(%q, %s) <{eps = 1.0e-6 : f64}> : (tensor<2x16x4xf32>, tensor<2x4x3xf32>) -> tensor<2x16x3xf32>
  return
}

// -----

// The custom syntax reaches the same diagnostic through the attribute
// dictionary.
func.func @query_readout_eps_without_normalizer_custom(%q: tensor<2x16x4xf32>, %s: tensor<2x4x3xf32>) {
  // expected-error @+1 {{'linattn.query_readout' op eps is given without a normalizer}}
  %0 = linattn.query_readout %q, %s {eps = 1.0e-6 : f64} : tensor<2x16x4xf32>, tensor<2x4x3xf32> -> tensor<2x16x3xf32>
  return
}

// -----

func.func @query_readout_normalize_without_eps_custom(%q: tensor<2x16x4xf32>, %s: tensor<2x4x3xf32>, %z: tensor<2x4xf32>) {
  // expected-error @+1 {{expected ','}}
  %0 = linattn.query_readout %q, %s normalize(%z) : tensor<2x16x4xf32>, tensor<2x4x3xf32>, tensor<2x4xf32> -> tensor<2x16x3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// linattn.scan
//===----------------------------------------------------------------------===//

func.func @scan_rank_too_small(%q: tensor<4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{'linattn.scan' op expected query to have rank at least 2, got rank 1}}
  %o, %s, %z = linattn.scan forward %q, %q, %v : tensor<4xf32>, tensor<4xf32>, tensor<3xf32> -> tensor<3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_key_rank(%q: tensor<2x16x4xf32>, %k: tensor<16x4xf32>, %v: tensor<2x16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op expected key to have rank 3 (1 batch dimension like the query, then 2), got rank 2}}
  %o, %s, %z = linattn.scan forward %q, %k, %v : tensor<2x16x4xf32>, tensor<16x4xf32>, tensor<2x16x3xf32> -> tensor<2x16x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @scan_initial_state_rank(%q: tensor<2x16x4xf32>, %v: tensor<2x16x3xf32>, %s0: tensor<4x3xf32>, %z0: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.scan' op expected initial state to have rank 3 (1 batch dimension like the query, then 2), got rank 2}}
  %o, %s, %z = linattn.scan forward %q, %q, %v init(%s0, %z0) : tensor<2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x16x3xf32>, tensor<4x3xf32>, tensor<2x4xf32> -> tensor<2x16x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @scan_final_normalizer_rank(%q: tensor<2x16x4xf32>, %v: tensor<2x16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op expected final normalizer to have rank 2 (1 batch dimension like the query, then 1), got rank 3}}
  %o, %s, %z = linattn.scan forward %q, %q, %v : tensor<2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x16x3xf32> -> tensor<2x16x3xf32>, tensor<2x4x3xf32>, tensor<2x4x3xf32>
  return
}

// -----

func.func @scan_value_batch_dim(%q: tensor<2x8x16x4xf32>, %v: tensor<2x4x16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op value batch dimension 1 (4) does not match query batch dimension 1 (8)}}
  %o, %s, %z = linattn.scan forward %q, %q, %v : tensor<2x8x16x4xf32>, tensor<2x8x16x4xf32>, tensor<2x4x16x3xf32> -> tensor<2x8x16x3xf32>, tensor<2x8x4x3xf32>, tensor<2x8x4xf32>
  return
}

// -----

func.func @scan_initial_normalizer_batch_dim(%q: tensor<2x16x4xf32>, %v: tensor<2x16x3xf32>, %s0: tensor<2x4x3xf32>, %z0: tensor<1x4xf32>) {
  // expected-error @+1 {{'linattn.scan' op initial normalizer batch dimension 0 (1) does not match query batch dimension 0 (2)}}
  %o, %s, %z = linattn.scan forward %q, %q, %v init(%s0, %z0) : tensor<2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x16x3xf32>, tensor<2x4x3xf32>, tensor<1x4xf32> -> tensor<2x16x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @scan_final_state_batch_dim(%q: tensor<?x16x4xf32>, %v: tensor<?x16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op final normalizer batch dimension 0 (2) does not match final state batch dimension 0 (3)}}
  %o, %s, %z = linattn.scan forward %q, %q, %v : tensor<?x16x4xf32>, tensor<?x16x4xf32>, tensor<?x16x3xf32> -> tensor<?x16x3xf32>, tensor<3x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @scan_key_sequence_length(%q: tensor<16x4xf32>, %k: tensor<12x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op key sequence length 12 does not match query sequence length 16}}
  %o, %s, %z = linattn.scan forward %q, %k, %v : tensor<16x4xf32>, tensor<12x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_key_feature_size(%q: tensor<16x4xf32>, %k: tensor<16x5xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op key feature size 5 does not match query feature size 4}}
  %o, %s, %z = linattn.scan forward %q, %k, %v : tensor<16x4xf32>, tensor<16x5xf32>, tensor<16x3xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_value_sequence_length(%q: tensor<16x4xf32>, %v: tensor<8x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op value sequence length 8 does not match query sequence length 16}}
  %o, %s, %z = linattn.scan reverse %q, %q, %v : tensor<16x4xf32>, tensor<16x4xf32>, tensor<8x3xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_result_sequence_length(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op result sequence length 8 does not match query sequence length 16}}
  %o, %s, %z = linattn.scan forward %q, %q, %v : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<8x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_result_feature_size(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op result feature size 4 does not match value feature size 3}}
  %o, %s, %z = linattn.scan forward %q, %q, %v : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x4xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_initial_state_key_feature_size(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>, %s0: tensor<3x3xf32>, %z0: tensor<4xf32>) {
  // expected-error @+1 {{'linattn.scan' op initial state key feature size 3 does not match query feature size 4}}
  %o, %s, %z = linattn.scan forward %q, %q, %v init(%s0, %z0) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<3x3xf32>, tensor<4xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_initial_state_value_size(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>, %s0: tensor<4x4xf32>, %z0: tensor<4xf32>) {
  // expected-error @+1 {{'linattn.scan' op initial state value size 4 does not match value feature size 3}}
  %o, %s, %z = linattn.scan forward %q, %q, %v init(%s0, %z0) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4x4xf32>, tensor<4xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_initial_normalizer_feature_size(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>, %s0: tensor<4x3xf32>, %z0: tensor<5xf32>) {
  // expected-error @+1 {{'linattn.scan' op initial normalizer feature size 5 does not match query feature size 4}}
  %o, %s, %z = linattn.scan forward %q, %q, %v init(%s0, %z0) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4x3xf32>, tensor<5xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_final_state_key_feature_size(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op final state key feature size 3 does not match query feature size 4}}
  %o, %s, %z = linattn.scan forward %q, %q, %v : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>, tensor<3x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_final_state_value_size(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op final state value size 4 does not match value feature size 3}}
  %o, %s, %z = linattn.scan forward %q, %q, %v : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>, tensor<4x4xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_final_normalizer_feature_size(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op final normalizer feature size 3 does not match query feature size 4}}
  %o, %s, %z = linattn.scan forward %q, %q, %v : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<3xf32>
  return
}

// -----

// The initial and the final state must have the same sizes, even when the
// features are dynamic.
func.func @scan_final_state_vs_initial_state(%q: tensor<16x?xf32>, %v: tensor<16x?xf32>, %s0: tensor<4x3xf32>, %z0: tensor<4xf32>) {
  // expected-error @+1 {{'linattn.scan' op final state value size 5 does not match initial state value size 3}}
  %o, %s, %z = linattn.scan forward %q, %q, %v init(%s0, %z0) : tensor<16x?xf32>, tensor<16x?xf32>, tensor<16x?xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<16x?xf32>, tensor<4x5xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_key_element_type(%q: tensor<16x4xf32>, %k: tensor<16x4xf16>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op key element type 'f16' does not match query element type 'f32'}}
  %o, %s, %z = linattn.scan forward %q, %k, %v : tensor<16x4xf32>, tensor<16x4xf16>, tensor<16x3xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_value_element_type(%q: tensor<16x4xf32>, %v: tensor<16x3xf64>) {
  // expected-error @+1 {{'linattn.scan' op value element type 'f64' does not match query element type 'f32'}}
  %o, %s, %z = linattn.scan forward %q, %q, %v : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf64> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

// The result keeps the input element type, not the state's.
func.func @scan_result_element_type(%q: tensor<16x4xbf16>, %v: tensor<16x3xbf16>) {
  // expected-error @+1 {{'linattn.scan' op result element type 'f32' does not match query element type 'bf16'}}
  %o, %s, %z = linattn.scan forward %q, %q, %v : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16x3xbf16> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_final_normalizer_element_type(%q: tensor<16x4xbf16>, %v: tensor<16x3xbf16>) {
  // expected-error @+1 {{'linattn.scan' op final normalizer element type 'bf16' does not match final state element type 'f32'}}
  %o, %s, %z = linattn.scan forward %q, %q, %v : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16x3xbf16> -> tensor<16x3xbf16>, tensor<4x3xf32>, tensor<4xbf16>
  return
}

// -----

func.func @scan_initial_state_element_type(%q: tensor<16x4xbf16>, %v: tensor<16x3xbf16>, %s0: tensor<4x3xbf16>, %z0: tensor<4xf32>) {
  // expected-error @+1 {{'linattn.scan' op initial state element type 'bf16' does not match final state element type 'f32'}}
  %o, %s, %z = linattn.scan forward %q, %q, %v init(%s0, %z0) : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16x3xbf16>, tensor<4x3xbf16>, tensor<4xf32> -> tensor<16x3xbf16>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_initial_normalizer_element_type(%q: tensor<16x4xbf16>, %v: tensor<16x3xbf16>, %s0: tensor<4x3xf32>, %z0: tensor<4xf64>) {
  // expected-error @+1 {{'linattn.scan' op initial normalizer element type 'f64' does not match final state element type 'f32'}}
  %o, %s, %z = linattn.scan forward %q, %q, %v init(%s0, %z0) : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16x3xbf16>, tensor<4x3xf32>, tensor<4xf64> -> tensor<16x3xbf16>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_narrower_state(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op state element type 'bf16' cannot accumulate 'f32' inputs: use 'f32' or a wider float type}}
  %o, %s, %z = linattn.scan forward %q, %q, %v : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>, tensor<4x3xbf16>, tensor<4xbf16>
  return
}

// -----

func.func @scan_same_width_state(%q: tensor<16x4xbf16>, %v: tensor<16x3xbf16>) {
  // expected-error @+1 {{'linattn.scan' op state element type 'f16' cannot accumulate 'bf16' inputs: use 'bf16' or a wider float type}}
  %o, %s, %z = linattn.scan forward %q, %q, %v : tensor<16x4xbf16>, tensor<16x4xbf16>, tensor<16x3xbf16> -> tensor<16x3xbf16>, tensor<4x3xf16>, tensor<4xf16>
  return
}

// -----

func.func @scan_eps_negative(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op normalization eps must be positive and finite, got -1.000000e+00}}
  %o, %s, %z = linattn.scan forward %q, %q, %v normalize(eps = -1.0) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_eps_nan(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op normalization eps must be positive and finite, got nan}}
  %o, %s, %z = linattn.scan reverse %q, %q, %v normalize(eps = 0x7FF8000000000000) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_chunk_size_zero(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op chunk size must be positive, got 0}}
  %o, %s, %z = linattn.scan forward %q, %q, %v chunk_size(0) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_chunk_size_negative(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op chunk size must be positive, got -64}}
  %o, %s, %z = linattn.scan forward %q, %q, %v normalize(eps = 1.0e-6) chunk_size(-64) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_init_state_only(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>, %s0: tensor<4x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op init needs both the state and the normalizer}}
  %o:3 = "linattn.scan"(%q, %q, %v, %s0) <{direction = #linattn<direction forward>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>}> : (tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4x3xf32>) -> (tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>)
  return
}

// -----

func.func @scan_init_normalizer_only(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>, %z0: tensor<4xf32>) {
  // expected-error @+1 {{'linattn.scan' op init needs both the state and the normalizer}}
  %o:3 = "linattn.scan"(%q, %q, %v, %z0) <{direction = #linattn<direction reverse>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>}> : (tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4xf32>) -> (tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>)
  return
}

// -----

func.func @scan_unranked_generic(%q: tensor<16x4xf32>, %v: tensor<*xf32>) {
  // expected-error @+1 {{'linattn.scan' op operand #2 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<*xf32>'}}
  %o:3 = "linattn.scan"(%q, %q, %v) <{direction = #linattn<direction forward>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}> : (tensor<16x4xf32>, tensor<16x4xf32>, tensor<*xf32>) -> (tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>)
  return
}

// -----

func.func @scan_integer_result(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op result #2 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<4xi64>'}}
  %o, %s, %z = linattn.scan forward %q, %q, %v : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xi64>
  return
}

// -----

func.func @scan_unknown_direction(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+2 {{expected ::mlir::linattn::ScanDirection to be one of: forward, reverse}}
  // expected-error @+1 {{failed to parse LinAttn_ScanDirectionAttr parameter 'value'}}
  %o, %s, %z = linattn.scan backward %q, %q, %v : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// linattn.step
//===----------------------------------------------------------------------===//

func.func @step_rank_too_small(%q: tensor<f32>, %v: tensor<3xf32>, %s0: tensor<4x3xf32>, %z0: tensor<4xf32>) {
  // expected-error @+1 {{'linattn.step' op expected query to have rank at least 1, got rank 0}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 : tensor<f32>, tensor<f32>, tensor<3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @step_key_rank(%q: tensor<2x4xf32>, %k: tensor<4xf32>, %v: tensor<2x3xf32>, %s0: tensor<2x4x3xf32>, %z0: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.step' op expected key to have rank 2 (1 batch dimension like the query, then 1), got rank 1}}
  %o, %s, %z = linattn.step %q, %k, %v, %s0, %z0 : tensor<2x4xf32>, tensor<4xf32>, tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32> -> tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

// A sequence dimension where step wants a single token.
func.func @step_state_rank(%q: tensor<2x4xf32>, %v: tensor<2x3xf32>, %s0: tensor<2x1x4x3xf32>, %z0: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.step' op expected state to have rank 3 (1 batch dimension like the query, then 2), got rank 4}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x1x4x3xf32>, tensor<2x4xf32> -> tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @step_new_normalizer_rank(%q: tensor<2x4xf32>, %v: tensor<2x3xf32>, %s0: tensor<2x4x3xf32>, %z0: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.step' op expected new normalizer to have rank 2 (1 batch dimension like the query, then 1), got rank 1}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32> -> tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @step_batch_dim(%q: tensor<2x4xf32>, %v: tensor<2x3xf32>, %s0: tensor<2x4x3xf32>, %z0: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.step' op new state batch dimension 0 (1) does not match query batch dimension 0 (2)}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32> -> tensor<2x3xf32>, tensor<1x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @step_key_feature_size(%q: tensor<2x4xf32>, %k: tensor<2x5xf32>, %v: tensor<2x3xf32>, %s0: tensor<2x4x3xf32>, %z0: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.step' op key feature size 5 does not match query feature size 4}}
  %o, %s, %z = linattn.step %q, %k, %v, %s0, %z0 : tensor<2x4xf32>, tensor<2x5xf32>, tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32> -> tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @step_state_key_feature_size(%q: tensor<2x4xf32>, %v: tensor<2x3xf32>, %s0: tensor<2x3x3xf32>, %z0: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.step' op state key feature size 3 does not match query feature size 4}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3x3xf32>, tensor<2x4xf32> -> tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @step_state_value_size(%q: tensor<2x4xf32>, %v: tensor<2x3xf32>, %s0: tensor<2x4x4xf32>, %z0: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.step' op state value size 4 does not match value feature size 3}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4x4xf32>, tensor<2x4xf32> -> tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @step_normalizer_feature_size(%q: tensor<2x4xf32>, %v: tensor<2x3xf32>, %s0: tensor<2x4x3xf32>, %z0: tensor<2x8xf32>) {
  // expected-error @+1 {{'linattn.step' op normalizer feature size 8 does not match query feature size 4}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x8xf32> -> tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @step_result_feature_size(%q: tensor<2x4xf32>, %v: tensor<2x3xf32>, %s0: tensor<2x4x3xf32>, %z0: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.step' op result feature size 4 does not match value feature size 3}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32> -> tensor<2x4xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @step_new_state_key_feature_size(%q: tensor<2x4xf32>, %v: tensor<2x3xf32>, %s0: tensor<2x4x3xf32>, %z0: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.step' op new state key feature size 2 does not match query feature size 4}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32> -> tensor<2x3xf32>, tensor<2x2x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @step_new_state_value_size(%q: tensor<2x4xf32>, %v: tensor<2x3xf32>, %s0: tensor<2x4x3xf32>, %z0: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.step' op new state value size 6 does not match value feature size 3}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32> -> tensor<2x3xf32>, tensor<2x4x6xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @step_new_normalizer_feature_size(%q: tensor<2x4xf32>, %v: tensor<2x3xf32>, %s0: tensor<2x4x3xf32>, %z0: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.step' op new normalizer feature size 3 does not match query feature size 4}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32> -> tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x3xf32>
  return
}

// -----

func.func @step_value_element_type(%q: tensor<2x4xf32>, %v: tensor<2x3xf16>, %s0: tensor<2x4x3xf32>, %z0: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.step' op value element type 'f16' does not match query element type 'f32'}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf16>, tensor<2x4x3xf32>, tensor<2x4xf32> -> tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @step_new_state_element_type(%q: tensor<2x4xbf16>, %v: tensor<2x3xbf16>, %s0: tensor<2x4x3xf32>, %z0: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.step' op new state element type 'bf16' does not match state element type 'f32'}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 : tensor<2x4xbf16>, tensor<2x4xbf16>, tensor<2x3xbf16>, tensor<2x4x3xf32>, tensor<2x4xf32> -> tensor<2x3xbf16>, tensor<2x4x3xbf16>, tensor<2x4xf32>
  return
}

// -----

func.func @step_normalizer_element_type(%q: tensor<2x4xbf16>, %v: tensor<2x3xbf16>, %s0: tensor<2x4x3xf32>, %z0: tensor<2x4xbf16>) {
  // expected-error @+1 {{'linattn.step' op normalizer element type 'bf16' does not match state element type 'f32'}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 : tensor<2x4xbf16>, tensor<2x4xbf16>, tensor<2x3xbf16>, tensor<2x4x3xf32>, tensor<2x4xbf16> -> tensor<2x3xbf16>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @step_narrower_state(%q: tensor<2x4xf32>, %v: tensor<2x3xf32>, %s0: tensor<2x4x3xf16>, %z0: tensor<2x4xf16>) {
  // expected-error @+1 {{'linattn.step' op state element type 'f16' cannot accumulate 'f32' inputs: use 'f32' or a wider float type}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4x3xf16>, tensor<2x4xf16> -> tensor<2x3xf32>, tensor<2x4x3xf16>, tensor<2x4xf16>
  return
}

// -----

func.func @step_eps_zero(%q: tensor<2x4xf32>, %v: tensor<2x3xf32>, %s0: tensor<2x4x3xf32>, %z0: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.step' op normalization eps must be positive and finite, got 0.000000e+00}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 normalize(eps = 0.0) : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32> -> tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @step_eps_inf(%q: tensor<2x4xf32>, %v: tensor<2x3xf32>, %s0: tensor<2x4x3xf32>, %z0: tensor<2x4xf32>) {
  // expected-error @+1 {{'linattn.step' op normalization eps must be positive and finite, got INF}}
  %o, %s, %z = linattn.step %q, %q, %v, %s0, %z0 normalize(eps = 0x7FF0000000000000) : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32> -> tensor<2x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// linattn.attention
//===----------------------------------------------------------------------===//

func.func @attention_rank_too_small(%q: tensor<4xf32>, %k: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.attention' op expected query to have rank at least 2, got rank 1}}
  %0 = linattn.attention elu %q, %k, %v : tensor<4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @attention_value_rank(%q: tensor<2x16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.attention' op expected value to have rank 3 (1 batch dimension like the query, then 2), got rank 2}}
  %0 = linattn.attention elu %q, %q, %v : tensor<2x16x4xf32>, tensor<2x16x4xf32>, tensor<16x3xf32> -> tensor<2x16x3xf32>
  return
}

// -----

func.func @attention_result_rank(%q: tensor<2x16x4xf32>, %v: tensor<2x16x3xf32>) {
  // expected-error @+1 {{'linattn.attention' op expected result to have rank 3 (1 batch dimension like the query, then 2), got rank 4}}
  %0 = linattn.attention elu %q, %q, %v : tensor<2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x16x3xf32> -> tensor<2x1x16x3xf32>
  return
}

// -----

func.func @attention_projection_rank(%q: tensor<2x16x4xf32>, %v: tensor<2x16x3xf32>, %p: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'linattn.attention' op expected projection to have rank 2, got rank 3}}
  %0 = linattn.attention favor %q, %q, %v projection(%p) : tensor<2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x16x3xf32>, tensor<2x4x8xf32> -> tensor<2x16x3xf32>
  return
}

// -----

func.func @attention_batch_dim(%q: tensor<2x8x16x4xf32>, %k: tensor<2x4x16x4xf32>, %v: tensor<2x8x16x3xf32>) {
  // expected-error @+1 {{'linattn.attention' op key batch dimension 1 (4) does not match query batch dimension 1 (8)}}
  %0 = linattn.attention elu %q, %k, %v : tensor<2x8x16x4xf32>, tensor<2x4x16x4xf32>, tensor<2x8x16x3xf32> -> tensor<2x8x16x3xf32>
  return
}

// -----

func.func @attention_key_feature_size(%q: tensor<16x4xf32>, %k: tensor<16x5xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.attention' op key feature size 5 does not match query feature size 4}}
  %0 = linattn.attention elu %q, %k, %v : tensor<16x4xf32>, tensor<16x5xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @attention_value_sequence_length(%q: tensor<16x4xf32>, %k: tensor<12x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.attention' op value sequence length 16 does not match key sequence length 12}}
  %0 = linattn.attention relu %q, %k, %v : tensor<16x4xf32>, tensor<12x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @attention_result_sequence_length(%q: tensor<16x4xf32>, %k: tensor<12x4xf32>, %v: tensor<12x3xf32>) {
  // expected-error @+1 {{'linattn.attention' op result sequence length 12 does not match query sequence length 16}}
  %0 = linattn.attention relu %q, %k, %v : tensor<16x4xf32>, tensor<12x4xf32>, tensor<12x3xf32> -> tensor<12x3xf32>
  return
}

// -----

func.func @attention_result_feature_size(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.attention' op result feature size 4 does not match value feature size 3}}
  %0 = linattn.attention identity %q, %q, %v : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x4xf32>
  return
}

// -----

func.func @attention_projection_input_size(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>, %p: tensor<8x32xf32>) {
  // expected-error @+1 {{'linattn.attention' op projection input size 8 does not match query feature size 4}}
  %0 = linattn.attention favor %q, %q, %v projection(%p) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<8x32xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @attention_key_element_type(%q: tensor<16x4xf32>, %k: tensor<16x4xbf16>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.attention' op key element type 'bf16' does not match query element type 'f32'}}
  %0 = linattn.attention elu %q, %k, %v : tensor<16x4xf32>, tensor<16x4xbf16>, tensor<16x3xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @attention_value_element_type(%q: tensor<16x4xf32>, %v: tensor<16x3xf16>) {
  // expected-error @+1 {{'linattn.attention' op value element type 'f16' does not match query element type 'f32'}}
  %0 = linattn.attention elu %q, %q, %v : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf16> -> tensor<16x3xf32>
  return
}

// -----

func.func @attention_result_element_type(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.attention' op result element type 'f64' does not match query element type 'f32'}}
  %0 = linattn.attention elu %q, %q, %v : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf64>
  return
}

// -----

func.func @attention_projection_element_type(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>, %p: tensor<4x32xbf16>) {
  // expected-error @+1 {{'linattn.attention' op projection element type 'bf16' does not match query element type 'f32'}}
  %0 = linattn.attention favor %q, %q, %v projection(%p) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4x32xbf16> -> tensor<16x3xf32>
  return
}

// -----

func.func @attention_causal_lengths(%q: tensor<2x16x4xf32>, %k: tensor<2x12x4xf32>, %v: tensor<2x12x3xf32>) {
  // expected-error @+1 {{'linattn.attention' op causal attention needs as many queries as keys, got query sequence length 16 and key sequence length 12}}
  %0 = linattn.attention elu %q, %k, %v causal : tensor<2x16x4xf32>, tensor<2x12x4xf32>, tensor<2x12x3xf32> -> tensor<2x16x3xf32>
  return
}

// -----

// The key length comes from the values, the query length from the result.
func.func @attention_causal_lengths_from_values(%q: tensor<?x4xf32>, %k: tensor<?x4xf32>, %v: tensor<12x3xf32>) {
  // expected-error @+1 {{'linattn.attention' op causal attention needs as many queries as keys, got query sequence length 16 and key sequence length 12}}
  %0 = linattn.attention elu %q, %k, %v causal : tensor<?x4xf32>, tensor<?x4xf32>, tensor<12x3xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @attention_eps_negative(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.attention' op normalization eps must be positive and finite, got -1.000000e-06}}
  %0 = linattn.attention elu %q, %q, %v causal normalize(eps = -1.0e-6) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @attention_eps_neg_inf(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.attention' op normalization eps must be positive and finite, got -INF}}
  %0 = linattn.attention elu %q, %q, %v normalize(eps = 0xFFF0000000000000) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @attention_favor_without_projection(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.attention' op the favor feature map needs a projection operand (projection(%p) with P of shape D x m)}}
  %0 = linattn.attention favor %q, %q, %v : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @attention_relu_with_projection(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>, %p: tensor<4x32xf32>) {
  // expected-error @+1 {{'linattn.attention' op the relu feature map takes no projection operand}}
  %0 = linattn.attention relu %q, %q, %v projection(%p) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4x32xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @attention_identity_with_projection(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>, %p: tensor<4x32xf32>) {
  // expected-error @+1 {{'linattn.attention' op the identity feature map takes no projection operand}}
  %0 = linattn.attention identity %q, %q, %v projection(%p) causal : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<4x32xf32> -> tensor<16x3xf32>
  return
}

// -----

func.func @attention_integer_query(%q: tensor<16x4xi32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.attention' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<16x4xi32>'}}
  %0 = linattn.attention elu %q, %q, %v : tensor<16x4xi32>, tensor<16x4xi32>, tensor<16x3xf32> -> tensor<16x3xf32>
  return
}

// -----

// The largest D whose poly2 features fit is 3037000498: one more does not
// (linattn-decompose would build a feature map that does not verify).
func.func @attention_poly2_overflow(%q: tensor<1x3037000499xf32>, %v: tensor<1x4xf32>) {
  // expected-error @+1 {{'linattn.attention' op the poly2 feature map of feature size 3037000499 would produce more than 2^63 features}}
  %0 = linattn.attention poly2 %q, %q, %v : tensor<1x3037000499xf32>, tensor<1x3037000499xf32>, tensor<1x4xf32> -> tensor<1x4xf32>
  return
}

// -----

// One more than the largest D whose poly2 features of one f32 token fit in
// fewer than 2^63 bytes (linattn-decompose would build a feature map whose
// result does not verify).
func.func @attention_poly2_feature_bytes(%q: tensor<1x1518500250xf32>, %v: tensor<1x4xf32>) {
  // expected-error @+1 {{'linattn.attention' op expected query features 'tensor<1x2305843010768562751xf32>' to have fewer than 2^63 bytes}}
  %0 = linattn.attention poly2 %q, %q, %v : tensor<1x1518500250xf32>, tensor<1x1518500250xf32>, tensor<1x4xf32> -> tensor<1x4xf32>
  return
}

// -----

// The same for the key features, with elu (as many features as inputs): a
// long f16 key sequence.
func.func @attention_key_feature_bytes(%q: tensor<1x8xf16>, %k: tensor<576460752303423488x8xf16>, %v: tensor<576460752303423488x4xf16>) {
  // expected-error @+1 {{'linattn.attention' op expected key 'tensor<576460752303423488x8xf16>' to have fewer than 2^63 bytes}}
  %0 = linattn.attention elu %q, %k, %v : tensor<1x8xf16>, tensor<576460752303423488x8xf16>, tensor<576460752303423488x4xf16> -> tensor<1x4xf16>
  return
}

// -----

// Every operand and result: a scan over 2 x 2^62 f32 tokens would wrap the
// 64-bit offsets of every lowering.
func.func @scan_bytes(%q: tensor<2x4611686018427387904x4xf32>, %v: tensor<2x4611686018427387904x3xf32>) {
  // expected-error @+1 {{'linattn.scan' op expected query 'tensor<2x4611686018427387904x4xf32>' to have fewer than 2^63 bytes}}
  %o, %s, %z = linattn.scan forward %q, %q, %v
      : tensor<2x4611686018427387904x4xf32>, tensor<2x4611686018427387904x4xf32>, tensor<2x4611686018427387904x3xf32>
      -> tensor<2x4611686018427387904x3xf32>, tensor<2x4x3xf32>, tensor<2x4xf32>
  return
}

// -----

// A dynamic size is not counted; the static ones still are (a bf16 state of
// 2^31 x 2^31 elements).
func.func @step_state_bytes(%q: tensor<?x2147483648xbf16>, %v: tensor<?x2147483648xbf16>, %s: tensor<?x2147483648x2147483648xf32>, %z: tensor<?x2147483648xf32>) {
  // expected-error @+1 {{'linattn.step' op expected state 'tensor<?x2147483648x2147483648xf32>' to have fewer than 2^63 bytes}}
  %o, %s1, %z1 = linattn.step %q, %q, %v, %s, %z
      : tensor<?x2147483648xbf16>, tensor<?x2147483648xbf16>, tensor<?x2147483648xbf16>, tensor<?x2147483648x2147483648xf32>, tensor<?x2147483648xf32>
      -> tensor<?x2147483648xbf16>, tensor<?x2147483648x2147483648xf32>, tensor<?x2147483648xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// linattn.feature_map_grad
//===----------------------------------------------------------------------===//

func.func @feature_map_grad_size(%x: tensor<4x8xf32>, %d: tensor<4x6xf32>) {
  // expected-error @+1 {{'linattn.feature_map_grad' op result gradient feature size 6 does not match input feature size 8}}
  %dx = linattn.feature_map_grad elu %x, %d : tensor<4x8xf32>, tensor<4x6xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @feature_map_grad_rows(%x: tensor<4x8xf32>, %d: tensor<5x8xf32>) {
  // expected-error @+1 {{'linattn.feature_map_grad' op result gradient batch dimension 0 (5) does not match input batch dimension 0 (4)}}
  %dx = linattn.feature_map_grad relu %x, %d : tensor<4x8xf32>, tensor<5x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @feature_map_grad_input_grad(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'linattn.feature_map_grad' op input gradient feature size 7 does not match input feature size 8}}
  %dx = linattn.feature_map_grad identity %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x7xf32>
  return
}

// -----

func.func @feature_map_grad_poly2(%x: tensor<4x3xf32>, %d: tensor<4x12xf32>) {
  // expected-error @+1 {{'linattn.feature_map_grad' op the poly2 feature map of input feature size 3 produces 1 + D + D^2 = 13 features, but the result feature size is 12}}
  %dx = linattn.feature_map_grad poly2 %x, %d : tensor<4x3xf32>, tensor<4x12xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @feature_map_grad_no_projection(%x: tensor<4x8xf32>, %d: tensor<4x16xf32>) {
  // expected-error @+1 {{'linattn.feature_map_grad' op the favor feature map needs a projection operand (projection(%p) with P of shape D x m)}}
  %dx = linattn.feature_map_grad favor %x, %d : tensor<4x8xf32>, tensor<4x16xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @feature_map_grad_projection_size(%x: tensor<4x8xf32>, %d: tensor<4x16xf32>, %p: tensor<8x12xf32>) {
  // expected-error @+1 {{'linattn.feature_map_grad' op projection feature count 12 does not match result gradient feature size 16}}
  %dx = linattn.feature_map_grad favor %x, %d projection(%p) : tensor<4x8xf32>, tensor<4x16xf32>, tensor<8x12xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @feature_map_grad_extra_projection(%x: tensor<4x8xf32>, %p: tensor<8x8xf32>) {
  // expected-error @+1 {{'linattn.feature_map_grad' op the elu feature map takes no projection operand}}
  %dx = linattn.feature_map_grad elu %x, %x projection(%p) : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @feature_map_grad_element_type(%x: tensor<4x8xf32>, %d: tensor<4x8xbf16>) {
  // expected-error @+1 {{'linattn.feature_map_grad' op result gradient element type 'bf16' does not match input element type 'f32'}}
  %dx = linattn.feature_map_grad elu %x, %d : tensor<4x8xf32>, tensor<4x8xbf16> -> tensor<4x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// linattn.attention_grad
//===----------------------------------------------------------------------===//

func.func @attention_grad_causal_lengths(%q: tensor<7x4xf32>, %k: tensor<9x4xf32>, %v: tensor<9x3xf32>, %do: tensor<7x3xf32>) {
  // expected-error @+1 {{'linattn.attention_grad' op causal attention needs as many queries as keys, got query sequence length 7 and key sequence length 9}}
  %dq, %dk, %dv = linattn.attention_grad elu %q, %k, %v, %do causal : tensor<7x4xf32>, tensor<9x4xf32>, tensor<9x3xf32>, tensor<7x3xf32> -> tensor<7x4xf32>, tensor<9x4xf32>, tensor<9x3xf32>
  return
}

// -----

func.func @attention_grad_result_grad(%q: tensor<7x4xf32>, %k: tensor<9x4xf32>, %v: tensor<9x3xf32>, %do: tensor<9x3xf32>) {
  // expected-error @+1 {{'linattn.attention_grad' op result gradient sequence length 9 does not match query sequence length 7}}
  %dq, %dk, %dv = linattn.attention_grad elu %q, %k, %v, %do : tensor<7x4xf32>, tensor<9x4xf32>, tensor<9x3xf32>, tensor<9x3xf32> -> tensor<7x4xf32>, tensor<9x4xf32>, tensor<9x3xf32>
  return
}

// -----

func.func @attention_grad_key_grad(%q: tensor<7x4xf32>, %k: tensor<9x4xf32>, %v: tensor<9x3xf32>, %do: tensor<7x3xf32>) {
  // expected-error @+1 {{'linattn.attention_grad' op key gradient sequence length 7 does not match key sequence length 9}}
  %dq, %dk, %dv = linattn.attention_grad elu %q, %k, %v, %do : tensor<7x4xf32>, tensor<9x4xf32>, tensor<9x3xf32>, tensor<7x3xf32> -> tensor<7x4xf32>, tensor<7x4xf32>, tensor<9x3xf32>
  return
}

// -----

func.func @attention_grad_value_grad(%q: tensor<7x4xf32>, %k: tensor<9x4xf32>, %v: tensor<9x3xf32>, %do: tensor<7x3xf32>) {
  // expected-error @+1 {{'linattn.attention_grad' op value gradient feature size 4 does not match value feature size 3}}
  %dq, %dk, %dv = linattn.attention_grad elu %q, %k, %v, %do : tensor<7x4xf32>, tensor<9x4xf32>, tensor<9x3xf32>, tensor<7x3xf32> -> tensor<7x4xf32>, tensor<9x4xf32>, tensor<9x4xf32>
  return
}

// -----

func.func @attention_grad_no_projection(%q: tensor<7x4xf32>, %v: tensor<7x3xf32>) {
  // expected-error @+1 {{'linattn.attention_grad' op the favor feature map needs a projection operand (projection(%p) with P of shape D x m)}}
  %dq, %dk, %dv = linattn.attention_grad favor %q, %q, %v, %v : tensor<7x4xf32>, tensor<7x4xf32>, tensor<7x3xf32>, tensor<7x3xf32> -> tensor<7x4xf32>, tensor<7x4xf32>, tensor<7x3xf32>
  return
}

// -----

func.func @attention_grad_element_type(%q: tensor<7x4xf32>, %v: tensor<7x3xf32>, %do: tensor<7x3xf64>) {
  // expected-error @+1 {{'linattn.attention_grad' op result gradient element type 'f64' does not match query element type 'f32'}}
  %dq, %dk, %dv = linattn.attention_grad elu %q, %q, %v, %do : tensor<7x4xf32>, tensor<7x4xf32>, tensor<7x3xf32>, tensor<7x3xf64> -> tensor<7x4xf32>, tensor<7x4xf32>, tensor<7x3xf32>
  return
}

// -----

func.func @attention_grad_eps(%q: tensor<7x4xf32>, %v: tensor<7x3xf32>) {
  // expected-error @+1 {{'linattn.attention_grad' op normalization eps must be positive and finite, got -1.000000e+00}}
  %dq, %dk, %dv = linattn.attention_grad elu %q, %q, %v, %v normalize(eps = -1.0) : tensor<7x4xf32>, tensor<7x4xf32>, tensor<7x3xf32>, tensor<7x3xf32> -> tensor<7x4xf32>, tensor<7x4xf32>, tensor<7x3xf32>
  return
}

// -----

func.func @attention_grad_state_bytes(%q: tensor<?x1099511627776xf32>, %v: tensor<?x1099511627776xf32>) {
  // expected-error @+1 {{'linattn.attention_grad' op expected the state of its decomposition 'tensor<1099511627776x1099511627776xf32>' to have fewer than 2^63 bytes}}
  %dq, %dk, %dv = linattn.attention_grad identity %q, %q, %v, %v : tensor<?x1099511627776xf32>, tensor<?x1099511627776xf32>, tensor<?x1099511627776xf32>, tensor<?x1099511627776xf32> -> tensor<?x1099511627776xf32>, tensor<?x1099511627776xf32>, tensor<?x1099511627776xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// linattn.scan_grad
//===----------------------------------------------------------------------===//

func.func @scan_grad_rank_too_small(%q: tensor<4xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{'linattn.scan_grad' op expected query to have rank at least 2, got rank 1}}
  %dq, %dk, %dv = linattn.scan_grad forward %q, %q, %v, %v : tensor<4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<4xf32>, tensor<4xf32>, tensor<3xf32>
  return
}

// -----

func.func @scan_grad_batch_mismatch(%q: tensor<2x16x4xf32>, %v: tensor<2x16x3xf32>, %do: tensor<3x16x3xf32>) {
  // expected-error @+1 {{'linattn.scan_grad' op result gradient batch dimension 0 (3) does not match query batch dimension 0 (2)}}
  %dq, %dk, %dv = linattn.scan_grad forward %q, %q, %v, %do : tensor<2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x16x3xf32>, tensor<3x16x3xf32> -> tensor<2x16x4xf32>, tensor<2x16x4xf32>, tensor<2x16x3xf32>
  return
}

// -----

func.func @scan_grad_key_length(%q: tensor<16x4xf32>, %k: tensor<12x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan_grad' op key sequence length 12 does not match query sequence length 16}}
  %dq, %dk, %dv = linattn.scan_grad forward %q, %k, %v, %v : tensor<16x4xf32>, tensor<12x4xf32>, tensor<16x3xf32>, tensor<16x3xf32> -> tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>
  return
}

// -----

func.func @scan_grad_init_without_results(%q: tensor<8x4xf32>, %v: tensor<8x3xf32>, %s: tensor<4x3xf32>, %z: tensor<4xf32>) {
  // expected-error @+1 {{'linattn.scan_grad' op returns the initial state's and normalizer's gradients exactly when it has an initial state}}
  %dq, %dk, %dv = linattn.scan_grad forward %q, %q, %v, %v init(%s, %z : tensor<4x3xf32>, tensor<4xf32>) : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x3xf32>, tensor<8x3xf32> -> tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x3xf32>
  return
}

// -----

func.func @scan_grad_results_without_init(%q: tensor<8x4xf32>, %v: tensor<8x3xf32>) {
  // expected-error @+1 {{'linattn.scan_grad' op returns the initial state's and normalizer's gradients exactly when it has an initial state}}
  %dq, %dk, %dv, %ds, %dz = linattn.scan_grad forward %q, %q, %v, %v : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x3xf32>, tensor<8x3xf32> -> tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_grad_state_shape(%q: tensor<8x4xf32>, %v: tensor<8x3xf32>, %s: tensor<4x2xf32>, %z: tensor<4xf32>) {
  // expected-error @+1 {{'linattn.scan_grad' op initial state value size 2 does not match value feature size 3}}
  %dq, %dk, %dv, %ds, %dz = linattn.scan_grad forward %q, %q, %v, %v init(%s, %z : tensor<4x2xf32>, tensor<4xf32>) : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x3xf32>, tensor<8x3xf32> -> tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x3xf32>, tensor<4x2xf32>, tensor<4xf32>
  return
}

// -----

func.func @scan_grad_final_normalizer_shape(%q: tensor<8x4xf32>, %v: tensor<8x3xf32>, %s: tensor<4x3xf32>, %z: tensor<5xf32>) {
  // expected-error @+1 {{'linattn.scan_grad' op final normalizer gradient feature size 5 does not match query feature size 4}}
  %dq, %dk, %dv = linattn.scan_grad forward %q, %q, %v, %v final_grad(%s, %z : tensor<4x3xf32>, tensor<5xf32>) : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x3xf32>, tensor<8x3xf32> -> tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x3xf32>
  return
}

// -----

func.func @scan_grad_state_type(%q: tensor<8x4xbf16>, %v: tensor<8x3xbf16>, %s: tensor<4x3xbf16>, %z: tensor<4xbf16>) {
  // expected-error @+1 {{'linattn.scan_grad' op initial state must have element type 'f32' (the scans' state type for 'bf16' data), got 'bf16'}}
  %dq, %dk, %dv, %ds, %dz = linattn.scan_grad forward %q, %q, %v, %v init(%s, %z : tensor<4x3xbf16>, tensor<4xbf16>) : tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x3xbf16>, tensor<8x3xbf16> -> tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x3xbf16>, tensor<4x3xbf16>, tensor<4xbf16>
  return
}

// -----

func.func @scan_grad_state_gradient_type(%q: tensor<8x4xf32>, %v: tensor<8x3xf32>, %s: tensor<4x3xf32>, %z: tensor<4xf32>) {
  // expected-error @+1 {{'linattn.scan_grad' op initial state gradient must have element type 'f32' (the scans' state type for 'f32' data), got 'f64'}}
  %dq, %dk, %dv, %ds, %dz = linattn.scan_grad forward %q, %q, %v, %v init(%s, %z : tensor<4x3xf32>, tensor<4xf32>) : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x3xf32>, tensor<8x3xf32> -> tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x3xf32>, tensor<4x3xf64>, tensor<4xf32>
  return
}

// -----

func.func @scan_grad_result_grad_size(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>, %do: tensor<16x5xf32>) {
  // expected-error @+1 {{'linattn.scan_grad' op result gradient feature size 5 does not match value feature size 3}}
  %dq, %dk, %dv = linattn.scan_grad forward %q, %q, %v, %do : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<16x5xf32> -> tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>
  return
}

// -----

func.func @scan_grad_key_grad_size(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan_grad' op key gradient feature size 3 does not match query feature size 4}}
  %dq, %dk, %dv = linattn.scan_grad forward %q, %q, %v, %v : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<16x3xf32> -> tensor<16x4xf32>, tensor<16x3xf32>, tensor<16x3xf32>
  return
}

// -----

func.func @scan_grad_value_grad_length(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan_grad' op value gradient sequence length 8 does not match query sequence length 16}}
  %dq, %dk, %dv = linattn.scan_grad forward %q, %q, %v, %v : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<16x3xf32> -> tensor<16x4xf32>, tensor<16x4xf32>, tensor<8x3xf32>
  return
}

// -----

func.func @scan_grad_element_type(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>, %do: tensor<16x3xf16>) {
  // expected-error @+1 {{'linattn.scan_grad' op result gradient element type 'f16' does not match query element type 'f32'}}
  %dq, %dk, %dv = linattn.scan_grad forward %q, %q, %v, %do : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<16x3xf16> -> tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>
  return
}

// -----

func.func @scan_grad_state_bytes(%q: tensor<1x1099511627776xf32>, %v: tensor<1x1099511627776xf32>) {
  // expected-error @+1 {{'linattn.scan_grad' op expected the state of its decomposition 'tensor<1099511627776x1099511627776xf32>' to have fewer than 2^63 bytes}}
  %dq, %dk, %dv = linattn.scan_grad forward %q, %q, %v, %v : tensor<1x1099511627776xf32>, tensor<1x1099511627776xf32>, tensor<1x1099511627776xf32>, tensor<1x1099511627776xf32> -> tensor<1x1099511627776xf32>, tensor<1x1099511627776xf32>, tensor<1x1099511627776xf32>
  return
}

// -----

func.func @scan_grad_eps(%q: tensor<16x4xf32>, %v: tensor<16x3xf32>) {
  // expected-error @+1 {{'linattn.scan_grad' op normalization eps must be positive and finite, got 0.000000e+00}}
  %dq, %dk, %dv = linattn.scan_grad forward %q, %q, %v, %v normalize(eps = 0.0) : tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>, tensor<16x3xf32> -> tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// linattn.read_buffer
//===----------------------------------------------------------------------===//

func.func @read_buffer_shape(%t: tensor<4x?xf32>) {
  // expected-error @+1 {{'linattn.read_buffer' op expected a buffer of the tensor's shape and element type, got 'memref<4x3xf32>' for 'tensor<4x?xf32>'}}
  %m = linattn.read_buffer %t : tensor<4x?xf32> to memref<4x3xf32>
  return
}

// -----

func.func @read_buffer_layout(%t: tensor<4x3xf32>) {
  // expected-error @+1 {{'linattn.read_buffer' op expected a buffer of identity layout, got 'memref<4x3xf32, strided<[1, 4]>>'}}
  %m = linattn.read_buffer %t : tensor<4x3xf32> to memref<4x3xf32, strided<[1, 4]>>
  return
}
