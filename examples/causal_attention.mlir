// Causal linear attention of the paper (elu+1 features, normalized) on
// batch 1, 8 heads, 1024 tokens, 64 features per head, as a user writes it.
func.func @causal_linear_attention(%q: tensor<1x8x1024x64xf32>,
                                   %k: tensor<1x8x1024x64xf32>,
                                   %v: tensor<1x8x1024x64xf32>)
    -> tensor<1x8x1024x64xf32> {
  %o = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6)
      : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>,
        tensor<1x8x1024x64xf32> -> tensor<1x8x1024x64xf32>
  return %o : tensor<1x8x1024x64xf32>
}
