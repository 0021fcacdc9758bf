// A poly2 attention (through the generic lowering its feature map inserts
// slices, which copy with memrefCopy), for test/Tools/runner-utils.test.
func.func @main(%q: tensor<2x7x4xf32>, %k: tensor<2x13x4xf32>, %v: tensor<2x13x5xf32>) -> (tensor<2x7x5xf32>) {
  %0 = linattn.attention poly2 %q, %k, %v normalize(eps = 1.000000e-06) : tensor<2x7x4xf32>, tensor<2x13x4xf32>, tensor<2x13x5xf32> -> tensor<2x7x5xf32>
  return %0 : tensor<2x7x5xf32>
}
