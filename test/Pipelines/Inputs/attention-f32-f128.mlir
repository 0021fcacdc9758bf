// Normalized causal attention at F = 128 in f32 (for tf32 and tf32x3), and
// its non-causal form (the linear form's kv_summary).
func.func @scan(%q: tensor<8x16x?x128xf32>, %k: tensor<8x16x?x128xf32>, %v: tensor<8x16x?x128xf32>) -> tensor<8x16x?x128xf32> {
  %fq = linattn.feature_map elu %q : tensor<8x16x?x128xf32> -> tensor<8x16x?x128xf32>
  %fk = linattn.feature_map elu %k : tensor<8x16x?x128xf32> -> tensor<8x16x?x128xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<8x16x?x128xf32>, tensor<8x16x?x128xf32>, tensor<8x16x?x128xf32> -> tensor<8x16x?x128xf32>, tensor<8x16x128x128xf32>, tensor<8x16x128xf32>
  return %o : tensor<8x16x?x128xf32>
}

func.func @linear(%q: tensor<8x16x?x128xf32>, %k: tensor<8x16x?x128xf32>, %v: tensor<8x16x?x128xf32>) -> tensor<8x16x?x128xf32> {
  %0 = linattn.attention elu %q, %k, %v normalize(eps = 1.0e-6) : tensor<8x16x?x128xf32>, tensor<8x16x?x128xf32>, tensor<8x16x?x128xf32> -> tensor<8x16x?x128xf32>
  return %0 : tensor<8x16x?x128xf32>
}
