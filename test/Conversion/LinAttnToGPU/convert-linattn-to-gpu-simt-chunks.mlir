// RUN: linattn-opt %s --convert-linattn-to-gpu="simt-chunks=true" --canonicalize --cse -split-input-file | FileCheck %s
// RUN: linattn-opt %s --convert-linattn-to-gpu="simt-chunks=true chip=sm_75" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SM75
// RUN: linattn-opt %s --convert-linattn-to-gpu --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=OFF
// RUN: linattn-opt %s --convert-linattn-to-gpu="simt-chunks=true" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: linattn-opt %s --convert-linattn-to-gpu="simt-chunks=true scan-kernel=recurrent" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=RECURRENT

// simt-chunks: the scans that take the recurrent kernel (f32 and f64
// states) run chunk by chunk on CUDA cores, in blocks of 256 threads per
// batch element and value tile. Shared memory, in elements: φ(Q_c) and
// φ(K_c) of 32 tokens in rows padded to F + 4, V_c in rows padded to the
// tile + 4 (two slots each where cp.async copies the next chunks), S (F ×
// tile, in rows padded to the tile + 4), the scores in rows of 36, the
// denominators (32, normalized) and z (F, where it is needed); within the
// 99 KiB every GPU of sm_80 and later allows.

// F = 64, normalized, f32: tiles of 64 columns in two slots (72.9 KiB),
// copied by cp.async; the denominators' sums across lanes, the outputs
// divided by them. One block per batch element (2 × 16), registers for two
// blocks per SM asked of ptxas.
// CHECK-LABEL: func.func @normalized(
//       CHECK: call @__linattn_launch_linattn_scan_simt_forward_features_normalized_0(%c32, %c1, %c1, %c256, %c1, %c1,
//       CHECK: gpu.func @linattn_scan_simt_forward_features_normalized_0(
//  CHECK-SAME: workgroup(%{{.*}} : memref<4352xf32, {{.*}}, %{{.*}} : memref<4352xf32, {{.*}}, %{{.*}} : memref<4352xf32, {{.*}}, %{{.*}} : memref<4352xf32, {{.*}}, %{{.*}} : memref<1152xf32, {{.*}}, %{{.*}} : memref<32xf32, {{.*}}, %{{.*}} : memref<64xf32, {{.*}})
//  CHECK-SAME: known_block_size = array<i32: 256, 1, 1>, nvvm.minctasm = 2 : i32
//       CHECK: nvgpu.device_async_copy
//       CHECK: nvvm.cp.async.commit.group
//       CHECK: nvvm.cp.async.wait.group 1
//       CHECK: gpu.shuffle
//       CHECK: arith.divf
//       CHECK: gpu.return
// SM75-LABEL: func.func @normalized(
//       SM75: gpu.func @linattn_scan_simt_forward_features_normalized_0(
//   SM75-NOT: nvgpu.device_async_copy
//       SM75: gpu.return
// OFF-LABEL: func.func @normalized(
//       OFF: call @__linattn_launch_linattn_scan_forward_features_normalized_0(
func.func @normalized(%q: tensor<2x16x300x64xf32>, %k: tensor<2x16x300x64xf32>, %v: tensor<2x16x300x64xf32>) -> tensor<2x16x300x64xf32> {
  %o, %s, %z = linattn.scan forward %q, %k, %v normalize(eps = 1.0e-06) : tensor<2x16x300x64xf32>, tensor<2x16x300x64xf32>, tensor<2x16x300x64xf32> -> tensor<2x16x300x64xf32>, tensor<2x16x64x64xf32>, tensor<2x16x64xf32>
  return %o : tensor<2x16x300x64xf32>
}

// -----

// F = Dv = 128, f32 with fused elu maps: two tiles of 64 columns of one
// slot each (80.0 KiB; two slots, or tiles of 128, pass 99 KiB): each
// chunk's cp.async copies issued together (16 bytes where aligned), the
// next chunk's rows prefetched into L2, then the wait for all of them and
// elu applied in place; unnormalized with z unused: neither denominators
// nor z.
// CHECK-LABEL: func.func @wide_values(
//       CHECK: call @__linattn_launch_linattn_scan_simt_forward_elu_0(%c8, %c2, %c1, %c256, %c1, %c1,
//       CHECK: gpu.func @linattn_scan_simt_forward_elu_0(
//  CHECK-SAME: workgroup(%{{.*}} : memref<4224xf32, {{.*}}, %{{.*}} : memref<4224xf32, {{.*}}, %{{.*}} : memref<2176xf32, {{.*}}, %{{.*}} : memref<8704xf32, {{.*}}, %{{.*}} : memref<1152xf32, {{.*}}, %{{.*}} : memref<1xf32, {{.*}}, %{{.*}} : memref<1xf32, {{.*}})
//       CHECK: scf.for
//       CHECK: nvgpu.device_async_copy {{.*}}, 4, %{{.*}} {bypassL1}
//       CHECK: llvm.inline_asm has_side_effects "prefetch.L2 [$0];"
//       CHECK: nvvm.cp.async.commit.group
//  CHECK-NEXT: nvvm.cp.async.wait.group 0
//   CHECK-NOT: gpu.shuffle
//   CHECK-NOT: arith.divf
//       CHECK: math.exp
//       CHECK: gpu.return
func.func @wide_values(%q: tensor<8x1000x128xf32>, %k: tensor<8x1000x128xf32>, %v: tensor<8x1000x128xf32>) -> tensor<8x1000x128xf32> {
  %fq = linattn.feature_map elu %q : tensor<8x1000x128xf32> -> tensor<8x1000x128xf32>
  %fk = linattn.feature_map elu %k : tensor<8x1000x128xf32> -> tensor<8x1000x128xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<8x1000x128xf32>, tensor<8x1000x128xf32>, tensor<8x1000x128xf32> -> tensor<8x1000x128xf32>, tensor<8x128x128xf32>, tensor<8x128xf32>
  return %o : tensor<8x1000x128xf32>
}

// -----

// f64, reverse, from an initial state, writing S and z: one slot (two
// pass 99 KiB only at tiles of 64; a tile of 32 takes two slots nowhere),
// 8-byte copies; F = 32 (rows of 36, S's and V_c's too), Dv = 20 in a
// tile of 32 columns.
// CHECK-LABEL: func.func @double(
//       CHECK: call @__linattn_launch_linattn_scan_simt_reverse_features_0(%c4, %c1, %c1, %c256, %c1, %c1,
//       CHECK: gpu.func @linattn_scan_simt_reverse_features_0(%{{.*}}: memref<?xf64>, %{{.*}}: memref<?xf64>, %{{.*}}: memref<?xf64>, %{{.*}}: memref<?xf64>, %{{.*}}: memref<?xf64>, %{{.*}}: memref<?xf64>, %{{.*}}: memref<?xf64>, %{{.*}}: memref<?xf64>, %{{.*}}: index, %{{.*}}: index)
//  CHECK-SAME: workgroup(%{{.*}} : memref<1152xf64, {{.*}}, %{{.*}} : memref<1152xf64, {{.*}}, %{{.*}} : memref<1152xf64, {{.*}}, %{{.*}} : memref<1152xf64, {{.*}}, %{{.*}} : memref<1152xf64, {{.*}}, %{{.*}} : memref<1xf64, {{.*}}, %{{.*}} : memref<32xf64, {{.*}})
//       CHECK: nvgpu.device_async_copy {{.*}}, 1, %{{.*}} : memref<?xf64> to memref<1152xf64
//       CHECK: nvvm.cp.async.wait.group 0
//       CHECK: gpu.return
func.func @double(%q: tensor<4x100x32xf64>, %k: tensor<4x100x32xf64>, %v: tensor<4x100x20xf64>, %s0: tensor<4x32x20xf64>, %z0: tensor<4x32xf64>) -> (tensor<4x100x20xf64>, tensor<4x32x20xf64>, tensor<4x32xf64>) {
  %o, %s, %z = linattn.scan reverse %q, %k, %v init(%s0, %z0) : tensor<4x100x32xf64>, tensor<4x100x32xf64>, tensor<4x100x20xf64>, tensor<4x32x20xf64>, tensor<4x32xf64> -> tensor<4x100x20xf64>, tensor<4x32x20xf64>, tensor<4x32xf64>
  return %o, %s, %z : tensor<4x100x20xf64>, tensor<4x32x20xf64>, tensor<4x32xf64>
}

// -----

// F = 256: more of S per thread than the kernel keeps in registers; the
// recurrent kernel, with a remark.
// REMARK: remark: simt-chunks: the chunkwise CUDA-core scan takes F from 1 to 128, not 256; the recurrent kernel instead
// CHECK-LABEL: func.func @wide_features(
//       CHECK: call @__linattn_launch_linattn_scan_forward_features_0(%c8, %c2, %c1, %c128,
//   CHECK-NOT: simt
func.func @wide_features(%q: tensor<8x100x256xf32>, %k: tensor<8x100x256xf32>, %v: tensor<8x100x64xf32>) -> tensor<8x100x64xf32> {
  %o, %s, %z = linattn.scan forward %q, %k, %v : tensor<8x100x256xf32>, tensor<8x100x256xf32>, tensor<8x100x64xf32> -> tensor<8x100x64xf32>, tensor<8x256x64xf32>, tensor<8x256xf32>
  return %o : tensor<8x100x64xf32>
}

// -----

// Sequence-parallel: 2 blocks of the chunkwise kernel, below half of the
// 264 that H100's SMs hold at once (two each by shared memory and
// registers), so segments of at least 1024 tokens, in units of the recurrent segment
// states kernel's staged blocks (32 tokens): 4 segments of 32 units. The
// segment states and the scan over them are the recurrent kernel's; the
// segments' outputs the chunkwise kernel's, grid 2 × 1 × 4.
// CHECK-LABEL: func.func @segments(
//       CHECK: call @__linattn_launch_linattn_scan_segment_states_forward_features_0(%c2, %c2, %c3, %c128, %c1, %c1, {{.*}}, %c4096, %c64, %c32, %c4)
//       CHECK: call @__linattn_launch_linattn_scan_segment_prefix_forward_features_1(
//       CHECK: call @__linattn_launch_linattn_scan_segment_outputs_simt_forward_features_2(%c2, %c1, %c4, %c256, %c1, %c1, {{.*}}, %c4096, %c64, %c32, %c4)
//       CHECK: gpu.func @linattn_scan_segment_outputs_simt_forward_features_2(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index)
//       CHECK: gpu.block_id  z
//       CHECK: gpu.return
func.func @segments(%q: tensor<2x4096x64xf32>, %k: tensor<2x4096x64xf32>, %v: tensor<2x4096x64xf32>) -> tensor<2x4096x64xf32> {
  %o, %s, %z = linattn.scan forward %q, %k, %v : tensor<2x4096x64xf32>, tensor<2x4096x64xf32>, tensor<2x4096x64xf32> -> tensor<2x4096x64xf32>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x4096x64xf32>
}

// -----

// 16-bit data take the tensor-core kernels, which simt-chunks leaves alone.
// CHECK-LABEL: func.func @bf16(
//       CHECK: call @__linattn_launch_linattn_scan_chunked_wide_forward_features_0(
//   CHECK-NOT: simt
// With scan-kernel=recurrent they take the chunkwise kernel on the f32
// state, each element loaded, converted and stored (cp.async converts
// nothing), the next chunk prefetched into L2.
// RECURRENT-LABEL: func.func @bf16(
//       RECURRENT: call @__linattn_launch_linattn_scan_simt_forward_features_0(%c8, %c1, %c1, %c256,
//       RECURRENT: gpu.func @linattn_scan_simt_forward_features_0(%{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: index, %{{.*}}: index)
//   RECURRENT-NOT: nvgpu.device_async_copy
//       RECURRENT: arith.extf
//       RECURRENT: prefetch.L2
//       RECURRENT: gpu.return
func.func @bf16(%q: tensor<8x100x64xbf16>, %k: tensor<8x100x64xbf16>, %v: tensor<8x100x64xbf16>) -> tensor<8x100x64xbf16> {
  %o, %s, %z = linattn.scan forward %q, %k, %v : tensor<8x100x64xbf16>, tensor<8x100x64xbf16>, tensor<8x100x64xbf16> -> tensor<8x100x64xbf16>, tensor<8x64x64xf32>, tensor<8x64xf32>
  return %o : tensor<8x100x64xbf16>
}

