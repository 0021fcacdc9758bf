// REQUIRES: cuda-toolkit
// A scan whose state is f16 or bf16 (the recurrent kernel): the four lanes of
// a state column add their readouts in f32, since NVVM's shuffles move 32
// bits, and the sum is rounded back to the state type.
// RUN: linattn-opt %s --linattn-lower-to-nvvm="format=isa" --mlir-print-ir-after=convert-gpu-to-nvvm -o /dev/null 2>&1 | FileCheck %s

// CHECK-LABEL: llvm.func @linattn_scan_forward_features_normalized_0(
//       CHECK: llvm.fpext %{{.*}} : f16 to f32
//       CHECK: nvvm.shfl.sync bfly %{{.*}} : f32 -> f32
//       CHECK: nvvm.shfl.sync bfly %{{.*}} : f32 -> f32
//       CHECK: llvm.fptrunc %{{.*}} : f32 to f16
func.func @f16_state(%q: tensor<7x16xf16>, %v: tensor<7x8xf16>) -> tensor<7x8xf16> {
  %o, %s, %z = linattn.scan forward %q, %q, %v normalize(eps = 1.0e-06) : tensor<7x16xf16>, tensor<7x16xf16>, tensor<7x8xf16> -> tensor<7x8xf16>, tensor<16x8xf16>, tensor<16xf16>
  return %o : tensor<7x8xf16>
}

// CHECK-LABEL: llvm.func @linattn_scan_forward_features_1(
//       CHECK: llvm.fpext %{{.*}} : bf16 to f32
//       CHECK: nvvm.shfl.sync bfly %{{.*}} : f32 -> f32
//       CHECK: llvm.fptrunc %{{.*}} : f32 to bf16
func.func @bf16_state(%q: tensor<7x16xbf16>, %v: tensor<7x8xbf16>) -> tensor<7x8xbf16> {
  %o, %s, %z = linattn.scan forward %q, %q, %v : tensor<7x16xbf16>, tensor<7x16xbf16>, tensor<7x8xbf16> -> tensor<7x8xbf16>, tensor<16x8xbf16>, tensor<16xbf16>
  return %o : tensor<7x8xbf16>
}
