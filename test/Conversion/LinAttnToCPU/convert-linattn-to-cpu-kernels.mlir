// RUN: linattn-opt %s --split-input-file --convert-linattn-to-cpu-kernels='vector-width=8 tokens-per-block=4 column-vectors=1 threads=1' | FileCheck %s
// RUN: linattn-opt %s --split-input-file --convert-linattn-to-cpu-kernels='vector-width=8 tokens-per-block=4 column-vectors=2 threads=1' | FileCheck %s --check-prefix=WIDE
// RUN: linattn-opt %s --split-input-file --convert-linattn-to-cpu-kernels='vector-width=8 tokens-per-block=4 threads=1 fuse-feature-maps=false' | FileCheck %s --check-prefix=NOFUSE
// RUN: linattn-opt %s --split-input-file --convert-linattn-to-cpu-kernels='vector-width=8 tokens-per-block=4 threads=4' | FileCheck %s --check-prefix=SPLIT
// RUN: not linattn-opt %s --split-input-file --convert-linattn-to-cpu-kernels='tokens-per-block=9' 2>&1 | FileCheck %s --check-prefix=BADBLOCK
// RUN: not linattn-opt %s --split-input-file --convert-linattn-to-cpu-kernels='vector-width=-2' 2>&1 | FileCheck %s --check-prefix=BADWIDTH
// RUN: not linattn-opt %s --split-input-file --convert-linattn-to-cpu-kernels='tokens-per-block=8 column-vectors=3' 2>&1 | FileCheck %s --check-prefix=BADTILE
// RUN: linattn-opt %s --split-input-file --convert-linattn-to-cpu-kernels='threads=1 reassociate-speedup=0' | FileCheck %s --check-prefix=QUAD
// RUN: not linattn-opt %s --split-input-file --convert-linattn-to-cpu-kernels='reassociate-speedup=-1' 2>&1 | FileCheck %s --check-prefix=BADSPEEDUP

// BADBLOCK: tokens-per-block must be between 1 and 8, got 9
// BADBLOCK-NOT: see current operation
// BADWIDTH: vector-width must be between 1 and 64, got -2
// BADTILE: tokens-per-block × column-vectors must be at most 16 (the tile's values and accumulators live in registers), got 24
// BADSPEEDUP: reassociate-speedup must be 0 or positive, got -1

// A normalized scan with elu features: the maps are fused (their ops are
// gone), the batch is a parallel loop, the tokens go in blocks of 4 and a
// tail, the state rows are updated with broadcast FMAs, masked loads cover
// sizes that are not multiples of 8.

// CHECK-LABEL: func.func @scan_elu(
// CHECK-NOT: linattn.{{(attention|feature_map|scores|apply_scores|kv_summary|query_readout|scan|step)}}
// CHECK-DAG: %[[Q:.*]] = linattn.read_buffer %arg0 : tensor<2x3x?x20xf32> to memref<2x3x?x20xf32>
// CHECK-DAG: %[[S:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x3x20x19xf32>
// CHECK-DAG: %[[Z:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x3x20xf32>
// CHECK-DAG: %[[O:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<2x3x?x19xf32>
// CHECK: scf.parallel (%[[B0:.*]], %[[B1:.*]]) =
// CHECK: memref.subview {{.*}} : memref<?x?x?x4x?xf32> to memref<4x?xf32, strided<[?, 1], offset: ?>>
// The feature map of the block: elu as a polynomial exp, no math.exp left.
// CHECK-NOT: math.exp
// CHECK: vector.load %[[Q]][%[[B0]], %[[B1]], %{{.*}}, %{{.*}}] : memref<2x3x?x20xf32>, vector<8xf32>
// CHECK: arith.cmpf ogt
// CHECK: vector.maskedload
// The state rows: one load, 4 updates and 4 readouts, one store.
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: vector.load %[[S]]
// CHECK-COUNT-8: vector.fma
// CHECK: vector.store {{.*}}, %[[S]]
// CHECK: arith.mulf {{.*}} : vector<8xf32>
// CHECK: return {{.*}} : tensor<2x3x?x19xf32>, tensor<2x3x20x19xf32>, tensor<2x3x20xf32>
// NOFUSE-LABEL: func.func @scan_elu(

// Two column vectors per tile: Dv = 19 is one 16-wide tile (8 accumulators,
// 16 FMAs per row on two state vectors) and a masked 8-wide rest.
// WIDE-LABEL: func.func @scan_elu(
// WIDE: scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// WIDE-COUNT-2: vector.load
// WIDE-COUNT-16: vector.fma
// WIDE-COUNT-2: vector.store
// WIDE: vector.maskedload

// With 4 threads and 6 batch elements, the sequence may be split: chunks =
// min(ceil(4 / 6), N / (8 * 4)) is decided at run time. The split path scans
// the chunks' contributions, then a scan over the chunks, then the chunks
// again; the other path is the scan per batch element, on the calling
// thread when the op does fewer than 2^19 operations (4·N·F·Dv per batch
// element: no threads started for a few microseconds of work).
// SPLIT-LABEL: func.func @scan_elu(
// SPLIT: arith.ceildivui %c4{{(_[0-9]+)?}},
// SPLIT: %[[SPLIT:.*]] = arith.cmpi ugt
// SPLIT: scf.if %[[SPLIT]] {
// SPLIT: arith.ceildivui
// SPLIT: memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x?x?x?xf32>
// SPLIT: scf.parallel ({{.*}}, {{.*}}, {{.*}}) =
// SPLIT: scf.parallel ({{.*}}, {{.*}}) =
// SPLIT: scf.parallel ({{.*}}, {{.*}}, {{.*}}) =
// SPLIT: } else {
// SPLIT: %[[SMALL:.*]] = arith.cmpi ult, %{{.*}}, %c524288
// SPLIT: scf.if %[[SMALL]] {
// SPLIT: scf.for
// SPLIT: scf.for
// SPLIT: } else {
// SPLIT: scf.parallel ({{.*}}, {{.*}}) =
// Unfused, each map is a kernel of its own whose buffer the scan reads.
// NOFUSE-NOT: linattn.feature_map
// NOFUSE: %[[FQ:.*]] = bufferization.to_tensor %{{.*}} restrict writable : memref<2x3x?x20xf32>
// NOFUSE: %[[FK:.*]] = bufferization.to_tensor %{{.*}} restrict writable : memref<2x3x?x20xf32>
// NOFUSE: linattn.read_buffer %[[FQ]]
// NOFUSE: linattn.read_buffer %[[FK]]
// NOFUSE-NOT: linattn.scan
func.func @scan_elu(%q: tensor<2x3x?x20xf32>, %k: tensor<2x3x?x20xf32>,
                    %v: tensor<2x3x?x19xf32>)
    -> (tensor<2x3x?x19xf32>, tensor<2x3x20x19xf32>, tensor<2x3x20xf32>) {
  %fq = linattn.feature_map elu %q : tensor<2x3x?x20xf32> -> tensor<2x3x?x20xf32>
  %fk = linattn.feature_map elu %k : tensor<2x3x?x20xf32> -> tensor<2x3x?x20xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6)
      : tensor<2x3x?x20xf32>, tensor<2x3x?x20xf32>, tensor<2x3x?x19xf32>
      -> tensor<2x3x?x19xf32>, tensor<2x3x20x19xf32>, tensor<2x3x20xf32>
  return %o, %s, %z : tensor<2x3x?x19xf32>, tensor<2x3x20x19xf32>, tensor<2x3x20xf32>
}

// -----

// Rows of whole vectors in a static size: the outputs are stored past the
// caches (aligned, non-temporal); the state is not. The inputs of the token
// 4 blocks ahead are prefetched.

// CHECK-LABEL: func.func @streamed_outputs(
// CHECK: memref.prefetch %{{.*}}, read, locality<3>, data
// CHECK: vector.store %{{.*}}, %{{.*}} : memref<2x?x16xf32>, vector<8xf32>
// CHECK: vector.store %{{.*}} {alignment = 32 : i64, nontemporal = true} : memref<2x?x16xf32>, vector<8xf32>
func.func @streamed_outputs(%q: tensor<2x?x16xf32>, %v: tensor<2x?x16xf32>)
    -> tensor<2x?x16xf32> {
  %o, %s, %z = linattn.scan forward %q, %q, %v normalize(eps = 1.0e-6)
      : tensor<2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x16xf32>
      -> tensor<2x?x16xf32>, tensor<2x16x16xf32>, tensor<2x16xf32>
  return %o : tensor<2x?x16xf32>
}

// -----

// A feature map with another use is computed by a kernel of its own for
// that use; the scan kernel recomputes it from the input.

// CHECK-LABEL: func.func @shared_map(
// NOFUSE-LABEL: func.func @shared_map(
// CHECK-NOT: linattn.feature_map
// CHECK: %[[F:.*]] = bufferization.to_tensor %{{.*}} restrict writable : memref<5x8xf32>
// CHECK: linattn.read_buffer %arg0
// CHECK: linattn.read_buffer %arg0
// CHECK-NOT: linattn.scan
// CHECK: return %[[F]],
func.func @shared_map(%q: tensor<5x8xf32>, %v: tensor<5x8xf32>)
    -> (tensor<5x8xf32>, tensor<5x8xf32>) {
  %f = linattn.feature_map relu %q : tensor<5x8xf32> -> tensor<5x8xf32>
  %o, %s, %z = linattn.scan reverse %f, %f, %v
      : tensor<5x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>
      -> tensor<5x8xf32>, tensor<8x8xf32>, tensor<8xf32>
  return %f, %o : tensor<5x8xf32>, tensor<5x8xf32>
}

// -----

// A decode step on bf16 data with f32 state: widened on load, rounded on
// store; the state is copied from the operand, never written in place.

// CHECK-LABEL: func.func @step_bf16(
// SPLIT-LABEL: func.func @step_bf16(
// SPLIT-NOT: arith.ceildivui
// CHECK-NOT: linattn.step
// CHECK: %[[S0:.*]] = linattn.read_buffer %arg3 : tensor<4x16x64x64xf32>
// CHECK: scf.parallel
// CHECK: vector.load %[[S0]]
// CHECK: arith.extf {{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
func.func @step_bf16(%q: tensor<4x16x64xbf16>, %k: tensor<4x16x64xbf16>,
                     %v: tensor<4x16x64xbf16>, %s: tensor<4x16x64x64xf32>,
                     %z: tensor<4x16x64xf32>)
    -> (tensor<4x16x64xbf16>, tensor<4x16x64x64xf32>, tensor<4x16x64xf32>) {
  %o, %s1, %z1 = linattn.step %q, %k, %v, %s, %z normalize(eps = 1.0e-6)
      : tensor<4x16x64xbf16>, tensor<4x16x64xbf16>, tensor<4x16x64xbf16>,
        tensor<4x16x64x64xf32>, tensor<4x16x64xf32>
      -> tensor<4x16x64xbf16>, tensor<4x16x64x64xf32>, tensor<4x16x64xf32>
  return %o, %s1, %z1 : tensor<4x16x64xbf16>, tensor<4x16x64x64xf32>, tensor<4x16x64xf32>
}

// -----

// Non-causal attention in the linear form. kv_summary is the scan's state
// update over the keys without readout: per state row one load, the 4
// tokens' updates and one store, and no queries or outputs. query_readout
// is the readout of the summary, which it reads in place and never writes:
// per state row one load and the 4 tokens' readouts, then the outputs
// scaled by the reciprocal denominators. Both fuse their feature maps; the
// readout runs over batch × pieces of the sequence (one piece with one
// thread).

// CHECK-LABEL: func.func @linear_relu(
// CHECK-NOT: linattn.{{(attention|feature_map|scores|apply_scores|kv_summary|query_readout|scan|step)}}
// CHECK: %[[K:.*]] = linattn.read_buffer %arg1 : tensor<2x?x20xf32>
// CHECK: %[[S:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x20x19xf32>
// CHECK: %[[Z:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x20xf32>
// One scratch buffer each, for the key features and for the query features.
// CHECK: memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x4x?xf32>
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel (%[[B:.*]]) =
// CHECK: vector.load %[[K]]
// CHECK: arith.maximumf
// CHECK: vector.store {{.*}}, %[[Z]]
// CHECK: scf.for %[[ROW:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %c1{{(_[0-9]+)?}} {
// CHECK-NEXT: vector.load %[[S]][%[[B]], %[[ROW]], %{{.*}}]
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: vector.fma
// CHECK: vector.store %{{.*}}, %[[S]][%[[B]], %[[ROW]], %{{.*}}]
// CHECK: %[[ST:.*]] = bufferization.to_tensor %[[S]] restrict writable
// CHECK: %[[ZT:.*]] = bufferization.to_tensor %[[Z]] restrict writable
// CHECK-DAG: %[[ZB:.*]] = linattn.read_buffer %[[ZT]]
// CHECK-DAG: %[[Q:.*]] = linattn.read_buffer %arg0
// CHECK-DAG: %[[SB:.*]] = linattn.read_buffer %[[ST]]
// CHECK: %[[O:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<2x?x19xf32>
// CHECK: memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x4x?xf32>
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel (%[[RB:.*]], %{{.*}}) =
// CHECK: vector.load %[[ZB]]
// CHECK: vector.load %[[Q]]
// CHECK: arith.maximumf
// CHECK: arith.divf
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-NEXT: vector.load %[[SB]][%[[RB]], %{{.*}}, %{{.*}}]
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: vector.store %{{.*}}, %[[SB]]
// CHECK: arith.mulf
// CHECK: vector.store %{{.*}}, %[[O]]
// CHECK-NOT: linattn.{{(attention|feature_map|scores|apply_scores|kv_summary|query_readout|scan|step)}}
// CHECK: return %{{.*}} : tensor<2x?x19xf32>

// With 4 threads and 2 batch elements, the summary may split the keys
// (contributions, their sum per batch element, no third pass) and the
// readout the queries, both decided at run time.
// SPLIT-LABEL: func.func @linear_relu(
// SPLIT: scf.if
// SPLIT: scf.parallel ({{.*}}, {{.*}}) =
// SPLIT: scf.parallel ({{.*}}) =
// SPLIT-NOT: scf.parallel
// SPLIT: } else {
// SPLIT: scf.parallel ({{.*}}) =
// SPLIT: }
// SPLIT: scf.parallel ({{.*}}, {{.*}}) =
// SPLIT: return
// NOFUSE-LABEL: func.func @linear_relu(
// NOFUSE-NOT: linattn.feature_map
// NOFUSE-COUNT-2: arith.maximumf %{{.*}}, %{{.*}} : vector<8xf32>
// NOFUSE-NOT: linattn.kv_summary
// NOFUSE-NOT: linattn.query_readout
func.func @linear_relu(%q: tensor<2x?x20xf32>, %k: tensor<2x?x20xf32>,
                       %v: tensor<2x?x19xf32>) -> tensor<2x?x19xf32> {
  %fq = linattn.feature_map relu %q : tensor<2x?x20xf32> -> tensor<2x?x20xf32>
  %fk = linattn.feature_map relu %k : tensor<2x?x20xf32> -> tensor<2x?x20xf32>
  %s, %z = linattn.kv_summary %fk, %v
      : tensor<2x?x20xf32>, tensor<2x?x19xf32>
      -> tensor<2x20x19xf32>, tensor<2x20xf32>
  %o = linattn.query_readout %fq, %s normalize(%z, eps = 1.0e-6)
      : tensor<2x?x20xf32>, tensor<2x20x19xf32>, tensor<2x20xf32>
      -> tensor<2x?x19xf32>
  return %o : tensor<2x?x19xf32>
}

// -----

// An unnormalized readout of bf16 queries with an f32 summary: no
// normalizer, no denominators; widened on load, rounded on store.

// CHECK-LABEL: func.func @readout_bf16(
// NOFUSE-LABEL: func.func @readout_bf16(
// CHECK-NOT: linattn.{{(attention|feature_map|scores|apply_scores|kv_summary|query_readout|scan|step)}}
// CHECK-NOT: arith.divf
// CHECK: arith.extf {{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK-NOT: arith.divf
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
func.func @readout_bf16(%q: tensor<3x?x16xbf16>, %s: tensor<3x16x8xf32>)
    -> tensor<3x?x8xbf16> {
  %o = linattn.query_readout %q, %s
      : tensor<3x?x16xbf16>, tensor<3x16x8xf32> -> tensor<3x?x8xbf16>
  return %o : tensor<3x?x8xbf16>
}

// -----

// An f64 state: the kernels compute in f64, with half as many lanes per
// vector (4 for vector-width=8), f64 data as it is, f32 data widened on load.

// CHECK-LABEL: func.func @f64_scan(
// CHECK-NOT: linattn.{{(attention|feature_map|scores|apply_scores|kv_summary|query_readout|scan|step)}}
// CHECK: vector.fma {{.*}} : vector<4xf64>
// CHECK-NOT: linattn.{{(attention|feature_map|scores|apply_scores|kv_summary|query_readout|scan|step)}}
// CHECK: return
func.func @f64_scan(%q: tensor<7x8xf64>, %v: tensor<7x4xf64>)
    -> (tensor<7x4xf64>, tensor<8x4xf64>, tensor<8xf64>) {
  %o, %s, %z = linattn.scan forward %q, %q, %v
      : tensor<7x8xf64>, tensor<7x8xf64>, tensor<7x4xf64>
      -> tensor<7x4xf64>, tensor<8x4xf64>, tensor<8xf64>
  return %o, %s, %z : tensor<7x4xf64>, tensor<8x4xf64>, tensor<8xf64>
}

// CHECK-LABEL: func.func @wide_state(
// CHECK-NOT: linattn.{{(attention|feature_map|scores|apply_scores|kv_summary|query_readout|scan|step)}}
// CHECK: arith.extf {{.*}} : vector<4xf32> to vector<4xf64>
// CHECK: vector.fma {{.*}} : vector<4xf64>
// CHECK: arith.truncf {{.*}} : vector<4xf64> to vector<4xf32>
func.func @wide_state(%q: tensor<7x8xf32>, %v: tensor<7x4xf32>)
    -> (tensor<7x4xf32>, tensor<8x4xf64>, tensor<8xf64>) {
  %o, %s, %z = linattn.scan forward %q, %q, %v
      : tensor<7x8xf32>, tensor<7x8xf32>, tensor<7x4xf32>
      -> tensor<7x4xf32>, tensor<8x4xf64>, tensor<8xf64>
  return %o, %s, %z : tensor<7x4xf32>, tensor<8x4xf64>, tensor<8xf64>
}

// CHECK-LABEL: func.func @f64_linear(
// CHECK-NOT: linattn.{{(attention|feature_map|scores|apply_scores|kv_summary|query_readout|scan|step)}}
// CHECK: vector.fma {{.*}} : vector<4xf64>
// CHECK: scf.parallel
// CHECK: vector.fma {{.*}} : vector<4xf64>
// CHECK-NOT: linattn.{{(attention|feature_map|scores|apply_scores|kv_summary|query_readout|scan|step)}}
// CHECK: return
func.func @f64_linear(%k: tensor<7x8xf32>, %v: tensor<7x4xf32>)
    -> tensor<7x4xf32> {
  %s, %z = linattn.kv_summary %k, %v
      : tensor<7x8xf32>, tensor<7x4xf32> -> tensor<8x4xf64>, tensor<8xf64>
  %o = linattn.query_readout %k, %s normalize(%z, eps = 1.0e-6)
      : tensor<7x8xf32>, tensor<8x4xf64>, tensor<8xf64> -> tensor<7x4xf32>
  return %o : tensor<7x4xf32>
}

// An elu feature map fused in f64: exp by the rational approximation (a
// division), not a libm call per lane. One map feeds both the queries and
// the keys, and is erased once.

// CHECK-LABEL: func.func @f64_elu(
// CHECK-NOT: linattn.{{(attention|feature_map|scores|apply_scores|kv_summary|query_readout|scan|step)}}
// CHECK-NOT: math.exp
// CHECK: arith.divf {{.*}} : vector<4xf64>
// CHECK: arith.shli {{.*}} : vector<4xi64>
// CHECK-NOT: math.exp
// CHECK: return
func.func @f64_elu(%q: tensor<7x8xf64>, %v: tensor<7x4xf64>)
    -> tensor<7x4xf64> {
  %f = linattn.feature_map elu %q : tensor<7x8xf64> -> tensor<7x8xf64>
  %o, %s, %z = linattn.scan forward %f, %f, %v normalize(eps = 1.0e-6)
      : tensor<7x8xf64>, tensor<7x8xf64>, tensor<7x4xf64>
      -> tensor<7x4xf64>, tensor<8x4xf64>, tensor<8xf64>
  return %o : tensor<7x4xf64>
}

// Not for the kernels: a state as narrow as f16 data. It stays for
// convert-linattn-to-linalg.

// CHECK-LABEL: func.func @f16_state(
// CHECK: linattn.scan
// CHECK-NOT: scf.parallel
func.func @f16_state(%q: tensor<7x8xf16>, %v: tensor<7x4xf16>)
    -> (tensor<7x4xf16>, tensor<8x4xf16>, tensor<8xf16>) {
  %o, %s, %z = linattn.scan forward %q, %q, %v
      : tensor<7x8xf16>, tensor<7x8xf16>, tensor<7x4xf16>
      -> tensor<7x4xf16>, tensor<8x4xf16>, tensor<8xf16>
  return %o, %s, %z : tensor<7x4xf16>, tensor<8x4xf16>, tensor<8xf16>
}

// -----

// A short non-causal quadratic form (8 queries, 8 keys, F = 20, Dv = 19):
// the target-independent cost model keeps it (the linear form needs 2.4
// times its operations), but its generic loops are slower per operation
// than the kernels by far more, so it is reassociated and both halves take
// kernels. The positive scale goes into eps. With reassociate-speedup=0 it
// is left as it is.

// CHECK-LABEL: func.func @short_quadratic(
// CHECK-NOT: linattn.{{(attention|feature_map|scores|apply_scores|kv_summary|query_readout|scan|step)}}
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK-NOT: linattn.{{(attention|feature_map|scores|apply_scores|kv_summary|query_readout|scan|step)}}
// CHECK: return
// QUAD-LABEL: func.func @short_quadratic(
// QUAD: linattn.scores
// QUAD: linattn.apply_scores
// QUAD-NOT: scf.parallel
func.func @short_quadratic(%q: tensor<2x8x20xf32>, %k: tensor<2x8x20xf32>,
                           %v: tensor<2x8x19xf32>) -> tensor<2x8x19xf32> {
  %fq = linattn.feature_map elu %q : tensor<2x8x20xf32> -> tensor<2x8x20xf32>
  %fk = linattn.feature_map elu %k : tensor<2x8x20xf32> -> tensor<2x8x20xf32>
  %a = linattn.scores %fq, %fk scale(5.0e-01)
      : tensor<2x8x20xf32>, tensor<2x8x20xf32> -> tensor<2x8x8xf32>
  %o = linattn.apply_scores %a, %v normalize(eps = 1.0e-6)
      : tensor<2x8x8xf32>, tensor<2x8x19xf32> -> tensor<2x8x19xf32>
  return %o : tensor<2x8x19xf32>
}

// -----

// Quadratic forms that stay: one query against one key with F = 4096 (the
// linear form needs 126 times the operations, more than the kernels gain)
// and causal scores (the scan is linattn-masked-to-scan's). f64 data is
// reassociated like f32: its linear form has f64 kernels.

// CHECK-LABEL: func.func @one_key(
// QUAD-LABEL: func.func @one_key(
// CHECK: linattn.scores
// CHECK: linattn.apply_scores
// CHECK-NOT: scf.parallel
func.func @one_key(%q: tensor<1x4096xf32>, %v: tensor<1x64xf32>)
    -> tensor<1x64xf32> {
  %a = linattn.scores %q, %q : tensor<1x4096xf32>, tensor<1x4096xf32>
      -> tensor<1x1xf32>
  %o = linattn.apply_scores %a, %v normalize(eps = 1.0e-6)
      : tensor<1x1xf32>, tensor<1x64xf32> -> tensor<1x64xf32>
  return %o : tensor<1x64xf32>
}

// CHECK-LABEL: func.func @f64_quadratic(
// CHECK-NOT: linattn.{{(attention|feature_map|scores|apply_scores|kv_summary|query_readout|scan|step)}}
// CHECK: vector.fma {{.*}} : vector<4xf64>
// CHECK: scf.parallel
// CHECK: vector.fma {{.*}} : vector<4xf64>
// CHECK-NOT: linattn.{{(attention|feature_map|scores|apply_scores|kv_summary|query_readout|scan|step)}}
// CHECK: return
func.func @f64_quadratic(%q: tensor<8x20xf64>, %v: tensor<8x19xf64>)
    -> tensor<8x19xf64> {
  %a = linattn.scores %q, %q : tensor<8x20xf64>, tensor<8x20xf64>
      -> tensor<8x8xf64>
  %o = linattn.apply_scores %a, %v : tensor<8x8xf64>, tensor<8x19xf64>
      -> tensor<8x19xf64>
  return %o : tensor<8x19xf64>
}

// CHECK-LABEL: func.func @causal_quadratic(
// CHECK: linattn.scores {{.*}} causal
// CHECK: linattn.apply_scores
// CHECK-NOT: scf.parallel
func.func @causal_quadratic(%q: tensor<8x20xf32>, %v: tensor<8x19xf32>)
    -> tensor<8x19xf32> {
  %a = linattn.scores %q, %q causal : tensor<8x20xf32>, tensor<8x20xf32>
      -> tensor<8x8xf32>
  %o = linattn.apply_scores %a, %v : tensor<8x8xf32>, tensor<8x19xf32>
      -> tensor<8x19xf32>
  return %o : tensor<8x19xf32>
}

// -----

// Results stored into restrict writable buffers (how the Python package and
// destination-passing callers hand over their arrays) are written there in
// place: no fresh buffer, and the materialization, a copy once bufferized,
// is gone. The scan's unused final state still gets buffers of its own.
// The caller's buffer has no alignment the kernel knows of, so its outputs
// are not streamed (compare @streamed_outputs).

// CHECK-LABEL: func.func @scan_in_place(
// CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<2x?x16xf32>
// CHECK-COUNT-2: memref.alloc() {alignment = 64 : i64} : memref<2x16{{(x16)?}}xf32>
// CHECK-NOT: memref.alloc() {alignment = 64 : i64} : memref<2x?x16xf32>
// CHECK: scf.parallel
// CHECK: vector.store %{{.*}}, %[[OUT]]
// CHECK-NOT: nontemporal
// CHECK-NOT: materialize_in_destination
// CHECK: return
func.func @scan_in_place(%q: tensor<2x?x16xf32>, %v: tensor<2x?x16xf32>,
                         %out: memref<2x?x16xf32>) {
  %o, %s, %z = linattn.scan forward %q, %q, %v
      : tensor<2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x16xf32>
      -> tensor<2x?x16xf32>, tensor<2x16x16xf32>, tensor<2x16xf32>
  bufferization.materialize_in_destination %o in restrict writable %out
      : (tensor<2x?x16xf32>, memref<2x?x16xf32>) -> ()
  return
}

// A decode step writes its output and its new state in place.

// CHECK-LABEL: func.func @step_in_place(
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<4x8xf32>, %[[S1:[a-z0-9]+]]: memref<4x16x8xf32>, %[[Z1:[a-z0-9]+]]: memref<4x16xf32>
// CHECK-NOT: memref.alloc() {{.*}} : memref<4x
// CHECK: scf.parallel
// CHECK-DAG: vector.store %{{.*}}, %[[S1]]
// CHECK-DAG: vector.store %{{.*}}, %[[O]]
// CHECK-NOT: materialize_in_destination
// CHECK: return
func.func @step_in_place(%q: tensor<4x16xf32>, %v: tensor<4x8xf32>,
                         %s0: tensor<4x16x8xf32>, %z0: tensor<4x16xf32>,
                         %o: memref<4x8xf32>, %s1: memref<4x16x8xf32>,
                         %z1: memref<4x16xf32>) {
  %ro, %rs, %rz = linattn.step %q, %q, %v, %s0, %z0
      normalize(eps = 1.0e-6)
      : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x8xf32>,
        tensor<4x16x8xf32>, tensor<4x16xf32>
      -> tensor<4x8xf32>, tensor<4x16x8xf32>, tensor<4x16xf32>
  bufferization.materialize_in_destination %ro in restrict writable %o
      : (tensor<4x8xf32>, memref<4x8xf32>) -> ()
  bufferization.materialize_in_destination %rs in restrict writable %s1
      : (tensor<4x16x8xf32>, memref<4x16x8xf32>) -> ()
  bufferization.materialize_in_destination %rz in restrict writable %z1
      : (tensor<4x16xf32>, memref<4x16xf32>) -> ()
  return
}

// Not in place: a destination that other tensors may reach (no restrict), a
// strided destination, and a result with another use. Each gets a buffer
// and keeps its materialization.

// CHECK-LABEL: func.func @readout_not_in_place(
// CHECK: memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<3x?x8xf32>
// CHECK: materialize_in_destination {{.*}} in writable
// CHECK: memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<3x?x8xf32>
// CHECK: materialize_in_destination {{.*}} in restrict writable
// CHECK: memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<3x?x8xf32>
// CHECK: materialize_in_destination {{.*}} in restrict writable
// CHECK: return
func.func @readout_not_in_place(%q: tensor<3x?x16xf32>, %s: tensor<3x16x8xf32>,
    %a: memref<3x?x8xf32>, %b: memref<3x?x8xf32, strided<[?, 8, 1]>>,
    %c: memref<3x?x8xf32>) -> tensor<3x?x8xf32> {
  %o1 = linattn.query_readout %q, %s
      : tensor<3x?x16xf32>, tensor<3x16x8xf32> -> tensor<3x?x8xf32>
  bufferization.materialize_in_destination %o1 in writable %a
      : (tensor<3x?x8xf32>, memref<3x?x8xf32>) -> ()
  %o2 = linattn.query_readout %q, %s
      : tensor<3x?x16xf32>, tensor<3x16x8xf32> -> tensor<3x?x8xf32>
  bufferization.materialize_in_destination %o2 in restrict writable %b
      : (tensor<3x?x8xf32>, memref<3x?x8xf32, strided<[?, 8, 1]>>) -> ()
  %o3 = linattn.query_readout %q, %s
      : tensor<3x?x16xf32>, tensor<3x16x8xf32> -> tensor<3x?x8xf32>
  bufferization.materialize_in_destination %o3 in restrict writable %c
      : (tensor<3x?x8xf32>, memref<3x?x8xf32>) -> ()
  return %o3 : tensor<3x?x8xf32>
}
