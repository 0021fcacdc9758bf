// small-grid-value-tile=0: the chunk loops of these small grids keep their
// value tiles (the narrower ones: Conversion/LinAttnToGPU/
// convert-linattn-to-gpu-small-grid.mlir).
// wgmma-chunks=false: the unnormalized bf16 chunk loops at F = 128 are the
// portable ones (chunks of 32, mma.sync), as sm_80 and the normalized scan
// take them; sm_90's default chunks of 64 there:
// convert-linattn-to-gpu-wgmma-chunks.mlir.
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false small-grid-value-tile=0" --canonicalize --cse -split-input-file | FileCheck %s
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false small-grid-value-tile=0 states-feature-split=false" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=UNSPLIT
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false small-grid-value-tile=0 tf32=true" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=TF32
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false small-grid-value-tile=0 tf32x3=true" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=TF32X3

// The segment states of F = 128 and Dv = 128, whose chunk loops take value
// tiles of 64 columns (chunks of 32, four warps): two blocks of a head and
// segment share out the features, 64 each with all 128 value columns, so
// that each maps and reads its half of φ(K_c) only. The staged tiles are
// φ(K_c) of 64 features (two slots of 32 x 72) and V_c of 128 columns (two
// of 32 x 136). A block's features start at 64 (grid y mod 2) in the rows
// of 128 of K, S and z; its value tile is grid y div 2. The outputs keep
// value tiles of 64: both launches have two blocks a head.

// CHECK-LABEL: func.func @split(
//       CHECK:   call @__linattn_launch_linattn_scan_segment_states_forward_elu_0(%c2, %c2,
//       CHECK:   call @__linattn_launch_linattn_scan_segment_outputs_wide_forward_elu_2(%c2, %c2,
//       CHECK: gpu.func @linattn_scan_segment_states_forward_elu_0(%[[K:[a-z0-9]+]]: memref<?xbf16>, %[[V:[a-z0-9]+]]: memref<?xbf16>, %[[H:[a-z0-9]+]]: memref<?xf32>, %[[Z:[a-z0-9]+]]: memref<?xf32>, %[[N:[a-z0-9]+]]: index, %[[DV:[a-z0-9]+]]: index, %[[PER:[a-z0-9]+]]: index, %[[SEGS:[a-z0-9]+]]: index)
//  CHECK-SAME:     workgroup(%[[KS:[a-z0-9]+]] : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[VS:[a-z0-9]+]] : memref<8704xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
//       CHECK:   %[[X:.*]] = gpu.block_id  x
//       CHECK:   %[[Y:.*]] = gpu.block_id  y
//       CHECK:   %[[TILE:.*]] = arith.divui %[[Y]], %c2 : index
//       CHECK:   %[[PART:.*]] = arith.remui %[[Y]], %c2 : index
//       CHECK:   %[[F0:.*]] = arith.muli %[[PART]], %c64 : index
//       CHECK:   %[[COL0:.*]] = arith.muli %[[TILE]], %c128 : index
// φ(K_c)'s rows: 128 features from the block's lowest row, its 64 from F0.
//       CHECK:   %[[ROWS:.*]] = arith.muli %{{.*}}, %c128 : index
//  CHECK-NEXT:   %[[KBASE:.*]] = arith.addi %[[ROWS]], %[[F0]] : index
// Copies of eight features: 32 tokens x 8 groups.
//       CHECK:   scf.for %[[G:.*]] = %{{.*}} to %c256 step %c128 {
//       CHECK:     %[[T:.*]] = arith.divui %[[G]], %c8 : index
//       CHECK:     arith.muli %{{.*}}, %c128 : index
//       CHECK:     %[[AT:.*]] = arith.addi %[[KBASE]], %{{.*}} : index
//       CHECK:     nvgpu.device_async_copy %[[K]][%[[AT]]], %[[KS]][%{{.*}}], 8, %{{.*}} {bypassL1}
// The state rows of the block: (batch·segments + segment)·128 + F0 + f.
//       CHECK:   %[[FIRST:.*]] = arith.muli %[[X]], %[[SEGS]] : index
//  CHECK-NEXT:   %[[SLOT:.*]] = arith.addi %[[FIRST]], %{{.*}} : index
//  CHECK-NEXT:   %[[SROWS:.*]] = arith.muli %[[SLOT]], %c128 : index
//  CHECK-NEXT:   %[[SROW0:.*]] = arith.addi %[[SROWS]], %[[F0]] : index
//       CHECK:   %[[SROW:.*]] = arith.addi %[[SROW0]], %{{.*}} : index
//  CHECK-NEXT:   %[[SAT:.*]] = arith.muli %[[SROW]], %[[DV]] : index
//       CHECK:   memref.store %{{.*}}, %[[H]][%{{.*}}] : memref<?xf32>

// Unsplit: two blocks of all 128 features and 64 value columns.
// UNSPLIT-LABEL: func.func @split(
//       UNSPLIT:   call @__linattn_launch_linattn_scan_segment_states_forward_elu_0(%c2, %c2,
//       UNSPLIT: gpu.func @linattn_scan_segment_states_forward_elu_0(
//  UNSPLIT-SAME:     workgroup(%{{.*}} : memref<8704xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
//   UNSPLIT-NOT:   arith.remui %block_id_y
func.func @split(%q: tensor<2x?x128xbf16>, %k: tensor<2x?x128xbf16>, %v: tensor<2x?x128xbf16>) -> tensor<2x?x128xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x?x128xbf16> -> tensor<2x?x128xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x?x128xbf16> -> tensor<2x?x128xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x128xbf16>, tensor<2x?x128xbf16>, tensor<2x?x128xbf16> -> tensor<2x?x128xbf16>, tensor<2x128x128xf32>, tensor<2x128xf32>
  return %o : tensor<2x?x128xbf16>
}

// -----

// Not split: a dynamic Dv (the tiles it takes are not known), Dv within one
// value tile, and F = 64 on wgmma (whose swizzled staging takes F a
// multiple of 64). f32 data on tf32 splits: φ(K_c) 32 x (64 + 4) and V_c
// 32 x 128 words (unit-swizzled, as the 64 columns were) in two slots; on
// tf32x3 it does not (split, its normalized kernels spilled).

// CHECK-LABEL: func.func @dynamic_dv(
//       CHECK: gpu.func @linattn_scan_segment_states_forward_elu_0(
//  CHECK-SAME:     workgroup(%{{.*}} : memref<8704xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
//   CHECK-NOT:   arith.remui %block_id_y
//       CHECK:   gpu.return
func.func @dynamic_dv(%q: tensor<2x?x128xbf16>, %k: tensor<2x?x128xbf16>, %v: tensor<2x?x?xbf16>) -> tensor<2x?x?xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x?x128xbf16> -> tensor<2x?x128xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x?x128xbf16> -> tensor<2x?x128xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x128xbf16>, tensor<2x?x128xbf16>, tensor<2x?x?xbf16> -> tensor<2x?x?xbf16>, tensor<2x128x?xf32>, tensor<2x128xf32>
  return %o : tensor<2x?x?xbf16>
}

// -----

// CHECK-LABEL: func.func @one_tile(
//       CHECK: gpu.func @linattn_scan_segment_states_forward_elu_0(
//  CHECK-SAME:     workgroup(%{{.*}} : memref<8704xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
//   CHECK-NOT:   arith.remui %block_id_y
//       CHECK:   gpu.return
func.func @one_tile(%q: tensor<2x?x128xbf16>, %k: tensor<2x?x128xbf16>, %v: tensor<2x?x64xbf16>) -> tensor<2x?x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x?x128xbf16> -> tensor<2x?x128xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x?x128xbf16> -> tensor<2x?x128xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x128xbf16>, tensor<2x?x128xbf16>, tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>, tensor<2x128x64xf32>, tensor<2x128xf32>
  return %o : tensor<2x?x64xbf16>
}

// -----

// TF32-LABEL: func.func @f32_data(
//       TF32: gpu.func @linattn_scan_segment_states_forward_elu_0(
//  TF32-SAME:     workgroup(%{{.*}} : memref<4352xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8192xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
//       TF32:   arith.remui %block_id_y, %c2 : index
// TF32X3-LABEL: func.func @f32_data(
//       TF32X3: gpu.func @linattn_scan_segment_states_forward_elu_0(
//  TF32X3-SAME:     workgroup(%{{.*}} : memref<8448xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4096xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
//   TF32X3-NOT:   arith.remui %block_id_y
//       TF32X3:   gpu.return
func.func @f32_data(%q: tensor<2x?x128xf32>, %k: tensor<2x?x128xf32>, %v: tensor<2x?x128xf32>) -> tensor<2x?x128xf32> {
  %fq = linattn.feature_map elu %q : tensor<2x?x128xf32> -> tensor<2x?x128xf32>
  %fk = linattn.feature_map elu %k : tensor<2x?x128xf32> -> tensor<2x?x128xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x128xf32>, tensor<2x?x128xf32>, tensor<2x?x128xf32> -> tensor<2x?x128xf32>, tensor<2x128x128xf32>, tensor<2x128xf32>
  return %o : tensor<2x?x128xf32>
}

// -----

// CHECK-LABEL: func.func @wgmma(
//       CHECK: gpu.func @linattn_scan_segment_states_forward_elu_0(
//   CHECK-NOT:   arith.remui %block_id_y
//       CHECK:   gpu.return
func.func @wgmma(%q: tensor<2x?x64xbf16>, %k: tensor<2x?x64xbf16>, %v: tensor<2x?x128xbf16>) -> tensor<2x?x128xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x64xbf16>, tensor<2x?x64xbf16>, tensor<2x?x128xbf16> -> tensor<2x?x128xbf16>, tensor<2x64x128xf32>, tensor<2x64xf32>
  return %o : tensor<2x?x128xbf16>
}
