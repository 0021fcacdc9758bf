// RUN: linattn-opt %s --convert-linattn-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// With host-fallback (the default) an op that gets no GPU kernel stays for
// the host lowering, where it runs on the CPU; a remark says why, so that
// an option that rules its kernel out is not a silent slowdown. Without
// host-fallback the same ops are errors (convert-linattn-to-gpu-invalid).

// One lane per column (scan-feature-lanes=1 would take it too at F = 256):
// 520 features in four lanes are 130 registers a thread.
// CHECK-LABEL: func.func @wide_state(
//       CHECK: linattn.scan forward
//   CHECK-NOT: call @__linattn_launch
func.func @wide_state(%fq: tensor<7x520xf32>, %fk: tensor<7x520xf32>, %v: tensor<7x8xf32>) -> tensor<7x8xf32> {
  // expected-remark @+1 {{has no GPU kernel: the state column (F = 520, 130 per thread) does not fit the scan's register budget of 128 registers; left to the host lowering (host-fallback)}}
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<7x520xf32>, tensor<7x520xf32>, tensor<7x8xf32> -> tensor<7x8xf32>, tensor<520x8xf32>, tensor<520xf32>
  return %o : tensor<7x8xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_features(
//       CHECK: linattn.kv_summary
func.func @dynamic_features(%k: tensor<2x7x?xf32>, %v: tensor<2x7x8xf32>) -> tensor<2x?x8xf32> {
  // expected-remark @+1 {{has no GPU kernel: the feature size must be static; left to the host lowering (host-fallback)}}
  %s, %z = linattn.kv_summary %k, %v : tensor<2x7x?xf32>, tensor<2x7x8xf32> -> tensor<2x?x8xf32>, tensor<2x?xf32>
  return %s : tensor<2x?x8xf32>
}

// -----

// An op with a kernel makes no remark.
// CHECK-LABEL: func.func @kernel(
//       CHECK: call @__linattn_launch_linattn_scan_forward_features_0(
func.func @kernel(%fq: tensor<7x16xf32>, %fk: tensor<7x16xf32>, %v: tensor<7x8xf32>) -> tensor<7x8xf32> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<7x16xf32>, tensor<7x16xf32>, tensor<7x8xf32> -> tensor<7x8xf32>, tensor<16x8xf32>, tensor<16xf32>
  return %o : tensor<7x8xf32>
}
