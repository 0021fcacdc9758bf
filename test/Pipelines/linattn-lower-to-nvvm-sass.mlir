// REQUIRES: cuda-toolkit, cuobjdump
// The machine code (SASS) of the cubins linattn-lower-to-nvvm embeds, as
// cuobjdump disassembles it, and their resources: the chunked scan's products
// are tensor-core HMMA instructions, the strict-fp32 recurrent scan uses only
// FFMA, and no kernel spills or uses local memory. CHECK lines look for
// instructions and counts, not their order, which ptxas schedules freely.

// The chunked tensor-core scan: bf16 (F = 64, C = 64) and f16 (F = 128,
// C = 32), one HMMA per mma.sync of the PTX (128 and 88, see
// linattn-lower-to-nvvm-chunked.mlir). cuobjdump lists the kernels in the
// cubin's order, the last one first.
// RUN: linattn-opt %S/Inputs/chunked-scan.mlir --linattn-lower-to-nvvm="sequence-parallel-blocks=0 async-copies=false wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --cubin > %t.chunked.cubin
// RUN: %cuobjdump --dump-sass %t.chunked.cubin | FileCheck %s --check-prefix=CHUNKED
// RUN: %cuobjdump --dump-resource-usage %t.chunked.cubin | FileCheck %s --check-prefix=CHUNKED-RES
// RUN: %cuobjdump --dump-sass %t.chunked.cubin | FileCheck %s --check-prefix=LDSM
// RUN: %cuobjdump --dump-sass %t.chunked.cubin | FileCheck %s --check-prefix=LDG
// RUN: %cuobjdump --dump-sass %t.chunked.cubin | FileCheck %s --check-prefix=STORES

// CHUNKED: code for sm_90
// CHUNKED-LABEL: Function : linattn_scan_chunked_forward_relu_normalized_7
// CHUNKED-NOT: BF16
// CHUNKED-COUNT-88: {{HMMA\.16816\.F32 }}
// CHUNKED-NOT: {{HMMA|BF16}}
// CHUNKED: EXIT
// CHUNKED-LABEL: Function : linattn_scan_chunked_forward_elu_normalized_3
// CHUNKED-COUNT-128: HMMA.16816.F32.BF16
// CHUNKED-NOT: HMMA
// CHUNKED: EXIT

// The fragments come from LDSM (ldmatrix, plain M88 and transposing MT88),
// one per ldmatrix of the PTX: 74 (f16, F = 128) and 104 (bf16, F = 64).
// LDSM-LABEL: Function : linattn_scan_chunked_forward_relu_normalized_7
// LDSM-COUNT-74: LDSM.16.{{M|MT}}88.4
// LDSM-NOT: LDSM
// LDSM: EXIT
// LDSM-LABEL: Function : linattn_scan_chunked_forward_elu_normalized_3
// LDSM-COUNT-104: LDSM.16.{{M|MT}}88.4
// LDSM-NOT: LDSM
// LDSM: EXIT

// Staging reads q, k and v with one 16-byte LDG each per group (the aligned
// path; the element-wise fallback is LDG.E.U16).
// LDG-LABEL: Function : linattn_scan_chunked_forward_relu_normalized_7
// LDG-COUNT-3: LDG.E.128
// LDG-NOT: LDG.E.128
// LDG: EXIT
// LDG-LABEL: Function : linattn_scan_chunked_forward_elu_normalized_3
// LDG-COUNT-3: LDG.E.128
// LDG-NOT: LDG.E.128
// LDG: EXIT

// The outputs of a tile pair: where the lane's rows and pairs are whole, four
// unpredicated 4-byte stores, then the guarded stores of the other path.
// STORES-LABEL: Function : linattn_scan_chunked_forward_elu_normalized_3
// STORES-COUNT-4: {{\*/ +STG\.E desc\[UR[0-9]+\]\[R[0-9]+\.64(\+0x[0-9a-f]+)?\], R[0-9]+ ;}}
// STORES-NOT: STG
// STORES: {{@!?P[0-6] STG\.E desc}}
// STORES: EXIT

// No local memory (no spills, no stack). SHARED is ptxas' static size plus
// the 1 KiB sm_90 reserves per block (linattn-lower-to-nvvm-chunked.mlir
// pins the static size).
// CHUNKED-RES: Function linattn_scan_chunked_forward_relu_normalized_7:
// CHUNKED-RES-NEXT: REG:{{[0-9]+}} STACK:0 SHARED:{{[0-9]+}} LOCAL:0
// CHUNKED-RES: Function linattn_scan_chunked_forward_elu_normalized_3:
// CHUNKED-RES-NEXT: REG:{{[0-9]+}} STACK:0 SHARED:{{[0-9]+}} LOCAL:0

// The chunk loop, each iteration (Inputs/sass_loop.py cuts out the loop that
// holds the HMMAs). Synchronous staging: 16-byte loads, every HMMA, no local
// memory. With async-copies: the next chunk's cp.async copies (LDGSTS, L1
// bypassed), one commit (LDGDEPBAR), then a wait for all groups but the newest
// (DEPBAR.LE SB0, 0x1) before the products, and no local memory either (the
// few bytes ptxas spills at F = 64 to stay within 168 registers are outside
// the loop).
// RUN: %cuobjdump --dump-sass %t.chunked.cubin | %linattn_python %S/Inputs/sass_loop.py | FileCheck %s --check-prefix=LOOP --implicit-check-not=STL --implicit-check-not=LDL
// RUN: linattn-opt %S/Inputs/chunked-scan.mlir --linattn-lower-to-nvvm="sequence-parallel-blocks=0 wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --cubin > %t.async.cubin
// RUN: %cuobjdump --dump-sass %t.async.cubin | %linattn_python %S/Inputs/sass_loop.py | FileCheck %s --check-prefix=ASYNC-LOOP --implicit-check-not=STL --implicit-check-not=LDL
// LOOP-LABEL: Function : linattn_scan_chunked_forward_relu_normalized_7
// LOOP: LDG.E.128
// LOOP-COUNT-88: HMMA.16816.F32
// LOOP-LABEL: Function : linattn_scan_chunked_forward_elu_normalized_3
// LOOP: LDG.E.128
// LOOP-COUNT-128: HMMA.16816.F32.BF16
// ASYNC-LOOP-LABEL: Function : linattn_scan_chunked_forward_relu_normalized_7
// ASYNC-LOOP: LDGSTS.E.BYPASS.128
// ASYNC-LOOP: LDGDEPBAR
// ASYNC-LOOP: DEPBAR.LE SB0, 0x1
// ASYNC-LOOP-COUNT-88: HMMA.16816.F32
// ASYNC-LOOP-LABEL: Function : linattn_scan_chunked_forward_elu_normalized_3
// ASYNC-LOOP: LDGSTS.E.BYPASS.128
// ASYNC-LOOP: LDGDEPBAR
// ASYNC-LOOP: DEPBAR.LE SB0, 0x1
// ASYNC-LOOP-COUNT-128: HMMA.16816.F32.BF16

// elu's exp in the chunk loop is 2^(x·log2 e) on the special-function unit
// (FMUL, MUFU.EX2), applied after the copies land: the features are rounded
// to bf16, so libdevice's expf (its range reduction by FFMA.SAT and FFMA.RM,
// and the subnormal fix-up of a plain ex2.approx.f32, FSETP and two
// predicated FMUL) would buy no accuracy.
// RUN: %cuobjdump --dump-sass %t.async.cubin | %linattn_python %S/Inputs/sass_loop.py | FileCheck %s --check-prefix=EXP
// EXP-LABEL: Function : linattn_scan_chunked_forward_elu_normalized_3
// EXP-NOT: {{FFMA\.(RM|SAT)|FSETP}}
// EXP: MUFU.EX2
// EXP-NOT: {{FFMA\.(RM|SAT)|FSETP}}

// The rest of the feature maps runs on pairs of 16-bit elements: relu is
// max(x, 0) (HMNMX2 with NaN propagation, f16 here), elu + 1 max(x, 0) +
// exp(min(x, 0)) in bf16x2 (HMNMX2.BF16_V2 for both, HADD2.BF16_V2 for the
// sum).
// RUN: %cuobjdump --dump-sass %t.async.cubin | %linattn_python %S/Inputs/sass_loop.py | FileCheck %s --check-prefix=PACKED
// PACKED-LABEL: Function : linattn_scan_chunked_forward_relu_normalized_7
// PACKED: HMNMX2.NAN
// PACKED-LABEL: Function : linattn_scan_chunked_forward_elu_normalized_3
// PACKED-DAG: HMNMX2.BF16_V2.NAN
// PACKED-DAG: HADD2.BF16_V2

// 32-bit offsets: the chunk loop widens each staging load's and output
// store's offset once (IMAD.WIDE.U32 of the offset and the element size,
// added to the block's base) and compares tokens and columns in 32 bits.
// With 64-bit offsets (narrow-offset-limit=0) every address also takes an
// LEA.HI.X for its high half, and the column tests a second ISETP.EX.
// RUN: %cuobjdump --dump-sass %t.chunked.cubin | %linattn_python %S/Inputs/sass_loop.py | FileCheck %s --check-prefix=OFFSETS
// RUN: linattn-opt %S/Inputs/chunked-scan.mlir --linattn-lower-to-nvvm="sequence-parallel-blocks=0 narrow-offset-limit=0 async-copies=false wgmma=false" | %linattn_python %S/Inputs/gpu_binary.py --cubin > %t.wide.cubin
// RUN: %cuobjdump --dump-sass %t.wide.cubin | %linattn_python %S/Inputs/sass_loop.py | FileCheck %s --check-prefix=WIDE
// OFFSETS-LABEL: Function : linattn_scan_chunked_forward_elu_normalized_3
// OFFSETS-NOT: LEA.HI.X
// OFFSETS: IMAD.WIDE.U32
// OFFSETS-NOT: LEA.HI.X
// OFFSETS: Function :
// WIDE-LABEL: Function : linattn_scan_chunked_wide_forward_elu_normalized_0
// WIDE: LEA.HI.X

// min-blocks-per-sm=4 (.minnctapersm 4 beside .maxntid 128): ptxas keeps
// the chunk loops at 128 registers or fewer, 4 blocks of 128 threads per SM,
// spilling what does not fit (ptxas alone takes 142 at F = 64, 156 at
// F = 128: 3 blocks).
// RUN: linattn-opt %S/Inputs/chunked-scan.mlir --linattn-lower-to-nvvm="sequence-parallel-blocks=0 min-blocks-per-sm=4 async-copies=false wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --cubin > %t.min4.cubin
// RUN: %cuobjdump --dump-resource-usage %t.min4.cubin | FileCheck %s --check-prefix=MIN4-RES
// MIN4-RES: Function linattn_scan_chunked_forward_relu_normalized_7:
// MIN4-RES-NEXT: REG:{{(12[0-8]|1[01][0-9]|[1-9][0-9]?)}} STACK:
// MIN4-RES: Function linattn_scan_chunked_forward_elu_normalized_3:
// MIN4-RES-NEXT: REG:{{(12[0-8]|1[01][0-9]|[1-9][0-9]?)}} STACK:

// The sequence-parallel kernels of an f32 scan on tf32 tensor cores
// (tf32=true; F = 64, C = 32): HMMA.1688 in the segment-state (64) and
// output (192: scores, outputs and the state update) kernels, none in the
// scan over segments.
// small-grid-value-tile=0: the chunk loops of these small grids keep their
// value tiles (the narrower ones: Conversion/LinAttnToGPU/
// convert-linattn-to-gpu-small-grid.mlir).
// RUN: linattn-opt %S/Inputs/chunked-scan-f32.mlir --linattn-lower-to-nvvm="small-grid-value-tile=0 tf32=true wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --cubin > %t.tf32.cubin
// RUN: %cuobjdump --dump-sass %t.tf32.cubin | FileCheck %s --check-prefix=TF32
// TF32-LABEL: Function : linattn_scan_segment_outputs_forward_elu_normalized_2
// TF32-COUNT-192: HMMA.1688.F32.TF32
// TF32-NOT: HMMA
// TF32-LABEL: Function : linattn_scan_segment_prefix_forward_elu_normalized_1
// TF32-NOT: HMMA
// TF32-LABEL: Function : linattn_scan_segment_states_forward_elu_normalized_0
// TF32-COUNT-64: HMMA.1688.F32.TF32
// TF32-NOT: HMMA

// tf32x3=true: three times the HMMA.1688 (576 and 192).
// RUN: linattn-opt %S/Inputs/chunked-scan-f32.mlir --linattn-lower-to-nvvm="small-grid-value-tile=0 tf32x3=true wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --cubin > %t.tf32x3.cubin
// RUN: %cuobjdump --dump-sass %t.tf32x3.cubin | FileCheck %s --check-prefix=TF32X3
// TF32X3-LABEL: Function : linattn_scan_segment_outputs_forward_elu_normalized_2
// TF32X3-COUNT-576: HMMA.1688.F32.TF32
// TF32X3-NOT: HMMA
// TF32X3-LABEL: Function : linattn_scan_segment_prefix_forward_elu_normalized_1
// TF32X3-NOT: HMMA
// TF32X3-LABEL: Function : linattn_scan_segment_states_forward_elu_normalized_0
// TF32X3-COUNT-192: HMMA.1688.F32.TF32
// TF32X3-NOT: HMMA

// The same scans through the recurrent kernel (scan-kernel=recurrent): fp32
// state updates on FFMA, no tensor cores, batch-parallel or (N dynamic,
// decided at run time) sequence-parallel: the segments' contributions and
// outputs on FFMA too.
// RUN: linattn-opt %S/Inputs/chunked-scan.mlir --linattn-lower-to-nvvm="scan-kernel=recurrent wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --cubin > %t.recurrent.cubin
// RUN: %cuobjdump --dump-sass %t.recurrent.cubin | FileCheck %s --check-prefix=RECURRENT
// RECURRENT-NOT: HMMA
// RECURRENT-LABEL: Function : linattn_scan_segment_outputs_forward_relu_normalized_7
// RECURRENT: FFMA
// RECURRENT-NOT: HMMA
// RECURRENT-LABEL: Function : linattn_scan_segment_states_forward_relu_normalized_5
// RECURRENT: FFMA
// RECURRENT-NOT: HMMA
// RECURRENT-LABEL: Function : linattn_scan_forward_relu_normalized_4
// RECURRENT: FFMA
// RECURRENT-NOT: HMMA
// RECURRENT-LABEL: Function : linattn_scan_segment_outputs_forward_elu_normalized_3
// RECURRENT: FFMA
// RECURRENT-NOT: HMMA
// RECURRENT-LABEL: Function : linattn_scan_segment_states_forward_elu_normalized_1
// RECURRENT: FFMA
// RECURRENT-NOT: HMMA
// RECURRENT-LABEL: Function : linattn_scan_forward_elu_normalized_0
// RECURRENT: FFMA
// RECURRENT-NOT: HMMA

// Every other kernel (Inputs/all-kernels.mlir): the strict-fp32 scan, the
// f64 reverse scan on DFMA (each with its sequence-parallel kernels),
// kv_summary, query_readout and the decode step.
// RUN: linattn-opt %S/Inputs/all-kernels.mlir --linattn-lower-to-nvvm="async-copies=false wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --cubin > %t.all.cubin
// RUN: %cuobjdump --dump-sass %t.all.cubin | FileCheck %s --check-prefix=ALL
// RUN: %cuobjdump --dump-resource-usage %t.all.cubin | FileCheck %s --check-prefix=ALL-RES
// ALL-NOT: HMMA
// ALL-LABEL: Function : linattn_scan_segment_outputs_reverse_features_10
// ALL: DFMA
// ALL-LABEL: Function : linattn_scan_segment_prefix_reverse_features_9
// ALL: DADD
// ALL-LABEL: Function : linattn_scan_segment_states_reverse_features_8
// ALL: DFMA
// ALL-LABEL: Function : linattn_scan_reverse_features_7
// ALL: DFMA
// ALL-LABEL: Function : linattn_step_elu_normalized_6
// ALL: FFMA
// ALL: BAR.SYNC
// ALL-LABEL: Function : linattn_query_readout_relu_normalized_5
// ALL: FFMA
// ALL-LABEL: Function : linattn_kv_summary_relu_4
// ALL: FFMA
// ALL-LABEL: Function : linattn_scan_forward_elu_normalized_0
// ALL: MUFU.EX2
// ALL: BAR.SYNC
// ALL: FFMA
// ALL-NOT: HMMA
// ALL-NOT: DFMA

// ALL-RES-COUNT-11: STACK:0 SHARED:{{[0-9]+}} LOCAL:0
// ALL-RES-NOT: Function

// ptxas' own report (-v) for every kernel: no stack, no
// spill stores or loads.
// RUN: linattn-opt %S/Inputs/all-kernels.mlir --linattn-lower-to-nvvm="format=isa async-copies=false wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --ptx > %t.all.ptx
// RUN: %ptxas -arch=sm_90 -O3 -v %t.all.ptx -o %t.all.ptxas.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill
// PTXAS-COUNT-11: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: {{[1-9][0-9]*}} bytes spill

// The linear form's tensor-core kernels (non-causal attention, 16-bit data):
// the summary (φ(K_c)ᵀV_c) and the readout (φ(Q_c)S) issue 32 HMMA per warp
// and chunk each (F = 64: 4 feature tiles × 2 value tiles × 4 k steps, and
// 8 value tiles × 4; F = 128 at C = 32: 8 × 2 × 2, and 4 × 8), the sum over
// segments none; nothing spills.
// RUN: linattn-opt %S/Inputs/linear-chunked.mlir --linattn-lower-to-nvvm="async-copies=false wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --cubin > %t.linear.cubin
// RUN: %cuobjdump --dump-sass %t.linear.cubin | FileCheck %s --check-prefix=LINEAR
// RUN: %cuobjdump --dump-resource-usage %t.linear.cubin | FileCheck %s --check-prefix=LINEAR-RES
// LINEAR-LABEL: Function : linattn_query_readout_chunked_relu_5
// LINEAR-COUNT-32: {{HMMA\.16816\.F32 }}
// LINEAR-NOT: HMMA
// LINEAR-LABEL: Function : linattn_kv_summary_segments_relu_4
// LINEAR-NOT: HMMA
// LINEAR-LABEL: Function : linattn_kv_summary_chunked_relu_3
// LINEAR-COUNT-32: {{HMMA\.16816\.F32 }}
// LINEAR-NOT: HMMA
// LINEAR-LABEL: Function : linattn_query_readout_chunked_elu_normalized_2
// LINEAR-COUNT-32: HMMA.16816.F32.BF16
// LINEAR-NOT: HMMA
// LINEAR-LABEL: Function : linattn_kv_summary_segments_elu_1
// LINEAR-NOT: HMMA
// LINEAR-LABEL: Function : linattn_kv_summary_chunked_elu_0
// LINEAR-COUNT-32: HMMA.16816.F32.BF16
// LINEAR-NOT: HMMA
// LINEAR: EXIT
// LINEAR-RES-COUNT-6: STACK:0 SHARED:{{[0-9]+}} LOCAL:0
// LINEAR-RES-NOT: Function
