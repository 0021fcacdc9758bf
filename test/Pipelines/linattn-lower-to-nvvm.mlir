// REQUIRES: cuda-toolkit
// The kernels at three stages, from one module with every kernel
// (Inputs/all-kernels.mlir): NVVM IR, PTX (format=isa) and a cubin through
// ptxas (format=bin, the default); the host code in the LLVM dialect.

// RUN: linattn-opt %S/Inputs/all-kernels.mlir --linattn-lower-to-nvvm="format=isa" --mlir-print-ir-after=convert-gpu-to-nvvm -o /dev/null 2>&1 | FileCheck %s --check-prefix=NVVM
// RUN: linattn-opt %S/Inputs/all-kernels.mlir --linattn-lower-to-nvvm="format=isa" | FileCheck %s --check-prefix=HOST
// RUN: linattn-opt %S/Inputs/all-kernels.mlir --linattn-lower-to-nvvm="format=isa" | %linattn_python %S/Inputs/gpu_binary.py --ptx | FileCheck %s --check-prefix=PTX
// RUN: linattn-opt %S/Inputs/all-kernels.mlir --linattn-lower-to-nvvm | %linattn_python %S/Inputs/gpu_binary.py --elf | FileCheck %s --check-prefix=CUBIN
// RUN: linattn-opt %S/Inputs/all-kernels.mlir --linattn-lower-to-nvvm="chip=sm_80 opt-level=2" | %linattn_python %S/Inputs/gpu_binary.py --elf | FileCheck %s --check-prefix=SM80
// RUN: linattn-opt %S/Inputs/all-kernels.mlir --linattn-lower-to-nvvm="format=fatbin" | FileCheck %s --check-prefix=FATBIN
// RUN: linattn-opt %S/Inputs/chunked-scan.mlir --linattn-lower-to-nvvm="format=isa" | FileCheck %s --check-prefix=ARCH
// RUN: linattn-opt %S/Inputs/chunked-scan.mlir --linattn-lower-to-nvvm="format=isa wgmma=false" | FileCheck %s --check-prefix=NO-WGMMA
// RUN: linattn-opt %S/Inputs/chunked-scan.mlir --linattn-lower-to-nvvm="format=isa chip=sm_90a wgmma=false" | FileCheck %s --check-prefix=ARCH
// RUN: not linattn-opt %S/Inputs/all-kernels.mlir --linattn-lower-to-nvvm="cuda-path=%t/no-such-toolkit" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-PTXAS
// Options the pipeline checks as it is parsed (gpu-module-to-binary would
// report the format without failing, then use an unset one).
// RUN: not linattn-opt %S/Inputs/all-kernels.mlir --linattn-lower-to-nvvm="format=cubin" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-FORMAT
// RUN: not linattn-opt %S/Inputs/all-kernels.mlir --linattn-lower-to-nvvm="chip=volta" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-CHIP
// The kernels' options too, as convert-linattn-to-gpu checks them: reported
// before anything runs, without the module.
// RUN: not linattn-opt %S/Inputs/all-kernels.mlir --linattn-lower-to-nvvm="chunk-size=128" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-CHUNK
// RUN: not linattn-opt %S/Inputs/all-kernels.mlir --linattn-lower-to-nvvm="scan-kernel=fast" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-KERNEL
// BAD-FORMAT: error: linattn-lower-to-nvvm: format 'cubin' is not bin, fatbin or isa
// BAD-CHIP: error: linattn-lower-to-nvvm: chip 'volta' is not sm_ followed by a number
// BAD-CHUNK: error: linattn-lower-to-nvvm: chunk-size must be 16, 32 or 64
// BAD-CHUNK-NOT: linattn.
// BAD-KERNEL: error: linattn-lower-to-nvvm: scan-kernel must be 'chunked' or 'recurrent'
// BAD-KERNEL-NOT: linattn.

// wgmma (the default) targets the default sm_90 as sm_90a while the kernels
// are lowered to NVVM; these use no wgmma (f32 data), so their module then
// goes back to the portable sm_90 (linattn-gpu-portable-target: HOST,
// FATBIN). The bf16 chunked scan's wgmma kernels keep sm_90a (ARCH).
// NVVM: gpu.module @linattn_kernels [#nvvm.target<O = 3, chip = "sm_90a">]
// NVVM: llvm.func @linattn_scan_forward_elu_normalized_0(
// NVVM-SAME: gpu.kernel
// NVVM-SAME: nvvm.kernel
// NVVM-DAG: nvvm.read.ptx.sreg.ctaid.x
// NVVM-DAG: nvvm.read.ptx.sreg.tid.x
// NVVM-DAG: nvvm.barrier
// NVVM-DAG: llvm.call @__nv_expf
// The scans' sequence-parallel kernels, for a launch that splits N (dynamic
// here: decided at run time).
// NVVM: llvm.func @linattn_scan_segment_states_forward_elu_normalized_1(
// NVVM: llvm.func @linattn_scan_segment_prefix_forward_elu_normalized_2(
// NVVM: llvm.func @linattn_scan_segment_outputs_forward_elu_normalized_3(
// NVVM: llvm.func @linattn_kv_summary_relu_4(
// NVVM: llvm.intr.maximum
// NVVM: llvm.func @linattn_query_readout_relu_normalized_5(
// NVVM: llvm.func @linattn_step_elu_normalized_6(
// NVVM: llvm.func @linattn_scan_reverse_features_7(
// NVVM: llvm.fmul {{.*}} : f64
// NVVM: llvm.func @linattn_scan_segment_states_reverse_features_8(
// NVVM: llvm.func @linattn_scan_segment_prefix_reverse_features_9(
// NVVM: llvm.func @linattn_scan_segment_outputs_reverse_features_10(

// The host: device buffers, copies, launches on one stream per function.
// HOST-LABEL: llvm.func @causal(
// HOST: %[[STREAM:.*]] = llvm.call @mgpuStreamCreate()
// HOST: llvm.call @mgpuMemAlloc({{.*}}, %[[STREAM]], {{.*}})
// HOST: llvm.call @mgpuMemcpy({{.*}}, %[[STREAM]])
// HOST: gpu.launch_func <%[[STREAM]] : !llvm.ptr> @linattn_kernels::@linattn_scan_forward_elu_normalized_0
// HOST: llvm.call @mgpuMemcpy({{.*}}, %[[STREAM]])
// HOST: llvm.call @mgpuMemFree({{.*}}, %[[STREAM]])
// HOST: llvm.call @mgpuStreamSynchronize(%[[STREAM]])
// HOST: llvm.call @mgpuStreamDestroy(%[[STREAM]])
// HOST: llvm.func @_mlir_ciface_causal(
// HOST-LABEL: llvm.func @cross(
// HOST: gpu.launch_func {{.*}} @linattn_kernels::@linattn_kv_summary_relu_4
// HOST: gpu.launch_func {{.*}} @linattn_kernels::@linattn_query_readout_relu_normalized_5
// HOST-LABEL: llvm.func @decode(
// HOST: gpu.launch_func {{.*}} @linattn_kernels::@linattn_step_elu_normalized_6
// HOST-LABEL: llvm.func @suffix(
// HOST: gpu.launch_func {{.*}} @linattn_kernels::@linattn_scan_reverse_features_7
// HOST: gpu.binary @linattn_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, properties = {{.*}}, assembly = "
// HOST-NOT: linattn.

// The scan: features and normalizer partials in shared memory, the next
// block of tokens copied by cp.async while the current one runs (16 bytes
// each where the rows are 16-byte aligned, v's groups past Dv reading
// nothing; 4 bytes each otherwise), elu applied to the copies in place; the state in registers, four
// columns per thread split over 16 lanes (4 of their 64 features each: 32
// fused multiply-adds per token), the readouts added over the lanes by
// shuffles that first halve the sums a lane carries (xor 2 twice, xor 4),
// then butterflies (xor 8, 16).
// Its parameters: four buffers (q, k, v, O) of five descriptor words each,
// N and Dv; no final state, which attention drops. Blocks of 31 tokens, the
// most whose two slots and normalizer buffers fit CUDA's 48 KiB of static
// shared memory.
// PTX: .target sm_90
// PTX-LABEL: .visible .entry linattn_scan_forward_elu_normalized_0(
// PTX-COUNT-22: .param .u64
// PTX-NOT: .param
// PTX: .maxntid
// PTX: .shared .align 16 .b8 __wg_linattn_scan_forward_elu_normalized_0_0[15872];
// PTX: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 4;
// PTX: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16;
// PTX: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, %r{{[0-9]+}};
// PTX: cp.async.commit_group;
// PTX: bar.sync 0;
// PTX: cp.async.ca.shared.global [{{.*}}], [{{.*}}], 4;
// PTX: cp.async.commit_group;
// PTX-NEXT: cp.async.wait_group 1;
// PTX: ex2.approx
// PTX: bar.sync 0;
// PTX-COUNT-32: fma.rn.f32
// PTX: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// PTX: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// PTX: shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
// PTX: shfl.sync.bfly.b32 {{.*}}, 8, 31, -1;
// PTX: shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// PTX: div.rn.f32
// The linear form's scalar kernels (f32): the summary stages relu features
// of 32 keys × 16 features (16-byte aligned) and reads them four at a time;
// the readout stages φ(q) of 16 tokens feature-major (rows of 20 floats) and
// their denominators.
// PTX-LABEL: .visible .entry linattn_kv_summary_relu_4(
// PTX: .shared .align 16 .b8 __wg_linattn_kv_summary_relu_4_0[2048];
// PTX: max.NaN.f32
// PTX: ld.shared.v4.b32
// PTX: fma.rn.f32
// PTX-LABEL: .visible .entry linattn_query_readout_relu_normalized_5(
// PTX: .shared .align 16 .b8 __wg_linattn_query_readout_relu_normalized_5_0[2560];
// PTX: .shared .align 16 .b8 __wg_linattn_query_readout_relu_normalized_5_1[64];
// PTX: bar.sync 0;
// PTX: ld.shared.v4.b32
// PTX-LABEL: .visible .entry linattn_step_elu_normalized_6(
// PTX: bar.sync 0;
// PTX-LABEL: .visible .entry linattn_scan_reverse_features_7(
// PTX: fma.rn.f64

// CUBIN: ELF64 machine 190 (CUDA)
// CUBIN-NEXT: sm_90
// CUBIN-DAG: kernel linattn_scan_forward_elu_normalized_0
// CUBIN-DAG: kernel linattn_kv_summary_relu_4
// CUBIN-DAG: kernel linattn_query_readout_relu_normalized_5
// CUBIN-DAG: kernel linattn_step_elu_normalized_6
// CUBIN-DAG: kernel linattn_scan_reverse_features_7
// CUBIN-DAG: kernel linattn_scan_segment_states_forward_elu_normalized_1
// CUBIN-DAG: kernel linattn_scan_segment_prefix_forward_elu_normalized_2
// CUBIN-DAG: kernel linattn_scan_segment_outputs_forward_elu_normalized_3
// CUBIN-DAG: kernel linattn_scan_segment_states_reverse_features_8
// CUBIN-DAG: kernel linattn_scan_segment_prefix_reverse_features_9
// CUBIN-DAG: kernel linattn_scan_segment_outputs_reverse_features_10

// SM80: sm_80

// FATBIN: gpu.binary @linattn_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, properties = {{.*}}, "

// ARCH: gpu.binary @linattn_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90a">
// ARCH-SAME: .target sm_90a
// NO-WGMMA: gpu.binary @linattn_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">
// NO-WGMMA-SAME: .target sm_90\0A

// NO-PTXAS: error: CUDA path: {{.*}}no-such-toolkit does not exist

// The quadratic form lowered as written (rewrite-forms=false): the scores and
// apply_scores kernels, in PTX and through ptxas.
// RUN: linattn-opt %S/../../examples/causal_attention.mlir --linattn-lower-to-nvvm="format=isa rewrite-forms=false" | %linattn_python %S/Inputs/gpu_binary.py --ptx | FileCheck %s --check-prefix=QUADRATIC
// RUN: linattn-opt %S/../../examples/causal_attention.mlir --linattn-lower-to-nvvm="rewrite-forms=false" | %linattn_python %S/Inputs/gpu_binary.py --elf | FileCheck %s --check-prefix=QUADRATIC-CUBIN
// QUADRATIC-DAG: .entry linattn_scores_elu_causal_{{[0-9]+}}(
// QUADRATIC-DAG: .entry linattn_apply_scores_normalized_{{[0-9]+}}(
// QUADRATIC-CUBIN: ELF
