// One token of causal linear attention for a batch of decoding sequences:
// 32 heads of 128 features, elu+1 features, normalized, f32 data and state,
// any batch size. bench/gpu/decode_graph.cpp compiles it ahead of time with
// `linattn-compile --target=cuda` (device buffers, the caller's stream),
// captures one call in a CUDA graph and replays it token after token.
func.func @decode_step(%q: tensor<?x32x128xf32>, %k: tensor<?x32x128xf32>, %v: tensor<?x32x128xf32>, %s: tensor<?x32x128x128xf32>, %z: tensor<?x32x128xf32>) -> (tensor<?x32x128xf32>, tensor<?x32x128x128xf32>, tensor<?x32x128xf32>) {
  %fq = linattn.feature_map elu %q : tensor<?x32x128xf32> -> tensor<?x32x128xf32>
  %fk = linattn.feature_map elu %k : tensor<?x32x128xf32> -> tensor<?x32x128xf32>
  %o, %s1, %z1 = linattn.step %fq, %fk, %v, %s, %z normalize(eps = 1.0e-6) : tensor<?x32x128xf32>, tensor<?x32x128xf32>, tensor<?x32x128xf32>, tensor<?x32x128x128xf32>, tensor<?x32x128xf32> -> tensor<?x32x128xf32>, tensor<?x32x128x128xf32>, tensor<?x32x128xf32>
  return %o, %s1, %z1 : tensor<?x32x128xf32>, tensor<?x32x128x128xf32>, tensor<?x32x128xf32>
}
