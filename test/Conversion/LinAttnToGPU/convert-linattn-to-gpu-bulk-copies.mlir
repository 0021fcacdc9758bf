// wgmma-chunks=false: the unnormalized bf16 chunk loops at F = 128 are the
// portable ones (chunks of 32, mma.sync), as sm_80 and the normalized scan
// take them; sm_90's default chunks of 64 there:
// convert-linattn-to-gpu-wgmma-chunks.mlir.
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false bulk-copies=true sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false bulk-copies=true copy-stages=3 sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=THREE
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false bulk-copies=true" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SEG
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false bulk-copies=true chip=sm_80" -split-input-file | FileCheck %s --check-prefix=NONE --implicit-check-not=mbarrier --implicit-check-not=cp.async.bulk
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false bulk-copies=true async-copies=false" -split-input-file | FileCheck %s --check-prefix=NONE --implicit-check-not=mbarrier --implicit-check-not=cp.async.bulk
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-chunks=false sequence-parallel-blocks=0" -split-input-file | FileCheck %s --check-prefix=NONE --implicit-check-not=mbarrier --implicit-check-not=cp.async.bulk

// bulk-copies: whole chunks of the tiles with padded rows go by one bulk
// copy per row (cp.async.bulk, sm_90), which completes on the slot's
// mbarrier. bf16 at F = 128 takes chunks of 32 and mma.sync: φ(Q_c),
// φ(K_c) rows of 256 bytes, V_c rows of the block's 64 columns (128
// bytes). Thread 0 initializes one mbarrier per slot (one arrival a phase)
// before the chunk loop and invalidates them after it; issuing a chunk it
// arrives expecting 16384 bytes for the feature rows (2 x 32 x 256) and
// 4096 for the value rows where they go by bulk copies: whole chunks with
// 16-byte aligned rows (and all 64 columns in Dv for V_c). Other chunks
// take cp.async as before (the expected bytes then 0, so the phase
// completes at the arrival). Waiting for a chunk is its cp.async group and
// the phase of its slot's mbarrier; the async-proxy fence orders the
// in-place rewrites before the next bulk copy into the slot.
// CHECK-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  CHECK-SAME: %{{.*}} : memref<2xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//   CHECK-DAG: %[[FEATURES:.*]] = arith.constant 16384 : i32
//   CHECK-DAG: %[[VALUES:.*]] = arith.constant 4096 : i32
//       CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32 : !llvm.ptr<3>, i32
//       CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32 : !llvm.ptr<3>, i32
//       CHECK: gpu.barrier
//       CHECK: arith.select %{{.*}}, %[[FEATURES]], %c0_i32 : i32
//       CHECK: nvvm.mbarrier.arrive.expect_tx
//       CHECK: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, %c256_i32 : !llvm.ptr<7>, <1>
//       CHECK: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, %c256_i32 : !llvm.ptr<7>, <1>
//       CHECK: nvgpu.device_async_copy
//       CHECK: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, %c128_i32 : !llvm.ptr<7>, <1>
//       CHECK: nvgpu.device_async_copy
//       CHECK: nvvm.cp.async.commit.group
//       CHECK: scf.for
//       CHECK:   nvvm.mbarrier.arrive.expect_tx
//       CHECK:   nvvm.cp.async.commit.group
//       CHECK:   nvvm.cp.async.wait.group 1
//       CHECK:   nvvm.mbarrier.try_wait.parity %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32, i32
//       CHECK:   nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
//  CHECK-NEXT:   gpu.barrier
//       CHECK: nvvm.mbarrier.inval
//       CHECK: nvvm.mbarrier.inval
//       CHECK: gpu.return

// Three slots: three mbarriers.
// THREE-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  THREE-SAME: %{{.*}} : memref<3xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// THREE-COUNT-3: nvvm.mbarrier.init
//   THREE-NOT: nvvm.mbarrier.init
//       THREE: nvvm.cp.async.wait.group 2
//       THREE: nvvm.mbarrier.try_wait.parity
// THREE-COUNT-3: nvvm.mbarrier.inval

// The sequence-parallel scan's segment states (φ(K_c), V_c) and outputs
// take them too.
// SEG-LABEL: gpu.func @linattn_scan_segment_states_forward_features_0(
//  SEG-SAME: %{{.*}} : memref<2xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//       SEG: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, %c256_i32
//       SEG: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, %c128_i32
//       SEG: nvvm.mbarrier.try_wait.parity
// SEG-LABEL: gpu.func @linattn_scan_segment_outputs_wide_forward_features_2(
//       SEG: nvvm.mbarrier.try_wait.parity

// Not on sm_80 (no bulk copies), not without async copies, not by default.
// NONE-COUNT-3: gpu.func @linattn_scan_chunked_wide_forward_features
func.func @bf16(%fq: tensor<2x?x128xbf16>, %fk: tensor<2x?x128xbf16>, %v: tensor<2x?x128xbf16>) -> tensor<2x?x128xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x128xbf16>, tensor<2x?x128xbf16>, tensor<2x?x128xbf16> -> tensor<2x?x128xbf16>, tensor<2x128x128xf32>, tensor<2x128xf32>
  return %o : tensor<2x?x128xbf16>
}

// -----

// f16 at F = 64 takes chunks of 64 and wgmma for the scores: φ(Q_c) and
// φ(K_c) in the 128-byte swizzle, which a contiguous copy cannot write,
// keep cp.async; V_c (padded rows) goes by bulk copies: 64 rows of 128
// bytes, 8192 expected.
// CHECK-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//  CHECK-SAME: memref<8192xf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}
//  CHECK-SAME: %{{.*}} : memref<2xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//       CHECK: arith.constant 8192 : i32
//   CHECK-NOT: gpu.func
//       CHECK: nvvm.cp.async.bulk.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, %c128_i32
//   CHECK-NOT: %c256_i32 : !llvm.ptr<7>
//       CHECK: gpu.return
func.func @f16(%fq: tensor<2x?x64xf16>, %fk: tensor<2x?x64xf16>, %v: tensor<2x?x64xf16>) -> tensor<2x?x64xf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x64xf16>, tensor<2x?x64xf16>, tensor<2x?x64xf16> -> tensor<2x?x64xf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x?x64xf16>
}

// -----

// bf16 at F = 64: wgmma swizzles V_c too (the state update): no tile has
// padded rows, so no mbarriers either.
// CHECK-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//   CHECK-NOT: mbarrier
//       CHECK: gpu.return
func.func @swizzled(%fq: tensor<2x?x64xbf16>, %fk: tensor<2x?x64xbf16>, %v: tensor<2x?x64xbf16>) -> tensor<2x?x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x64xbf16>, tensor<2x?x64xbf16>, tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x?x64xbf16>
}
