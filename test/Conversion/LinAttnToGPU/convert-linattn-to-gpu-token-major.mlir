// RUN: linattn-opt %s --convert-linattn-to-gpu="sequence-parallel-blocks=0 narrow-offset-limit=2147483648" --canonicalize --cse -split-input-file | FileCheck %s

// A scan between transposes from and to token-major [B, N, H, D] tensors, as
// the raise and the Python package's layout="bnhd" write it: the chunked
// kernels take the untransposed tensors and H, and write O token-major, so
// that no transpose (a copy on the GPU) is left. The 32-bit offsets' bound
// counts rows of H·max(F, Dv, 128) = 4·128 elements: 2^31 / 512.

// CHECK-LABEL: func.func @token_major(
// CHECK-SAME:      %[[Q:[a-z0-9]+]]: tensor<2x?x4x64xbf16>, %[[K:[a-z0-9]+]]: tensor<2x?x4x64xbf16>, %[[V:[a-z0-9]+]]: tensor<2x?x4x64xbf16>)
// CHECK-NOT:     linalg.transpose
// CHECK-DAG:     %[[H:.+]] = arith.constant 4 : index
// CHECK-DAG:     %[[BOUND:.+]] = arith.constant 4194304 : index
// CHECK:         %[[N:.+]] = tensor.dim %[[Q]], %c1
// CHECK:         arith.cmpi ule, %{{.+}}, %[[BOUND]]
// CHECK:         linattn.read_buffer %[[K]] : tensor<2x?x4x64xbf16> to memref<2x?x4x64xbf16>
// CHECK:         linattn.read_buffer %[[V]] : tensor<2x?x4x64xbf16> to memref<2x?x4x64xbf16>
// CHECK:         call @__linattn_launch_linattn_scan_segment_states_forward_elu_normalized_token_major_0({{.+}}, %[[H]])
// CHECK:         call @__linattn_launch_linattn_scan_segment_prefix_forward_elu_normalized_token_major_1(
// CHECK:         linattn.read_buffer %[[Q]] : tensor<2x?x4x64xbf16> to memref<2x?x4x64xbf16>
// CHECK:         %[[O:.+]] = memref.alloc(%{{.+}}) : memref<2x?x4x64xbf16>
// CHECK:         call @__linattn_launch_linattn_scan_segment_outputs_forward_elu_normalized_token_major_2({{.+}}, %[[H]])
// CHECK:         bufferization.to_tensor %[[O]] restrict writable : memref<2x?x4x64xbf16> to tensor<2x?x4x64xbf16>
// CHECK:       } else {
// CHECK:         %[[O2:.+]] = memref.alloc(%{{.+}}) : memref<2x?x4x64xbf16>
// CHECK:         call @__linattn_launch_linattn_scan_chunked_forward_elu_normalized_token_major_3({{.+}}, %[[N]], %c64, %[[H]])
// CHECK-NOT:     linalg.transpose
// CHECK:       return

// The kernels' last argument is H; batch element b is head b mod H of outer
// element b / H, its rows H·F and H·Dv elements apart.
// CHECK-LABEL: gpu.func @linattn_scan_chunked_forward_elu_normalized_token_major_3(
// CHECK-SAME:      %{{.+}}: index, %[[DV:.+]]: index, %[[HEADS:.+]]: index) workgroup
// CHECK:         %[[OUTER:.+]] = arith.divui %{{.+}}, %[[HEADS]] : index
// CHECK:         %[[HEAD:.+]] = arith.remui %{{.+}}, %[[HEADS]] : index
// CHECK:         arith.muli %{{.+}}, %[[HEADS]] : index
// CHECK:         arith.muli %[[HEADS]], %c64 : index
// CHECK:         arith.muli %[[HEADS]], %[[DV]] : index
func.func @token_major(%q: tensor<2x?x4x64xbf16>, %k: tensor<2x?x4x64xbf16>, %v: tensor<2x?x4x64xbf16>) -> tensor<2x?x4x64xbf16> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %q, %c1 : tensor<2x?x4x64xbf16>
  %e = tensor.empty(%n) : tensor<2x4x?x64xbf16>
  %qt = linalg.transpose ins(%q : tensor<2x?x4x64xbf16>) outs(%e : tensor<2x4x?x64xbf16>) permutation = [0, 2, 1, 3]
  %kt = linalg.transpose ins(%k : tensor<2x?x4x64xbf16>) outs(%e : tensor<2x4x?x64xbf16>) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%v : tensor<2x?x4x64xbf16>) outs(%e : tensor<2x4x?x64xbf16>) permutation = [0, 2, 1, 3]
  %fq = linattn.feature_map elu %qt : tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %fk = linattn.feature_map elu %kt : tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %vt normalize(eps = 1.0e-6) : tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16>, tensor<2x4x?x64xbf16> -> tensor<2x4x?x64xbf16>, tensor<2x4x64x64xf32>, tensor<2x4x64xf32>
  %m = tensor.dim %o, %c2 : tensor<2x4x?x64xbf16>
  %eo = tensor.empty(%m) : tensor<2x?x4x64xbf16>
  %out = linalg.transpose ins(%o : tensor<2x4x?x64xbf16>) outs(%eo : tensor<2x?x4x64xbf16>) permutation = [0, 2, 1, 3]
  return %out : tensor<2x?x4x64xbf16>
}

// -----

// Keys already heads-first: the kernels keep contiguous rows, and the
// transposes of q, v and O stay.

// CHECK-LABEL: func.func @mixed_layouts(
// CHECK-COUNT-2: linalg.transpose
// CHECK-NOT:     token_major
// CHECK:         call @__linattn_launch_linattn_scan_chunked_forward_relu_normalized_{{[0-9]+}}(
// CHECK:         linalg.transpose
// CHECK:       return
func.func @mixed_layouts(%q: tensor<2x128x4x64xbf16>, %k: tensor<2x4x128x64xbf16>, %v: tensor<2x128x4x64xbf16>) -> tensor<2x128x4x64xbf16> {
  %e = tensor.empty() : tensor<2x4x128x64xbf16>
  %eo = tensor.empty() : tensor<2x128x4x64xbf16>
  %qt = linalg.transpose ins(%q : tensor<2x128x4x64xbf16>) outs(%e : tensor<2x4x128x64xbf16>) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%v : tensor<2x128x4x64xbf16>) outs(%e : tensor<2x4x128x64xbf16>) permutation = [0, 2, 1, 3]
  %fq = linattn.feature_map relu %qt : tensor<2x4x128x64xbf16> -> tensor<2x4x128x64xbf16>
  %fk = linattn.feature_map relu %k : tensor<2x4x128x64xbf16> -> tensor<2x4x128x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %vt normalize(eps = 1.0e-6) : tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16> -> tensor<2x4x128x64xbf16>, tensor<2x4x64x64xf32>, tensor<2x4x64xf32>
  %out = linalg.transpose ins(%o : tensor<2x4x128x64xbf16>) outs(%eo : tensor<2x128x4x64xbf16>) permutation = [0, 2, 1, 3]
  return %out : tensor<2x128x4x64xbf16>
}

// -----

// O used heads-first as well: it stays heads-first, and so do the inputs.

// CHECK-LABEL: func.func @heads_first_result_used(
// CHECK-COUNT-3: linalg.transpose
// CHECK-NOT:     token_major
// CHECK:         call @__linattn_launch_linattn_scan_chunked_forward_elu_{{[0-9]+}}(
// CHECK:         linalg.transpose
// CHECK:       return
func.func @heads_first_result_used(%q: tensor<2x128x4x64xbf16>, %k: tensor<2x128x4x64xbf16>, %v: tensor<2x128x4x64xbf16>) -> (tensor<2x128x4x64xbf16>, tensor<2x4x128x64xbf16>) {
  %e = tensor.empty() : tensor<2x4x128x64xbf16>
  %eo = tensor.empty() : tensor<2x128x4x64xbf16>
  %qt = linalg.transpose ins(%q : tensor<2x128x4x64xbf16>) outs(%e : tensor<2x4x128x64xbf16>) permutation = [0, 2, 1, 3]
  %kt = linalg.transpose ins(%k : tensor<2x128x4x64xbf16>) outs(%e : tensor<2x4x128x64xbf16>) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%v : tensor<2x128x4x64xbf16>) outs(%e : tensor<2x4x128x64xbf16>) permutation = [0, 2, 1, 3]
  %fq = linattn.feature_map elu %qt : tensor<2x4x128x64xbf16> -> tensor<2x4x128x64xbf16>
  %fk = linattn.feature_map elu %kt : tensor<2x4x128x64xbf16> -> tensor<2x4x128x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %vt : tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16> -> tensor<2x4x128x64xbf16>, tensor<2x4x64x64xf32>, tensor<2x4x64xf32>
  %out = linalg.transpose ins(%o : tensor<2x4x128x64xbf16>) outs(%eo : tensor<2x128x4x64xbf16>) permutation = [0, 2, 1, 3]
  return %out, %o : tensor<2x128x4x64xbf16>, tensor<2x4x128x64xbf16>
}

// -----

// Transposes of other dimensions (here the batch and the heads) are not
// the token-major layout the kernels address.

// CHECK-LABEL: func.func @other_permutation(
// CHECK-COUNT-3: linalg.transpose
// CHECK-NOT:     token_major
// CHECK:         call @__linattn_launch_linattn_scan_chunked_forward_elu_{{[0-9]+}}(
// CHECK:         linalg.transpose
// CHECK:       return
func.func @other_permutation(%q: tensor<4x2x128x64xbf16>, %k: tensor<4x2x128x64xbf16>, %v: tensor<4x2x128x64xbf16>) -> tensor<4x2x128x64xbf16> {
  %e = tensor.empty() : tensor<2x4x128x64xbf16>
  %eo = tensor.empty() : tensor<4x2x128x64xbf16>
  %qt = linalg.transpose ins(%q : tensor<4x2x128x64xbf16>) outs(%e : tensor<2x4x128x64xbf16>) permutation = [1, 0, 2, 3]
  %kt = linalg.transpose ins(%k : tensor<4x2x128x64xbf16>) outs(%e : tensor<2x4x128x64xbf16>) permutation = [1, 0, 2, 3]
  %vt = linalg.transpose ins(%v : tensor<4x2x128x64xbf16>) outs(%e : tensor<2x4x128x64xbf16>) permutation = [1, 0, 2, 3]
  %fq = linattn.feature_map elu %qt : tensor<2x4x128x64xbf16> -> tensor<2x4x128x64xbf16>
  %fk = linattn.feature_map elu %kt : tensor<2x4x128x64xbf16> -> tensor<2x4x128x64xbf16>
  %o, %s, %z = linattn.scan forward %fq, %fk, %vt : tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16> -> tensor<2x4x128x64xbf16>, tensor<2x4x64x64xf32>, tensor<2x4x64xf32>
  %out = linalg.transpose ins(%o : tensor<2x4x128x64xbf16>) outs(%eo : tensor<4x2x128x64xbf16>) permutation = [1, 0, 2, 3]
  return %out : tensor<4x2x128x64xbf16>
}

// -----

// The linear form: the key-value summary reads token-major K and V, the
// readout token-major Q, and writes O token-major (each op on its own).

// CHECK-LABEL: func.func @linear_token_major(
// CHECK-SAME:      %[[Q:[a-z0-9]+]]: tensor<2x?x4x64xf16>, %[[K:[a-z0-9]+]]: tensor<2x?x4x64xf16>, %[[V:[a-z0-9]+]]: tensor<2x?x4x32xf16>)
// CHECK-NOT:     linalg.transpose
// CHECK-DAG:     %[[H:.+]] = arith.constant 4 : index
// CHECK:         linattn.read_buffer %[[K]] : tensor<2x?x4x64xf16> to memref<2x?x4x64xf16>
// CHECK:         linattn.read_buffer %[[V]] : tensor<2x?x4x32xf16> to memref<2x?x4x32xf16>
// CHECK:         call @__linattn_launch_linattn_kv_summary_chunked_elu_token_major_0({{.+}}, %[[H]])
// CHECK:         linattn.read_buffer %[[Q]] : tensor<2x?x4x64xf16> to memref<2x?x4x64xf16>
// CHECK:         %[[O:.+]] = memref.alloc(%{{.+}}) : memref<2x?x4x32xf16>
// CHECK:         call @__linattn_launch_linattn_query_readout_chunked_elu_normalized_token_major_1({{.+}}, %[[H]])
// CHECK:         %[[R:.+]] = bufferization.to_tensor %[[O]]
// CHECK-NOT:     linalg.transpose
// CHECK:         return %[[R]]
func.func @linear_token_major(%q: tensor<2x?x4x64xf16>, %k: tensor<2x?x4x64xf16>, %v: tensor<2x?x4x32xf16>) -> tensor<2x?x4x32xf16> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %q, %c1 : tensor<2x?x4x64xf16>
  %m = tensor.dim %k, %c1 : tensor<2x?x4x64xf16>
  %eq = tensor.empty(%n) : tensor<2x4x?x64xf16>
  %ek = tensor.empty(%m) : tensor<2x4x?x64xf16>
  %ev = tensor.empty(%m) : tensor<2x4x?x32xf16>
  %qt = linalg.transpose ins(%q : tensor<2x?x4x64xf16>) outs(%eq : tensor<2x4x?x64xf16>) permutation = [0, 2, 1, 3]
  %kt = linalg.transpose ins(%k : tensor<2x?x4x64xf16>) outs(%ek : tensor<2x4x?x64xf16>) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%v : tensor<2x?x4x32xf16>) outs(%ev : tensor<2x4x?x32xf16>) permutation = [0, 2, 1, 3]
  %fq = linattn.feature_map elu %qt : tensor<2x4x?x64xf16> -> tensor<2x4x?x64xf16>
  %fk = linattn.feature_map elu %kt : tensor<2x4x?x64xf16> -> tensor<2x4x?x64xf16>
  %s, %z = linattn.kv_summary %fk, %vt : tensor<2x4x?x64xf16>, tensor<2x4x?x32xf16> -> tensor<2x4x64x32xf32>, tensor<2x4x64xf32>
  %o = linattn.query_readout %fq, %s normalize(%z, eps = 1.0e-6) : tensor<2x4x?x64xf16>, tensor<2x4x64x32xf32>, tensor<2x4x64xf32> -> tensor<2x4x?x32xf16>
  %d = tensor.dim %o, %c2 : tensor<2x4x?x32xf16>
  %eo = tensor.empty(%d) : tensor<2x?x4x32xf16>
  %out = linalg.transpose ins(%o : tensor<2x4x?x32xf16>) outs(%eo : tensor<2x?x4x32xf16>) permutation = [0, 2, 1, 3]
  return %out : tensor<2x?x4x32xf16>
}

// -----

// Values heads-first: the summary reads both operands as they are (K's
// transpose stays); O returned heads-first: the readout writes it so (Q's
// transpose stays).

// CHECK-LABEL: func.func @linear_heads_first(
// CHECK-COUNT-2: linalg.transpose
// CHECK-NOT:     token_major
// CHECK:         call @__linattn_launch_linattn_kv_summary_chunked_relu_{{[0-9]+}}(
// CHECK:         call @__linattn_launch_linattn_query_readout_chunked_relu_{{[0-9]+}}(
// CHECK:       return
func.func @linear_heads_first(%q: tensor<2x128x4x64xf16>, %k: tensor<2x128x4x64xf16>, %v: tensor<2x4x128x32xf16>) -> tensor<2x4x128x32xf16> {
  %e = tensor.empty() : tensor<2x4x128x64xf16>
  %qt = linalg.transpose ins(%q : tensor<2x128x4x64xf16>) outs(%e : tensor<2x4x128x64xf16>) permutation = [0, 2, 1, 3]
  %kt = linalg.transpose ins(%k : tensor<2x128x4x64xf16>) outs(%e : tensor<2x4x128x64xf16>) permutation = [0, 2, 1, 3]
  %fq = linattn.feature_map relu %qt : tensor<2x4x128x64xf16> -> tensor<2x4x128x64xf16>
  %fk = linattn.feature_map relu %kt : tensor<2x4x128x64xf16> -> tensor<2x4x128x64xf16>
  %s, %z = linattn.kv_summary %fk, %v : tensor<2x4x128x64xf16>, tensor<2x4x128x32xf16> -> tensor<2x4x64x32xf32>, tensor<2x4x64xf32>
  %o = linattn.query_readout %fq, %s : tensor<2x4x128x64xf16>, tensor<2x4x64x32xf32> -> tensor<2x4x128x32xf16>
  return %o : tensor<2x4x128x32xf16>
}

// -----

// f32 data: the recurrent scan kernel reads and writes the token-major rows
// too (its last argument H).

// CHECK-LABEL: func.func @recurrent_token_major(
// CHECK-NOT:     linalg.transpose
// CHECK:         call @__linattn_launch_linattn_scan_forward_relu_token_major_{{[0-9]+}}({{.+}}, %c3)
// CHECK-NOT:     linalg.transpose
// CHECK:       return
// CHECK-LABEL: gpu.func @linattn_scan_forward_relu_token_major_{{[0-9]+}}(
// CHECK-SAME:      %[[HEADS:[a-z0-9]+]]: index) workgroup
// CHECK:         arith.divui %{{.+}}, %[[HEADS]] : index
// CHECK:         arith.remui %{{.+}}, %[[HEADS]] : index
func.func @recurrent_token_major(%q: tensor<2x100x3x32xf32>, %k: tensor<2x100x3x32xf32>, %v: tensor<2x100x3x16xf32>) -> tensor<2x100x3x16xf32> {
  %e = tensor.empty() : tensor<2x3x100x32xf32>
  %ev = tensor.empty() : tensor<2x3x100x16xf32>
  %eo = tensor.empty() : tensor<2x100x3x16xf32>
  %qt = linalg.transpose ins(%q : tensor<2x100x3x32xf32>) outs(%e : tensor<2x3x100x32xf32>) permutation = [0, 2, 1, 3]
  %kt = linalg.transpose ins(%k : tensor<2x100x3x32xf32>) outs(%e : tensor<2x3x100x32xf32>) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%v : tensor<2x100x3x16xf32>) outs(%ev : tensor<2x3x100x16xf32>) permutation = [0, 2, 1, 3]
  %fq = linattn.feature_map relu %qt : tensor<2x3x100x32xf32> -> tensor<2x3x100x32xf32>
  %fk = linattn.feature_map relu %kt : tensor<2x3x100x32xf32> -> tensor<2x3x100x32xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %vt : tensor<2x3x100x32xf32>, tensor<2x3x100x32xf32>, tensor<2x3x100x16xf32> -> tensor<2x3x100x16xf32>, tensor<2x3x32x16xf32>, tensor<2x3x32xf32>
  %out = linalg.transpose ins(%o : tensor<2x3x100x16xf32>) outs(%eo : tensor<2x100x3x16xf32>) permutation = [0, 2, 1, 3]
  return %out : tensor<2x100x3x16xf32>
}

// -----

// f32 data without tf32: the linear form's scalar kernels read and write
// the token-major rows too.

// CHECK-LABEL: func.func @scalar_linear_token_major(
// CHECK-NOT:     linalg.transpose
// CHECK:         call @__linattn_launch_linattn_kv_summary_elu_token_major_{{[0-9]+}}({{.+}}, %c4)
// CHECK:         call @__linattn_launch_linattn_query_readout_elu_normalized_token_major_{{[0-9]+}}({{.+}}, %c4)
// CHECK-NOT:     linalg.transpose
// CHECK:       return
func.func @scalar_linear_token_major(%q: tensor<2x50x4x32xf32>, %k: tensor<2x70x4x32xf32>, %v: tensor<2x70x4x8xf32>) -> tensor<2x50x4x8xf32> {
  %eq = tensor.empty() : tensor<2x4x50x32xf32>
  %ek = tensor.empty() : tensor<2x4x70x32xf32>
  %ev = tensor.empty() : tensor<2x4x70x8xf32>
  %eo = tensor.empty() : tensor<2x50x4x8xf32>
  %qt = linalg.transpose ins(%q : tensor<2x50x4x32xf32>) outs(%eq : tensor<2x4x50x32xf32>) permutation = [0, 2, 1, 3]
  %kt = linalg.transpose ins(%k : tensor<2x70x4x32xf32>) outs(%ek : tensor<2x4x70x32xf32>) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%v : tensor<2x70x4x8xf32>) outs(%ev : tensor<2x4x70x8xf32>) permutation = [0, 2, 1, 3]
  %fq = linattn.feature_map elu %qt : tensor<2x4x50x32xf32> -> tensor<2x4x50x32xf32>
  %fk = linattn.feature_map elu %kt : tensor<2x4x70x32xf32> -> tensor<2x4x70x32xf32>
  %s, %z = linattn.kv_summary %fk, %vt : tensor<2x4x70x32xf32>, tensor<2x4x70x8xf32> -> tensor<2x4x32x8xf32>, tensor<2x4x32xf32>
  %o = linattn.query_readout %fq, %s normalize(%z, eps = 1.0e-6) : tensor<2x4x50x32xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32xf32> -> tensor<2x4x50x8xf32>
  %out = linalg.transpose ins(%o : tensor<2x4x50x8xf32>) outs(%eo : tensor<2x50x4x8xf32>) permutation = [0, 2, 1, 3]
  return %out : tensor<2x50x4x8xf32>
}
