// Strided slices the bufferization copies with memref.copy (innermost
// strides 2 and 1), which linattn-lower-to-cpu turns into loops, for
// test/Tools/runner-utils.test.
func.func @main(%x: tensor<3x6x10xf32>) -> (tensor<3x2x5xf32>, tensor<2x6x4xf32>, tensor<1x1x1xf32>) {
  %a = tensor.extract_slice %x[0, 1, 0] [3, 2, 5] [1, 3, 2] : tensor<3x6x10xf32> to tensor<3x2x5xf32>
  %b = tensor.extract_slice %x[1, 0, 3] [2, 6, 4] [1, 1, 1] : tensor<3x6x10xf32> to tensor<2x6x4xf32>
  %c = tensor.extract_slice %x[2, 5, 9] [1, 1, 1] [1, 1, 1] : tensor<3x6x10xf32> to tensor<1x1x1xf32>
  return %a, %b, %c : tensor<3x2x5xf32>, tensor<2x6x4xf32>, tensor<1x1x1xf32>
}
