// RUN: linattn-opt %s -split-input-file --convert-linattn-to-gpu="sequence-parallel-blocks=0" --canonicalize --cse | FileCheck %s
// RUN: linattn-opt %s -split-input-file --convert-linattn-to-gpu="sequence-parallel-blocks=0 async-copies=false" --canonicalize --cse | FileCheck %s --check-prefix=SYNC
// RUN: linattn-opt %s -split-input-file --convert-linattn-to-gpu="sequence-parallel-blocks=1000000 min-segment-tokens=0" --canonicalize --cse | FileCheck %s --check-prefix=SEGMENTS
// RUN: linattn-opt %s -split-input-file --convert-linattn-to-gpu="sequence-parallel-blocks=0 async-copies=false" --canonicalize --cse | FileCheck %s --check-prefix=RECURRENT
// RUN: linattn-opt %s -split-input-file --convert-linattn-to-gpu="sequence-parallel-blocks=0" --canonicalize --cse | FileCheck %s --check-prefix=ASYNC-RECURRENT

// Values that are an elementwise feature map (the gradients' scans take
// φ(Q) and φ(K) as values): the chunked kernels read the map's input and
// apply the map as they stage V_c, so that no kernel writes φ and none
// reads it back. With async copies each thread maps the groups it copied
// once they land (after cp.async.wait_group), zeros past the sequence and
// Dv kept (elu + 1 of 0 is 1); staged synchronously, as they are loaded.
// The queries and keys here are features: the only exp is the values'.
// CHECK-LABEL: func.func @elu_values(
//  CHECK-SAME: %{{.*}}: tensor<2x?x64xbf16>, %{{.*}}: tensor<2x?x64xbf16>, %[[X:.*]]: tensor<2x?x64xbf16>)
//   CHECK-NOT: linattn.feature_map
//       CHECK: %[[XM:.*]] = linattn.read_buffer %[[X]]
//       CHECK: %[[XF:.*]] = memref.reinterpret_cast %[[XM]]
//   CHECK-NOT: call @__linattn_launch_linattn_feature_map
//       CHECK: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[XF]],
//   CHECK-NOT: call @__linattn_launch_linattn_feature_map
//       CHECK: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//       CHECK:   nvvm.cp.async.wait.group 1
//   CHECK-NOT:   nvvm.cp.async.wait.group
//       CHECK:   llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
//   CHECK-NOT: gpu.func @linattn_feature_map

// SYNC-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//   SYNC-NOT:   nvvm.cp.async
//       SYNC:   llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
//   SYNC-NOT: gpu.func @linattn_feature_map

// Sequence-parallel: the segment states, which stage V_c too, read the
// map's input as well.
// SEGMENTS-LABEL: func.func @elu_values(
//   SEGMENTS-NOT: call @__linattn_launch_linattn_feature_map
//       SEGMENTS: call @__linattn_launch_linattn_scan_segment_states_forward_features_0(
//   SEGMENTS-NOT: call @__linattn_launch_linattn_feature_map
//       SEGMENTS: gpu.func @linattn_scan_segment_states_forward_features_0(
//       SEGMENTS:   llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
func.func @elu_values(%fq: tensor<2x?x64xbf16>, %fk: tensor<2x?x64xbf16>, %x: tensor<2x?x64xbf16>) -> tensor<2x?x64xbf16> {
  %v = linattn.feature_map elu %x : tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x64xbf16>, tensor<2x?x64xbf16>, tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x?x64xbf16>
}

// -----

// φ that something else reads too is still written by a kernel of its own
// (the scan applies the map all the same).
// CHECK-LABEL: func.func @returned_values(
//       CHECK: call @__linattn_launch_linattn_feature_map_relu
// SYNC-LABEL: func.func @returned_values(
//       SYNC: call @__linattn_launch_linattn_feature_map_relu
func.func @returned_values(%fq: tensor<2x?x64xbf16>, %fk: tensor<2x?x64xbf16>, %x: tensor<2x?x64xbf16>) -> (tensor<2x?x64xbf16>, tensor<2x?x64xbf16>) {
  %v = linattn.feature_map relu %x : tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x64xbf16>, tensor<2x?x64xbf16>, tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o, %v : tensor<2x?x64xbf16>, tensor<2x?x64xbf16>
}

// -----

// The strict-fp32 recurrent scan likewise: staged synchronously (RECURRENT)
// each value is mapped as it is loaded; with async copies each thread maps
// the groups of the block's columns it copied once they land.
// RECURRENT-LABEL: func.func @f32_values(
//  RECURRENT-SAME: %{{.*}}: tensor<2x?x64xf32>, %{{.*}}: tensor<2x?x64xf32>, %[[X:.*]]: tensor<2x?x64xf32>)
//       RECURRENT: %[[XM:.*]] = linattn.read_buffer %[[X]]
//       RECURRENT: %[[XF:.*]] = memref.reinterpret_cast %[[XM]]
//   RECURRENT-NOT: call @__linattn_launch_linattn_feature_map
//       RECURRENT: call @__linattn_launch_linattn_scan_forward_features_0(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[XF]],
//       RECURRENT: gpu.func @linattn_scan_forward_features_0(
//       RECURRENT:   math.exp
//   RECURRENT-NOT: gpu.func @linattn_feature_map
// ASYNC-RECURRENT-LABEL: gpu.func @linattn_scan_forward_features_0(
//       ASYNC-RECURRENT:   nvvm.cp.async.wait.group 1
//       ASYNC-RECURRENT:   math.exp
//   ASYNC-RECURRENT-NOT: gpu.func @linattn_feature_map
func.func @f32_values(%fq: tensor<2x?x64xf32>, %fk: tensor<2x?x64xf32>, %x: tensor<2x?x64xf32>) -> tensor<2x?x64xf32> {
  %v = linattn.feature_map elu %x : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x64xf32>, tensor<2x?x64xf32>, tensor<2x?x64xf32> -> tensor<2x?x64xf32>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x?x64xf32>
}
