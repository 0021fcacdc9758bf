// small-grid-value-tile=0: the chunk loops of these small grids keep their
// value tiles (the narrower ones: Conversion/LinAttnToGPU/
// convert-linattn-to-gpu-small-grid.mlir).
// wgmma-chunks=false: the unnormalized bf16 chunk loops at F = 128 are the
// portable ones (chunks of 32, mma.sync), as sm_80 and the normalized scan
// take them; sm_90's default chunks of 64 there:
// convert-linattn-to-gpu-wgmma-chunks.mlir.
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false copy-stages=3 sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=THREE
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false copy-stages=4 sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=FOUR
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=TWO
// RUN: linattn-opt %s --convert-linattn-to-gpu="copy-stages=3 wgmma-chunks=true sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=CHUNKS
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false copy-stages=3 async-copies=false sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SYNC
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false small-grid-value-tile=0 copy-stages=3 states-copy-stages=4" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SEG
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false small-grid-value-tile=0 states-copy-stages=3" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=STATES
// RUN: not linattn-opt %s --convert-linattn-to-gpu="copy-stages=5" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD --implicit-check-not=func.func
// RUN: not linattn-opt %s --convert-linattn-to-gpu="copy-stages=0" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD --implicit-check-not=func.func
// RUN: not linattn-opt %s --convert-linattn-to-gpu="states-copy-stages=0" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD-STATES --implicit-check-not=func.func
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false copy-stages=1 sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=ONE
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false copy-stages=1 prefetch-chunks=0 sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=ONE-NOPF
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false small-grid-value-tile=0 copy-stages=1" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=ONE-SEG
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false copy-stages=1 bulk-copies=true sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=ONE-BULK
// RUN: not linattn-opt %s --convert-linattn-to-gpu="states-copy-stages=5" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD-STATES --implicit-check-not=func.func

// copy-stages: the chunk loops' async copies in S slots per staged tile,
// the copies of the next S - 1 chunks in flight while the products read
// one. bf16 at F = 128 (chunks of 32, tiles of 64): two slots take 65024 B
// (φ(Q_c), φ(K_c) 2 x 32 x 136, V_c 2 x 32 x 72); three take 87040 B,
// within 96 KiB; four would take 109056 B, so copy-stages=4 takes three.
// Before the loop the first S - 1 chunks are issued, one commit group
// each; every iteration issues chunk i + S - 1, commits (an empty group
// past the end) and waits for all but the S - 1 newest groups: chunk i's.
// THREE-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  THREE-SAME: workgroup(%{{.*}} : memref<13056xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<13056xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<6912xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<1280xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<9216xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//       THREE: nvvm.cp.async.commit.group
//       THREE: nvvm.cp.async.commit.group
//       THREE: scf.for
//       THREE:   gpu.barrier
//       THREE:   nvgpu.device_async_copy
//       THREE:   nvvm.cp.async.commit.group
//  THREE-NEXT:   nvvm.cp.async.wait.group 2
//   THREE-NOT: nvvm.cp.async.wait.group
//       THREE: gpu.return
// FOUR-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  FOUR-SAME: workgroup(%{{.*}} : memref<13056xbf16,
//       FOUR: nvvm.cp.async.wait.group 2
// The default, two slots: the next chunk in flight.
// TWO-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  TWO-SAME: workgroup(%{{.*}} : memref<8704xbf16,
//       TWO: nvvm.cp.async.commit.group
//   TWO-NOT: nvvm.cp.async.commit.group
//       TWO: scf.for
//       TWO: nvvm.cp.async.wait.group 1
// wgmma-chunks' shape (109568 B with two slots, 113 KiB at most) has no
// room for a third.
// CHUNKS-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  CHUNKS-SAME: workgroup(%{{.*}} : memref<16384xbf16,
//       CHUNKS: nvvm.cp.async.wait.group 1
// Synchronous staging has no slots to add.
// SYNC-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  SYNC-SAME: workgroup(%{{.*}} : memref<4352xbf16,
//   SYNC-NOT: nvvm.cp.async
//       SYNC: gpu.return
// Sequence-parallel: the segment outputs walk their chunks as the chunk
// loops do; the segment states, which stage φ(K_c) and V_c only, take
// states-copy-stages within their own 96 KiB: four slots, 53248 B (φ(K_c)
// of their 64 features, V_c of all 128 columns: states-feature-split).
// SEG-LABEL: gpu.func @linattn_scan_segment_states_forward_features_0(
//  SEG-SAME: workgroup(%{{.*}} : memref<9216xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<17408xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//       SEG: nvvm.cp.async.wait.group 3
// SEG-LABEL: gpu.func @linattn_scan_segment_outputs_wide_forward_features_2(
//  SEG-SAME: workgroup(%{{.*}} : memref<13056xbf16,
//       SEG: nvvm.cp.async.wait.group 2
// states-copy-stages alone: the segment states in three slots, the chunk
// loops in two.
// STATES-LABEL: gpu.func @linattn_scan_segment_states_forward_features_0(
//  STATES-SAME: workgroup(%{{.*}} : memref<6912xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<13056xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//       STATES: nvvm.cp.async.wait.group 2
// STATES-LABEL: gpu.func @linattn_scan_segment_outputs_wide_forward_features_2(
//  STATES-SAME: workgroup(%{{.*}} : memref<8704xbf16,
//       STATES: nvvm.cp.async.wait.group 1
// STATES-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_3(
//  STATES-SAME: workgroup(%{{.*}} : memref<8704xbf16,
//       STATES: nvvm.cp.async.wait.group 1
// One slot: each iteration issues the copies of its own chunk (after the
// barrier that ends the last one's reads), waits for all of them, and
// prefetches the next chunk's rows into L2 as it issues them (C = 32: 32
// rows of 128 elements on), so that those copies wait on L2 while this
// chunk computes; no copies before the loop.
// ONE-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  ONE-SAME: workgroup(%{{.*}} : memref<4352xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4352xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2304xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<1280xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<9216xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//   ONE-NOT: nvvm.cp.async
//       ONE: scf.for %[[T0:.*]] = %{{.*}} to %[[END:.*]] step %c32
//  ONE-NEXT:   gpu.barrier
//       ONE:   %[[AHEAD:.*]] = arith.addi %[[T0]], %c32 : index
//       ONE:   arith.cmpi ult, %[[AHEAD]], %[[END]] : index
//       ONE:   nvgpu.device_async_copy
//       ONE:   arith.addi %{{.*}}, %c4096 : index
//       ONE:   llvm.inline_asm has_side_effects "prefetch.L2 [$0];"
//       ONE:   nvgpu.device_async_copy
//       ONE:   llvm.inline_asm has_side_effects "prefetch.L2 [$0];"
//       ONE:   nvgpu.device_async_copy
//       ONE:   llvm.inline_asm has_side_effects "prefetch.L2 [$0];"
//       ONE:   nvvm.cp.async.commit.group
//  ONE-NEXT:   nvvm.cp.async.wait.group 0
//   ONE-NOT:   nvvm.cp.async
//   ONE-NOT:   llvm.inline_asm
//       ONE: gpu.return
// ONE-NOPF-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//   ONE-NOPF-NOT: llvm.inline_asm
//       ONE-NOPF: nvvm.cp.async.wait.group 0
//   ONE-NOPF-NOT: llvm.inline_asm
//       ONE-NOPF: gpu.return
// With bulk copies, the thread that copies a row prefetches its lines in the
// next chunk: a 256-byte row of φ(Q_c) or φ(K_c) at its start, 128 bytes on
// and its last element (the row is 16-byte aligned, not a line), a 128-byte
// row of V_c at its start and end.
// ONE-BULK-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//       ONE-BULK: scf.for
//       ONE-BULK:   nvvm.cp.async.bulk.shared.cluster.global {{.*}}, %c256_i32
// ONE-BULK-COUNT-3:   llvm.inline_asm has_side_effects "prefetch.L2 [$0];"
//       ONE-BULK:   nvvm.cp.async.bulk.shared.cluster.global {{.*}}, %c256_i32
// ONE-BULK-COUNT-3:   llvm.inline_asm has_side_effects "prefetch.L2 [$0];"
//       ONE-BULK:   nvvm.cp.async.bulk.shared.cluster.global {{.*}}, %c128_i32
// ONE-BULK-COUNT-2:   llvm.inline_asm has_side_effects "prefetch.L2 [$0];"
//       ONE-BULK:   nvvm.cp.async.wait.group 0
//       ONE-BULK:   nvvm.mbarrier.try_wait.parity
//   ONE-BULK-NOT:   llvm.inline_asm
//       ONE-BULK: gpu.return
// The segment states take states-copy-stages (two slots by default, the
// next chunk in flight, no prefetch; 64 features and 128 value columns a
// block), the segment outputs one.
// ONE-SEG-LABEL: gpu.func @linattn_scan_segment_states_forward_features_0(
//  ONE-SEG-SAME: workgroup(%{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8704xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//    ONE-SEG-NOT: llvm.inline_asm
//        ONE-SEG: nvvm.cp.async.wait.group 1
//    ONE-SEG-NOT: llvm.inline_asm
// ONE-SEG-LABEL: gpu.func @linattn_scan_segment_outputs_wide_forward_features_2(
//  ONE-SEG-SAME: workgroup(%{{.*}} : memref<4352xbf16,
//        ONE-SEG: llvm.inline_asm has_side_effects "prefetch.L2 [$0];"
//        ONE-SEG: nvvm.cp.async.wait.group 0
// BAD: error: convert-linattn-to-gpu: copy-stages must be 1, 2, 3 or 4
// BAD-STATES: error: convert-linattn-to-gpu: states-copy-stages must be 1, 2, 3 or 4
func.func @f128(%fq: tensor<2x?x128xbf16>, %fk: tensor<2x?x128xbf16>, %v: tensor<2x?x128xbf16>) -> tensor<2x?x128xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x128xbf16>, tensor<2x?x128xbf16>, tensor<2x?x128xbf16> -> tensor<2x?x128xbf16>, tensor<2x128x128xf32>, tensor<2x128xf32>
  return %o : tensor<2x?x128xbf16>
}

// -----

// F = 64 with wgmma (φ(Q_c), φ(K_c), V_c in the 128-byte swizzle, 64 x 64
// per slot): three slots take 92416 B (92160 B unnormalized), within
// 96 KiB; four would not fit. Two blocks per H100 SM instead of three.
// THREE-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_normalized_0(
//  THREE-SAME: workgroup(%{{.*}} : memref<12288xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<12288xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<12288xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64},
//       THREE: nvvm.cp.async.wait.group 2
// One slot of each swizzled tile.
// ONE-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_normalized_0(
//  ONE-SAME: workgroup(%{{.*}} : memref<4096xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<4096xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<4096xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64},
//       ONE: nvvm.cp.async.wait.group 0
// FOUR-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_normalized_0(
//  FOUR-SAME: workgroup(%{{.*}} : memref<12288xbf16,
//       FOUR: nvvm.cp.async.wait.group 2
func.func @f64_normalized(%fq: tensor<2x1000x64xbf16>, %fk: tensor<2x1000x64xbf16>, %v: tensor<2x1000x64xbf16>) -> tensor<2x1000x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16> -> tensor<2x1000x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x1000x64xbf16>
}
