// RUN: linattn-opt %s --convert-linattn-to-gpu="host-fallback=false" -split-input-file -verify-diagnostics -o /dev/null

// Without host fallback every op that gets no kernel is an error that says
// why.


func.func @negative_poly2(%q: tensor<2x7x3xf32>) -> tensor<2x7x13xf32> {
  // expected-error @+1 {{has no GPU kernel}}
  %f = linattn.feature_map poly2 %q : tensor<2x7x3xf32> -> tensor<2x7x13xf32>
  return %f : tensor<2x7x13xf32>
}

// -----

func.func @negative_dynamic_features(%k: tensor<2x7x?xf32>, %v: tensor<2x7x8xf32>) -> tensor<2x?x8xf32> {
  // expected-error @+1 {{has no GPU kernel: the feature size must be static}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x7x?xf32>, tensor<2x7x8xf32> -> tensor<2x?x8xf32>, tensor<2x?xf32>
  return %s : tensor<2x?x8xf32>
}

// -----

// Four lanes share a column (scan-feature-lanes): 130 features each.
func.func @negative_wide_state(%fq: tensor<7x520xf32>, %fk: tensor<7x520xf32>, %v: tensor<7x8xf32>) -> tensor<7x8xf32> {
  // expected-error @+1 {{has no GPU kernel: the state column (F = 520, 130 per thread) does not fit the scan's register budget of 128 registers}}
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<7x520xf32>, tensor<7x520xf32>, tensor<7x8xf32> -> tensor<7x8xf32>, tensor<520x8xf32>, tensor<520xf32>
  return %o : tensor<7x8xf32>
}

// -----

func.func @favor_features(%x: tensor<7x8xf32>, %p: tensor<8x16xf32>) -> tensor<7x16xf32> {
  // expected-error @+1 {{has no GPU kernel}}
  %0 = linattn.feature_map favor %x projection(%p) : tensor<7x8xf32>, tensor<8x16xf32> -> tensor<7x16xf32>
  return %0 : tensor<7x16xf32>
}
