// RUN: linattn-opt %s --convert-linattn-to-gpu --canonicalize --cse -split-input-file | FileCheck %s
// RUN: linattn-opt %s --convert-linattn-to-gpu="small-grid-value-tile=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=OFF
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SPB0
// RUN: not linattn-opt %s --convert-linattn-to-gpu="small-grid-value-tile=48" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// small-grid-value-tile: where the sequence is too short for segments (one
// segment: the batch-parallel chunk loop) and a grid of 32-column value
// tiles stays within half of sequence-parallel-blocks (132, a block per
// H100 SM), the chunk loop takes tiles of 32 columns instead of 64, so that
// fewer SMs sit idle. Static sizes decide at compile time, dynamic ones at
// run time. The segments' kernels keep their tiles.

// BAD: small-grid-value-tile must be 0, 8, 16, 32 or 64

// B = 8, Dv = 64: 16 blocks of 32 columns (128 threads: chunks of 64 on four
// warps) instead of 8 of 64.
// CHECK-LABEL: func.func @small(
//       CHECK:   scf.if
//       CHECK:     call @__linattn_launch_linattn_scan_segment_outputs_wide_forward_elu_2(%c8, %c1,
//       CHECK:   } else {
//  CHECK-NEXT:     linattn.read_buffer
//       CHECK:     call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_3(%c8, %c2, %c1, %c128, %c1, %c1,
//   CHECK-NOT:     call @
//       CHECK:   return
//       CHECK: gpu.func @linattn_scan_chunked_wide_forward_elu_3(
//  CHECK-SAME:   known_block_size = array<i32: 128, 1, 1>
// OFF-LABEL: func.func @small(
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

// A dynamic batch at F = Dv = 128: the choice at run time, B·4 tiles of 32
// columns (chunks of 32 on two warps) within 132 blocks, else B·2 of 64.
// CHECK-LABEL: func.func @dynamic_batch(
//       CHECK:   %[[B:.*]] = tensor.dim %{{.*}}, %c0 : tensor<?x?x128xbf16>
//       CHECK:   } else {
//       CHECK:     %[[SMALL:.*]] = arith.muli %[[B]], %c4 : index
//  CHECK-NEXT:     %[[FITS:.*]] = arith.cmpi ule, %[[SMALL]], %c132 : index
//  CHECK-NEXT:     scf.if %[[FITS]]
//       CHECK:       call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_3(%{{.*}}, %c4, %c1, %c64, %c1, %c1,
//       CHECK:     } else {
//       CHECK:       call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_4(%{{.*}}, %c2, %c1, %c128, %c1, %c1,
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

// The limit: 66 · 2 = 132 blocks take the tiles of 32, 67 · 2 = 134 not.
// CHECK-LABEL: func.func @at_limit(
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
//       CHECK:   } else {
//       CHECK:     call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_3(%c67, %c1, %c1, %c128, %c1, %c1,
func.func @past_limit(%q: tensor<67x?x64xbf16>, %k: tensor<67x?x64xbf16>, %v: tensor<67x?x64xbf16>) -> tensor<67x?x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<67x?x64xbf16> -> tensor<67x?x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<67x?x64xbf16> -> tensor<67x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<67x?x64xbf16>, tensor<67x?x64xbf16>, tensor<67x?x64xbf16> -> tensor<67x?x64xbf16>, tensor<67x64x64xf32>, tensor<67x64xf32>
  return %o : tensor<67x?x64xbf16>
}

// -----

// Nothing narrower to take: F = 256 already has tiles of 32 (two for Dv =
// 64), Dv = 32 one tile of 32. One chunk loop each.
// CHECK-LABEL: func.func @wide_features(
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

// CHECK-LABEL: func.func @one_tile(
//       CHECK:   } else {
//       CHECK:     call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_3(%c2, %c1, %c1, %c128, %c1, %c1,
//   CHECK-NOT:   gpu.func @linattn_scan_chunked_wide_forward_elu_4(
func.func @one_tile(%q: tensor<2x?x64xbf16>, %k: tensor<2x?x64xbf16>, %v: tensor<2x?x32xbf16>) -> tensor<2x?x32xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x64xbf16>, tensor<2x?x64xbf16>, tensor<2x?x32xbf16> -> tensor<2x?x32xbf16>, tensor<2x64x32xf32>, tensor<2x64xf32>
  return %o : tensor<2x?x32xbf16>
}
