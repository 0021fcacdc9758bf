// Non-causal attention for the linear form's tensor-core kernels: bf16 with
// F = 64 (chunks of 64, value tiles of 64), normalized, and f16 with F = 128
// (chunks of 32), unnormalized, whose readout scales the state for f16.
func.func @bf16_elu(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  %0 = linattn.attention elu %q, %k, %v normalize(eps = 1.0e-6) : tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  return %0 : tensor<2x4x?x64xbf16>
}

func.func @f16_relu(%q: tensor<8x?x128xf16>, %k: tensor<8x?x128xf16>, %v: tensor<8x?x128xf16>) -> tensor<8x?x128xf16> {
  %0 = linattn.attention relu %q, %k, %v : tensor<8x?x128xf16>, tensor<8x?x128xf16>, tensor<8x?x128xf16> -> tensor<8x?x128xf16>
  return %0 : tensor<8x?x128xf16>
}
