// prefetch-chunks=d: the chunk loops that stage synchronously prefetch into
// L2, as they stage a chunk, the rows of the chunk d chunks ahead: each
// 16-byte staging group of φ(Q), φ(K) and V that starts its row or a
// 128-byte line issues the inline PTX "prefetch.L2 [$0];" at its own
// address plus d·C rows (minus in a reverse scan), if its token is in that
// chunk (none past the block's positions). Async copies into one slot
// prefetch the same way as they are issued (convert-linattn-to-gpu-copy-
// stages.mlir); never async copies into two or more, which have the next
// chunk in flight already. By default (-1) one chunk ahead with one slot
// (copy-stages=1, and f32 at F = 128, whose second slots would shrink the
// chunks), none elsewhere.

// RUN: linattn-opt %s --convert-linattn-to-gpu="prefetch-chunks=2 sequence-parallel-blocks=0 async-copies=false wgmma=false narrow-offset-limit=2147483648" --canonicalize --cse -split-input-file | FileCheck %s
// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0 async-copies=false wgmma=false narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=NONE
// RUN: linattn-opt %s --convert-linattn-to-gpu="prefetch-chunks=2 sequence-parallel-blocks=0 wgmma=false narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=NONE
// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32=true sequence-parallel-blocks=0 wgmma=false narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=AUTO
// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32=true prefetch-chunks=0 sequence-parallel-blocks=0 wgmma=false narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=NONE
// RUN: linattn-opt %s --convert-linattn-to-gpu="tf32=true async-copies=false sequence-parallel-blocks=0 wgmma=false narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=NONE
// RUN: not linattn-opt %s --convert-linattn-to-gpu="prefetch-chunks=-2" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not linattn-opt %s --convert-linattn-to-gpu="prefetch-chunks=1025" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: prefetch-chunks must be between 0 and 1024, or -1 (automatic)

// By default the 16-bit scans copy asynchronously and the readout stages
// synchronously as it always does: no prefetch.
// AUTO-LABEL: func.func @forward
//   AUTO-NOT: llvm.inline_asm
// AUTO-LABEL: func.func @reverse
//   AUTO-NOT: llvm.inline_asm
// AUTO-LABEL: func.func @readout
//   AUTO-NOT: llvm.inline_asm

// C = 64, F = 64: the chunk two ahead starts 128 tokens on, 8192 elements of
// φ(Q) and φ(K) further; a group prefetches where it starts a row or its
// address is within 16 bytes of a line start.
// CHECK-LABEL: func.func @forward
//       CHECK: gpu.func @linattn_scan_chunked_forward_elu_normalized_3(
//       CHECK: scf.for %[[T0:.*]] = %{{.*}} to %[[END:.*]] step %c64
//       CHECK: %[[AHEAD:.*]] = arith.addi %[[T0]], %c128 : index
//       CHECK: arith.cmpi ult, %[[AHEAD]], %[[END]] : index
//       CHECK: arith.addi %{{.*}}, %c8192 : index
//       CHECK: arith.remui %{{.*}}, %c128 : index
//       CHECK: arith.cmpi ult, %{{.*}}, %c16 : index
//       CHECK: llvm.inline_asm has_side_effects "prefetch.L2 [$0];", "l" %{{.*}} : (i64) -> ()
//       CHECK: llvm.inline_asm has_side_effects "prefetch.L2 [$0];", "l" %{{.*}} : (i64) -> ()
//       CHECK: llvm.inline_asm has_side_effects "prefetch.L2 [$0];", "l" %{{.*}} : (i64) -> ()
//   CHECK-NOT: llvm.inline_asm
//       CHECK: gpu.return
// NONE-LABEL: func.func @forward
//   NONE-NOT: llvm.inline_asm
//       NONE: return
func.func @forward(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>, tensor<2x4x64x64xf32>, tensor<2x4x64xf32>
  return %o : tensor<2x4x?x64xbf16>
}

// -----

// A reverse scan walks its rows down: the chunk ahead is 8192 elements back.
// CHECK-LABEL: func.func @reverse
//       CHECK: gpu.func @linattn_scan_chunked_reverse_features_3(
//       CHECK: arith.subi %{{.*}}, %c8192 : index
//       CHECK: llvm.inline_asm has_side_effects "prefetch.L2 [$0];"
// NONE-LABEL: func.func @reverse
//   NONE-NOT: llvm.inline_asm
//       NONE: return
func.func @reverse(%q: tensor<2x?x64xf16>, %k: tensor<2x?x64xf16>, %v: tensor<2x?x64xf16>) -> tensor<2x?x64xf16> {
  %o, %s, %z = linattn.scan reverse %q, %k, %v : tensor<2x?x64xf16>, tensor<2x?x64xf16>, tensor<2x?x64xf16> -> tensor<2x?x64xf16>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x?x64xf16>
}

// -----

// The linear form's readout stages only φ(Q): one prefetch per group.
// CHECK-LABEL: func.func @readout
//       CHECK: gpu.func @linattn_query_readout_chunked_features_0(
//       CHECK: llvm.inline_asm has_side_effects "prefetch.L2 [$0];"
//   CHECK-NOT: llvm.inline_asm
//       CHECK: gpu.return
// NONE-LABEL: func.func @readout
//   NONE-NOT: llvm.inline_asm
//       NONE: return
func.func @readout(%q: tensor<2x?x64xbf16>, %s: tensor<2x64x64xf32>) -> tensor<2x?x64xbf16> {
  %o = linattn.query_readout %q, %s : tensor<2x?x64xbf16>, tensor<2x64x64xf32> -> tensor<2x?x64xbf16>
  return %o : tensor<2x?x64xbf16>
}

// -----

// tf32 at F = 128: two slots would shrink the chunks, so the chunk loops
// copy a chunk at a time into one and, by default, prefetch the next chunk
// (C = 32: 32 rows of 128 elements ahead) as they issue one's copies. The
// segment states stage φ(K_c) and V_c only, which fit two slots: the next
// chunk in flight, no prefetch. With prefetch-chunks=0 or
// async-copies=false, none.
// AUTO-LABEL: func.func @tf32_f128
//       AUTO: gpu.func @linattn_scan_segment_states_forward_elu_normalized_0(
//   AUTO-NOT: llvm.inline_asm
//       AUTO: nvvm.cp.async.wait.group 1
//   AUTO-NOT: llvm.inline_asm
//       AUTO: gpu.func @linattn_scan_segment_outputs_forward_elu_normalized_2(
//       AUTO: nvgpu.device_async_copy
//       AUTO: llvm.inline_asm has_side_effects "prefetch.L2 [$0];"
//       AUTO: nvvm.cp.async.wait.group 0
//       AUTO: gpu.func @linattn_scan_chunked_forward_elu_normalized_3(
//       AUTO: nvgpu.device_async_copy
//       AUTO: llvm.inline_asm has_side_effects "prefetch.L2 [$0];"
//       AUTO: nvvm.cp.async.wait.group 0
//       AUTO: gpu.return
// NONE-LABEL: func.func @tf32_f128
//   NONE-NOT: llvm.inline_asm
//       NONE: return
func.func @tf32_f128(%q: tensor<2x4x?x128xf32>, %k: tensor<2x4x?x128xf32>, %v: tensor<2x4x?x128xf32>) -> tensor<2x4x?x128xf32> {
  %fq = linattn.feature_map elu %q : tensor<2x4x?x128xf32> -> tensor<2x4x?x128xf32>
  %fk = linattn.feature_map elu %k : tensor<2x4x?x128xf32> -> tensor<2x4x?x128xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x4x?x128xf32>, tensor<2x4x?x128xf32>, tensor<2x4x?x128xf32> -> tensor<2x4x?x128xf32>, tensor<2x4x128x128xf32>, tensor<2x4x128xf32>
  return %o : tensor<2x4x?x128xf32>
}

// -----

// tf32 at F = 64 copies asynchronously: no prefetch.
// AUTO-LABEL: func.func @tf32_f64
//       AUTO: nvgpu.device_async_copy
//   AUTO-NOT: llvm.inline_asm
//       AUTO: return
func.func @tf32_f64(%q: tensor<2x4x?x64xf32>, %k: tensor<2x4x?x64xf32>, %v: tensor<2x4x?x64xf32>) -> tensor<2x4x?x64xf32> {
  %fq = linattn.feature_map elu %q : tensor<2x4x?x64xf32> -> tensor<2x4x?x64xf32>
  %fk = linattn.feature_map elu %k : tensor<2x4x?x64xf32> -> tensor<2x4x?x64xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32> -> tensor<2x4x?x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64xf32>
  return %o : tensor<2x4x?x64xf32>
}
