// Input of the external-project example: one linattn.attention in a function.
func.func @causal_attention(%q: tensor<1x8x256x64xf32>, %k: tensor<1x8x256x64xf32>,
                            %v: tensor<1x8x256x64xf32>) -> tensor<1x8x256x64xf32> {
  %o = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6)
      : tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32>
      -> tensor<1x8x256x64xf32>
  return %o : tensor<1x8x256x64xf32>
}
