// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-outputs=true sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=ON
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=OFF
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-outputs=true scores-in-registers=true sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=REGS
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-outputs=true wgmma=false sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=PORTABLE
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-outputs=true chip=sm_80 sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=PORTABLE
// RUN: linattn-opt %s --convert-linattn-to-gpu="wgmma-outputs=true" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SEG

// wgmma-outputs: the chunk loops on one warpgroup whose scores and state
// update take wgmma (bf16, F = 64, chunks of 64, value tiles of whole
// 64-column blocks) compute O_c = P V_c + φ(Q_c) S by wgmma as well. The
// masked scores go to their shared tile K-major and the state, rounded to
// bf16, to its tile MN-major (feature rows of 128-byte blocks), both in the
// 128-byte swizzle and so 1024-byte aligned like the staged tiles; an
// async-proxy fence before the barrier after those stores; then per chunk
// eight m64n64k16 into one accumulator, four over the keys (the scores by
// V_c, both row layouts: A K-major, B MN-major) and four over the features
// (φ(Q_c) by the state), where each warp issued 64 mma.sync.
//      ON-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
// The swizzled tiles need no padding: 4096 elements each, not 64 rows of 72.
//       ON-SAME: workgroup(%{{.*}} : memref<8192xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<8192xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<8192xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<4096xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<4096xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}) kernel
// The scores of all 64 keys in one block (m64n64k16, one wait a chunk
// fewer than two blocks of 32).
//   ON-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <{{zero|one}}>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
//        ON-NOT: nvvm.wgmma.mma_async
//            ON: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
//       ON-NEXT: gpu.barrier
//            ON: nvvm.wgmma.fence.aligned
//            ON: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
//   ON-COUNT-7: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
//       ON-NEXT: nvvm.wgmma.commit.group.sync.aligned
// The state update's group right after, unconditionally (the last chunk's
// update is unused), and only the outputs' waited for before O's stores.
//        ON-NOT: nvvm.wgmma.wait
//            ON: nvvm.wgmma.fence.aligned
//   ON-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
//       ON-NEXT: nvvm.wgmma.commit.group.sync.aligned
//       ON-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
//            ON: vector.store
//            ON: nvvm.wgmma.wait.group.sync.aligned 0
//        ON-NOT: nvvm.mma.sync
//        ON-NOT: nvvm.wgmma.mma_async
//            ON: gpu.return
// Without the option: P V_c and φ(Q_c) S by mma.sync from padded tiles.
//     OFF-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//      OFF-SAME: %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4608xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
//  OFF-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>
//           OFF: nvvm.mma.sync
//   OFF-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>]
//       OFF-NOT: nvvm.wgmma.mma_async
//           OFF: gpu.return
// With the scores in registers too (scores-in-registers), P V_c takes them
// as wgmma's A in registers, where they were rounded from the scores'
// accumulators: four m64n64k16 of inline PTX (NVVM's op has no register A),
// B = V_c MN-major (transposed), chained through the accumulators; then
// φ(Q_c) S into them. No scores tile: 57344 bytes of shared memory, four
// blocks per H100 SM where the shared tile leaves three.
//   REGS-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//    REGS-SAME: workgroup(%{{.*}} : memref<8192xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<8192xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<8192xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<4096xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}) kernel
//  REGS-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <{{zero|one}}>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
//          REGS: nvvm.wgmma.wait.group.sync.aligned 0
//      REGS-NOT: nvvm.mma.sync
//          REGS: nvvm.wgmma.fence.aligned
//      REGS-NOT: nvvm.wgmma.mma_async
//  REGS-COUNT-4: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $37, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}, $31}, {$32, $33, $34, $35}, $36, p, 1, 1, 1;\0A}", "=f,{{.*}},=f,r,r,r,r,l,r,0,1,{{.*}},31"
//  REGS-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
//     REGS-NEXT: nvvm.wgmma.commit.group.sync.aligned
//  REGS-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>]
//      REGS-NOT: nvvm.mma.sync
//      REGS-NOT: nvvm.wgmma.mma_async
//          REGS: gpu.return
// Without wgmma (the option, or the chip), nothing changes.
// PORTABLE-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//   PORTABLE-NOT: nvvm.wgmma.mma_async
//       PORTABLE: gpu.return
func.func @f64(%fq: tensor<2x1000x64xbf16>, %fk: tensor<2x1000x64xbf16>, %v: tensor<2x1000x64xbf16>) -> tensor<2x1000x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16> -> tensor<2x1000x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x1000x64xbf16>
}

// -----

// Normalized: the denominators divide the wgmma's accumulators row by row
// as they divided mma.sync's (the same layout).
//      ON-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_normalized_0(
//   ON-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <{{zero|one}}>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
//            ON: nvvm.fence.proxy
//   ON-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <{{zero|one}}>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
//        ON-NOT: nvvm.mma.sync
//            ON: gpu.return
func.func @normalized(%fq: tensor<2x1000x64xbf16>, %fk: tensor<2x1000x64xbf16>, %v: tensor<2x1000x64xbf16>) -> tensor<2x1000x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16>, tensor<2x1000x64xbf16> -> tensor<2x1000x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x1000x64xbf16>
}

// -----

// f16 scales the state's columns (its update on mma.sync): the option does
// not apply.
//      ON-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//        ON-NOT: A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
//            ON: gpu.return
func.func @f16(%fq: tensor<2x1000x64xf16>, %fk: tensor<2x1000x64xf16>, %v: tensor<2x1000x64xf16>) -> tensor<2x1000x64xf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x1000x64xf16>, tensor<2x1000x64xf16>, tensor<2x1000x64xf16> -> tensor<2x1000x64xf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x1000x64xf16>
}

// -----

// F = 128 with the default's chunks of 64 (wgmma-chunks) runs on two
// warpgroups, each with half the keys' scores and half the value tile's
// columns: its outputs are m64n32k16 from column 32·i of V_c and of the
// state (a start within their 128-byte rows; the warpgroup's index from
// lane 0, a shuffle, so that ptxas keeps the descriptors in uniform
// registers), four steps over the keys and eight over the features; the
// kernel asks for the two blocks per SM its shape was chosen for (ptxas
// alone took 152 registers, one block).
//      ON-LABEL: gpu.func @linattn_scan_chunked_wide_forward_features_0(
//       ON-SAME: %{{.*}} : memref<4096xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}, %{{.*}} : memref<8192xbf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64}) kernel attributes {known_block_size = array<i32: 256, 1, 1>, nvvm.minctasm = 2 : i32}
//   ON-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>, D[<f32>, <{{zero|one}}>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
//            ON: nvvm.fence.proxy
//            ON: gpu.shuffle  idx
//  ON-COUNT-12: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>, D[<f32>, <{{zero|one}}>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
//   ON-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
//        ON-NOT: nvvm.mma.sync
//            ON: gpu.return
// Without the option, no bound: ptxas's 119 registers give two blocks.
//           OFF: %{{.*}} : memref<9216xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
func.func @f128(%fq: tensor<2x1000x128xbf16>, %fk: tensor<2x1000x128xbf16>, %v: tensor<2x1000x128xbf16>) -> tensor<2x1000x128xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x1000x128xbf16>, tensor<2x1000x128xbf16>, tensor<2x1000x128xbf16> -> tensor<2x1000x128xbf16>, tensor<2x128x128xf32>, tensor<2x128xf32>
  return %o : tensor<2x1000x128xbf16>
}

// -----

// Sequence-parallel: the segment outputs' chunk loop takes the option; the
// segment states have no outputs.
//   SEG-LABEL: gpu.func @linattn_scan_segment_states_forward_features_0(
// SEG-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>]
//     SEG-NOT: nvvm.wgmma.mma_async
//   SEG-LABEL: gpu.func @linattn_scan_segment_outputs_wide_forward_features_2(
// SEG-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <{{zero|one}}>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// SEG-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <{{zero|one}}>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// SEG-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>]
//     SEG-NOT: nvvm.mma.sync
//         SEG: gpu.return
func.func @seg(%fq: tensor<80x4096x64xbf16>, %fk: tensor<80x4096x64xbf16>, %v: tensor<80x4096x64xbf16>) -> tensor<80x4096x64xbf16> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<80x4096x64xbf16>, tensor<80x4096x64xbf16>, tensor<80x4096x64xbf16> -> tensor<80x4096x64xbf16>, tensor<80x64x64xf32>, tensor<80x64xf32>
  return %o : tensor<80x4096x64xbf16>
}
