// A causal f32 scan for the tf32 chunked kernels (batch 2, 1000 tokens).
func.func @tf32(%q: tensor<2x4000x64xf32>, %k: tensor<2x4000x64xf32>, %v: tensor<2x4000x64xf32>) -> tensor<2x4000x64xf32> {
  %fq = linattn.feature_map elu %q : tensor<2x4000x64xf32> -> tensor<2x4000x64xf32>
  %fk = linattn.feature_map elu %k : tensor<2x4000x64xf32> -> tensor<2x4000x64xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x4000x64xf32>, tensor<2x4000x64xf32>, tensor<2x4000x64xf32> -> tensor<2x4000x64xf32>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x4000x64xf32>
}
