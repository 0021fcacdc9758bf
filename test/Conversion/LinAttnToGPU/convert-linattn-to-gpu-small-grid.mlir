// wgmma-chunks=false: the unnormalized bf16 chunk loops at F = 128 are the
// portable ones (chunks of 32, mma.sync), as sm_80 and the normalized scan
// take them; sm_90's default chunks of 64 there:
// convert-linattn-to-gpu-wgmma-chunks.mlir.
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false" --canonicalize --cse -split-input-file | FileCheck %s
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false small-grid-value-tile=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=OFF
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SPB0
// RUN: not linattn-opt %s --convert-linattn-to-gpu="small-grid-value-tile=48" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// small-grid-value-tile: where a grid of 32-column value tiles stays within
// half of sequence-parallel-blocks (132, a block per H100 SM), the chunk
// loop takes tiles of 32 columns instead of 64, so that fewer SMs sit idle:
// the batch-parallel kernel of a sequence too short for segments, and the
// segments' outputs where the floor on segments (1024 tokens) caps their
// count. Static sizes decide at compile time, dynamic ones at run time. The
// segment states keep their tiles.

// BAD: small-grid-value-tile must be 0, 8, 16, 32 or 64

// B = 8, Dv = 64: 16 blocks of 32 columns (128 threads: chunks of 64 on four
// warps) instead of 8 of 64; segmented, the outputs' tiles of 32 while B · 2
// tiles · segments stays within 132 (the segments decided at run time).
// CHECK-LABEL: func.func @small(
//       CHECK:   scf.if
//       CHECK:     call @__linattn_launch_linattn_scan_segment_states_forward_elu_0(%c8, %c1,
//       CHECK:     call @__linattn_launch_linattn_scan_segment_prefix_forward_elu_1(
//       CHECK:     %[[BLOCKS:.*]] = arith.muli %{{.*}}, %c16 : index
//  CHECK-NEXT:     %[[FITS:.*]] = arith.cmpi ule, %[[BLOCKS]], %c132 : index
//  CHECK-NEXT:     scf.if %[[FITS]]
//       CHECK:       call @__linattn_launch_linattn_scan_segment_outputs_wide_forward_elu_2(%c8, %c2, %[[SEGS:.*]], %c128, %c1, %c1,
//       CHECK:     } else {
//       CHECK:       call @__linattn_launch_linattn_scan_segment_outputs_wide_forward_elu_3(%c8, %c1, %[[SEGS]], %c128, %c1, %c1,
//       CHECK:   } else {
//  CHECK-NEXT:     linattn.read_buffer
//       CHECK:     call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_4(%c8, %c2, %c1, %c128, %c1, %c1,
//   CHECK-NOT:     call @
//       CHECK:   return
//       CHECK: gpu.func @linattn_scan_chunked_wide_forward_elu_4(
//  CHECK-SAME:   known_block_size = array<i32: 128, 1, 1>
// OFF-LABEL: func.func @small(
//   OFF-NOT:   arith.cmpi ule
//       OFF:   call @__linattn_launch_linattn_scan_segment_outputs_wide_forward_elu_2(%c8, %c1,
//       OFF:   } else {
//       OFF:     call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_3(%c8, %c1, %c1, %c128, %c1, %c1,
// SPB0-LABEL: func.func @small(
//   SPB0-NOT:   scf.if
//       SPB0:   call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_0(%c8, %c1, %c1, %c128, %c1, %c1,
func.func @small(%q: tensor<8x?x64xbf16>, %k: tensor<8x?x64xbf16>, %v: tensor<8x?x64xbf16>) -> tensor<8x?x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<8x?x64xbf16> -> tensor<8x?x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<8x?x64xbf16> -> tensor<8x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<8x?x64xbf16>, tensor<8x?x64xbf16>, tensor<8x?x64xbf16> -> tensor<8x?x64xbf16>, tensor<8x64x64xf32>, tensor<8x64xf32>
  return %o : tensor<8x?x64xbf16>
}

// -----

// Static: 4096 tokens in 4 segments of 1024 (the floor; 264 / 8 asks for
// 33), 8 · 2 · 4 = 64 blocks of 32 columns for the outputs; the segment
// states keep one tile of 64.
// CHECK-LABEL: func.func @capped(
//   CHECK-NOT:   scf.if
//       CHECK:   call @__linattn_launch_linattn_scan_segment_states_forward_elu_0(%c8, %c1, %c3,
//       CHECK:   call @__linattn_launch_linattn_scan_segment_outputs_wide_forward_elu_2(%c8, %c2, %c4, %c128, %c1, %c1,
//   CHECK-NOT:   call @
// OFF-LABEL: func.func @capped(
//       OFF:   call @__linattn_launch_linattn_scan_segment_outputs_wide_forward_elu_2(%c8, %c1, %c4, %c128, %c1, %c1,
func.func @capped(%q: tensor<8x4096x64xbf16>, %k: tensor<8x4096x64xbf16>, %v: tensor<8x4096x64xbf16>) -> tensor<8x4096x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<8x4096x64xbf16> -> tensor<8x4096x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<8x4096x64xbf16> -> tensor<8x4096x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<8x4096x64xbf16>, tensor<8x4096x64xbf16>, tensor<8x4096x64xbf16> -> tensor<8x4096x64xbf16>, tensor<8x64x64xf32>, tensor<8x64xf32>
  return %o : tensor<8x4096x64xbf16>
}

// -----

// A dynamic batch at F = Dv = 128: the choice at run time, B · 4 tiles of 32
// columns (chunks of 32 on two warps, as the tiles of 64 take) within 132
// blocks, else B · 2 of 64; the same for the segments' outputs.
// CHECK-LABEL: func.func @dynamic_batch(
//       CHECK:   %[[B:.*]] = tensor.dim %{{.*}}, %c0 : tensor<?x?x128xbf16>
//       CHECK:     call @__linattn_launch_linattn_scan_segment_outputs_wide_forward_elu_2(%[[B]], %c4, %{{.*}}, %c64, %c1, %c1,
//       CHECK:     call @__linattn_launch_linattn_scan_segment_outputs_wide_forward_elu_3(%[[B]], %c2, %{{.*}}, %c128, %c1, %c1,
//       CHECK:   } else {
//       CHECK:     %[[SMALL:.*]] = arith.muli %[[B]], %c4 : index
//  CHECK-NEXT:     %[[FITS:.*]] = arith.cmpi ule, %[[SMALL]], %c132 : index
//  CHECK-NEXT:     scf.if %[[FITS]]
//       CHECK:       call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_4(%[[B]], %c4, %c1, %c64, %c1, %c1,
//       CHECK:     } else {
//       CHECK:       call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_5(%[[B]], %c2, %c1, %c128, %c1, %c1,
// OFF-LABEL: func.func @dynamic_batch(
//   OFF-NOT:   arith.cmpi ule
//       OFF:   call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_3(%{{.*}}, %c2, %c1, %c128, %c1, %c1,
//   OFF-NOT:   call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_4
func.func @dynamic_batch(%q: tensor<?x?x128xbf16>, %k: tensor<?x?x128xbf16>, %v: tensor<?x?x128xbf16>) -> tensor<?x?x128xbf16> {
  %fq = linattn.feature_map elu %q : tensor<?x?x128xbf16> -> tensor<?x?x128xbf16>
  %fk = linattn.feature_map elu %k : tensor<?x?x128xbf16> -> tensor<?x?x128xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<?x?x128xbf16>, tensor<?x?x128xbf16>, tensor<?x?x128xbf16> -> tensor<?x?x128xbf16>, tensor<?x128x128xf32>, tensor<?x128xf32>
  return %o : tensor<?x?x128xbf16>
}

// -----

// The limit: 66 · 2 = 132 blocks take the tiles of 32, 67 · 2 = 134 not;
// with at least two segments neither's outputs can, so one outputs kernel.
// CHECK-LABEL: func.func @at_limit(
//   CHECK-NOT:   arith.cmpi ule
//       CHECK:     call @__linattn_launch_linattn_scan_segment_outputs_wide_forward_elu_2(%c66, %c1,
//       CHECK:   } else {
//       CHECK:     call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_3(%c66, %c2, %c1, %c128, %c1, %c1,
func.func @at_limit(%q: tensor<66x?x64xbf16>, %k: tensor<66x?x64xbf16>, %v: tensor<66x?x64xbf16>) -> tensor<66x?x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<66x?x64xbf16> -> tensor<66x?x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<66x?x64xbf16> -> tensor<66x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<66x?x64xbf16>, tensor<66x?x64xbf16>, tensor<66x?x64xbf16> -> tensor<66x?x64xbf16>, tensor<66x64x64xf32>, tensor<66x64xf32>
  return %o : tensor<66x?x64xbf16>
}

// -----

// CHECK-LABEL: func.func @past_limit(
//   CHECK-NOT:   arith.cmpi ule
//       CHECK:   } else {
//       CHECK:     call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_3(%c67, %c1, %c1, %c128, %c1, %c1,
func.func @past_limit(%q: tensor<67x?x64xbf16>, %k: tensor<67x?x64xbf16>, %v: tensor<67x?x64xbf16>) -> tensor<67x?x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<67x?x64xbf16> -> tensor<67x?x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<67x?x64xbf16> -> tensor<67x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<67x?x64xbf16>, tensor<67x?x64xbf16>, tensor<67x?x64xbf16> -> tensor<67x?x64xbf16>, tensor<67x64x64xf32>, tensor<67x64xf32>
  return %o : tensor<67x?x64xbf16>
}

// -----

// Nothing narrower to take: F = 256 already has tiles of 32 (two for
// Dv = 64). One chunk loop of each kind.
// CHECK-LABEL: func.func @wide_features(
//   CHECK-NOT:   arith.cmpi ule
//       CHECK:   } else {
//       CHECK:     call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_3(%c2, %c2, %c1, %c128, %c1, %c1,
//   CHECK-NOT:   gpu.func @linattn_scan_chunked_wide_forward_elu_4(
func.func @wide_features(%q: tensor<2x?x256xbf16>, %k: tensor<2x?x256xbf16>, %v: tensor<2x?x64xbf16>) -> tensor<2x?x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x?x256xbf16> -> tensor<2x?x256xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x?x256xbf16> -> tensor<2x?x256xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x256xbf16>, tensor<2x?x256xbf16>, tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>, tensor<2x256x64xf32>, tensor<2x256xf32>
  return %o : tensor<2x?x64xbf16>
}

// -----

// Dv = 32 in tiles of 64 or of 32 is one block either way, and the tile of
// 32 does half the work: the batch-parallel kernel takes it (statically:
// 2 blocks), the segments' outputs where 2 · segments stays within 132.
// CHECK-LABEL: func.func @one_tile(
//       CHECK:     arith.cmpi ule
//       CHECK:     call @__linattn_launch_linattn_scan_segment_outputs_wide_forward_elu_2(%c2, %c1,
//       CHECK:     call @__linattn_launch_linattn_scan_segment_outputs_wide_forward_elu_3(%c2, %c1,
//       CHECK:   } else {
//       CHECK:     call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_4(%c2, %c1, %c1, %c128, %c1, %c1,
//   CHECK-NOT:   gpu.func @linattn_scan_chunked_wide_forward_elu_5(
func.func @one_tile(%q: tensor<2x?x64xbf16>, %k: tensor<2x?x64xbf16>, %v: tensor<2x?x32xbf16>) -> tensor<2x?x32xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x64xbf16>, tensor<2x?x64xbf16>, tensor<2x?x32xbf16> -> tensor<2x?x32xbf16>, tensor<2x64x32xf32>, tensor<2x64xf32>
  return %o : tensor<2x?x32xbf16>
}
