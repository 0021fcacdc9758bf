// REQUIRES: cuda-toolkit
// linattn-lower-to-nvvm{device-buffers}: every public function takes the
// caller's device buffers, results as out-params and a trailing stream
// (!llvm.ptr); kernels are launched asynchronously on that stream and write
// the out-params directly; buffers between kernels are stream-ordered. No
// host copies, no stream of its own, no synchronization. Checked after the
// staging (STAGE) and in the final host code (HOST); ops that would need the
// host are errors (Inputs/device-buffers-invalid.mlir).

// small-grid-value-tile=0: the chunk loops of these small grids keep their
// value tiles (the narrower ones: Conversion/LinAttnToGPU/
// convert-linattn-to-gpu-small-grid.mlir).
// RUN: linattn-opt %s --linattn-lower-to-nvvm="small-grid-value-tile=0 device-buffers=true format=isa wgmma=false narrow-offset-limit=2147483648" --mlir-print-ir-after=linattn-gpu-stage-buffers -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: linattn-opt %s --linattn-lower-to-nvvm="small-grid-value-tile=0 device-buffers=true format=isa wgmma=false narrow-offset-limit=2147483648" | FileCheck %s --check-prefix=HOST
// RUN: not linattn-opt %S/Inputs/device-buffers-invalid.mlir --linattn-lower-to-nvvm="device-buffers=true format=isa" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=INVALID

// A decode step over a batch of 8 states (F = 16, Dv = 24): o, S' and z'
// are out-params, written by the step kernel.
// STAGE-LABEL: func.func @decode(
//  STAGE-SAME: %{{[a-z0-9]+}}: memref<8x16xf32>, %{{[a-z0-9]+}}: memref<8x16xf32>, %{{[a-z0-9]+}}: memref<8x24xf32>, %{{[a-z0-9]+}}: memref<8x16x24xf32>, %{{[a-z0-9]+}}: memref<8x16xf32>,
//  STAGE-SAME: %[[O:[a-z0-9]+]]: memref<8x24xf32>, %[[S1:[a-z0-9]+]]: memref<8x16x24xf32>, %[[Z1:[a-z0-9]+]]: memref<8x16xf32>, %[[STREAM:[a-z0-9]+]]: !llvm.ptr) {
//   STAGE-NOT: memref.alloc
//   STAGE-NOT: gpu.alloc
//   STAGE-NOT: gpu.memcpy
//       STAGE: %[[T0:.*]] = builtin.unrealized_conversion_cast %[[STREAM]] : !llvm.ptr to !gpu.async.token
//       STAGE: memref.reinterpret_cast %[[S1]]
//       STAGE: gpu.launch_func async [%[[T0]]] @linattn_kernels::@linattn_step_elu_normalized_{{[0-9]+}}
//   STAGE-NOT: gpu.
//       STAGE: return
func.func @decode(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x24xf32>, %s: tensor<8x16x24xf32>, %z: tensor<8x16xf32>) -> (tensor<8x24xf32>, tensor<8x16x24xf32>, tensor<8x16xf32>) {
  %fq = linattn.feature_map elu %q : tensor<8x16xf32> -> tensor<8x16xf32>
  %fk = linattn.feature_map elu %k : tensor<8x16xf32> -> tensor<8x16xf32>
  %o, %s1, %z1 = linattn.step %fq, %fk, %v, %s, %z normalize(eps = 1.0e-6) : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x24xf32>, tensor<8x16x24xf32>, tensor<8x16xf32> -> tensor<8x24xf32>, tensor<8x16x24xf32>, tensor<8x16xf32>
  return %o, %s1, %z1 : tensor<8x24xf32>, tensor<8x16x24xf32>, tensor<8x16xf32>
}

// A causal scan with dynamic batch and length, from an initial state: the
// output and the final state are out-params of the dynamic types; the final
// normalizer, not returned, is a temporary on the stream. Batch-parallel or
// sequence-parallel, decided at run time: the segments' kernels write the
// same out-params (the final state from the scan over the segments), their
// buffers temporaries on the stream too.
// STAGE-LABEL: func.func @causal(
//  STAGE-SAME: %[[O:[a-z0-9]+]]: memref<?x4x?x40xf32>, %[[SF:[a-z0-9]+]]: memref<?x4x16x40xf32>, %[[STREAM:[a-z0-9]+]]: !llvm.ptr) {
//       STAGE: %[[T0:.*]] = builtin.unrealized_conversion_cast %[[STREAM]]
//   STAGE-NOT: gpu.memcpy
//       STAGE: scf.if
//       STAGE: %[[FO:.*]] = memref.reinterpret_cast %[[O]]
//       STAGE: %[[FS:.*]] = memref.reinterpret_cast %[[SF]]
//       STAGE: %[[ZT:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] (%{{.*}}) : memref<?x4x16xf32>
//       STAGE: %[[T2:.*]] = gpu.launch_func async [%[[T1]]] @linattn_kernels::@linattn_scan_forward_elu_normalized_{{[0-9]+}} {{.*}} args({{.*}}%[[FO]] : memref<?xf32>, %[[FS]] : memref<?xf32>, %{{.*}} : memref<?xf32>,
//       STAGE: gpu.dealloc async [%[[T2]]] %[[ZT]]
//  STAGE-NEXT: scf.yield %[[O]], %[[SF]]
//  STAGE-NEXT: } else {
//   STAGE-NOT: gpu.memcpy
//       STAGE: gpu.launch_func async {{.*}} @linattn_kernels::@linattn_scan_segment_states_forward_elu_normalized_{{[0-9]+}}
//       STAGE: %[[SEGS:.*]] = memref.reinterpret_cast %[[SF]]
//       STAGE: gpu.launch_func async {{.*}} @linattn_kernels::@linattn_scan_segment_prefix_forward_elu_normalized_{{[0-9]+}} {{.*}} %[[SEGS]] : memref<?xf32>
//       STAGE: %[[SEGO:.*]] = memref.reinterpret_cast %[[O]]
//       STAGE: gpu.launch_func async {{.*}} @linattn_kernels::@linattn_scan_segment_outputs_forward_elu_normalized_{{[0-9]+}} {{.*}} %[[SEGO]] : memref<?xf32>
//   STAGE-NOT: gpu.memcpy
//       STAGE: scf.yield %[[O]], %[[SF]]
//  STAGE-NEXT: }
//  STAGE-NEXT: return
func.func @causal(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x40xf32>, %s0: tensor<?x4x16x40xf32>, %z0: tensor<?x4x16xf32>) -> (tensor<?x4x?x40xf32>, tensor<?x4x16x40xf32>) {
  %fq = linattn.feature_map elu %q : tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %fk = linattn.feature_map elu %k : tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v init(%s0, %z0) normalize(eps = 1.0e-6) : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x40xf32>, tensor<?x4x16x40xf32>, tensor<?x4x16xf32> -> tensor<?x4x?x40xf32>, tensor<?x4x16x40xf32>, tensor<?x4x16xf32>
  return %o, %s : tensor<?x4x?x40xf32>, tensor<?x4x16x40xf32>
}

// Attention decomposed into kv_summary and query_readout: S and z live on
// the device between the two kernels, allocated and freed on the stream.
// STAGE-LABEL: func.func @cross(
//  STAGE-SAME: %[[O:[a-z0-9]+]]: memref<2x7x40xf32>, %[[STREAM:[a-z0-9]+]]: !llvm.ptr) {
//       STAGE: %[[T0:.*]] = builtin.unrealized_conversion_cast %[[STREAM]]
//       STAGE: %[[SS:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] () : memref<2x32x40xf32>
//       STAGE: %[[ZZ:.*]], %[[T2:.*]] = gpu.alloc async [%[[T1]]] () : memref<2x32xf32>
//       STAGE: %[[T3:.*]] = gpu.launch_func async [%[[T2]]] @linattn_kernels::@linattn_kv_summary_relu_{{[0-9]+}}
//       STAGE: %[[FO:.*]] = memref.reinterpret_cast %[[O]]
//       STAGE: %[[T4:.*]] = gpu.launch_func async [%[[T3]]] @linattn_kernels::@linattn_query_readout_relu_normalized_{{[0-9]+}} {{.*}}, %{{.*}} : memref<?xf32>, %{{.*}} : memref<?xf32>, %{{.*}} : memref<?xf32>, %[[FO]] : memref<?xf32>,
//       STAGE: %[[T5:.*]] = gpu.dealloc async [%[[T4]]] %[[SS]]
//       STAGE: gpu.dealloc async [%[[T5]]] %[[ZZ]]
//  STAGE-NEXT: return
func.func @cross(%q: tensor<2x7x32xf32>, %k: tensor<2x13x32xf32>, %v: tensor<2x13x40xf32>) -> tensor<2x7x40xf32> {
  %0 = linattn.attention relu %q, %k, %v normalize(eps = 1.0e-6) : tensor<2x7x32xf32>, tensor<2x13x32xf32>, tensor<2x13x40xf32> -> tensor<2x7x40xf32>
  return %0 : tensor<2x7x40xf32>
}

// bf16 with a dynamic length: the chunked scan chooses at run time between
// the sequence-parallel kernels (chunk states, their prefix, the outputs)
// and the fused kernel; both branches launch on the stream and write the
// out-param. The sequence-parallel branch frees its temporaries (the chunk
// states and their prefixes); the fused one has none, since the final state
// is not returned.
// STAGE-LABEL: func.func @causal_bf16(
//  STAGE-SAME: %[[O:[a-z0-9]+]]: memref<2x4x?x64xbf16>, %[[STREAM:[a-z0-9]+]]: !llvm.ptr) {
//       STAGE: %[[T0:.*]] = builtin.unrealized_conversion_cast %[[STREAM]]
//       STAGE: scf.if
//       STAGE: gpu.alloc async [%[[T0]]]
//       STAGE: gpu.launch_func async {{.*}} @linattn_kernels::@linattn_scan_segment_states_forward_elu_{{[0-9]+}}
//       STAGE: gpu.launch_func async {{.*}} @linattn_kernels::@linattn_scan_segment_prefix_forward_elu_{{[0-9]+}}
//       STAGE: memref.reinterpret_cast %[[O]]
//       STAGE: gpu.launch_func async {{.*}} @linattn_kernels::@linattn_scan_segment_outputs_forward_elu_{{[0-9]+}}
//       STAGE: gpu.dealloc async
//       STAGE: scf.yield %[[O]]
//       STAGE: } else {
//   STAGE-NOT: gpu.alloc
//       STAGE: memref.reinterpret_cast %[[O]]
//   STAGE-NOT: gpu.alloc
//       STAGE: gpu.launch_func async {{.*}} @linattn_kernels::@linattn_scan_chunked_forward_elu_{{[0-9]+}}
//   STAGE-NOT: gpu.dealloc
//       STAGE: scf.yield %[[O]]
//   STAGE-NOT: memref.copy
//       STAGE: return
func.func @causal_bf16(%q: tensor<2x4x?x64xbf16>, %k: tensor<2x4x?x64xbf16>, %v: tensor<2x4x?x64xbf16>) -> tensor<2x4x?x64xbf16> {
  %fq = linattn.feature_map elu %q : tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %fk = linattn.feature_map elu %k : tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>, tensor<2x4x64x64xf32>, tensor<2x4x64xf32>
  return %o : tensor<2x4x?x64xbf16>
}

// The gradients of normalized attention across sequences: besides the
// linear form's kernels and the chain rule's, the glue between them (V
// copied into [V, 1] and its last column filled, dO·N, g written into
// [g, h], h, the transposed summaries) is linalg kernels on the stream,
// between allocations on it; nothing is left to the host.
// STAGE-LABEL: func.func @grad_normalized(
//  STAGE-SAME: %[[STREAM:[a-z0-9]+]]: !llvm.ptr) {
//       STAGE: %[[T0:.*]] = builtin.unrealized_conversion_cast %[[STREAM]]
//       STAGE: %[[VW:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] () : memref<2x13x5xf32>
//       STAGE: %[[T2:.*]] = gpu.launch_func async [%[[T1]]] @linattn_kernels::@linattn_linalg_copy
//       STAGE: gpu.launch_func async [%[[T2]]] @linattn_kernels::@linattn_linalg_fill
//       STAGE: gpu.launch_func async {{.*}} @linattn_kernels::@linattn_kv_summary_elu
//       STAGE: gpu.launch_func async {{.*}} @linattn_kernels::@linattn_linalg_generic
//       STAGE: gpu.launch_func async {{.*}} @linattn_kernels::@linattn_linalg_transpose
//       STAGE: gpu.launch_func async {{.*}} @linattn_kernels::@linattn_feature_map_grad_elu
//       STAGE: gpu.dealloc async [%{{.*}}] %[[VW]]
//   STAGE-NOT: memref.copy
//   STAGE-NOT: linalg.
//       STAGE: return
func.func @grad_normalized(%q: tensor<2x7x8xf32>, %k: tensor<2x13x8xf32>, %v: tensor<2x13x4xf32>, %do: tensor<2x7x4xf32>) -> (tensor<2x7x8xf32>, tensor<2x13x8xf32>, tensor<2x13x4xf32>) {
  %dq, %dk, %dv = linattn.attention_grad elu %q, %k, %v, %do normalize(eps = 1.0e-6) : tensor<2x7x8xf32>, tensor<2x13x8xf32>, tensor<2x13x4xf32>, tensor<2x7x4xf32> -> tensor<2x7x8xf32>, tensor<2x13x8xf32>, tensor<2x13x4xf32>
  return %dq, %dk, %dv : tensor<2x7x8xf32>, tensor<2x13x8xf32>, tensor<2x13x4xf32>
}

// bf16 normalized gradients: [V, 1] and [g, h] padded to 80 columns with
// zeros, so that all four scans, those that take them as queries and keys
// too, run on the tensor-core kernels (chunked or sequence-parallel), none
// on the recurrent one.
// STAGE-LABEL: func.func @grad_normalized_bf16(
//   STAGE-NOT: @linattn_scan_forward
//   STAGE-NOT: @linattn_scan_reverse
//       STAGE: @linattn_kernels::@linattn_scan_chunked{{(_wide)?}}_forward_elu
//   STAGE-NOT: @linattn_scan_forward
//   STAGE-NOT: @linattn_scan_reverse
//       STAGE: @linattn_kernels::@linattn_scan_chunked{{(_wide)?}}_forward_features
//   STAGE-NOT: @linattn_scan_forward
//   STAGE-NOT: @linattn_scan_reverse
//       STAGE: @linattn_kernels::@linattn_scan_chunked{{(_wide)?}}_reverse_features
//   STAGE-NOT: @linattn_scan_forward
//   STAGE-NOT: @linattn_scan_reverse
//       STAGE: @linattn_kernels::@linattn_scan_chunked{{(_wide)?}}_reverse_elu
//   STAGE-NOT: @linattn_scan_forward
//   STAGE-NOT: @linattn_scan_reverse
//       STAGE: return
func.func @grad_normalized_bf16(%q: tensor<2x?x64xbf16>, %k: tensor<2x?x64xbf16>, %v: tensor<2x?x64xbf16>, %do: tensor<2x?x64xbf16>) -> (tensor<2x?x64xbf16>, tensor<2x?x64xbf16>, tensor<2x?x64xbf16>) {
  %dq, %dk, %dv = linattn.attention_grad elu %q, %k, %v, %do causal normalize(eps = 1.0e-6) : tensor<2x?x64xbf16>, tensor<2x?x64xbf16>, tensor<2x?x64xbf16>, tensor<2x?x64xbf16> -> tensor<2x?x64xbf16>, tensor<2x?x64xbf16>, tensor<2x?x64xbf16>
  return %dq, %dk, %dv : tensor<2x?x64xbf16>, tensor<2x?x64xbf16>, tensor<2x?x64xbf16>
}

// A state column of 520 f32 features fits no scan kernel: the scan becomes
// its loop over the tokens, which stays on the host as control flow and
// launches the linalg kernels of each token's step on the stream (slow,
// several launches a token, but nothing touches device memory on the host).
// STAGE-LABEL: func.func @wide_scan(
//       STAGE: scf.for
//   STAGE-NOT: memref.load
//   STAGE-NOT: memref.store
//   STAGE-NOT: memref.copy
//       STAGE: gpu.launch_func async {{.*}} @linattn_kernels::@linattn_linalg_generic
//   STAGE-NOT: memref.copy
//       STAGE: return
func.func @wide_scan(%fq: tensor<7x520xf32>, %fk: tensor<7x520xf32>, %v: tensor<7x8xf32>) -> tensor<7x8xf32> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<7x520xf32>, tensor<7x520xf32>, tensor<7x8xf32> -> tensor<7x8xf32>, tensor<520x8xf32>, tensor<520xf32>
  return %o : tensor<7x8xf32>
}

// A result that is an argument: copied into its out-param on the stream.
// STAGE-LABEL: func.func @identity(
//  STAGE-SAME: %[[X:[a-z0-9]+]]: memref<8x16xf32>, %[[OUT:[a-z0-9]+]]: memref<8x16xf32>, %[[STREAM:[a-z0-9]+]]: !llvm.ptr) {
//       STAGE: %[[T0:.*]] = builtin.unrealized_conversion_cast %[[STREAM]]
//  STAGE-NEXT: gpu.memcpy async [%[[T0]]] %[[OUT]], %[[X]]
//  STAGE-NEXT: return
func.func @identity(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  return %x : tensor<8x16xf32>
}

// The host code: launches on the stream argument (the last one), stream-
// ordered allocations and frees on it, and nothing else from the runtime.
// HOST: module attributes {gpu.container_module, linattn.device_buffers}
// HOST-LABEL: llvm.func @decode(
//  HOST-SAME: %[[STREAM:arg60]]: !llvm.ptr) attributes {llvm.emit_c_interface} {
//      HOST: gpu.launch_func <%[[STREAM]] : !llvm.ptr> @linattn_kernels::@linattn_step_elu_normalized_{{[0-9]+}}
//  HOST-NOT: llvm.call
//      HOST: llvm.return
// The C wrapper: 5 argument descriptors, 3 out-param descriptors, the stream.
// HOST-LABEL: llvm.func @_mlir_ciface_decode(
//  HOST-SAME: %arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr, %arg3: !llvm.ptr, %arg4: !llvm.ptr, %arg5: !llvm.ptr, %arg6: !llvm.ptr, %arg7: !llvm.ptr, %[[CSTREAM:arg8]]: !llvm.ptr)
//      HOST: llvm.call @decode({{.*}}, %[[CSTREAM]])
// HOST-LABEL: llvm.func @causal(
//      HOST: llvm.call @mgpuMemAlloc(%{{.*}}, %[[STREAM:arg[0-9]+]], %{{.*}})
//      HOST: gpu.launch_func <%[[STREAM]] : !llvm.ptr> @linattn_kernels::@linattn_scan_forward
//      HOST: llvm.call @mgpuMemFree(%{{.*}}, %[[STREAM]])
// HOST-LABEL: llvm.func @cross(
//      HOST: llvm.call @mgpuMemAlloc(%{{.*}}, %[[STREAM:arg[0-9]+]], %{{.*}})
//      HOST: llvm.call @mgpuMemAlloc(%{{.*}}, %[[STREAM]], %{{.*}})
//      HOST: gpu.launch_func <%[[STREAM]] : !llvm.ptr> @linattn_kernels::@linattn_kv_summary
//      HOST: gpu.launch_func <%[[STREAM]] : !llvm.ptr> @linattn_kernels::@linattn_query_readout
//      HOST: llvm.call @mgpuMemFree(%{{.*}}, %[[STREAM]])
//      HOST: llvm.call @mgpuMemFree(%{{.*}}, %[[STREAM]])
//  HOST-NOT: mgpuMemcpy
//  HOST-NOT: mgpuStream
//  HOST-NOT: mgpuEvent
// The identity's result: one copy, on the stream.
// HOST-LABEL: llvm.func @identity(
//  HOST-SAME: %[[STREAM:arg[0-9]+]]: !llvm.ptr) attributes
//      HOST: llvm.call @mgpuMemcpy(%{{.*}}, %{{.*}}, %{{.*}}, %[[STREAM]])
//  HOST-NOT: mgpuStream
//      HOST: llvm.return

// INVALID: error: device-buffers: 'linalg.generic' would run on the host on device memory (every computation must be a GPU kernel: no host fallback, copies or constants): no kernel runs it because output #1 is not indexed by exactly the parallel loops
// INVALID: error: device-buffers: result #0 of @scalar is not a tensor: results are returned in device buffers
