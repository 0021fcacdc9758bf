// REQUIRES: cuda-toolkit
// The chunked tensor-core scan down to PTX and SASS resources: every product
// is an m16n8k16 mma.sync with f32 accumulators on fragments ldmatrix reads
// (plain and .trans), and ptxas (-v) fits the kernels in registers without
// spilling and in static shared memory.

// small-grid-value-tile=0: the chunk loops of these small grids keep their
// value tiles (the narrower ones: Conversion/LinAttnToGPU/
// convert-linattn-to-gpu-small-grid.mlir).
// RUN: linattn-opt %S/Inputs/chunked-scan.mlir --linattn-lower-to-nvvm="format=isa sequence-parallel-blocks=0 async-copies=false wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --ptx > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: FileCheck %s --check-prefix=LDMATRIX < %t.ptx
// RUN: FileCheck %s --check-prefix=VLOAD < %t.ptx
// RUN: linattn-opt %S/Inputs/chunked-scan.mlir --linattn-lower-to-nvvm="format=isa sequence-parallel-blocks=0 vector-loads=false async-copies=false wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --ptx | FileCheck %s --check-prefix=NO-VLOAD
// RUN: %ptxas -arch=sm_90 -O3 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: linattn-opt %S/Inputs/chunked-scan.mlir --linattn-lower-to-nvvm="format=isa sequence-parallel-blocks=0 wgmma=false narrow-offset-limit=2147483648" > %t.async.mlir
// RUN: FileCheck %s --check-prefix=ASYNC-HOST < %t.async.mlir
// RUN: %linattn_python %S/Inputs/gpu_binary.py --ptx < %t.async.mlir > %t.async.ptx
// RUN: FileCheck %s --check-prefix=ASYNC < %t.async.ptx
// RUN: %ptxas -arch=sm_90 -O3 -v %t.async.ptx -o %t.async.cubin 2>&1 | FileCheck %s --check-prefix=ASYNC-PTXAS
// RUN: linattn-opt %S/Inputs/chunked-scan.mlir --linattn-lower-to-nvvm="format=isa chip=sm_80 sequence-parallel-blocks=0 async-copies=false wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --ptx | FileCheck %s --check-prefix=SM80
// RUN: linattn-opt %S/Inputs/chunked-scan.mlir --linattn-lower-to-nvvm="sequence-parallel-blocks=0 async-copies=false wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --elf | FileCheck %s --check-prefix=CUBIN
// RUN: linattn-opt %S/Inputs/chunked-scan.mlir --linattn-lower-to-nvvm="small-grid-value-tile=0 format=isa sequence-parallel-blocks=1000000 async-copies=false wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --ptx > %t.seq.ptx
// RUN: FileCheck %s --check-prefix=SEQ < %t.seq.ptx
// RUN: %ptxas -arch=sm_90 -O3 -v %t.seq.ptx -o %t.seq.cubin 2>&1 | FileCheck %s --check-prefix=SEQ-PTXAS
// RUN: linattn-opt %S/Inputs/chunked-scan-f32.mlir --linattn-lower-to-nvvm="small-grid-value-tile=0 format=isa tf32=true wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --ptx > %t.tf32.ptx
// RUN: FileCheck %s --check-prefix=TF32 < %t.tf32.ptx
// RUN: %ptxas -arch=sm_90 -O3 -v %t.tf32.ptx -o %t.tf32.cubin 2>&1 | FileCheck %s --check-prefix=TF32-PTXAS
// RUN: linattn-opt %S/Inputs/chunked-scan-f32.mlir --linattn-lower-to-nvvm="small-grid-value-tile=0 format=isa tf32x3=true wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --ptx > %t.tf32x3.ptx
// RUN: FileCheck %s --check-prefix=TF32X3 < %t.tf32x3.ptx
// RUN: %ptxas -arch=sm_90 -O3 %t.tf32x3.ptx -o %t.tf32x3.cubin
// RUN: linattn-opt %S/Inputs/chunked-scan.mlir --linattn-lower-to-nvvm="format=isa scan-kernel=recurrent wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --ptx | FileCheck %s --check-prefix=RECURRENT
// sm_75 has neither mma.sync on bf16 nor ldmatrix's partners nor cp.async:
// the recurrent kernel, async copies or not, which ptxas takes for sm_75.
// RUN: linattn-opt %S/Inputs/chunked-scan.mlir --linattn-lower-to-nvvm="format=isa chip=sm_75 wgmma=false narrow-offset-limit=2147483648" | %linattn_python %S/Inputs/gpu_binary.py --ptx > %t.sm75.ptx
// RUN: FileCheck %s --check-prefix=SM75 < %t.sm75.ptx
// RUN: %ptxas -arch=sm_75 -O3 %t.sm75.ptx -o %t.sm75.cubin

// SM75: .target sm_75
// SM75: .entry linattn_scan_forward_elu_normalized_0(
// SM75-NOT: mma.sync
// SM75-NOT: ldmatrix
// SM75-NOT: cp.async

// bf16, F = 64, C = 64, value tile 64: 32 products for the scores, 64 for the
// outputs, 32 for the state update. The launches' block size is the kernel's
// known_block_size, .maxntid for ptxas (which then allocates registers for
// blocks of that size).
// PTX-LABEL: .visible .entry linattn_scan_chunked_forward_elu_normalized_3(
// PTX: .maxntid 128, 1, 1
// PTX-COUNT-128: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-NOT: mma.sync
// PTX: ret;
// f16, F = 128, C = 32, value tile 64, four warps (two per row tile, each
// with half the keys and half the value columns): per warp 16 products for
// the scores, 40 for the outputs, 32 for the state update.
// PTX-LABEL: .visible .entry linattn_scan_chunked_forward_relu_normalized_7(
// PTX: .maxntid 128, 1, 1
// PTX-COUNT-88: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-NOT: mma.sync
// PTX: ret;

// The fragments, all x4 loads: φ(Q_c) and two key tiles at a time for the
// scores, the scores and two value tiles (.trans) and φ(Q_c) and two state
// tiles (.trans) for the outputs, φ(K_c) (.trans, as the A of φ(K_c)ᵀV_c)
// and two value tiles (.trans) for the state. A fragment used for several
// tiles is loaded once: bf16, F = 64, C = 64 has 52 plain and 52 .trans.
// The denominators' φ(Q_c)ᵀz takes φ(Q_c) in the scores' fragments: no
// loads of its own.
// LDMATRIX-LABEL: .visible .entry linattn_scan_chunked_forward_elu_normalized_3(
// LDMATRIX-COUNT-104: ldmatrix.sync.aligned.m8n8.x4{{(.trans)?}}.shared.b16
// LDMATRIX-NOT: ldmatrix
// LDMATRIX: ret;
// f16, F = 128, C = 32, value tile 64: 74, x4 loads only.
// LDMATRIX-LABEL: .visible .entry linattn_scan_chunked_forward_relu_normalized_7(
// LDMATRIX-COUNT-74: ldmatrix.sync.aligned.m8n8.x4{{(.trans)?}}.shared.b16
// LDMATRIX-NOT: ldmatrix
// LDMATRIX: ret;

// Staging: q, k and v rows 16 bytes per load where the buffers are 16-byte
// aligned (a run-time test; element by element otherwise, and for the
// values when Dv is not a multiple of 8), stored to shared memory 16 bytes
// at a time.
// VLOAD-LABEL: .visible .entry linattn_scan_chunked_forward_elu_normalized_3(
// VLOAD-COUNT-3: ld.global.v4.b32
// VLOAD-NOT: ld.global.v4
// VLOAD: ret;
// VLOAD-LABEL: .visible .entry linattn_scan_chunked_forward_relu_normalized_7(
// VLOAD-COUNT-3: st.shared.v4.b32
// VLOAD: ret;
// NO-VLOAD-NOT: ld.global.v4
// NO-VLOAD-NOT: st.shared.v4

// Shared memory: the tiles' rows padded by 16 bytes (F = 64: 5 tiles of
// 64 x 72 bf16 and z; F = 128, C = 32, DT = 64: 2 x 32 x 136 + 32 x 72 +
// 32 x 40 + 128 x 72 f16, z, the two warps' row sums, 2 x 32 f32, and the
// f16 state's column scales and their inverses, 2 x 64 f32). (CUDA 13's
// ptxas reports the last kernel first. At the time of writing: 167
// registers for F = 128 (f16), 142 for F = 64 (bf16).) With N
// dynamic the module also holds the segment kernels, which run for
// sequences too long for one block's 32-bit offsets even with
// sequence-parallel-blocks=0.
// With async copies the staged tiles take two slots: 73984 bytes at F = 64
// and 66304 at F = 128 (f16), above CUDA's 48 KiB of static shared memory, so the
// kernels use dynamic shared memory (an external declaration: no static
// shared memory of their own; the segment kernels, built for sequences too
// long for 32-bit offsets in one block, stage K and V only, 36864 bytes at
// F = 64) and their launches ask for it; each chunk's
// cp.async (16 bytes, L1 bypassed, zero-filled past the sequence) is
// committed as a group, and a chunk waits for all groups but the newest.
// ASYNC-HOST: %[[S0:.*]] = llvm.mlir.constant(73984 : i32) : i32
// ASYNC-HOST: gpu.launch_func {{.*}} @linattn_kernels::@linattn_scan_chunked_forward_elu_normalized_3 {{.*}} dynamic_shared_memory_size %[[S0]] args
// ASYNC-HOST: %[[S1:.*]] = llvm.mlir.constant(66304 : i32) : i32
// ASYNC-HOST: gpu.launch_func {{.*}} @linattn_kernels::@linattn_scan_chunked_forward_relu_normalized_7 {{.*}} dynamic_shared_memory_size %[[S1]] args
// ASYNC: .extern .shared .align 16 .b8 linattn_dynamic_shared[];
// ASYNC: .entry linattn_scan_chunked_forward_elu_normalized_3(
// ASYNC-NOT: .shared .align
// ASYNC: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// ASYNC: cp.async.commit_group;
// ASYNC: cp.async.commit_group;
// ASYNC-NEXT: cp.async.wait_group 1;
// ASYNC: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// ASYNC: .entry linattn_scan_chunked_forward_relu_normalized_7(
// ASYNC: cp.async.cg.shared.global
// ASYNC-PTXAS: Compiling entry function 'linattn_scan_chunked_forward_relu_normalized_7' for 'sm_90'
// ASYNC-PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// ASYNC-PTXAS: Used {{[0-9]+}} registers, used 1 barriers{{$}}
// At F = 64, at most 168 registers: three blocks of 128 threads per SM, as
// many as the 73984 bytes of shared memory allow. Attention drops the final
// state, so the kernel does not store it and ptxas needs no stack (a scan
// whose state is used spills a few bytes outside the chunk loop for it;
// linattn-lower-to-nvvm-sass.mlir checks the loop).
// ASYNC-PTXAS: Compiling entry function 'linattn_scan_chunked_forward_elu_normalized_3' for 'sm_90'
// ASYNC-PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// ASYNC-PTXAS: Used {{([0-9]|[1-9][0-9]|1[0-5][0-9]|16[0-8])}} registers, used 1 barriers{{$}}
// PTXAS: Compiling entry function 'linattn_scan_chunked_forward_relu_normalized_7' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Used {{[0-9]+}} registers, used 1 barriers, 44288 bytes smem
// PTXAS: Compiling entry function 'linattn_scan_chunked_forward_elu_normalized_3' for 'sm_90'
// PTXAS: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Used {{[0-9]+}} registers, used 1 barriers, 46336 bytes smem

// The sequence-parallel variant: per segment the sum of its chunks' φ(K_c)ᵀV_c
// (32 products per chunk at F = 64, DT = 64), the scan over segments (no
// tensor cores), per segment the chunk loop of the batch-parallel kernel
// (32 + 64 + 32 products per chunk).
// SEQ-LABEL: .visible .entry linattn_scan_segment_states_forward_elu_normalized_0(
// SEQ-COUNT-32: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SEQ-NOT: mma.sync
// SEQ-LABEL: .visible .entry linattn_scan_segment_prefix_forward_elu_normalized_1(
// SEQ-NOT: mma.sync
// SEQ-LABEL: .visible .entry linattn_scan_segment_outputs_forward_elu_normalized_2(
// SEQ-COUNT-128: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SEQ-NOT: mma.sync
// SEQ: ret;

// SEQ-PTXAS-COUNT-7: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// tf32 (f32 data, F = 64: C = 32, 64 value columns, f32 tiles): the
// sequence-parallel kernels for a batch of 2, m16n8k8 products, operands
// rounded to tf32 with cvt.rna as they are staged.
// TF32-LABEL: .visible .entry linattn_scan_segment_states_forward_elu_normalized_0(
// TF32: cvt.rna.tf32.f32
// TF32-COUNT-64: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// TF32-NOT: mma.sync
// TF32-LABEL: .visible .entry linattn_scan_segment_prefix_forward_elu_normalized_1(
// TF32-NOT: mma.sync
// TF32-LABEL: .visible .entry linattn_scan_segment_outputs_forward_elu_normalized_2(
// TF32-COUNT-192: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// TF32-NOT: mma.sync
// TF32: ret;
// TF32-PTXAS-COUNT-3: 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads

// tf32x3 (tf32x3=true): the same kernels on f32 tiles (nothing rounded as
// it is staged), each product three m16n8k8 (lo·hi, hi·lo, hi·hi). ptxas
// spills 8 bytes of the 255 registers of the outputs kernel, whose tf32
// form already takes 255.
// TF32X3-NOT: cvt.rna.tf32.f32
// TF32X3-LABEL: .visible .entry linattn_scan_segment_states_forward_elu_normalized_0(
// TF32X3-COUNT-192: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// TF32X3-NOT: mma.sync
// TF32X3-LABEL: .visible .entry linattn_scan_segment_prefix_forward_elu_normalized_1(
// TF32X3-NOT: mma.sync
// TF32X3-LABEL: .visible .entry linattn_scan_segment_outputs_forward_elu_normalized_2(
// TF32X3-COUNT-576: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// TF32X3-NOT: mma.sync
// TF32X3-NOT: cvt.rna.tf32.f32
// TF32X3: ret;

// SM80: .target sm_80
// SM80: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// CUBIN: sm_90
// CUBIN-DAG: linattn_scan_chunked_forward_elu_normalized_3
// CUBIN-DAG: linattn_scan_chunked_forward_relu_normalized_7

// The recurrent scan on bf16 data: staged synchronously (a copy cannot
// widen bf16 to the f32 the recurrence reads), async-copies or not.
// RECURRENT-NOT: mma.sync
// RECURRENT: .visible .entry linattn_scan_forward_elu_normalized_0(
// RECURRENT-NOT: mma.sync
// RECURRENT-NOT: cp.async
