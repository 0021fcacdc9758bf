// Functions linattn-lower-to-nvvm{device-buffers} rejects
// (linattn-lower-to-nvvm-device-buffers.mlir).

// poly2 features have no GPU kernel: the step would run on the host.
func.func @poly2_step(%q: tensor<8x4xf32>, %k: tensor<8x4xf32>, %v: tensor<8x8xf32>, %s: tensor<8x21x8xf32>, %z: tensor<8x21xf32>) -> (tensor<8x8xf32>, tensor<8x21x8xf32>, tensor<8x21xf32>) {
  %fq = linattn.feature_map poly2 %q : tensor<8x4xf32> -> tensor<8x21xf32>
  %fk = linattn.feature_map poly2 %k : tensor<8x4xf32> -> tensor<8x21xf32>
  %o, %s1, %z1 = linattn.step %fq, %fk, %v, %s, %z normalize(eps = 1.0e-6) : tensor<8x21xf32>, tensor<8x21xf32>, tensor<8x8xf32>, tensor<8x21x8xf32>, tensor<8x21xf32> -> tensor<8x8xf32>, tensor<8x21x8xf32>, tensor<8x21xf32>
  return %o, %s1, %z1 : tensor<8x8xf32>, tensor<8x21x8xf32>, tensor<8x21xf32>
}

// -----

// A result that is an argument would be copied into its out-param.
func.func @identity(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  return %x : tensor<8x16xf32>
}

// -----

// Results are device buffers.
func.func @scalar(%x: tensor<8x16xf32>, %c: f32) -> f32 {
  return %c : f32
}
