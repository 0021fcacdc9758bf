// The GPU benchmark's function at D = 64: O of the unnormalized causal
// elu+1 scan in bf16, the final state unused.
func.func @scan(%q: tensor<8x16x?x64xbf16>, %k: tensor<8x16x?x64xbf16>, %v: tensor<8x16x?x64xbf16>) -> tensor<8x16x?x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<8x16x?x64xbf16> -> tensor<8x16x?x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<8x16x?x64xbf16> -> tensor<8x16x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<8x16x?x64xbf16>, tensor<8x16x?x64xbf16>, tensor<8x16x?x64xbf16> -> tensor<8x16x?x64xbf16>, tensor<8x16x64x64xf32>, tensor<8x16x64xf32>
  return %o : tensor<8x16x?x64xbf16>
}
