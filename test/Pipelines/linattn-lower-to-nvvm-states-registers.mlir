// REQUIRES: cuda-toolkit
// The keys-only chunk kernels (the scan's segment states, the linear
// form's kv_summary) ask ptxas for the blocks per SM that leave each thread
// its share of the state's accumulators and 96 registers beside them (104
// without wgmma's state update): .minnctapersm. ptxas alone takes more than
// they need, and fewer blocks per SM keep fewer copies in flight in the
// kernels with the least work per byte. Bounded, none of them spills.
//
// F = 128, bf16, normalized: 64 accumulators a thread, 3 blocks (ptxas
// alone: 226 registers, 2 blocks).
// RUN: linattn-opt %s --linattn-lower-to-nvvm="format=isa sequence-parallel-blocks=1000000000" | %linattn_python %S/Inputs/gpu_binary.py --ptx > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -O3 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: %cuobjdump --dump-resource-usage %t.cubin | FileCheck %s --check-prefix=RES

// CHECK-LABEL: .visible .entry linattn_scan_segment_states_forward_elu_normalized_0(
// CHECK: .maxntid 128, 1, 1
// CHECK-NEXT: .minnctapersm 3
// The chunk loops are not bounded.
// CHECK-LABEL: .visible .entry linattn_scan_segment_prefix_forward_elu_normalized_1(
// CHECK-NOT: .minnctapersm
// CHECK-LABEL: .visible .entry linattn_kv_summary_chunked_elu_{{[0-9]+}}(
// CHECK: .maxntid 128, 1, 1
// CHECK-NEXT: .minnctapersm 3

// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill

// 168 registers or fewer: three blocks of 128 threads per SM.
// RES: Function linattn_kv_summary_chunked_elu_{{[0-9]+}}:
// RES-NEXT: REG:{{(16[0-8]|1[0-5][0-9]|[1-9][0-9]?)}} STACK:0
// RES: Function linattn_scan_segment_states_forward_elu_normalized_0:
// RES-NEXT: REG:{{(16[0-8]|1[0-5][0-9]|[1-9][0-9]?)}} STACK:0

// F = 64, bf16, the benchmark's unnormalized scan on wgmma: 32 accumulators
// a thread, 4 blocks (ptxas alone: 158 registers, 3 blocks).
// RUN: linattn-opt %S/Inputs/chunked-scan-unnormalized-f64.mlir --linattn-lower-to-nvvm="format=isa sequence-parallel-blocks=1000000000" | %linattn_python %S/Inputs/gpu_binary.py --ptx > %t.64.ptx
// RUN: FileCheck %s --check-prefix=F64 < %t.64.ptx
// RUN: %ptxas -arch=sm_90a -O3 -v %t.64.ptx -o %t.64.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: %cuobjdump --dump-resource-usage %t.64.cubin | FileCheck %s --check-prefix=RES64
// F64: .target sm_90a
// F64-LABEL: .visible .entry linattn_scan_segment_states_forward_elu_0(
// F64: .maxntid 128, 1, 1
// F64-NEXT: .minnctapersm 4
// RES64: Function linattn_scan_segment_states_forward_elu_0:
// RES64-NEXT: REG:{{(12[0-8]|1[01][0-9]|[1-9][0-9]?)}} STACK:0

// f32 data at F = 128 (tf32) stages its keys-only kernels in two slots of
// async copies: 3 blocks (ptxas alone: 238 to 250 registers, 2). tf32x3,
// whose state update sums each chunk from zero beside the state, is left
// to ptxas (bounded to 3 blocks it spilled 500 bytes): 2 blocks, no spills.
// RUN: linattn-opt %S/Inputs/attention-f32-f128.mlir --linattn-lower-to-nvvm="format=isa tf32=true sequence-parallel-blocks=1000000000" | %linattn_python %S/Inputs/gpu_binary.py --ptx > %t.tf32.ptx
// RUN: FileCheck %s --check-prefix=F128-TF32 < %t.tf32.ptx
// RUN: %ptxas -arch=sm_90 -O3 -v %t.tf32.ptx -o %t.tf32.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: %cuobjdump --dump-resource-usage %t.tf32.cubin | FileCheck %s --check-prefix=RES-TF32
// RUN: linattn-opt %S/Inputs/attention-f32-f128.mlir --linattn-lower-to-nvvm="format=isa tf32x3=true sequence-parallel-blocks=1000000000" | %linattn_python %S/Inputs/gpu_binary.py --ptx > %t.tf32x3.ptx
// RUN: FileCheck %s --check-prefix=F128-TF32X3 < %t.tf32x3.ptx
// RUN: %ptxas -arch=sm_90 -O3 -v %t.tf32x3.ptx -o %t.tf32x3.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// F128-TF32-LABEL: .visible .entry linattn_scan_segment_states_forward_elu_normalized_0(
// F128-TF32: .maxntid 128, 1, 1
// F128-TF32-NEXT: .minnctapersm 3
// F128-TF32-LABEL: .visible .entry linattn_kv_summary_chunked_elu_{{[0-9]+}}(
// F128-TF32: .maxntid 128, 1, 1
// F128-TF32-NEXT: .minnctapersm 3
// RES-TF32: Function linattn_kv_summary_chunked_elu_{{[0-9]+}}:
// RES-TF32-NEXT: REG:{{(16[0-8]|1[0-5][0-9]|[1-9][0-9]?)}} STACK:0
// RES-TF32: Function linattn_scan_segment_states_forward_elu_normalized_0:
// RES-TF32-NEXT: REG:{{(16[0-8]|1[0-5][0-9]|[1-9][0-9]?)}} STACK:0
// F128-TF32X3-LABEL: .visible .entry linattn_scan_segment_states_forward_elu_normalized_0(
// F128-TF32X3: .maxntid 128, 1, 1
// F128-TF32X3-NOT: .minnctapersm
// F128-TF32X3-LABEL: .visible .entry linattn_kv_summary_chunked_elu_{{[0-9]+}}(
// F128-TF32X3: .maxntid 128, 1, 1
// F128-TF32X3-NOT: .minnctapersm
// F128-TF32X3: .entry

// Elsewhere ptxas needs fewer registers than the rule gives, and the bound
// would cost blocks: tf32 data at F = 64, for one, keeps ptxas's choice.
// RUN: linattn-opt %S/Inputs/chunked-scan-f32.mlir --linattn-lower-to-nvvm="format=isa tf32=true" | %linattn_python %S/Inputs/gpu_binary.py --ptx | FileCheck %s --check-prefix=TF32
// TF32: .entry linattn_scan_segment_states_
// TF32-NOT: .minnctapersm

// states-min-blocks-per-sm=0: ptxas's choice everywhere.
// RUN: linattn-opt %s --linattn-lower-to-nvvm="format=isa sequence-parallel-blocks=1000000000 states-min-blocks-per-sm=0" | %linattn_python %S/Inputs/gpu_binary.py --ptx | FileCheck %s --check-prefix=NONE
// NONE: .entry linattn_scan_segment_states_
// NONE-NOT: .minnctapersm

// Normalized causal attention at F = 128 in bf16, and its non-causal form
// (the linear form's kv_summary).
func.func @scan(%q: tensor<8x16x?x128xbf16>, %k: tensor<8x16x?x128xbf16>, %v: tensor<8x16x?x128xbf16>) -> tensor<8x16x?x128xbf16> {
  %fq = linattn.feature_map elu %q : tensor<8x16x?x128xbf16> -> tensor<8x16x?x128xbf16>
  %fk = linattn.feature_map elu %k : tensor<8x16x?x128xbf16> -> tensor<8x16x?x128xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<8x16x?x128xbf16>, tensor<8x16x?x128xbf16>, tensor<8x16x?x128xbf16> -> tensor<8x16x?x128xbf16>, tensor<8x16x128x128xf32>, tensor<8x16x128xf32>
  return %o : tensor<8x16x?x128xbf16>
}

func.func @linear(%q: tensor<8x16x?x128xbf16>, %k: tensor<8x16x?x128xbf16>, %v: tensor<8x16x?x128xbf16>) -> tensor<8x16x?x128xbf16> {
  %0 = linattn.attention elu %q, %k, %v normalize(eps = 1.0e-6) : tensor<8x16x?x128xbf16>, tensor<8x16x?x128xbf16>, tensor<8x16x?x128xbf16> -> tensor<8x16x?x128xbf16>
  return %0 : tensor<8x16x?x128xbf16>
}
