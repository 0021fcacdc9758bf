// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=true sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefixes=CHECK,BF16
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefixes=AUTO,BF16
// RUN: linattn-opt %s --convert-linattn-to-gpu="row-tile-warps=2 sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=BF16
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=true row-tile-warps=1 sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=ONE
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=true" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SEG
// RUN: linattn-opt %s --convert-linattn-to-gpu="" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SEG
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SEG-PORTABLE
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=PORTABLE
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=true chip=sm_80 sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=PORTABLE
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=true wgmma=false sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=PORTABLE
// RUN: not linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=1" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD --implicit-check-not=func.func

// BAD: error: convert-linattn-to-gpu: wgmma-chunks must be 'true', 'auto' or 'false'

// The default, wgmma-chunks=auto, takes chunks of 64 where a GPU measured
// them faster: the unnormalized bf16 scan on two warpgroups (1.14 times at
// B2·H16·T16K·D128 on an H200), also where row-tile-warps=2 asks for them.
// f16, one warpgroup (row-tile-warps=1) and the normalized loops keep the
// portable chunks unless the option is true.

// wgmma-chunks: at F = 128 the shared memory budgets that hold on every chip
// leave 16-bit chunk loops with chunks of 32 (φ(Q_c), φ(K_c) in two slots
// of 32 x 136, 65024 B) and mma.sync. On sm_90 with wgmma the option takes
// chunks of 64 in up to 113 KiB (two blocks per H100 SM), φ(Q_c) and φ(K_c)
// in two slots of 64 x 128 in wgmma's 128-byte swizzle (1024-byte aligned,
// no padding), and the scores by wgmma. bf16 takes two warps per row tile:
// eight warps, two warpgroups, one per 64 features of the state update,
// which takes wgmma too (V_c in the swizzle as well; 109568 B): per
// warpgroup and chunk, its half of the keys' scores (m64n32k16, eight
// k-steps) and its 64 x 64 of the state update (m64n64k16, four).
//  BF16-LABEL: func.func @f128
//        BF16: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0(%c2, %c2, %c1, %c256, %c1, %c1,
//  BF16-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//   BF16-SAME: workgroup(%{{.*}} : memref<16384xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<16384xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<8192xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<9216xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//  BF16-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>
//  BF16-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
//    BF16-NOT: nvvm.wgmma.mma_async
//        BF16: gpu.return
// With one warp per row tile (row-tile-warps=1): four warps, one
// warpgroup, whose state update stays on mma.sync (V_c padded, 111616 B);
// the scores' 64 keys by wgmma in two blocks of 32 (16).
// ONE-LABEL: func.func @f128
//       ONE: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0(%c2, %c2, %c1, %c128, %c1, %c1,
// ONE-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  ONE-SAME: workgroup(%{{.*}} : memref<16384xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<16384xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<9216xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<9216xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// ONE-COUNT-16: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>
//   ONE-NOT: nvvm.wgmma.mma_async
//       ONE: gpu.return
// PORTABLE-LABEL: func.func @f128
//       PORTABLE: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0(%c2, %c2, %c1, %c128, %c1, %c1,
// PORTABLE-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  PORTABLE-SAME: workgroup(%{{.*}} : memref<8704xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8704xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<1280xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<9216xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//   PORTABLE-NOT: nvvm.wgmma.mma_async
//       PORTABLE: gpu.return
func.func @f128(%fq: tensor<2x1000x128xbf16>, %fk: tensor<2x1000x128xbf16>, %v: tensor<2x1000x128xbf16>) -> tensor<2x1000x128xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x1000x128xbf16>, tensor<2x1000x128xbf16>, tensor<2x1000x128xbf16> -> tensor<2x1000x128xbf16>, tensor<2x128x128xf32>, tensor<2x128xf32>
  return %o : tensor<2x1000x128xbf16>
}

// -----

// F = 64 has chunks of 64 within the portable budgets already: the option
// changes nothing (the default's wgmma kernel, 128-byte swizzled tiles of
// 64 x 64 in two slots).
// CHECK-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  CHECK-SAME: workgroup(%{{.*}} : memref<8192xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<8192xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64},
//       CHECK: nvvm.wgmma.mma_async
func.func @f64(%fq: tensor<2x1000x64xbf16>, %fk: tensor<2x1000x64xbf16>, %v: tensor<2x1000x64xbf16>) -> tensor<2x1000x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16> -> tensor<2x1000x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x1000x64xbf16>
}

// -----

// f16 as well (its two f32 scales per value column beside the tiles).
// CHECK-LABEL: func.func @f16
// CHECK-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  CHECK-SAME: workgroup(%{{.*}} : memref<16384xf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<16384xf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64},
// CHECK-COUNT-16: nvvm.wgmma.mma_async
//   CHECK-NOT: nvvm.wgmma.mma_async
//       CHECK: gpu.return
// PORTABLE-LABEL: func.func @f16
// PORTABLE-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  PORTABLE-SAME: workgroup(%{{.*}} : memref<8704xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8704xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64},
//   PORTABLE-NOT: nvvm.wgmma.mma_async
//       PORTABLE: gpu.return
// f16 takes one warpgroup: the default keeps its portable chunks.
// AUTO-LABEL: func.func @f16
// AUTO-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  AUTO-SAME: workgroup(%{{.*}} : memref<8704xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8704xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64},
//   AUTO-NOT: nvvm.wgmma.mma_async
//       AUTO: gpu.return
func.func @f16(%fq: tensor<2x100x128xf16>, %fk: tensor<2x100x128xf16>, %v: tensor<2x100x128xf16>) -> tensor<2x100x128xf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x100x128xf16>, tensor<2x100x128xf16>, tensor<2x100x128xf16> -> tensor<2x100x128xf16>, tensor<2x128x128xf32>, tensor<2x128xf32>
  return %o : tensor<2x100x128xf16>
}

// -----

// Segments: B2·H16 at Dv = 128 is 64 blocks, under half the default target
// of 264 (two blocks per H100 SM), so the sequence splits. wgmma-chunks'
// kernels fit two blocks per SM: 264 is all an H100 holds at once, and the
// segments stay within it, 4 (256 blocks, one wave; the states of the
// first 3), where the default's kernels (three blocks per SM) take 5.
// SEG-LABEL: func.func @segments
//       SEG: call @__linattn_launch_linattn_scan_segment_states_forward_features_0(%c32, %c2, %c3, %c256, %c1, %c1,
//       SEG: call @__linattn_launch_linattn_scan_segment_outputs_wide_forward_features_2(%c32, %c2, %c4, %c256, %c1, %c1,
// SEG-PORTABLE-LABEL: func.func @segments
//       SEG-PORTABLE: call @__linattn_launch_linattn_scan_segment_states_forward_features_0(%c32, %c2, %c4, %c128, %c1, %c1,
//       SEG-PORTABLE: call @__linattn_launch_linattn_scan_segment_outputs_wide_forward_features_2(%c32, %c2, %c5, %c128, %c1, %c1,
func.func @segments(%fq: tensor<2x16x16384x128xbf16>, %fk: tensor<2x16x16384x128xbf16>, %v: tensor<2x16x16384x128xbf16>) -> tensor<2x16x16384x128xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x16x16384x128xbf16>, tensor<2x16x16384x128xbf16>, tensor<2x16x16384x128xbf16> -> tensor<2x16x16384x128xbf16>, tensor<2x16x128x128xf32>, tensor<2x16x128xf32>
  return %o : tensor<2x16x16384x128xbf16>
}

// -----

// The normalized loops: wide with the option (one block of eight warps per
// SM by their registers), portable by default.
// CHECK-LABEL: func.func @normalized
//       CHECK: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_normalized_0(%c2, %c2, %c1, %c256, %c1, %c1,
// CHECK-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_normalized_0(
//  CHECK-SAME: workgroup(%{{.*}} : memref<16384xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64},
//       CHECK: nvvm.wgmma.mma_async
// AUTO-LABEL: func.func @normalized
//       AUTO: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_normalized_0(%c2, %c2, %c1, %c128, %c1, %c1,
// AUTO-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_normalized_0(
//  AUTO-SAME: workgroup(%{{.*}} : memref<8704xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64},
//   AUTO-NOT: nvvm.wgmma.mma_async
//       AUTO: gpu.return
func.func @normalized(%fq: tensor<2x100x128xbf16>, %fk: tensor<2x100x128xbf16>, %v: tensor<2x100x128xbf16>) -> tensor<2x100x128xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x100x128xbf16>, tensor<2x100x128xbf16>, tensor<2x100x128xbf16> -> tensor<2x100x128xbf16>, tensor<2x128x128xf32>, tensor<2x128xf32>
  return %o : tensor<2x100x128xbf16>
}
