// wgmma=true: the chunk loops compute their scores with sm_90's wgmma. At
// F = 64 (chunks of 64, one warpgroup of four warps) φ(Q_c) and φ(K_c) are
// staged unpadded (64 x 64, 1024-byte aligned) in the 128-byte swizzle, by
// every kernel of the scan; staging ends with the async-proxy fence before
// its barrier; the scores of each block of 32 keys are four m64n32k16
// wgmma (F / 16 steps) from descriptors of the two tiles, the first without
// the accumulator, then one commit and a wait for all. With bf16 data the
// state update φ(K_c)ᵀV_c is wgmma too: V_c staged the same way (64 x 64,
// 1024-byte aligned), four m64n64k16 (C / 16 steps) with both operands
// MN-major (A col, B row) into the state, which the segment states kernel
// accumulates the same way; f16 keeps mma.sync for it (its state's column
// scales need each column in one warp). Where wgmma does not apply the
// kernels are those of wgmma=false: chunks of 32 (chunk-size=32) and F = 32.

// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma=true sequence-parallel-blocks=0 async-copies=false narrow-offset-limit=2147483648" --canonicalize --cse -split-input-file | FileCheck %s
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma=true sequence-parallel-blocks=0 chunk-size=32 async-copies=false narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=NONE
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0 async-copies=false wgmma=false narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=NONE
// The defaults: wgmma, and 64-bit offsets only (no 32-bit kernels, no run-time
// choice between them).
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0" -split-input-file | FileCheck %s --check-prefix=DEFAULTS --implicit-check-not=linattn_scan_chunked_forward
// With async copies the tiles take dynamic shared memory, whose declaration
// then holds the swizzle's 1024-byte alignment (16 without wgmma).
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma=true sequence-parallel-blocks=0 narrow-offset-limit=2147483648" --linattn-gpu-dynamic-shared-memory="chip=sm_90" -split-input-file | FileCheck %s --check-prefix=DYNAMIC
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0 wgmma=false narrow-offset-limit=2147483648" --linattn-gpu-dynamic-shared-memory="chip=sm_90" -split-input-file | FileCheck %s --check-prefix=DYNAMIC-DEFAULT

// DEFAULTS-LABEL: func.func @bf16_f64
//   DEFAULTS-NOT: scf.if
//       DEFAULTS: call @__linattn_launch_linattn_scan_chunked_wide_forward_elu_normalized_0(
//       DEFAULTS: gpu.func @linattn_scan_chunked_wide_forward_elu_normalized_0(
//       DEFAULTS: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 32, k = 16>

// CHECK-LABEL: func.func @bf16_f64
//       CHECK: gpu.func @linattn_scan_chunked_forward_elu_normalized_3(
//  CHECK-SAME: workgroup(%{{.*}} : memref<4096xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<4096xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<4096xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64},
//       CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
//  CHECK-NEXT: gpu.barrier
//       CHECK: memref.extract_aligned_pointer_as_index
//       CHECK: nvvm.wgmma.fence.aligned
// A descriptor's low word is the shared address >> 4 plus a constant (the
// step's offset >> 4 and the leading byte offset, 16 >> 4 in bit 16), shared
// by the steps of a product; its high word the stride (1024 >> 4) and the
// 128-byte swizzle, a constant.
//       CHECK: %[[FIELD:.*]] = arith.shrui %{{.*}}, %c4_i32 : i32
//  CHECK-NEXT: %[[LOW:.*]] = arith.addi %[[FIELD]], %c65536_i32 : i32
//  CHECK-NEXT: %[[WORD:.*]] = arith.extui %[[LOW]] : i32 to i64
//  CHECK-NEXT: %[[DESC:.*]] = arith.ori %[[WORD]], %c4611686293305294848_i64 : i64
//       CHECK: nvvm.wgmma.mma_async %[[DESC]], %{{.*}}, <m = 64, n = 32, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
//       CHECK: arith.addi %[[FIELD]], %c65538_i32 : i32
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 32, k = 16>, D[<f32>, <one>]
//  CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
//  CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// The causal mask compares 32-bit positions: the lane's column less its row
// plus the element's offset, against the tile's row less its key.
//       CHECK: %[[SHIFT:.*]] = arith.subi %{{.*}}, %{{.*}} : i32
//       CHECK: arith.cmpi sle, %{{.*}}, %[[SHIFT]] : i32
//  CHECK-NEXT: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
//       CHECK: nvvm.wgmma.fence.aligned
//       CHECK: nvvm.wgmma.wait.group.sync.aligned 0
//       CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
//  CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
//  CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
//   CHECK-NOT: nvvm.wgmma.fence.aligned
//       CHECK: gpu.return
// DYNAMIC-LABEL: func.func @bf16_f64
//       DYNAMIC: memref.global @linattn_dynamic_shared : memref<0xi8, #gpu.address_space<workgroup>> {alignment = 1024 : i64}
//       DYNAMIC: memref.view %{{.*}}[%c0][] : {{.*}} to memref<8192xbf16, #gpu.address_space<workgroup>>
//       DYNAMIC: memref.view %{{.*}}[%c16384][] : {{.*}} to memref<8192xbf16, #gpu.address_space<workgroup>>
// DYNAMIC-DEFAULT: memref.global @linattn_dynamic_shared : memref<0xi8, #gpu.address_space<workgroup>> {alignment = 16 : i64}
// NONE-LABEL: func.func @bf16_f64
//   NONE-NOT: nvvm.wgmma
//   NONE-NOT: llvm.align = 1024
//       NONE: return
func.func @bf16_f64(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>, tensor<2x4x64x64xf32>, tensor<2x4x64xf32>
  return %o : tensor<2x4x?x64xbf16>
}

// -----

// F = 32: no wgmma.
// CHECK-LABEL: func.func @f16_f32
//   CHECK-NOT: nvvm.wgmma
//       CHECK: return
// NONE-LABEL: func.func @f16_f32
//   NONE-NOT: nvvm.wgmma
//       NONE: return
func.func @f16_f32(%q: tensor<2x?x32xf16>, %k: tensor<2x?x32xf16>, %v: tensor<2x?x32xf16>) -> tensor<2x?x32xf16> {
  %o, %s, %z = linattn.scan forward %q, %k, %v : tensor<2x?x32xf16>, tensor<2x?x32xf16>, tensor<2x?x32xf16> -> tensor<2x?x32xf16>, tensor<2x32x32xf32>, tensor<2x32xf32>
  return %o : tensor<2x?x32xf16>
}

// -----

// f16 at F = 64: the scores by wgmma, the state update by mma.sync (V_c
// padded, 16-byte aligned).
// CHECK-LABEL: func.func @f16_f64
//       CHECK: gpu.func @linattn_scan_chunked_forward_elu_normalized_3(
//  CHECK-SAME: workgroup(%{{.*}} : memref<4096xf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<4096xf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<4608xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64},
//       CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 32, k = 16>
//   CHECK-NOT: <m = 64, n = 64, k = 16>
//       CHECK: gpu.return
func.func @f16_f64(%q: tensor<2x4x?x64xf16>, %k: tensor<2x4x?x64xf16>, %v: tensor<2x4x?x64xf16>) -> tensor<2x4x?x64xf16> {
  %fq = linattn.feature_map elu %q : tensor<2x4x?x64xf16> -> tensor<2x4x?x64xf16>
  %fk = linattn.feature_map elu %k : tensor<2x4x?x64xf16> -> tensor<2x4x?x64xf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x4x?x64xf16>, tensor<2x4x?x64xf16>, tensor<2x4x?x64xf16> -> tensor<2x4x?x64xf16>, tensor<2x4x64x64xf32>, tensor<2x4x64xf32>
  return %o : tensor<2x4x?x64xf16>
}
