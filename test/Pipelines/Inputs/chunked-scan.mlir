// Chunked scans for the tensor-core kernel: bf16 with F = 64 (chunks of 64,
// value tiles of 64) and f16 with F = 128 (chunks of 32, value tiles of 32).
func.func @bf16_elu(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>, tensor<2x4x64x64xf32>, tensor<2x4x64xf32>
  return %o : tensor<2x4x?x64xbf16>
}

func.func @f16_relu(%q: tensor<8x?x128xf16>, %k: tensor<8x?x128xf16>, %v: tensor<8x?x128xf16>) -> tensor<8x?x128xf16> {
  %fq = linattn.feature_map relu %q : tensor<8x?x128xf16> -> tensor<8x?x128xf16>
  %fk = linattn.feature_map relu %k : tensor<8x?x128xf16> -> tensor<8x?x128xf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<8x?x128xf16>, tensor<8x?x128xf16>, tensor<8x?x128xf16> -> tensor<8x?x128xf16>, tensor<8x128x128xf32>, tensor<8x128xf32>
  return %o : tensor<8x?x128xf16>
}
