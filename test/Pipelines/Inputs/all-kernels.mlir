// Every GPU kernel of linattn-lower-to-nvvm: the causal scan (from causal
// elu attention), kv_summary and query_readout (from non-causal relu
// attention), the decode step, a reverse scan with an initial state.
func.func @causal(%q: tensor<2x4x?x64xf32>, %k: tensor<2x4x?x64xf32>, %v: tensor<2x4x?x48xf32>) -> tensor<2x4x?x48xf32> {
  %0 = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6) : tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32>, tensor<2x4x?x48xf32> -> tensor<2x4x?x48xf32>
  return %0 : tensor<2x4x?x48xf32>
}

func.func @cross(%q: tensor<2x7x32xf32>, %k: tensor<2x13x32xf32>, %v: tensor<2x13x40xf32>) -> tensor<2x7x40xf32> {
  %0 = linattn.attention relu %q, %k, %v normalize(eps = 1.0e-6) : tensor<2x7x32xf32>, tensor<2x13x32xf32>, tensor<2x13x40xf32> -> tensor<2x7x40xf32>
  return %0 : tensor<2x7x40xf32>
}

func.func @decode(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x24xf32>, %s: tensor<8x16x24xf32>, %z: tensor<8x16xf32>) -> (tensor<8x24xf32>, tensor<8x16x24xf32>, tensor<8x16xf32>) {
  %fq = linattn.feature_map elu %q : tensor<8x16xf32> -> tensor<8x16xf32>
  %fk = linattn.feature_map elu %k : tensor<8x16xf32> -> tensor<8x16xf32>
  %o, %s1, %z1 = linattn.step %fq, %fk, %v, %s, %z normalize(eps = 1.0e-6) : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x24xf32>, tensor<8x16x24xf32>, tensor<8x16xf32> -> tensor<8x24xf32>, tensor<8x16x24xf32>, tensor<8x16xf32>
  return %o, %s1, %z1 : tensor<8x24xf32>, tensor<8x16x24xf32>, tensor<8x16xf32>
}

func.func @suffix(%fq: tensor<3x?x16xf64>, %fk: tensor<3x?x16xf64>, %v: tensor<3x?x8xf64>, %s0: tensor<3x16x8xf64>, %z0: tensor<3x16xf64>) -> (tensor<3x?x8xf64>, tensor<3x16x8xf64>, tensor<3x16xf64>) {
  %o, %s, %z = linattn.scan reverse %fq, %fk, %v init(%s0, %z0) : tensor<3x?x16xf64>, tensor<3x?x16xf64>, tensor<3x?x8xf64>, tensor<3x16x8xf64>, tensor<3x16xf64> -> tensor<3x?x8xf64>, tensor<3x16x8xf64>, tensor<3x16xf64>
  return %o, %s, %z : tensor<3x?x8xf64>, tensor<3x16x8xf64>, tensor<3x16xf64>
}
