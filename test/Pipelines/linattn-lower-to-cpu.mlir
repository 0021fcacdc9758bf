// RUN: linattn-opt %s --linattn-lower-to-cpu | FileCheck %s
// RUN: linattn-opt %s --linattn-lower-to-cpu='c-interface=false fuse-elementwise=false' | FileCheck %s --check-prefix=NOWRAP
// RUN: linattn-opt %s --linattn-lower-to-cpu | linattn-opt | FileCheck %s --check-prefix=LLVM

// The pipeline leaves only the LLVM dialect, with C wrappers on request.

// CHECK-LABEL: llvm.func @attention(
// CHECK-LABEL: llvm.func @_mlir_ciface_attention(
// CHECK-NOT: linattn.
// NOWRAP-NOT: _mlir_ciface_
// LLVM-NOT: {{(linalg|tensor|memref|scf|arith|func)\.}}
func.func @attention(%q: tensor<2x?x8xf32>, %k: tensor<2x?x8xf32>,
                     %v: tensor<2x?x4xf32>) -> tensor<2x?x4xf32> {
  %o = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-06)
      : tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x4xf32> -> tensor<2x?x4xf32>
  return %o : tensor<2x?x4xf32>
}

// CHECK-LABEL: llvm.func @scan(
func.func @scan(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x4xf32>)
    -> (tensor<?x4xf32>, tensor<8x4xf32>, tensor<8xf32>) {
  %o, %s, %z = linattn.scan reverse %q, %k, %v
      : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32>
      -> tensor<?x4xf32>, tensor<8x4xf32>, tensor<8xf32>
  return %o, %s, %z : tensor<?x4xf32>, tensor<8x4xf32>, tensor<8xf32>
}
