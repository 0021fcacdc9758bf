// REQUIRES: cuda-toolkit
// wgmma-chunks at F = 128 (bf16) down to PTX and ptxas: chunks of 64 on
// two warpgroups, whose scores (m64n32k16) and state update (m64n64k16) take
// wgmma (the module then targets sm_90a), in about 110 KiB of dynamic shared
// memory, two blocks per H100 SM. ptxas must fit the chunk loops, the
// batch-parallel ones and the sequence-parallel segments', without
// spilling: the benchmark's unnormalized function takes 119 registers (two
// blocks of eight warps per SM). The normalized segments' outputs ask for
// two blocks per SM (.minnctapersm 2) and fit them, 126 registers, where
// ptxas alone took 144 (181 before their key sums' swizzled addresses were
// a base and constants; one block); the small grid's batch-parallel loop
// (four warps) fits two blocks either way. The segment-states kernel asks
// ptxas for the registers of its accumulators (32 a thread) and 96 more:
// two blocks per SM as well (.minnctapersm 2: 128 registers instead of
// 167).

// RUN: linattn-opt %s --linattn-lower-to-nvvm="format=isa wgmma-chunks=true" | %linattn_python %S/Inputs/gpu_binary.py --ptx > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -O3 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS --implicit-check-not="{{[1-9][0-9]*}} bytes spill"

// CHECK: .target sm_90a
// CHECK-LABEL: .visible .entry linattn_scan_segment_states_forward_elu_normalized_0(
// CHECK: .minnctapersm 2
// CHECK-LABEL: .visible .entry linattn_scan_segment_outputs_wide_forward_elu_normalized_2(
// CHECK: .maxntid 256, 1, 1
// CHECK-NEXT: .minnctapersm 2
// CHECK: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// CHECK-LABEL: .visible .entry linattn_scan_chunked_wide_forward_elu_normalized_3(
// CHECK: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// CHECK-LABEL: .visible .entry linattn_scan_chunked_wide_forward_elu_4(
// CHECK: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16
// CHECK-LABEL: .visible .entry linattn_scan_chunked_wide_forward_elu_normalized_5(
// CHECK: .maxntid 256, 1, 1
// CHECK-NEXT: .minnctapersm 2
// CHECK: wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16

// PTXAS: Compiling entry function 'linattn_scan_chunked_wide_forward_elu_normalized_5'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NEXT: Used {{([1-9]?[0-9]|1[01][0-9]|12[0-8])}} registers
// PTXAS: Compiling entry function 'linattn_scan_chunked_wide_forward_elu_4'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'linattn_scan_chunked_wide_forward_elu_normalized_3'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'linattn_scan_segment_outputs_wide_forward_elu_normalized_2'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NEXT: Used {{([1-9]?[0-9]|1[01][0-9]|12[0-8])}} registers
// PTXAS: Compiling entry function 'linattn_scan_segment_states_forward_elu_normalized_0'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
func.func @normalized(%q: tensor<2x16x?x128xbf16>, %k: tensor<2x16x?x128xbf16>, %v: tensor<2x16x?x128xbf16>) -> tensor<2x16x?x128xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x16x?x128xbf16> -> tensor<2x16x?x128xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x16x?x128xbf16> -> tensor<2x16x?x128xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x16x?x128xbf16>, tensor<2x16x?x128xbf16>, tensor<2x16x?x128xbf16> -> tensor<2x16x?x128xbf16>, tensor<2x16x128x128xf32>, tensor<2x16x128xf32>
  return %o : tensor<2x16x?x128xbf16>
}

// The benchmark's function: unnormalized, O only, batch-parallel (B8·H16).
func.func @unnormalized(%q: tensor<8x16x16384x128xbf16>, %k: tensor<8x16x16384x128xbf16>, %v: tensor<8x16x16384x128xbf16>) -> tensor<8x16x16384x128xbf16> {
  %fq = linattn.feature_map elu %q : tensor<8x16x16384x128xbf16> -> tensor<8x16x16384x128xbf16>
  %fk = linattn.feature_map elu %k : tensor<8x16x16384x128xbf16> -> tensor<8x16x16384x128xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<8x16x16384x128xbf16>, tensor<8x16x16384x128xbf16>, tensor<8x16x16384x128xbf16> -> tensor<8x16x16384x128xbf16>, tensor<8x16x128x128xf32>, tensor<8x16x128xf32>
  return %o : tensor<8x16x16384x128xbf16>
}

// The normalized function batch-parallel at B8·H16 (256 blocks of eight
// warps): two blocks per SM, as for the unnormalized one.
func.func @normalized_batch(%q: tensor<8x16x16384x128xbf16>, %k: tensor<8x16x16384x128xbf16>, %v: tensor<8x16x16384x128xbf16>) -> tensor<8x16x16384x128xbf16> {
  %fq = linattn.feature_map elu %q : tensor<8x16x16384x128xbf16> -> tensor<8x16x16384x128xbf16>
  %fk = linattn.feature_map elu %k : tensor<8x16x16384x128xbf16> -> tensor<8x16x16384x128xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<8x16x16384x128xbf16>, tensor<8x16x16384x128xbf16>, tensor<8x16x16384x128xbf16> -> tensor<8x16x16384x128xbf16>, tensor<8x16x128x128xf32>, tensor<8x16x128xf32>
  return %o : tensor<8x16x16384x128xbf16>
}
