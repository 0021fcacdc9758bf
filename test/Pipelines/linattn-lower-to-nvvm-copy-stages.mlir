// REQUIRES: cuda-toolkit
// copy-stages=3 states-copy-stages=3 down to PTX and ptxas (sm_90a, with
// wgmma-chunks=false: at F = 128 chunks of 32): the
// chunk loops and segment states keep the copies of the next two chunks in
// flight, three slots of φ(Q_c), φ(K_c) and V_c. Before the loop two
// commit groups (the first two chunks), in it one commit and a wait for
// all but the two newest groups. ptxas must fit every kernel without
// spilling: at F = 128 the benchmark's function takes 163 registers (164
// with two slots), the normalized chunk loop 215 (159: two blocks per SM
// instead of three, which its 87 KiB of shared memory allow anyway), the
// segment states at F = 64 (φ(K_c) and V_c in wgmma's swizzle, three slots
// of 64 x 64: 48 KiB of static shared memory) 162 (158).

// RUN: linattn-opt %s --linattn-lower-to-nvvm="wgmma-chunks=false format=isa copy-stages=3 states-copy-stages=3" | %linattn_python %S/Inputs/gpu_binary.py --ptx > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -O3 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS --implicit-check-not="{{[1-9][0-9]*}} bytes spill"

// CHECK-LABEL: .visible .entry linattn_scan_chunked_wide_forward_elu_normalized_3(
// CHECK: cp.async.commit_group;
// CHECK: cp.async.commit_group;
// CHECK: cp.async.commit_group;
// CHECK-NEXT: cp.async.wait_group {{[[:space:]]*}}2;
// CHECK-NOT: cp.async.wait_group
// CHECK-LABEL: .visible .entry linattn_scan_chunked_wide_forward_elu_4(
// CHECK: cp.async.wait_group {{[[:space:]]*}}2;
// CHECK-LABEL: .visible .entry linattn_scan_segment_states_forward_elu_5(
// CHECK: .shared .align 1024 .b8 __wg_linattn_scan_segment_states_forward_elu_5_0[24576];
// CHECK: .shared .align 1024 .b8 __wg_linattn_scan_segment_states_forward_elu_5_1[24576];
// CHECK: cp.async.wait_group {{[[:space:]]*}}2;

// PTXAS: Compiling entry function 'linattn_scan_segment_outputs_wide_forward_elu_7'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'linattn_scan_segment_states_forward_elu_5'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'linattn_scan_chunked_wide_forward_elu_4'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Compiling entry function 'linattn_scan_chunked_wide_forward_elu_normalized_3'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
func.func @normalized(%q: tensor<2x16x?x128xbf16>, %k: tensor<2x16x?x128xbf16>, %v: tensor<2x16x?x128xbf16>) -> tensor<2x16x?x128xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x16x?x128xbf16> -> tensor<2x16x?x128xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x16x?x128xbf16> -> tensor<2x16x?x128xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x16x?x128xbf16>, tensor<2x16x?x128xbf16>, tensor<2x16x?x128xbf16> -> tensor<2x16x?x128xbf16>, tensor<2x16x128x128xf32>, tensor<2x16x128xf32>
  return %o : tensor<2x16x?x128xbf16>
}

// The benchmark's function at D = 128, batch-parallel (B8·H16).
func.func @unnormalized(%q: tensor<8x16x16384x128xbf16>, %k: tensor<8x16x16384x128xbf16>, %v: tensor<8x16x16384x128xbf16>) -> tensor<8x16x16384x128xbf16> {
  %fq = linattn.feature_map elu %q : tensor<8x16x16384x128xbf16> -> tensor<8x16x16384x128xbf16>
  %fk = linattn.feature_map elu %k : tensor<8x16x16384x128xbf16> -> tensor<8x16x16384x128xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<8x16x16384x128xbf16>, tensor<8x16x16384x128xbf16>, tensor<8x16x16384x128xbf16> -> tensor<8x16x16384x128xbf16>, tensor<8x16x128x128xf32>, tensor<8x16x128xf32>
  return %o : tensor<8x16x16384x128xbf16>
}

// The benchmark's function at D = 64, sequence-parallel (B8·H16: 128
// batch-parallel blocks, fewer than one per SM).
func.func @unnormalized64(%q: tensor<8x16x16384x64xbf16>, %k: tensor<8x16x16384x64xbf16>, %v: tensor<8x16x16384x64xbf16>) -> tensor<8x16x16384x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<8x16x16384x64xbf16> -> tensor<8x16x16384x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<8x16x16384x64xbf16> -> tensor<8x16x16384x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<8x16x16384x64xbf16>, tensor<8x16x16384x64xbf16>, tensor<8x16x16384x64xbf16> -> tensor<8x16x16384x64xbf16>, tensor<8x16x64x64xf32>, tensor<8x16x64xf32>
  return %o : tensor<8x16x16384x64xbf16>
}
