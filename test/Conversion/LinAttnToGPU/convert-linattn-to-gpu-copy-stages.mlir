// RUN: linattn-opt %s --convert-linattn-to-gpu="copy-stages=3 sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=THREE
// RUN: linattn-opt %s --convert-linattn-to-gpu="copy-stages=4 sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=FOUR
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=TWO
// RUN: linattn-opt %s --convert-linattn-to-gpu="copy-stages=3 wgmma-chunks=true sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=CHUNKS
// RUN: linattn-opt %s --convert-linattn-to-gpu="copy-stages=3 async-copies=false sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SYNC
// RUN: linattn-opt %s --convert-linattn-to-gpu="copy-stages=3 states-copy-stages=4" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SEG
// RUN: linattn-opt %s --convert-linattn-to-gpu="states-copy-stages=3" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=STATES
// RUN: not linattn-opt %s --convert-linattn-to-gpu="copy-stages=5" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD --implicit-check-not=func.func
// RUN: not linattn-opt %s --convert-linattn-to-gpu="copy-stages=1" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD --implicit-check-not=func.func
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
// states-copy-stages within their own 96 KiB: four slots, 53248 B.
// SEG-LABEL: gpu.func @linattn_scan_segment_states_forward_features_0(
//  SEG-SAME: workgroup(%{{.*}} : memref<17408xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<9216xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//       SEG: nvvm.cp.async.wait.group 3
// SEG-LABEL: gpu.func @linattn_scan_segment_outputs_wide_forward_features_2(
//  SEG-SAME: workgroup(%{{.*}} : memref<13056xbf16,
//       SEG: nvvm.cp.async.wait.group 2
// states-copy-stages alone: the segment states in three slots, the chunk
// loops in two.
// STATES-LABEL: gpu.func @linattn_scan_segment_states_forward_features_0(
//  STATES-SAME: workgroup(%{{.*}} : memref<13056xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<6912xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//       STATES: nvvm.cp.async.wait.group 2
// STATES-LABEL: gpu.func @linattn_scan_segment_outputs_wide_forward_features_2(
//  STATES-SAME: workgroup(%{{.*}} : memref<8704xbf16,
//       STATES: nvvm.cp.async.wait.group 1
// STATES-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_3(
//  STATES-SAME: workgroup(%{{.*}} : memref<8704xbf16,
//       STATES: nvvm.cp.async.wait.group 1
// BAD: error: convert-linattn-to-gpu: copy-stages must be 2, 3 or 4
// BAD-STATES: error: convert-linattn-to-gpu: states-copy-stages must be 2, 3 or 4
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
// FOUR-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_normalized_0(
//  FOUR-SAME: workgroup(%{{.*}} : memref<12288xbf16,
//       FOUR: nvvm.cp.async.wait.group 2
func.func @f64_normalized(%fq: tensor<2x1000x64xbf16>, %fk: tensor<2x1000x64xbf16>, %v: tensor<2x1000x64xbf16>) -> tensor<2x1000x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16> -> tensor<2x1000x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x1000x64xbf16>
}
