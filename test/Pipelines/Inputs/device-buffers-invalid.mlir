// Functions linattn-lower-to-nvvm{device-buffers} rejects
// (linattn-lower-to-nvvm-device-buffers.mlir).

// A state column of 520 f32 features fits no scan kernel: the scan would
// run on the host.
func.func @wide_scan(%fq: tensor<7x520xf32>, %fk: tensor<7x520xf32>, %v: tensor<7x8xf32>) -> tensor<7x8xf32> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<7x520xf32>, tensor<7x520xf32>, tensor<7x8xf32> -> tensor<7x8xf32>, tensor<520x8xf32>, tensor<520xf32>
  return %o : tensor<7x8xf32>
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
