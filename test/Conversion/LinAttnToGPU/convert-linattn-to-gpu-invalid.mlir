// RUN: linattn-opt %s --convert-linattn-to-gpu="host-fallback=false" -split-input-file -verify-diagnostics -o /dev/null

// Without host fallback every op that gets no kernel is an error that says
// why.

// -----

// Ops that get kernels are no error: neither they nor the buffers their
// launches read (linattn.read_buffer) are left for the host. At F = 256 in
// f32 four lanes share a column (64 features each).
func.func @kernels(%fq: tensor<8x?x256xf32>, %fk: tensor<8x?x256xf32>, %v: tensor<8x?x64xf32>) -> tensor<8x?x64xf32> {
  %fqm = linattn.feature_map elu %fq : tensor<8x?x256xf32> -> tensor<8x?x256xf32>
  %o, %s, %z = linattn.scan forward %fqm, %fk, %v normalize(eps = 1.0e-6) : tensor<8x?x256xf32>, tensor<8x?x256xf32>, tensor<8x?x64xf32> -> tensor<8x?x64xf32>, tensor<8x256x64xf32>, tensor<8x256xf32>
  %s2, %z2 = linattn.kv_summary %fk, %v : tensor<8x?x256xf32>, tensor<8x?x64xf32> -> tensor<8x256x64xf32>, tensor<8x256xf32>
  %r = linattn.query_readout %fq, %s2 : tensor<8x?x256xf32>, tensor<8x256x64xf32> -> tensor<8x?x64xf32>
  %sum = arith.addf %o, %r : tensor<8x?x64xf32>
  return %sum : tensor<8x?x64xf32>
}

func.func @negative_dynamic_features(%k: tensor<2x7x?xf32>, %v: tensor<2x7x8xf32>) -> tensor<2x?x8xf32> {
  // expected-error @+1 {{has no GPU kernel: the feature size must be static}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x7x?xf32>, tensor<2x7x8xf32> -> tensor<2x?x8xf32>, tensor<2x?xf32>
  return %s : tensor<2x?x8xf32>
}

// -----

// Four lanes share a column (scan-feature-lanes): 130 features each.
func.func @negative_wide_state(%fq: tensor<7x520xf32>, %fk: tensor<7x520xf32>, %v: tensor<7x8xf32>) -> tensor<7x8xf32> {
  // expected-error @+1 {{has no GPU kernel: the state column (F = 520, 130 per thread) does not fit the scan's register budget of 128 registers}}
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<7x520xf32>, tensor<7x520xf32>, tensor<7x8xf32> -> tensor<7x8xf32>, tensor<520x8xf32>, tensor<520xf32>
  return %o : tensor<7x8xf32>
}

// -----

// One block per 32 value columns (scan-tile 128, 4 lanes per column) and at
// most 65535 blocks in CUDA's grid y: Dv = 2400000 cannot launch.
func.func @negative_wide_values(%fq: tensor<7x16xf32>, %fk: tensor<7x16xf32>, %v: tensor<7x2400000xf32>) -> tensor<7x2400000xf32> {
  // expected-error @+1 {{has no GPU kernel: Dv = 2400000 needs 75000 blocks of 32 value columns, more than the 65535 of CUDA's grid y}}
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<7x16xf32>, tensor<7x16xf32>, tensor<7x2400000xf32> -> tensor<7x2400000xf32>, tensor<16x2400000xf32>, tensor<16xf32>
  return %o : tensor<7x2400000xf32>
}

// -----

// bf16 data: the chunked kernel's blocks of 64 columns cannot launch either
// (78125 of them), nor the recurrent kernel's.
func.func @negative_wide_values_bf16(%fq: tensor<7x16xbf16>, %fk: tensor<7x16xbf16>, %v: tensor<7x5000000xbf16>) -> tensor<7x5000000xbf16> {
  // expected-error @+1 {{has no GPU kernel: Dv = 5000000 needs 156250 blocks of 32 value columns}}
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<7x16xbf16>, tensor<7x16xbf16>, tensor<7x5000000xbf16> -> tensor<7x5000000xbf16>, tensor<16x5000000xf32>, tensor<16xf32>
  return %o : tensor<7x5000000xbf16>
}
