// REQUIRES: cuda-toolkit
// The tf32 chunked scan at F = 128 down to PTX and ptxas. Its V_c (32 x 64)
// and S (128 x 64) tiles have no room for the padding that keeps their
// element-wise B-fragment gathers conflict-free: their rows are unpadded,
// each 16-byte unit XOR-swizzled by row (the padded layout has no xor at
// all; convert-linattn-to-gpu-dynamic-value-tiles.mlir checks the tiles
// and the paired state stores). The swizzled addresses take registers (an XOR per
// column offset, hoisted out of the chunk loop): ptxas must still fit the
// chunk loop without spilling, tf32 and tf32x3.

// RUN: linattn-opt %s --linattn-lower-to-nvvm="format=isa tf32=true sequence-parallel-blocks=0" | %linattn_python %S/Inputs/gpu_binary.py --ptx > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 -O3 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: linattn-opt %s --linattn-lower-to-nvvm="format=isa tf32x3=true sequence-parallel-blocks=0" | %linattn_python %S/Inputs/gpu_binary.py --ptx > %t.x3.ptx
// RUN: %ptxas -arch=sm_90 -O3 -v %t.x3.ptx -o %t.x3.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK-LABEL: .visible .entry linattn_scan_chunked_wide_forward_elu_normalized_0(
// CHECK: xor.b{{32|64}}
// CHECK: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK: ret;

// PTXAS: Compiling entry function 'linattn_scan_chunked_wide_forward_elu_normalized_0'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
func.func @tf32_f128(%q: tensor<2x1000x128xf32>, %k: tensor<2x1000x128xf32>, %v: tensor<2x1000x128xf32>) -> tensor<2x1000x128xf32> {
  %fq = linattn.feature_map elu %q : tensor<2x1000x128xf32> -> tensor<2x1000x128xf32>
  %fk = linattn.feature_map elu %k : tensor<2x1000x128xf32> -> tensor<2x1000x128xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x1000x128xf32>, tensor<2x1000x128xf32>, tensor<2x1000x128xf32> -> tensor<2x1000x128xf32>, tensor<2x128x128xf32>, tensor<2x128xf32>
  return %o : tensor<2x1000x128xf32>
}
