// What the target chip can run. The chunked kernels need sm_80's tensor-core
// instructions (mma.sync on f16, bf16 and tf32, ldmatrix, cp.async): for an
// older chip (sm_75) a causal scan takes the recurrent kernel and the linear
// form the scalar kernels, whatever scan-kernel, linear-kernel, tf32 and
// async-copies say. wgmma applies on sm_90 alone; sm_80 and sm_100 chunk
// loops keep mma.sync. A chip that is not sm_ and a number is an error.

// RUN: linattn-opt %s --convert-linattn-to-gpu="chip=sm_75 tf32=true async-copies=true wgmma=false narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=SM75
// RUN: linattn-opt %s --convert-linattn-to-gpu="chip=sm_80 tf32=true wgmma=false narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=SM80
// RUN: linattn-opt %s --convert-linattn-to-gpu="chip=sm_90 wgmma=true sequence-parallel-blocks=0 narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=SM90
// RUN: linattn-opt %s --convert-linattn-to-gpu="chip=sm_90a wgmma=true sequence-parallel-blocks=0 narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=SM90
// RUN: linattn-opt %s --convert-linattn-to-gpu="chip=sm_80 wgmma=true sequence-parallel-blocks=0 narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=NO-WGMMA
// RUN: linattn-opt %s --convert-linattn-to-gpu="chip=sm_100 wgmma=true sequence-parallel-blocks=0 narrow-offset-limit=2147483648" -split-input-file | FileCheck %s --check-prefix=NO-WGMMA
// RUN: not linattn-opt %s --convert-linattn-to-gpu="chip=volta" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD-CHIP

// BAD-CHIP: error: convert-linattn-to-gpu: chip 'volta' is not sm_ followed by a number
// BAD-CHIP-NOT: see current operation

// SM75-LABEL: func.func @scan_bf16
//   SM75-NOT: chunked
//       SM75: gpu.func @linattn_scan_forward_elu_normalized_0(
//   SM75-NOT: nvvm.mma.sync
//   SM75-NOT: ldmatrix
//   SM75-NOT: {{cp.async|device_async_copy}}
//       SM75: gpu.return
// SM80-LABEL: func.func @scan_bf16
//       SM80: gpu.func @linattn_scan_chunked_forward_elu_normalized_{{[0-9]+}}(
//       SM80: nvvm.mma.sync
// SM90-LABEL: func.func @scan_bf16
//       SM90: gpu.func @linattn_scan_chunked_forward_elu_normalized_{{[0-9]+}}(
//       SM90: nvvm.wgmma.mma_async
// NO-WGMMA-LABEL: func.func @scan_bf16
//       NO-WGMMA: gpu.func @linattn_scan_chunked_forward_elu_normalized_{{[0-9]+}}(
//   NO-WGMMA-NOT: nvvm.wgmma
//       NO-WGMMA: nvvm.mma.sync
//   NO-WGMMA-NOT: nvvm.wgmma
//       NO-WGMMA: return
func.func @scan_bf16(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>, tensor<2x4x64x64xf32>, tensor<2x4x64xf32>
  return %o : tensor<2x4x?x64xbf16>
}

// -----

// tf32 needs sm_80 too: on sm_75 f32 data keeps the recurrent kernel.
// SM75-LABEL: func.func @scan_f32
//   SM75-NOT: chunked
//       SM75: gpu.func @linattn_scan_forward_elu_normalized_0(
//   SM75-NOT: nvvm.mma.sync
//       SM75: gpu.return
// SM80-LABEL: func.func @scan_f32
//       SM80: gpu.func @linattn_scan_chunked_forward_elu_normalized_{{[0-9]+}}(
//       SM80: nvvm.convert.float.to.tf32
func.func @scan_f32(%q: tensor<2x?x64xf32>, %k: tensor<2x?x64xf32>, %v: tensor<2x?x64xf32>) -> tensor<2x?x64xf32> {
  %fq = linattn.feature_map elu %q : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  %fk = linattn.feature_map elu %k : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x?x64xf32>, tensor<2x?x64xf32>, tensor<2x?x64xf32> -> tensor<2x?x64xf32>, tensor<2x64x64xf32>, tensor<2x64xf32>
  return %o : tensor<2x?x64xf32>
}

// -----

// The linear form: the scalar kv_summary and query_readout kernels on sm_75.
// SM75-LABEL: func.func @linear_bf16
//   SM75-NOT: chunked
//       SM75: gpu.func @linattn_kv_summary_elu_0(
//       SM75: gpu.func @linattn_query_readout_elu_normalized_1(
//   SM75-NOT: nvvm.mma.sync
//       SM75: return
// SM80-LABEL: func.func @linear_bf16
//       SM80: gpu.func @linattn_kv_summary_chunked_elu_{{[0-9]+}}(
//       SM80: nvvm.mma.sync
func.func @linear_bf16(%q: tensor<2x?x64xbf16>, %k: tensor<2x?x64xbf16>, %v: tensor<2x?x64xbf16>) -> tensor<2x?x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>
  %s, %z = linattn.kv_summary %fk, %v : tensor<2x?x64xbf16>, tensor<2x?x64xbf16> -> tensor<2x64x64xf32>, tensor<2x64xf32>
  %o = linattn.query_readout %fq, %s normalize(%z, eps = 1.0e-6) : tensor<2x?x64xbf16>, tensor<2x64x64xf32>, tensor<2x64xf32> -> tensor<2x?x64xbf16>
  return %o : tensor<2x?x64xbf16>
}
