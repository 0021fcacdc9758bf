// REQUIRES: cuda-toolkit, cuobjdump
// fit-registers=true: ptxas is asked, kernel by kernel, for the most blocks
// per SM it fits without spilling where registers hold a kernel below its
// shared memory and threads (linattn-gpu-fit-registers), and the PTX keeps
// that bound (.minnctapersm).
//
// What the pass finds, from the kernels as the pipeline makes them (sm_90;
// sequence-parallel-blocks forces the segments' kernels at B = 8, and
// small-grid-value-tile=0 keeps the batch-parallel chunk loop's tiles of 64
// columns, which such a target would narrow):
// RUN: linattn-opt %s --linattn-lower-to-nvvm="format=isa sequence-parallel-blocks=1000000000 small-grid-value-tile=0" --mlir-print-ir-before=gpu-module-to-binary -o /dev/null 2> %t.nvvm.mlir
// RUN: linattn-opt %t.nvvm.mlir --linattn-gpu-fit-registers="cuda-path=%cuda_path remarks=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
//
// The normalized F = 128 bf16 scan: the chunk loops (batch-parallel and the
// segments' outputs) are held by their shared memory (3 blocks); the
// keys-only segment states already have their bound
// (states-min-blocks-per-sm), and no fourth block fits.
// REMARK-DAG: remark: linattn-gpu-fit-registers: linattn_scan_chunked_wide_forward_elu_normalized_{{[0-9]+}}: {{[0-9]+}} registers, 3 blocks per SM, not held by registers
// REMARK-DAG: remark: linattn-gpu-fit-registers: linattn_scan_segment_outputs_wide_forward_elu_normalized_{{[0-9]+}}: {{[0-9]+}} registers, 3 blocks per SM, not held by registers
// REMARK-DAG: remark: linattn-gpu-fit-registers: linattn_scan_segment_states_forward_elu_normalized_{{[0-9]+}}: {{[0-9]+}} registers, 3 blocks per SM; no more blocks fit without spilling
// The strict-fp32 recurrent scan at F = 128: 5 blocks of 128 threads -> 6.
// REMARK-DAG: remark: linattn-gpu-fit-registers: linattn_scan_forward_elu_{{[0-9]+}}: {{[0-9]+}} registers, 5 blocks per SM; bounded: {{([0-7][0-9]|80)}} registers, 6 blocks
// The decode step: 9 blocks -> 10.
// REMARK-DAG: remark: linattn-gpu-fit-registers: linattn_step_elu_normalized_{{[0-9]+}}: {{[0-9]+}} registers, 9 blocks per SM; bounded: {{([0-4][0-9])}} registers, 10 blocks

// The pipeline with the pass: the bounds are in the PTX, and ptxas meets
// them without spilling.
// RUN: linattn-opt %s --linattn-lower-to-nvvm="format=isa sequence-parallel-blocks=1000000000 small-grid-value-tile=0 fit-registers=true" | %linattn_python %S/Inputs/gpu_binary.py --ptx > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -O3 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: %cuobjdump --dump-resource-usage %t.cubin | FileCheck %s --check-prefix=RES
// CHECK-LABEL: .visible .entry linattn_scan_segment_outputs_wide_forward_elu_normalized_{{[0-9]+}}(
// CHECK: .maxntid 128, 1, 1
// CHECK-NOT: .minnctapersm
// CHECK-LABEL: .visible .entry linattn_scan_chunked_wide_forward_elu_normalized_{{[0-9]+}}(
// CHECK: .maxntid 128, 1, 1
// CHECK-NOT: .minnctapersm
// CHECK-LABEL: .visible .entry linattn_scan_forward_elu_{{[0-9]+}}(
// CHECK: .maxntid 128, 1, 1
// CHECK-NEXT: .minnctapersm 6
// CHECK-LABEL: .visible .entry linattn_step_elu_normalized_{{[0-9]+}}(
// CHECK: .maxntid 128, 1, 1
// CHECK-NEXT: .minnctapersm 10
// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill
// RES: Function linattn_step_elu_normalized_{{[0-9]+}}:
// RES-NEXT: REG:{{([1-4][0-9]|[1-9])}} STACK:0
// RES: Function linattn_scan_forward_elu_{{[0-9]+}}:
// RES-NEXT: REG:{{([1-7][0-9]|80|[1-9])}} STACK:0
// RES: Function linattn_scan_segment_outputs_wide_forward_elu_normalized_{{[0-9]+}}:
// RES-NEXT: REG:{{(16[0-8]|1[0-5][0-9]|[1-9][0-9]?)}} STACK:0

// A normalized bf16 scan at F = 128, an unnormalized f32 one (the
// strict-fp32 recurrent kernel) and a decode step (bench/gpu's).
func.func @scan(%q: tensor<8x16x?x128xbf16>, %k: tensor<8x16x?x128xbf16>, %v: tensor<8x16x?x128xbf16>) -> tensor<8x16x?x128xbf16> {
  %fq = linattn.feature_map elu %q : tensor<8x16x?x128xbf16> -> tensor<8x16x?x128xbf16>
  %fk = linattn.feature_map elu %k : tensor<8x16x?x128xbf16> -> tensor<8x16x?x128xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<8x16x?x128xbf16>, tensor<8x16x?x128xbf16>, tensor<8x16x?x128xbf16> -> tensor<8x16x?x128xbf16>, tensor<8x16x128x128xf32>, tensor<8x16x128xf32>
  return %o : tensor<8x16x?x128xbf16>
}
func.func @strict(%q: tensor<8x16x?x128xf32>, %k: tensor<8x16x?x128xf32>, %v: tensor<8x16x?x128xf32>) -> tensor<8x16x?x128xf32> {
  %fq = linattn.feature_map elu %q : tensor<8x16x?x128xf32> -> tensor<8x16x?x128xf32>
  %fk = linattn.feature_map elu %k : tensor<8x16x?x128xf32> -> tensor<8x16x?x128xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<8x16x?x128xf32>, tensor<8x16x?x128xf32>, tensor<8x16x?x128xf32> -> tensor<8x16x?x128xf32>, tensor<8x16x128x128xf32>, tensor<8x16x128xf32>
  return %o : tensor<8x16x?x128xf32>
}
func.func @decode_step(%q: tensor<?x32x128xf32>, %k: tensor<?x32x128xf32>, %v: tensor<?x32x128xf32>, %s: tensor<?x32x128x128xf32>, %z: tensor<?x32x128xf32>) -> (tensor<?x32x128xf32>, tensor<?x32x128x128xf32>, tensor<?x32x128xf32>) {
  %fq = linattn.feature_map elu %q : tensor<?x32x128xf32> -> tensor<?x32x128xf32>
  %fk = linattn.feature_map elu %k : tensor<?x32x128xf32> -> tensor<?x32x128xf32>
  %o, %s1, %z1 = linattn.step %fq, %fk, %v, %s, %z normalize(eps = 1.0e-6) : tensor<?x32x128xf32>, tensor<?x32x128xf32>, tensor<?x32x128xf32>, tensor<?x32x128x128xf32>, tensor<?x32x128xf32> -> tensor<?x32x128xf32>, tensor<?x32x128x128xf32>, tensor<?x32x128xf32>
  return %o, %s1, %z1 : tensor<?x32x128xf32>, tensor<?x32x128x128xf32>, tensor<?x32x128xf32>
}
