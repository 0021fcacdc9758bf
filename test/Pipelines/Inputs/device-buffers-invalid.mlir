// Functions linattn-lower-to-nvvm{device-buffers} rejects
// (linattn-lower-to-nvvm-device-buffers.mlir).

// Both loops parallel, but the output is indexed by the first only: every
// point of a row writes the same element, so no kernel of one thread per
// point runs it.
func.func @racy_rows(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  %init = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Results are device buffers.
func.func @scalar(%x: tensor<8x16xf32>, %c: f32) -> f32 {
  return %c : f32
}
