// Debian's mlir-opt running linattn passes from the plugin. Pass plugins are
// loaded after mlir-opt has parsed its command line, so their passes are
// named in --pass-pipeline rather than given as flags.
// RUN: %mlir_opt %s --load-dialect-plugin=%linattn_plugin \
// RUN:   --load-pass-plugin=%linattn_plugin \
// RUN:   --pass-pipeline='builtin.module(linattn-decompose)' | FileCheck %s
// The plugin's passes compose with upstream ones in one pipeline.
// RUN: %mlir_opt %s --load-dialect-plugin=%linattn_plugin \
// RUN:   --load-pass-plugin=%linattn_plugin \
// RUN:   --pass-pipeline='builtin.module(func.func(linattn-decompose,canonicalize,cse))' \
// RUN:   | FileCheck %s
// Every pass and pipeline comes along: the scan rewrite, and the whole CPU
// lowering down to the LLVM dialect.
// RUN: %mlir_opt %s --load-dialect-plugin=%linattn_plugin \
// RUN:   --load-pass-plugin=%linattn_plugin \
// RUN:   --pass-pipeline='builtin.module(linattn-decompose,linattn-masked-to-scan)' \
// RUN:   | FileCheck %s --check-prefix=SCAN
// RUN: %mlir_opt %s --load-dialect-plugin=%linattn_plugin \
// RUN:   --load-pass-plugin=%linattn_plugin \
// RUN:   --pass-pipeline='builtin.module(linattn-lower-to-cpu)' \
// RUN:   | FileCheck %s --check-prefix=CPU
// Without the pass plugin the pass is unknown.
// RUN: not %mlir_opt %s --load-dialect-plugin=%linattn_plugin \
// RUN:   --pass-pipeline='builtin.module(linattn-decompose)' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOPLUGIN

// NOPLUGIN: 'linattn-decompose' does not refer to a registered pass or pass pipeline

// SCAN-LABEL: func.func @causal_normalized
// SCAN: linattn.scan forward %{{.*}}, %{{.*}}, %{{.*}} normalize(eps = 9.9999999999999995E-7)
// SCAN-NOT: linattn.scores

// CPU-NOT: linattn.
// CPU: llvm.func @causal_normalized(
// CPU: llvm.func @_mlir_ciface_causal_normalized(
// CPU-NOT: linattn.

// CHECK-LABEL: func.func @causal_normalized
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x128x64xf32>, %[[K:.*]]: tensor<2x8x128x64xf32>, %[[V:.*]]: tensor<2x8x128x32xf32>)
// CHECK: %[[FQ:.*]] = linattn.feature_map elu %[[Q]]
// CHECK: %[[FK:.*]] = linattn.feature_map elu %[[K]]
// CHECK: %[[A:.*]] = linattn.scores %[[FQ]], %[[FK]] causal
// CHECK: %[[O:.*]] = linattn.apply_scores %[[A]], %[[V]] normalize(eps = 9.9999999999999995E-7)
// CHECK: return %[[O]]
// CHECK-NOT: linattn.attention
func.func @causal_normalized(%q: tensor<2x8x128x64xf32>, %k: tensor<2x8x128x64xf32>,
                             %v: tensor<2x8x128x32xf32>) -> tensor<2x8x128x32xf32> {
  %o = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6)
      : tensor<2x8x128x64xf32>, tensor<2x8x128x64xf32>, tensor<2x8x128x32xf32>
      -> tensor<2x8x128x32xf32>
  return %o : tensor<2x8x128x32xf32>
}
