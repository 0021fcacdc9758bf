// RUN: linattn-opt %s --convert-linattn-to-gpu="scan-tile=32 async-copies=false scan-thread-columns=1 sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s
// RUN: linattn-opt %s --convert-linattn-to-gpu="scan-tile=32 async-copies=false sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=COLUMNS
// RUN: linattn-opt %s --convert-linattn-to-gpu="scan-tile=32 sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=ASYNC
// RUN: linattn-opt %s --convert-linattn-to-gpu="scan-tile=32 chip=sm_75 sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SM75
// RUN: linattn-opt %s --convert-linattn-to-gpu --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=DEFAULT
// RUN: linattn-opt %s --convert-linattn-to-gpu="scan-tile=32 scan-feature-lanes=1 scan-thread-columns=1 sequence-parallel-blocks=0" --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=LANES1
// RUN: not linattn-opt %s --convert-linattn-to-gpu="scan-feature-lanes=3" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-LANES
// RUN: not linattn-opt %s --convert-linattn-to-gpu="scan-thread-columns=3" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-COLUMNS
// RUN: not linattn-opt %s --convert-linattn-to-gpu="scan-thread-columns=16" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-COLUMNS

// The batch-parallel scan kernel, whatever the batch (sequence-parallel-blocks=0;
// the defaults split the sequences a small batch would run on few SMs, which
// the dynamic N here leaves to run time: DEFAULT checks its batch-parallel
// branch, convert-linattn-to-gpu-recurrent-segments.mlir the segments).

// The causal scan with a fused elu feature map: the host passes flat buffers
// of the raw inputs and a fresh buffer for O to the launch stub (the final
// state has no uses, so it gets no buffer and the kernel no arguments for
// it); the kernel
// stages φ(q), φ(k) and V (the block's 8 columns) of a block of 64 tokens in
// shared memory, so that the recurrence over the tokens reads no global
// memory. Four adjacent
// lanes share a column of S, each keeping 4 of its 16 features in
// registers, and add their readouts with two shuffles; a block of 32
// threads covers 8 columns: grid (8, ⌈40 / 8⌉ = 5). By default a block has
// 128 threads and 32 columns: grid (8, ⌈40 / 32⌉ = 2).

// DEFAULT-LABEL: func.func @scan_elu
//   DEFAULT-DAG: %[[C8:.*]] = arith.constant 8 : index
//   DEFAULT-DAG: %[[C2:.*]] = arith.constant 2 : index
//   DEFAULT-DAG: %[[C128:.*]] = arith.constant 128 : index
//   DEFAULT-DAG: %[[C1:.*]] = arith.constant 1 : index
//       DEFAULT: call @__linattn_launch_linattn_scan_forward_elu_normalized_0(%[[C8]], %[[C2]], %[[C1]], %[[C128]], %[[C1]], %[[C1]],
// With 128 threads for the block's 64 tokens, two adjacent lanes add up a
// token's denominator (8 partial products each, then one shuffle); the rows
// of partial products are padded to 18 elements so that a warp's loads take
// distinct banks.
//       DEFAULT: gpu.func @linattn_scan_forward_elu_normalized_0(
//  DEFAULT-SAME: %{{.*}} : memref<1152xf32, #gpu.address_space<workgroup>>
//       DEFAULT: gpu.barrier
//       DEFAULT: gpu.barrier
//       DEFAULT: memref.store %{{.*}} : memref<1152xf32, #gpu.address_space<workgroup>>
//       DEFAULT: gpu.barrier
// DEFAULT-COUNT-8: memref.load %{{.*}} : memref<1152xf32, #gpu.address_space<workgroup>>
//   DEFAULT-NOT: memref.load %{{.*}} : memref<1152xf32
//       DEFAULT: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
//       DEFAULT: gpu.barrier

// CHECK-LABEL: func.func @scan_elu
//  CHECK-SAME: (%[[Q:.*]]: tensor<2x4x?x16xf32>, %[[K:.*]]: tensor<2x4x?x16xf32>, %[[V:.*]]: tensor<2x4x?x40xf32>)
//   CHECK-NOT: linattn.
//   CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
//   CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
//   CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
//   CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
//   CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG: %[[C40:.*]] = arith.constant 40 : index
//       CHECK: %[[QB:.*]] = linattn.read_buffer %[[Q]] : tensor<2x4x?x16xf32> to memref<2x4x?x16xf32>
//       CHECK: %[[QN:.*]] = arith.muli %{{.*}}, %{{.*}} : index
//       CHECK: %[[QF:.*]] = memref.reinterpret_cast %[[QB]] to offset: [0], sizes: [%[[QN]]], strides: [1] : memref<2x4x?x16xf32> to memref<?xf32>
//       CHECK: %[[N:.*]] = tensor.dim %[[V]], %[[C2]]
//       CHECK: %[[O:.*]] = memref.alloc(%[[N]]) : memref<2x4x?x40xf32>
//   CHECK-NOT: memref.alloc
//       CHECK: %[[OF:.*]] = memref.reinterpret_cast %[[O]]
//   CHECK-NOT: memref.alloc
//       CHECK: call @__linattn_launch_linattn_scan_forward_elu_normalized_0(%[[C8]], %[[C5]], %[[C1]], %[[C32]], %[[C1]], %[[C1]], %[[QF]], %{{.*}}, %{{.*}}, %[[OF]], %[[N]], %[[C40]])
//       CHECK: %[[OT:.*]] = bufferization.to_tensor %[[O]] restrict writable
//       CHECK: return %[[OT]]

// CHECK: gpu.module @linattn_kernels
// CHECK: gpu.func @linattn_scan_forward_elu_normalized_0(
// CHECK-SAME: %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index)
// CHECK-SAME: workgroup(%[[QS:.*]] : memref<1024xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[KS:.*]] : memref<1024xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<1024xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[VS:.*]] : memref<512xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// The launch's block size, which ptxas gets as .maxntid.
// CHECK-SAME: attributes {known_block_size = array<i32: 32, 1, 1>}
// CHECK: gpu.block_id x
// Lane l of a warp holds part l / 8 of column l mod 8.
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c32
// CHECK: arith.divui %[[LANE]], %c8
// CHECK: arith.remui %[[LANE]], %c8
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32) {
// CHECK:   gpu.barrier
// CHECK:   math.exp
// CHECK:   memref.store %{{.*}}, %[[QS]]
// CHECK:   memref.load %{{.*}} : memref<?xf32>
// CHECK:   memref.store %{{.*}}, %[[VS]]
// CHECK:   gpu.barrier
// The recurrence over the block's tokens: v from shared memory.
// CHECK:   scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32) {
// CHECK-NOT: memref<?xf32>
// CHECK:     memref.load %[[VS]]
// CHECK-NOT: memref.load {{.*}} : memref<?xf32>
// CHECK-COUNT-8: arith.mulf {{.*}} fastmath<contract>
// CHECK-NOT: arith.mulf
// CHECK:   gpu.shuffle  xor %{{.*}}, %c8_i32, %c32_i32
// CHECK:   gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32
// CHECK:   arith.divf
// CHECK: gpu.return

// With four columns per thread (the default) the column group's features
// are shared by 16 lanes (one feature each at F = 16), lane l being part
// l / 2 of group l mod 2: the four columns' recurrences share each loaded
// φ(q), φ(k) element, and the readouts are added in rounds that halve the
// sums a lane carries (xor 2: two of four sent, two kept; xor 4: one of
// two), then plain butterflies (xor 8, 16). The block still covers 8
// columns: grid (8, 5). Two tokens an iteration (the second's loads need
// not wait for the first's shuffles), then the odd one left.
// COLUMNS-LABEL: func.func @scan_elu
// COLUMNS: call @__linattn_launch_linattn_scan_forward_elu_normalized_0(%c8, %c5, %c1, %c32, %c1, %c1,
// COLUMNS: gpu.func @linattn_scan_forward_elu_normalized_0(
// COLUMNS: %[[TID:.*]] = gpu.thread_id x
// COLUMNS: %[[LANE:.*]] = arith.remui %[[TID]], %c32
// COLUMNS: %[[PART:.*]] = arith.divui %[[LANE]], %c2
// COLUMNS: scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32) {
// COLUMNS:   %[[WHOLE:.*]] = arith.muli %{{.*}}, %c2
// COLUMNS:   scf.for %{{.*}} = %c0 to %[[WHOLE]] step %c2 iter_args({{.*}}) -> (f32, f32, f32, f32) {
// COLUMNS-COUNT-2: vector.load %{{.*}} : memref<512xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// COLUMNS:   scf.for %{{.*}} = %[[WHOLE]] to %{{.*}} step %c1 iter_args({{.*}}) -> (f32, f32, f32, f32) {
// COLUMNS:     vector.load %{{.*}} : memref<512xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// COLUMNS-NOT: vector.load
// COLUMNS-COUNT-8: arith.mulf {{.*}} fastmath<contract>
// COLUMNS-NOT: arith.mulf
// COLUMNS:   arith.andi %[[PART]], %c1
// COLUMNS:   gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32
// COLUMNS:   gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32
// COLUMNS:   arith.andi %[[PART]], %c2
// COLUMNS:   gpu.shuffle  xor %{{.*}}, %c4_i32, %c32_i32
// COLUMNS-NOT: gpu.shuffle  xor %{{.*}}, %c4_i32
// COLUMNS:   gpu.shuffle  xor %{{.*}}, %c8_i32, %c32_i32
// COLUMNS:   gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32
// COLUMNS-NOT: gpu.shuffle
// COLUMNS:   arith.divf
// COLUMNS-NOT: arith.divf
// COLUMNS: gpu.return

// With async copies (the default, f32 data on sm_80 and later) φ(q), φ(k)
// and V have two slots of a block each: the first block is copied before
// the loop, each iteration starts copying the next block into the other
// slot after the barrier that ends the reads of it, waits for its own
// block's group (all but the one just committed), applies elu to the
// elements it copied and publishes them with a barrier; the recurrence is
// as above. Copies take 16 bytes where the block finds q and k (F = 16, a
// multiple of 4) and v (Dv a multiple of 4, tested at run time) 16-byte
// aligned, v's groups past Dv reading nothing, and 4 bytes elsewhere; the
// feature map then reads and writes the thread's groups of four.
// ASYNC-LABEL: gpu.func @linattn_scan_forward_elu_normalized_0(
// ASYNC-SAME: workgroup(%[[QS:.*]] : memref<2048xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[KS:.*]] : memref<2048xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<1024xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<64xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[VS:.*]] : memref<1024xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// ASYNC: memref.extract_aligned_pointer_as_index %arg0
// ASYNC: memref.extract_aligned_pointer_as_index %arg1
// ASYNC: memref.extract_aligned_pointer_as_index %arg2
// ASYNC: arith.remui %arg5, %c4
// ASYNC: scf.if
// ASYNC: nvgpu.device_async_copy %{{.*}}, %[[QS]][%{{.*}}], 4 {bypassL1} : memref<?xf32> to memref<2048xf32
// ASYNC: nvgpu.device_async_copy %{{.*}}, %[[KS]][%{{.*}}], 4 {bypassL1}
// ASYNC: } else {
// ASYNC: nvgpu.device_async_copy %{{.*}}, %[[QS]][%{{.*}}], 1 : memref<?xf32> to memref<2048xf32
// ASYNC: nvgpu.device_async_copy %{{.*}}, %[[KS]][%{{.*}}], 1
// ASYNC: scf.if
// ASYNC: nvgpu.device_async_copy %{{.*}}, %[[VS]][%{{.*}}], 4, %{{.*}} {bypassL1}
// ASYNC: } else {
// ASYNC: nvgpu.device_async_copy %{{.*}}, %[[VS]][%{{.*}}], 1
// ASYNC: nvvm.cp.async.commit.group
// ASYNC: scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32) {
// ASYNC-NOT: math.exp
// ASYNC:   gpu.barrier
// ASYNC:   scf.if
// ASYNC:     nvgpu.device_async_copy %{{.*}}, %[[QS]]
// ASYNC:     nvgpu.device_async_copy %{{.*}}, %[[KS]]
// ASYNC:     nvgpu.device_async_copy %{{.*}}, %[[VS]]
// ASYNC:   nvvm.cp.async.commit.group
// ASYNC-NEXT: nvvm.cp.async.wait.group 1
// ASYNC:   scf.if
// ASYNC:   vector.load %[[QS]]
// ASYNC-COUNT-4: math.exp
// ASYNC:   vector.store %{{.*}}, %[[QS]]
// ASYNC:   vector.load %[[KS]]
// ASYNC-COUNT-4: math.exp
// ASYNC:   vector.store %{{.*}}, %[[KS]]
// ASYNC:   } else {
// ASYNC:   memref.load %[[QS]]
// ASYNC:   math.exp
// ASYNC:   memref.store %{{.*}}, %[[QS]]
// ASYNC:   memref.load %[[KS]]
// ASYNC:   math.exp
// ASYNC:   memref.store %{{.*}}, %[[KS]]
// ASYNC:   gpu.barrier
// ASYNC:   scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32) {
// ASYNC-NOT: memref<?xf32>
// ASYNC:     vector.load %[[VS]]
// ASYNC: gpu.return

// Before sm_80 (no cp.async) the staging is synchronous.
// SM75-LABEL: gpu.func @linattn_scan_forward_elu_normalized_0(
// SM75-SAME: workgroup(%{{.*}} : memref<1024xf32
// SM75-NOT: nvgpu.device_async_copy
// SM75: gpu.return

// With one lane per column, a thread keeps the whole column (16 features), a
// block covers 32 columns (grid (8, 2)) and there are no shuffles.
// LANES1-LABEL: func.func @scan_elu
// LANES1: call @__linattn_launch_linattn_scan_forward_elu_normalized_0(%c8, %c2, %c1, %c32, %c1, %c1,
// LANES1: gpu.func @linattn_scan_forward_elu_normalized_0(
// LANES1: scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// LANES1-NOT: gpu.shuffle
// LANES1: gpu.return

// BAD-LANES: scan-feature-lanes must be a power of two from 1 to 32
// BAD-COLUMNS: scan-thread-columns must be 1, 2, 4 or 8

// CHECK: func.func private @__linattn_launch_linattn_scan_forward_elu_normalized_0
// CHECK-SAME: linattn.gpu_kernel = @linattn_kernels::@linattn_scan_forward_elu_normalized_0
// CHECK-SAME: linattn.gpu_outputs = array<i64: 3>
func.func @scan_elu(%q: tensor<2x4x?x16xf32>, %k: tensor<2x4x?x16xf32>, %v: tensor<2x4x?x40xf32>) -> tensor<2x4x?x40xf32> {
  %fq = linattn.feature_map elu %q : tensor<2x4x?x16xf32> -> tensor<2x4x?x16xf32>
  %fk = linattn.feature_map elu %k : tensor<2x4x?x16xf32> -> tensor<2x4x?x16xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6) : tensor<2x4x?x16xf32>, tensor<2x4x?x16xf32>, tensor<2x4x?x40xf32> -> tensor<2x4x?x40xf32>, tensor<2x4x16x40xf32>, tensor<2x4x16xf32>
  return %o : tensor<2x4x?x40xf32>
}

// -----

// A reverse scan with an initial state, features given.

// CHECK-LABEL: func.func @scan_reverse_init
//       CHECK: call @__linattn_launch_linattn_scan_reverse_features_0(
// CHECK: gpu.func @linattn_scan_reverse_features_0(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index)
// CHECK-NOT: math.exp
// CHECK: gpu.return
// CHECK: linattn.gpu_outputs = array<i64: 5, 6, 7>
// With async copies and no feature map to apply, the wait is followed by
// the barrier that publishes the copies.
// ASYNC-LABEL: gpu.func @linattn_scan_reverse_features_0(
// ASYNC: nvvm.cp.async.wait.group 1
// ASYNC-NEXT: gpu.barrier
// ASYNC: gpu.return
func.func @scan_reverse_init(%fq: tensor<2x?x16xf32>, %fk: tensor<2x?x16xf32>, %v: tensor<2x?x8xf32>, %s0: tensor<2x16x8xf32>, %z0: tensor<2x16xf32>) -> (tensor<2x?x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32>) {
  %o, %s, %z = linattn.scan reverse %fq, %fk, %v init(%s0, %z0) : tensor<2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32> -> tensor<2x?x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32>
  return %o, %s, %z : tensor<2x?x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32>
}

// -----

// An f64 state and data: no copies (the kernel's only 32-bit data is f32),
// staged synchronously whatever async-copies says.
// ASYNC-LABEL: gpu.func @linattn_scan_forward_features_0(
// ASYNC-SAME: memref<?xf64>
// ASYNC-NOT: nvgpu.device_async_copy
// ASYNC-NOT: nvvm.cp.async
// ASYNC: gpu.return
func.func @scan_f64(%fq: tensor<2x?x16xf64>, %fk: tensor<2x?x16xf64>, %v: tensor<2x?x8xf64>) -> tensor<2x?x8xf64> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<2x?x16xf64>, tensor<2x?x16xf64>, tensor<2x?x8xf64> -> tensor<2x?x8xf64>, tensor<2x16x8xf64>, tensor<2x16xf64>
  return %o : tensor<2x?x8xf64>
}

// -----

// The linear form in f32: the scalar kernels. kv_summary with a fused relu:
// grid value tiles x feature tiles of 16 (F = 32: 2) x batch; per tile of
// 32 keys the block stages their relu features (16 per key, zeros past the
// keys) and each thread, one value column, adds V[j, d] times the 16
// features, read four at a time. query_readout: grid tiles of 16 tokens x
// value tiles x batch; the tokens' φ(q) staged feature-major (rows of 20),
// their denominators computed by 16 threads, then per feature one load of
// S[f, d] for 16 products.

// CHECK-LABEL: func.func @linear_relu
//   CHECK-DAG: %[[C6:.*]] = arith.constant 6 : index
//   CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
//   CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
//       CHECK: call @__linattn_launch_linattn_kv_summary_relu_0(%[[C1]], %[[C2]], %[[C6]], %[[C64]], %[[C1]], %[[C1]],
//       CHECK: %[[TILES:.*]] = arith.ceildivui %{{.*}}, %c16 : index
//       CHECK: call @__linattn_launch_linattn_query_readout_relu_normalized_1(%[[TILES]], %[[C1]], %[[C6]], %[[C64]], %[[C1]], %[[C1]],
// CHECK: gpu.func @linattn_kv_summary_relu_0(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index, %{{.*}}: index, %[[BATCHES:.*]]: index) workgroup(%[[KS:.*]] : memref<512xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel attributes {known_block_size = array<i32: 64, 1, 1>}
// CHECK:   %[[Z:.*]] = gpu.block_id z
// CHECK:   %[[GZ:.*]] = gpu.grid_dim z
// CHECK:   scf.for %{{.*}} = %[[Z]] to %[[BATCHES]] step %[[GZ]]
// CHECK:     scf.for {{.*}} step %c32 iter_args(
// CHECK:       gpu.barrier
// CHECK:       arith.maximumf
// CHECK:       gpu.barrier
// CHECK-COUNT-4: vector.load %[[KS]][%{{.*}}] {alignment = 16 : i64} : memref<512xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: gpu.func @linattn_query_readout_relu_normalized_1({{.*}}: index, %{{.*}}: index, %{{.*}}: index) workgroup(%[[QS:.*]] : memref<640xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel attributes {known_block_size = array<i32: 64, 1, 1>}
// CHECK: gpu.grid_dim z
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: arith.maximumf
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK-COUNT-4: vector.load %[[QS]][%{{.*}}] {alignment = 16 : i64} : memref<640xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: arith.divf
func.func @linear_relu(%q: tensor<2x3x?x32xf32>, %k: tensor<2x3x?x32xf32>, %v: tensor<2x3x?x64xf32>) -> tensor<2x3x?x64xf32> {
  %fq = linattn.feature_map relu %q : tensor<2x3x?x32xf32> -> tensor<2x3x?x32xf32>
  %fk = linattn.feature_map relu %k : tensor<2x3x?x32xf32> -> tensor<2x3x?x32xf32>
  %s, %z = linattn.kv_summary %fk, %v : tensor<2x3x?x32xf32>, tensor<2x3x?x64xf32> -> tensor<2x3x32x64xf32>, tensor<2x3x32xf32>
  %o = linattn.query_readout %fq, %s normalize(%z, eps = 1.0e-6) : tensor<2x3x?x32xf32>, tensor<2x3x32x64xf32>, tensor<2x3x32xf32> -> tensor<2x3x?x64xf32>
  return %o : tensor<2x3x?x64xf32>
}

// -----

// The decode step, f64: four lanes per value column (8 columns: one block
// of 32 threads per batch element), each streaming 4 of the 16 rows of the
// state, their loads issued before the updates; the lanes add their
// readouts and denominators with shuffles.

// CHECK-LABEL: func.func @step
//       CHECK: call @__linattn_launch_linattn_step_identity_normalized_0(%c4, %c1, %c1, %c32, %c1, %c1,
// CHECK: gpu.func @linattn_step_identity_normalized_0({{.*}}: memref<?xf64>{{.*}}) workgroup(%{{.*}} : memref<16xf64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<16xf64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// CHECK: scf.if
// CHECK-COUNT-4: memref.load %arg3[
// CHECK: memref.store {{.*}}, %arg6[
// CHECK: gpu.shuffle  xor {{.*}}, %c1_i32, %c32_i32 : f64
// CHECK: gpu.shuffle  xor {{.*}}, %c2_i32, %c32_i32 : f64
func.func @step(%q: tensor<4x16xf64>, %k: tensor<4x16xf64>, %v: tensor<4x8xf64>, %s: tensor<4x16x8xf64>, %z: tensor<4x16xf64>) -> (tensor<4x8xf64>, tensor<4x16x8xf64>, tensor<4x16xf64>) {
  %fq = linattn.feature_map identity %q : tensor<4x16xf64> -> tensor<4x16xf64>
  %o, %s1, %z1 = linattn.step %fq, %k, %v, %s, %z normalize(eps = 1.0e-6) : tensor<4x16xf64>, tensor<4x16xf64>, tensor<4x8xf64>, tensor<4x16x8xf64>, tensor<4x16xf64> -> tensor<4x8xf64>, tensor<4x16x8xf64>, tensor<4x16xf64>
  return %o, %s1, %z1 : tensor<4x8xf64>, tensor<4x16x8xf64>, tensor<4x16xf64>
}

// -----

// The quadratic form: one thread per score (elu fused, the causal mask and
// the scale applied in the kernel), then one thread per output element with
// the row sum for the normalization.

// CHECK-LABEL: func.func @quadratic
//       CHECK: call @__linattn_launch_linattn_scores_elu_causal_{{[0-9]+}}(
//       CHECK: call @__linattn_launch_linattn_apply_scores_normalized_{{[0-9]+}}(
//   CHECK-NOT: linattn.
//       CHECK: gpu.func @linattn_scores_elu_causal_{{[0-9]+}}(
//       CHECK:   arith.cmpf ogt
//       CHECK:   math.exp
//       CHECK:   arith.cmpi ult
//       CHECK:   arith.select
//       CHECK: gpu.func @linattn_apply_scores_normalized_{{[0-9]+}}(
//       CHECK:   scf.for
//       CHECK:   arith.divf
func.func @quadratic(%q: tensor<2x7x8xf32>, %k: tensor<2x7x8xf32>, %v: tensor<2x7x5xf32>) -> tensor<2x7x5xf32> {
  %fq = linattn.feature_map elu %q : tensor<2x7x8xf32> -> tensor<2x7x8xf32>
  %fk = linattn.feature_map elu %k : tensor<2x7x8xf32> -> tensor<2x7x8xf32>
  %a = linattn.scores %fq, %fk causal scale(0.5) : tensor<2x7x8xf32>, tensor<2x7x8xf32> -> tensor<2x7x7xf32>
  %o = linattn.apply_scores %a, %v normalize(eps = 1.0e-6) : tensor<2x7x7xf32>, tensor<2x7x5xf32> -> tensor<2x7x5xf32>
  return %o : tensor<2x7x5xf32>
}

// -----

// More queries than CUDA's grid y holds: the grid is clamped to 65535 and the
// kernels walk queries and batch elements with grid-stride loops; a dynamic
// query count is clamped at run time.

// CHECK-LABEL: func.func @quadratic_many_queries
//   CHECK-DAG: %[[MAX:.*]] = arith.constant 65535 : index
//   CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
//       CHECK: call @__linattn_launch_linattn_scores_features_{{[0-9]+}}(%[[C1]], %[[MAX]], %[[C1]],
//       CHECK: %[[N:.*]] = tensor.dim
//       CHECK: %[[GY:.*]] = arith.minui %[[N]], %[[MAX]]
//       CHECK: call @__linattn_launch_linattn_apply_scores_{{[0-9]+}}(%[[C1]], %[[GY]], %[[C1]],
//       CHECK: gpu.func @linattn_scores_features_{{[0-9]+}}(
//  CHECK-SAME:     %[[N:[^:]*]]: index, %{{.*}}: index, %[[B:[^:]*]]: index) kernel
//   CHECK-DAG:   %[[BZ:.*]] = gpu.block_id z
//   CHECK-DAG:   %[[GZ:.*]] = gpu.grid_dim z
//       CHECK:   scf.for %{{.*}} = %[[BZ]] to %[[B]] step %[[GZ]]
//   CHECK-DAG:     %[[BY:.*]] = gpu.block_id y
//   CHECK-DAG:     %[[GY:.*]] = gpu.grid_dim y
//       CHECK:     scf.for %{{.*}} = %[[BY]] to %[[N]] step %[[GY]]
//       CHECK: gpu.func @linattn_apply_scores_{{[0-9]+}}(
//       CHECK:   gpu.grid_dim z
//       CHECK:   gpu.grid_dim y
func.func @quadratic_many_queries(%q: tensor<1x70000x16xf32>, %k: tensor<1x3x16xf32>, %a: tensor<1x?x3xf32>, %v: tensor<1x3x8xf32>) -> (tensor<1x70000x3xf32>, tensor<1x?x8xf32>) {
  %s = linattn.scores %q, %k : tensor<1x70000x16xf32>, tensor<1x3x16xf32> -> tensor<1x70000x3xf32>
  %o = linattn.apply_scores %a, %v : tensor<1x?x3xf32>, tensor<1x3x8xf32> -> tensor<1x?x8xf32>
  return %s, %o : tensor<1x70000x3xf32>, tensor<1x?x8xf32>
}

// -----

// Feature maps that no kernel applies as it loads get kernels of their own:
// one thread per feature of a row, grid (feature tiles, rows). poly2 picks
// 1, an input element or a product of two by the feature's index.

// CHECK-LABEL: func.func @poly2
//   CHECK-NOT: linattn.feature_map
//       CHECK: call @__linattn_launch_linattn_feature_map_poly2_{{[0-9]+}}(
// CHECK-LABEL: gpu.func @linattn_feature_map_poly2_{{[0-9]+}}(
//  CHECK-SAME: %[[X:.*]]: memref<?xf32>, %[[OUT:.*]]: memref<?xf32>, %[[ROWS:.*]]: index, %[[F:.*]]: index, %[[D:.*]]: index) kernel
//       CHECK: scf.for %{{.*}} = %{{.*}} to %[[ROWS]] step %{{.*}}
//       CHECK: arith.cmpi ult, %{{.*}}, %[[F]] : index
//       CHECK: arith.divui %{{.*}}, %[[D]] : index
//       CHECK: arith.remui %{{.*}}, %[[D]] : index
//       CHECK: memref.store %{{.*}}, %[[OUT]]
func.func @poly2(%q: tensor<2x7x3xf32>) -> tensor<2x7x13xf32> {
  %f = linattn.feature_map poly2 %q : tensor<2x7x3xf32> -> tensor<2x7x13xf32>
  return %f : tensor<2x7x13xf32>
}

// -----

// The chain rule through elu: one thread per element of a row, dx = dφ
// where x > 0 and dφ·exp(x) elsewhere, in f32 for bf16 data.

// CHECK-LABEL: func.func @feature_map_grad_elu
//   CHECK-NOT: linattn.feature_map_grad
//       CHECK: call @__linattn_launch_linattn_feature_map_grad_elu_{{[0-9]+}}(
// CHECK-LABEL: gpu.func @linattn_feature_map_grad_elu_{{[0-9]+}}(
//  CHECK-SAME: %[[X:.*]]: memref<?xbf16>, %[[G:.*]]: memref<?xbf16>, %[[OUT:.*]]: memref<?xbf16>, %[[ROWS:.*]]: index, %[[D:.*]]: index) kernel
//       CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %[[ROWS]] step %{{.*}}
//       CHECK: %[[IN:.*]] = arith.cmpi ult, %[[J:.*]], %[[D]] : index
//       CHECK: scf.if %[[IN]]
//       CHECK: %[[AT:.*]] = arith.addi %{{.*}}, %[[J]] : index
//       CHECK: memref.load %[[G]][%[[AT]]]
//       CHECK: memref.load %[[X]][%[[AT]]]
//       CHECK: %[[POS:.*]] = arith.cmpf ogt
//       CHECK: %[[EXP:.*]] = math.exp
//       CHECK: %[[SCALED:.*]] = arith.mulf %{{.*}}, %[[EXP]] : f32
//       CHECK: %[[DX:.*]] = arith.select %[[POS]], %{{.*}}, %[[SCALED]] : f32
//       CHECK: %[[NARROW:.*]] = arith.truncf %[[DX]] : f32 to bf16
//       CHECK: memref.store %[[NARROW]], %[[OUT]][%[[AT]]]
func.func @feature_map_grad_elu(%x: tensor<2x7x40xbf16>, %d: tensor<2x7x40xbf16>) -> tensor<2x7x40xbf16> {
  %dx = linattn.feature_map_grad elu %x, %d : tensor<2x7x40xbf16>, tensor<2x7x40xbf16> -> tensor<2x7x40xbf16>
  return %dx : tensor<2x7x40xbf16>
}

// -----

// favor: x·P[:, j] and |x|² in four partial sums each, over i mod 4 (bf16
// loads widened to f32; the rest of D into the first ones), added pairwise,
// then exp(x·P[:, j] - |x|²/2)/√m rounded to bf16 once.

// CHECK-LABEL: func.func @favor
//       CHECK: call @__linattn_launch_linattn_feature_map_favor_{{[0-9]+}}(
// CHECK-LABEL: gpu.func @linattn_feature_map_favor_{{[0-9]+}}(
//  CHECK-SAME: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: memref<?xbf16>, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index) kernel
//       CHECK: %[[REST:.*]] = arith.remui %[[D:.*]], %c4
//       CHECK: %[[WHOLE:.*]] = arith.subi %[[D]], %[[REST]]
//       CHECK: %[[P:.*]]:8 = scf.for %{{.*}} = %c0 to %[[WHOLE]] step %c4 {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32)
//       CHECK: arith.extf {{.*}} : bf16 to f32
//       CHECK: %[[T:.*]]:2 = scf.for %{{.*}} = %[[WHOLE]] to %[[D]] step %c1 iter_args(%{{.*}} = %[[P]]#0, %{{.*}} = %[[P]]#4) -> (f32, f32)
//       CHECK: %[[D01:.*]] = arith.addf %[[T]]#0, %[[P]]#1
//       CHECK: %[[D23:.*]] = arith.addf %[[P]]#2, %[[P]]#3
//       CHECK: %[[DOT:.*]] = arith.addf %[[D01]], %[[D23]]
//       CHECK: %[[N01:.*]] = arith.addf %[[T]]#1, %[[P]]#5
//       CHECK: %[[N23:.*]] = arith.addf %[[P]]#6, %[[P]]#7
//       CHECK: %[[NORM:.*]] = arith.addf %[[N01]], %[[N23]]
//       CHECK: %[[HALF:.*]] = arith.mulf %[[NORM]]
//       CHECK: arith.subf %[[DOT]], %[[HALF]]
//       CHECK: math.rsqrt
//       CHECK: math.exp
//       CHECK: arith.truncf {{.*}} : f32 to bf16
func.func @favor(%x: tensor<?x8xbf16>, %p: tensor<8x16xbf16>) -> tensor<?x16xbf16> {
  %0 = linattn.feature_map favor %x projection(%p) : tensor<?x8xbf16>, tensor<8x16xbf16> -> tensor<?x16xbf16>
  return %0 : tensor<?x16xbf16>
}

// -----

// CHECK-LABEL: func.func @negative_dynamic_features
//       CHECK: linattn.kv_summary
func.func @negative_dynamic_features(%k: tensor<2x7x?xf32>, %v: tensor<2x7x8xf32>) -> tensor<2x?x8xf32> {
  %s, %z = linattn.kv_summary %k, %v : tensor<2x7x?xf32>, tensor<2x7x8xf32> -> tensor<2x?x8xf32>, tensor<2x?xf32>
  return %s : tensor<2x?x8xf32>
}

// -----

// 130 features per thread (four lanes per column) exceed the 128 registers.
// CHECK-LABEL: func.func @negative_wide_state
//       CHECK: linattn.scan
func.func @negative_wide_state(%fq: tensor<7x520xf32>, %fk: tensor<7x520xf32>, %v: tensor<7x8xf32>) -> tensor<7x8xf32> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<7x520xf32>, tensor<7x520xf32>, tensor<7x8xf32> -> tensor<7x8xf32>, tensor<520x8xf32>, tensor<520xf32>
  return %o : tensor<7x8xf32>
}

// -----

// No features, and a final state with a size of 0 next to a dynamic one: the
// buffers are flattened by reinterpret casts to their element counts, which
// fold to 0 (a collapse_shape would infer a static 0 beside a dynamic size
// once the canonicalizer folds a cast into it, and its verifier rejects
// that), and the kernel is the recurrent one (the readout of no features
// is 0).
// CHECK-LABEL: func.func @no_features
//       CHECK: memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [0], strides: [1] : memref<4x7x0xf16> to memref<?xf16>
//       CHECK: %[[S:.*]] = memref.alloc(%{{.*}}) : memref<4x0x?xf32>
//       CHECK: memref.reinterpret_cast %[[S]] to offset: [0], sizes: [0], strides: [1] : memref<4x0x?xf32> to memref<?xf32>
//   CHECK-NOT: memref.collapse_shape
//       CHECK: call @__linattn_launch_linattn_scan_forward
//       CHECK: gpu.func @linattn_scan_forward
func.func @no_features(%q: tensor<4x7x0xf16>, %v: tensor<4x7x?xf16>) -> (tensor<4x7x?xf16>, tensor<4x0x?xf32>) {
  %o, %s, %z = linattn.scan forward %q, %q, %v normalize(eps = 1.0e-06) : tensor<4x7x0xf16>, tensor<4x7x0xf16>, tensor<4x7x?xf16> -> tensor<4x7x?xf16>, tensor<4x0x?xf32>, tensor<4x0xf32>
  return %o, %s : tensor<4x7x?xf16>, tensor<4x0x?xf32>
}
