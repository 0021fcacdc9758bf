// Normalized causal linear attention with elu+1 features, for
// test/Tools/bundle-tools.test.
func.func @main(%q: tensor<2x37x16xf32>, %k: tensor<2x37x16xf32>,
                %v: tensor<2x37x8xf32>) -> tensor<2x37x8xf32> {
  %o = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-06)
      : tensor<2x37x16xf32>, tensor<2x37x16xf32>, tensor<2x37x8xf32> -> tensor<2x37x8xf32>
  return %o : tensor<2x37x8xf32>
}
