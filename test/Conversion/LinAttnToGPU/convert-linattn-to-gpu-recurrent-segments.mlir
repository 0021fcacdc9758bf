// RUN: linattn-opt %s --convert-linattn-to-gpu --canonicalize --cse -split-input-file | FileCheck %s
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=NEVER
// RUN: linattn-opt %s --convert-linattn-to-gpu="min-segment-tokens=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=MIN0
// RUN: linattn-opt %s --convert-linattn-to-gpu="scan-tile=512" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=TILE512
// RUN: linattn-opt %s --convert-linattn-to-gpu="scan-tile=32" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=TILE32

// The recurrent scan (f32 data) sequence-parallel: where batch × value tiles
// stay below half of sequence-parallel-blocks (264 by default), the sequence
// splits into segments of whole staged blocks of tokens, none shorter than
// min-segment-tokens (1024), enough to reach the target. Three launches:
// each segment's contribution to S and z (grid batch × value tiles ×
// segments, no queries, no outputs; the last segment's left out where the
// final S and z are unused), the scan over the segments, each segment's
// outputs from its starting state.

// B2 · Dv 64: 2 × 2 blocks of 32 columns. Blocks of 31 tokens (F = 64,
// normalized, two slots): 133 of them, segments of at least 34 (1024
// tokens), so 3 segments of 45 blocks, the first 2 of them contributing.
// CHECK-LABEL: func.func @split(
//  CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4096x64xf32>, %[[K:[a-z0-9]+]]: tensor<2x4096x64xf32>, %[[V:[a-z0-9]+]]: tensor<2x4096x64xf32>)
//   CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
//   CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
//   CHECK-DAG: %[[C45:.*]] = arith.constant 45 : index
//   CHECK-DAG: %[[C4096:.*]] = arith.constant 4096 : index
//   CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
//   CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
//       CHECK: %[[H:.*]] = memref.alloc() : memref<24576xf32>
//       CHECK: %[[HZ:.*]] = memref.alloc() : memref<384xf32>
//       CHECK: call @__linattn_launch_linattn_scan_segment_states_forward_elu_normalized_0(%[[C2]], %[[C2]], %[[C2]], %[[C128]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C4096]], %[[C64]], %[[C45]], %[[C3]])
//       CHECK: memref.alloc() : memref<24576xf32>
//       CHECK: memref.alloc() : memref<384xf32>
//       CHECK: call @__linattn_launch_linattn_scan_segment_prefix_forward_elu_normalized_1(
//       CHECK: call @__linattn_launch_linattn_scan_segment_outputs_forward_elu_normalized_2(%[[C2]], %[[C2]], %[[C3]], %[[C128]], {{.*}}, %[[C4096]], %[[C64]], %[[C45]], %[[C3]])
//   CHECK-NOT: call @
//       CHECK: return
// The contributions: k, v, the two sums, N, Dv, blocks per segment and
// segments; no φ(q) staged (one word), no denominators, no readout.
//       CHECK: gpu.func @linattn_scan_segment_states_forward_elu_normalized_0(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) workgroup(%{{.*}} : memref<1xf32, #gpu.address_space<workgroup>>
//       CHECK: gpu.block_id  z
//       CHECK: scf.for
//   CHECK-NOT: gpu.shuffle
//   CHECK-NOT: arith.divf
//       CHECK: gpu.return
// The scan adds the contributions of segments 0 .. segments - 2, storing
// each segment's prefix, and stores the last one's after the loop.
//       CHECK: gpu.func @linattn_scan_segment_prefix_forward_elu_normalized_1(%[[H:.*]]: memref<?xf32>, %{{.*}}: memref<?xf32>, %[[P:.*]]: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index, %[[SEGMENTS:.*]]: index)
//       CHECK: %[[ADDED:.*]] = arith.subi %[[SEGMENTS]], %c1
//       CHECK: %[[SUM:.*]] = scf.for %{{.*}} = %c0 to %[[ADDED]] step %c1 iter_args(%[[PREFIX:.*]] = %{{.*}})
//       CHECK: memref.load %[[H]]
//       CHECK: memref.store %[[PREFIX]], %[[P]]
//       CHECK: scf.yield
//       CHECK: memref.store %[[SUM]], %[[P]]
//       CHECK: gpu.func @linattn_scan_segment_outputs_forward_elu_normalized_2(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index)
//       CHECK: gpu.block_id  z
//       CHECK: gpu.shuffle
//       CHECK: arith.divf
// NEVER-LABEL: func.func @split(
//       NEVER: call @__linattn_launch_linattn_scan_forward_elu_normalized_0(
//   NEVER-NOT: segment
func.func @split(%q: tensor<2x4096x64xf32>, %k: tensor<2x4096x64xf32>, %v: tensor<2x4096x64xf32>) -> tensor<2x4096x64xf32> {
  %fq = linattn.feature_map elu %q : tensor<2x4096x64xf32> -> tensor<2x4096x64xf32>
  %fk = linattn.feature_map elu %k : tensor<2x4096x64xf32> -> tensor<2x4096x64xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x4096x64xf32>, tensor<2x4096x64xf32>, tensor<2x4096x64xf32> -> tensor<2x4096x64xf32>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x4096x64xf32>
}

// -----

// Sequences shorter than two segments of 1024 tokens stay in one block per
// batch element. Without the floor the target asks for 66 segments (4
// blocks × 66 reach 264), and the 2000 tokens make 65 blocks of 31: 65
// segments of one block (64 of them contributing: S and z are unused).
// CHECK-LABEL: func.func @short(
//       CHECK: call @__linattn_launch_linattn_scan_forward_features_normalized_0(
//   CHECK-NOT: segment
// MIN0-LABEL: func.func @short(
//   MIN0-DAG: %[[C1:.*]] = arith.constant 1 : index
//   MIN0-DAG: %[[C2:.*]] = arith.constant 2 : index
//   MIN0-DAG: %[[C64:.*]] = arith.constant 64 : index
//   MIN0-DAG: %[[C65:.*]] = arith.constant 65 : index
//       MIN0: call @__linattn_launch_linattn_scan_segment_states_forward_features_normalized_0(%[[C2]], %[[C2]], %[[C64]], {{.*}}, %[[C1]], %[[C65]])
func.func @short(%q: tensor<2x2000x64xf32>, %k: tensor<2x2000x64xf32>, %v: tensor<2x2000x64xf32>) -> tensor<2x2000x64xf32> {
  %o, %s, %z = linattn.scan forward %q, %k, %v normalize(eps = 1.0e-6) : tensor<2x2000x64xf32>, tensor<2x2000x64xf32>, tensor<2x2000x64xf32> -> tensor<2x2000x64xf32>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x2000x64xf32>
}

// -----

// 66 × 2 = 132 blocks reach half of the target: batch-parallel. 65 × 2 do
// not: 3 segments.
// CHECK-LABEL: func.func @boundary(
//       CHECK: call @__linattn_launch_linattn_scan_forward_features_normalized_0(
//   CHECK-NOT: segment
func.func @boundary(%q: tensor<66x4096x64xf32>, %k: tensor<66x4096x64xf32>, %v: tensor<66x4096x64xf32>) -> tensor<66x4096x64xf32> {
  %o, %s, %z = linattn.scan forward %q, %k, %v normalize(eps = 1.0e-6) : tensor<66x4096x64xf32>, tensor<66x4096x64xf32>, tensor<66x4096x64xf32> -> tensor<66x4096x64xf32>, tensor<66x64x64xf32>, tensor<66x64xf32>
  return %o : tensor<66x4096x64xf32>
}

// Blocks of 32 threads (8 value columns) count a quarter each: 66 × 8 =
// 528 of them are 132 blocks of 128 threads, batch-parallel; 65 × 8 = 520
// split, into ⌈1056 / 520⌉ = 3 segments of 45 staged blocks.
// TILE32-LABEL: func.func @boundary(
//       TILE32: call @__linattn_launch_linattn_scan_forward_features_normalized_0(%c66, %c8, %c1, %c32,
//   TILE32-NOT: segment
// TILE32-LABEL: func.func @below(
//   TILE32-DAG: %[[C3:.*]] = arith.constant 3 : index
//   TILE32-DAG: %[[C8:.*]] = arith.constant 8 : index
//   TILE32-DAG: %[[C65:.*]] = arith.constant 65 : index
//       TILE32: call @__linattn_launch_linattn_scan_segment_states_forward_features_normalized_0(%[[C65]], %[[C8]], %{{.*}}, %c32,
//  TILE32-SAME: %[[C3]]) :

// -----

// CHECK-LABEL: func.func @below(
//   CHECK-DAG: %[[C65:.*]] = arith.constant 65 : index
//   CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
//       CHECK: call @__linattn_launch_linattn_scan_segment_states_forward_features_normalized_0(%[[C65]], %[[C2]], %[[C2]],
func.func @below(%q: tensor<65x4096x64xf32>, %k: tensor<65x4096x64xf32>, %v: tensor<65x4096x64xf32>) -> tensor<65x4096x64xf32> {
  %o, %s, %z = linattn.scan forward %q, %k, %v normalize(eps = 1.0e-6) : tensor<65x4096x64xf32>, tensor<65x4096x64xf32>, tensor<65x4096x64xf32> -> tensor<65x4096x64xf32>, tensor<65x64x64xf32>, tensor<65x64xf32>
  return %o : tensor<65x4096x64xf32>
}

// -----

// A reverse scan from an initial state whose final S and z are used: the
// scan over the segments starts from s0 and z0 and writes S and z (its
// results are the op's); unnormalized, the contributions still sum z for
// the final normalizer. Dv = 16 is one block: 7 segments of 19 blocks of
// 62 tokens, all 7 contributing (to S and z).
// CHECK-LABEL: func.func @state(
//  CHECK-SAME: %[[S0:[a-z0-9]+]]: tensor<2x32x16xf32>, %[[Z0:[a-z0-9]+]]: tensor<2x32xf32>)
//   CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
//   CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
//   CHECK-DAG: %[[C19:.*]] = arith.constant 19 : index
//       CHECK: call @__linattn_launch_linattn_scan_segment_states_reverse_features_0(%[[C2]], %[[C1]], %[[C7]], {{.*}}, %[[C19]], %[[C7]])
//       CHECK: linattn.read_buffer %[[S0]]
//       CHECK: linattn.read_buffer %[[Z0]]
//       CHECK: %[[S:.*]] = memref.alloc() : memref<2x32x16xf32>
//       CHECK: %[[Z:.*]] = memref.alloc() : memref<2x32xf32>
//       CHECK: call @__linattn_launch_linattn_scan_segment_prefix_reverse_features_1(
//       CHECK: %[[ST:.*]] = bufferization.to_tensor %[[S]]
//       CHECK: %[[ZT:.*]] = bufferization.to_tensor %[[Z]]
//       CHECK: call @__linattn_launch_linattn_scan_segment_outputs_reverse_features_2({{.*}}, %[[C19]], %[[C7]])
//       CHECK: return %{{.*}}, %[[ST]], %[[ZT]]
// The contributions' z, one feature per thread, written by the first value
// tile's blocks; the scan over all of them, to S.
// CHECK-LABEL: gpu.func @linattn_scan_segment_states_reverse_features_0(
//       CHECK: gpu.block_id  y
//       CHECK: arith.addf
//       CHECK: gpu.return
// CHECK-LABEL: gpu.func @linattn_scan_segment_prefix_reverse_features_1(
//  CHECK-SAME: %[[SEGMENTS:[a-z0-9]+]]: index) kernel
//   CHECK-NOT: arith.subi
//       CHECK: scf.for %{{.*}} = %c0 to %[[SEGMENTS]] step %c1
//       CHECK: gpu.return
func.func @state(%q: tensor<2x8192x32xf32>, %k: tensor<2x8192x32xf32>, %v: tensor<2x8192x16xf32>, %s0: tensor<2x32x16xf32>, %z0: tensor<2x32xf32>) -> (tensor<2x8192x16xf32>, tensor<2x32x16xf32>, tensor<2x32xf32>) {
  %o, %s, %z = linattn.scan reverse %q, %k, %v init(%s0, %z0) : tensor<2x8192x32xf32>, tensor<2x8192x32xf32>, tensor<2x8192x16xf32>, tensor<2x32x16xf32>, tensor<2x32xf32> -> tensor<2x8192x16xf32>, tensor<2x32x16xf32>, tensor<2x32xf32>
  return %o, %s, %z : tensor<2x8192x16xf32>, tensor<2x32x16xf32>, tensor<2x32xf32>
}

// -----

// Blocks of 512 threads (128 value columns, a whole head here) are each
// all an SM holds: they aim at one per SM, 132, and no more. 66 of them
// reach half of that, batch-parallel; 65 split into ⌊132 / 65⌋ = 2
// segments, 130 blocks, where rounding up (3, 195 blocks) would start a
// second wave. With blocks of 128 threads (2 value tiles) the same
// batches are @boundary and @below: 132 blocks batch-parallel, 130 in 3
// segments (⌈264 / 130⌉).
// TILE512-LABEL: func.func @whole_head(
//       TILE512: call @__linattn_launch_linattn_scan_forward_features_normalized_{{[0-9]+}}(%c66, %c1, %c1, %c512,
//   TILE512-NOT: segment
// TILE512-LABEL: func.func @whole_head_split(
//       TILE512: call @__linattn_launch_linattn_scan_segment_states_forward_features_normalized_{{[0-9]+}}(%c65, %c1, %c1, %c512,
//       TILE512: call @__linattn_launch_linattn_scan_segment_outputs_forward_features_normalized_{{[0-9]+}}(%c65, %c1, %c2, %c512,
// CHECK-LABEL: func.func @whole_head(
//       CHECK: call @__linattn_launch_linattn_scan_forward_features_normalized_{{[0-9]+}}(%c66, %c2, %c1, %c128,
// CHECK-LABEL: func.func @whole_head_split(
//       CHECK: call @__linattn_launch_linattn_scan_segment_outputs_forward_features_normalized_{{[0-9]+}}(%c65, %c2, %c3, %c128,
func.func @whole_head(%q: tensor<66x4096x64xf32>, %k: tensor<66x4096x64xf32>, %v: tensor<66x4096x64xf32>) -> tensor<66x4096x64xf32> {
  %o, %s, %z = linattn.scan forward %q, %k, %v normalize(eps = 1.0e-6) : tensor<66x4096x64xf32>, tensor<66x4096x64xf32>, tensor<66x4096x64xf32> -> tensor<66x4096x64xf32>, tensor<66x64x64xf32>, tensor<66x64xf32>
  return %o : tensor<66x4096x64xf32>
}
func.func @whole_head_split(%q: tensor<65x4096x64xf32>, %k: tensor<65x4096x64xf32>, %v: tensor<65x4096x64xf32>) -> tensor<65x4096x64xf32> {
  %o, %s, %z = linattn.scan forward %q, %k, %v normalize(eps = 1.0e-6) : tensor<65x4096x64xf32>, tensor<65x4096x64xf32>, tensor<65x4096x64xf32> -> tensor<65x4096x64xf32>, tensor<65x64x64xf32>, tensor<65x64xf32>
  return %o : tensor<65x4096x64xf32>
}

// -----

// N dynamic: both variants, chosen at run time; the batch-parallel kernel
// first, so that its name is the one a static N gives it.
// CHECK-LABEL: func.func @dynamic(
//       CHECK: %[[ONE:.*]] = arith.cmpi ule, %{{.*}}, %c1
//       CHECK: scf.if %[[ONE]]
//       CHECK: call @__linattn_launch_linattn_scan_forward_features_normalized_0(
//       CHECK: } else {
//       CHECK: call @__linattn_launch_linattn_scan_segment_states_forward_features_normalized_1(
//       CHECK: call @__linattn_launch_linattn_scan_segment_prefix_forward_features_normalized_2(
//       CHECK: call @__linattn_launch_linattn_scan_segment_outputs_forward_features_normalized_3(
// NEVER-LABEL: func.func @dynamic(
//   NEVER-NOT: scf.if
//       NEVER: call @__linattn_launch_linattn_scan_forward_features_normalized_0(
//   NEVER-NOT: segment
func.func @dynamic(%q: tensor<2x?x64xf32>, %k: tensor<2x?x64xf32>, %v: tensor<2x?x64xf32>) -> tensor<2x?x64xf32> {
  %o, %s, %z = linattn.scan forward %q, %k, %v normalize(eps = 1.0e-6) : tensor<2x?x64xf32>, tensor<2x?x64xf32>, tensor<2x?x64xf32> -> tensor<2x?x64xf32>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x?x64xf32>
}
