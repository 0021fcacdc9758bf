// Compiled ahead of time by linattn-compile (see README.md here): causal
// linear attention of the paper (elu+1 features, normalized) on 4 heads of
// 32 features and any sequence length, and its decoding step.
func.func @causal_attention(%q: tensor<4x?x32xf32>, %k: tensor<4x?x32xf32>,
                            %v: tensor<4x?x32xf32>) -> tensor<4x?x32xf32> {
  %o = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6)
      : tensor<4x?x32xf32>, tensor<4x?x32xf32>, tensor<4x?x32xf32>
      -> tensor<4x?x32xf32>
  return %o : tensor<4x?x32xf32>
}

// One token: the state (s, z) in, the output and the next state out.
func.func @decode_step(%q: tensor<4x32xf32>, %k: tensor<4x32xf32>,
                       %v: tensor<4x32xf32>, %s: tensor<4x32x32xf32>,
                       %z: tensor<4x32xf32>)
    -> (tensor<4x32xf32>, tensor<4x32x32xf32>, tensor<4x32xf32>) {
  %fq = linattn.feature_map elu %q : tensor<4x32xf32> -> tensor<4x32xf32>
  %fk = linattn.feature_map elu %k : tensor<4x32xf32> -> tensor<4x32xf32>
  %o, %s1, %z1 = linattn.step %fq, %fk, %v, %s, %z normalize(eps = 1.0e-6)
      : tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32xf32>,
        tensor<4x32x32xf32>, tensor<4x32xf32>
      -> tensor<4x32xf32>, tensor<4x32x32xf32>, tensor<4x32xf32>
  return %o, %s1, %z1 : tensor<4x32xf32>, tensor<4x32x32xf32>, tensor<4x32xf32>
}
