// The functions device-buffers.test compiles with linattn-compile
// --target=cuda: a decode step, a decomposed attention (two kernels with
// buffers between them) and a causal scan with dynamic shapes.

func.func @decode(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x24xf32>, %s: tensor<8x16x24xf32>, %z: tensor<8x16xf32>) -> (tensor<8x24xf32>, tensor<8x16x24xf32>, tensor<8x16xf32>) {
  %fq = linattn.feature_map elu %q : tensor<8x16xf32> -> tensor<8x16xf32>
  %fk = linattn.feature_map elu %k : tensor<8x16xf32> -> tensor<8x16xf32>
  %o, %s1, %z1 = linattn.step %fq, %fk, %v, %s, %z normalize(eps = 1.0e-6) : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x24xf32>, tensor<8x16x24xf32>, tensor<8x16xf32> -> tensor<8x24xf32>, tensor<8x16x24xf32>, tensor<8x16xf32>
  return %o, %s1, %z1 : tensor<8x24xf32>, tensor<8x16x24xf32>, tensor<8x16xf32>
}

func.func @cross(%q: tensor<2x7x32xf32>, %k: tensor<2x13x32xf32>, %v: tensor<2x13x40xf32>) -> tensor<2x7x40xf32> {
  %0 = linattn.attention relu %q, %k, %v normalize(eps = 1.0e-6) : tensor<2x7x32xf32>, tensor<2x13x32xf32>, tensor<2x13x40xf32> -> tensor<2x7x40xf32>
  return %0 : tensor<2x7x40xf32>
}

func.func @causal(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x40xf32>) -> (tensor<?x4x?x40xf32>, tensor<?x4x16x40xf32>) {
  %fq = linattn.feature_map elu %q : tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %fk = linattn.feature_map elu %k : tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x40xf32> -> tensor<?x4x?x40xf32>, tensor<?x4x16x40xf32>, tensor<?x4x16xf32>
  return %o, %s : tensor<?x4x?x40xf32>, tensor<?x4x16x40xf32>
}
