// The gradients of causal normalized attention on 8 heads of 64 features and
// any sequence length, for linattn-compile-host-allocator.test: a call
// allocates and frees intermediates of megabytes.
func.func @attention_grad(%q: tensor<8x?x64xf32>, %k: tensor<8x?x64xf32>,
                          %v: tensor<8x?x64xf32>, %do: tensor<8x?x64xf32>)
    -> (tensor<8x?x64xf32>, tensor<8x?x64xf32>, tensor<8x?x64xf32>) {
  %dq, %dk, %dv = linattn.attention_grad elu %q, %k, %v, %do causal
      normalize(eps = 1.0e-6)
      : tensor<8x?x64xf32>, tensor<8x?x64xf32>, tensor<8x?x64xf32>,
        tensor<8x?x64xf32>
      -> tensor<8x?x64xf32>, tensor<8x?x64xf32>, tensor<8x?x64xf32>
  return %dq, %dk, %dv
      : tensor<8x?x64xf32>, tensor<8x?x64xf32>, tensor<8x?x64xf32>
}
