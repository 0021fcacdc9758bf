// Debian's own mlir-opt, not linattn-opt, loading the linattn dialect from the
// plugin: print, reparse, and reparse the generic form.
// RUN: %mlir_opt %s --load-dialect-plugin=%linattn_plugin | FileCheck %s
// RUN: %mlir_opt %s --load-dialect-plugin=%linattn_plugin \
// RUN:   | %mlir_opt --load-dialect-plugin=%linattn_plugin | FileCheck %s
// RUN: %mlir_opt %s --load-dialect-plugin=%linattn_plugin -mlir-print-op-generic \
// RUN:   | %mlir_opt --load-dialect-plugin=%linattn_plugin | FileCheck %s
// Without the plugin the same tool does not know the dialect.
// RUN: not %mlir_opt %s 2>&1 | FileCheck %s --check-prefix=NOPLUGIN

// NOPLUGIN: Dialect `linattn' not found for custom op 'linattn.attention'

// CHECK-LABEL: func.func @attention
// CHECK: linattn.attention elu %{{.*}}, %{{.*}}, %{{.*}} causal normalize(eps = 9.9999999999999995E-7)
func.func @attention(%q: tensor<2x8x128x64xf32>, %k: tensor<2x8x128x64xf32>,
                     %v: tensor<2x8x128x32xf32>) -> tensor<2x8x128x32xf32> {
  %o = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6)
      : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x32xf32>
      -> tensor<2x8x128x32xf32>
  return %o : tensor<2x8x128x32xf32>
}

// CHECK-LABEL: func.func @primitives
// CHECK: linattn.feature_map relu
// CHECK: linattn.scores
// CHECK: linattn.apply_scores
func.func @primitives(%q: tensor<8x4xf32>, %v: tensor<8x2xf32>) -> tensor<8x2xf32> {
  %f = linattn.feature_map relu %q : tensor<8x4xf32> -> tensor<8x4xf32>
  %a = linattn.scores %f, %f : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x8xf32>
  %o = linattn.apply_scores %a, %v : tensor<8x8xf32>, tensor<8x2xf32> -> tensor<8x2xf32>
  return %o : tensor<8x2xf32>
}
