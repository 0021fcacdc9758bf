// A chain of three decode steps on slices of the sequence, for
// test/Tools/runner-utils.test.
func.func @main(%fq: tensor<2x3x16xf32>, %fk: tensor<2x3x16xf32>, %v: tensor<2x3x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e_s = tensor.empty() : tensor<2x16x8xf32>
  %s_0 = linalg.fill ins(%c0 : f32) outs(%e_s : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  %e_z = tensor.empty() : tensor<2x16xf32>
  %z_0 = linalg.fill ins(%c0 : f32) outs(%e_z : tensor<2x16xf32>) -> tensor<2x16xf32>
  %fq_0 = tensor.extract_slice %fq[0, 0, 0] [2, 1, 16] [1, 1, 1] : tensor<2x3x16xf32> to tensor<2x16xf32>
  %fk_0 = tensor.extract_slice %fk[0, 0, 0] [2, 1, 16] [1, 1, 1] : tensor<2x3x16xf32> to tensor<2x16xf32>
  %v_0 = tensor.extract_slice %v[0, 0, 0] [2, 1, 8] [1, 1, 1] : tensor<2x3x8xf32> to tensor<2x8xf32>
  %o_0, %s_1, %z_1 = linattn.step %fq_0, %fk_0, %v_0, %s_0, %z_0 normalize(eps = 1.000000e-06) : tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32> -> tensor<2x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32>
  %fq_1 = tensor.extract_slice %fq[0, 1, 0] [2, 1, 16] [1, 1, 1] : tensor<2x3x16xf32> to tensor<2x16xf32>
  %fk_1 = tensor.extract_slice %fk[0, 1, 0] [2, 1, 16] [1, 1, 1] : tensor<2x3x16xf32> to tensor<2x16xf32>
  %v_1 = tensor.extract_slice %v[0, 1, 0] [2, 1, 8] [1, 1, 1] : tensor<2x3x8xf32> to tensor<2x8xf32>
  %o_1, %s_2, %z_2 = linattn.step %fq_1, %fk_1, %v_1, %s_1, %z_1 normalize(eps = 1.000000e-06) : tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32> -> tensor<2x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32>
  %fq_2 = tensor.extract_slice %fq[0, 2, 0] [2, 1, 16] [1, 1, 1] : tensor<2x3x16xf32> to tensor<2x16xf32>
  %fk_2 = tensor.extract_slice %fk[0, 2, 0] [2, 1, 16] [1, 1, 1] : tensor<2x3x16xf32> to tensor<2x16xf32>
  %v_2 = tensor.extract_slice %v[0, 2, 0] [2, 1, 8] [1, 1, 1] : tensor<2x3x8xf32> to tensor<2x8xf32>
  %o_2, %s_3, %z_3 = linattn.step %fq_2, %fk_2, %v_2, %s_2, %z_2 normalize(eps = 1.000000e-06) : tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32> -> tensor<2x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32>
  return %o_0, %o_1, %o_2, %s_3, %z_3 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32>
}
