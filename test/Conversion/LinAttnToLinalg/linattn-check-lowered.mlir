// RUN: linattn-opt %s --split-input-file --linattn-check-lowered --verify-diagnostics

// Every linattn op left is reported.
func.func @negative_left(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'linattn.attention' was not lowered by the pipeline}}
  %o = linattn.attention elu %q, %k, %v normalize(eps = 1.0e-06)
      : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x2xf32> -> tensor<4x2xf32>
  return %o : tensor<4x2xf32>
}

// -----

// Lowered IR passes.
func.func @lowered(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
