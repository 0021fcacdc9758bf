// RUN: linattn-opt %s -linattn-chunk-scan=chunk-size=16 -split-input-file | FileCheck %s --check-prefixes=CHECK,C16
// RUN: linattn-opt %s -linattn-chunk-scan -split-input-file | FileCheck %s --check-prefixes=CHECK,C64
// RUN: not linattn-opt %s -linattn-chunk-scan=chunk-size=0 -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: chunk-size must be positive, got 0
// BAD-NOT: see current operation

// N = 256 is a multiple of both chunk sizes: static tiles, no affine.min.
// Normalized: separate numerator (intra + inter) and denominator (row sums
// of the intra scores + the readout of z), divided once per row.
// CHECK-LABEL: func.func @forward_normalized_even
// CHECK-SAME: (%[[FQ:.*]]: tensor<2x256x16xf32>, %[[FK:.*]]: tensor<2x256x16xf32>, %[[V:.*]]: tensor<2x256x8xf32>)
// CHECK-DAG: %[[S0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x16x8xf32>)
// CHECK-DAG: %[[Z0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x16xf32>)
// CHECK-DAG: %[[OUT0:.*]] = tensor.empty() : tensor<2x256x8xf32>
// CHECK-DAG: %[[N:.*]] = arith.constant 256 : index
// C16-DAG: %[[C:.*]] = arith.constant 16 : index
// C64-DAG: %[[C:.*]] = arith.constant 64 : index
// CHECK: %[[R:.*]]:3 = scf.for %[[T:.*]] = %{{.*}} to %[[N]] step %[[C]] iter_args(%[[OUT:.*]] = %[[OUT0]], %[[S:.*]] = %[[S0]], %[[Z:.*]] = %[[Z0]])
// CHECK-NOT: affine.min
// C16: %[[QC:.*]] = tensor.extract_slice %[[FQ]][0, %[[T]], 0] [2, 16, 16] [1, 1, 1]
// C16: %[[KC:.*]] = tensor.extract_slice %[[FK]][0, %[[T]], 0] [2, 16, 16] [1, 1, 1]
// C16: %[[VC:.*]] = tensor.extract_slice %[[V]][0, %[[T]], 0] [2, 16, 8] [1, 1, 1]
// C64: %[[QC:.*]] = tensor.extract_slice %[[FQ]][0, %[[T]], 0] [2, 64, 16] [1, 1, 1]
// C64: %[[KC:.*]] = tensor.extract_slice %[[FK]][0, %[[T]], 0] [2, 64, 16] [1, 1, 1]
// C64: %[[VC:.*]] = tensor.extract_slice %[[V]][0, %[[T]], 0] [2, 64, 8] [1, 1, 1]
// CHECK: %[[A:.*]] = linattn.scores %[[QC]], %[[KC]] causal
// C16-SAME: -> tensor<2x16x16xf32>
// C64-SAME: -> tensor<2x64x64xf32>
// CHECK: %[[INTRA:.*]] = linattn.apply_scores %[[A]], %[[VC]] :
// CHECK: %[[INTER:.*]] = linattn.query_readout %[[QC]], %[[S]] :
// CHECK: %[[ROWSUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[A]] : {{.*}})
// CHECK: %[[DEN:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[QC]], %[[Z]] : {{.*}}) outs(%[[ROWSUM]] :
// CHECK: %[[OC:.*]] = linalg.generic {{.*}} ins(%[[INTRA]], %[[INTER]], %[[DEN]] :
// CHECK: arith.addf
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: %[[OUT1:.*]] = tensor.insert_slice %[[OC]] into %[[OUT]][0, %[[T]], 0]
// CHECK: %[[DS:.*]], %[[DZ:.*]] = linattn.kv_summary %[[KC]], %[[VC]]
// CHECK: %[[S1:.*]] = linalg.add ins(%[[S]], %[[DS]] : {{.*}}) outs(%[[S]] :
// CHECK: %[[Z1:.*]] = linalg.add ins(%[[Z]], %[[DZ]] : {{.*}}) outs(%[[Z]] :
// CHECK: scf.yield %[[OUT1]], %[[S1]], %[[Z1]]
// CHECK-NOT: linattn.scan
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @forward_normalized_even(%fq: tensor<2x256x16xf32>, %fk: tensor<2x256x16xf32>,
                                   %v: tensor<2x256x8xf32>)
    -> (tensor<2x256x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32>) {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6)
      : tensor<2x256x16xf32>, tensor<2x256x16xf32>, tensor<2x256x8xf32>
      -> tensor<2x256x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32>
  return %o, %s, %z : tensor<2x256x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32>
}

// -----

// N = 100 is a multiple of neither: the last chunk is min(C, N - t) long and
// the tiles are dynamic. The initial state seeds the loop; unnormalized, the
// output is intra + inter.
// CHECK-LABEL: func.func @forward_uneven_init
// CHECK-SAME: %[[S0:[^:]*]]: tensor<16x8xf32>, %[[Z0:[^:]*]]: tensor<16xf32>
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[S:.*]] = %[[S0]], %{{.*}} = %[[Z0]])
// C16: %[[L:.*]] = affine.min #{{.*}}(%[[T]])
// C64: %[[L:.*]] = affine.min #{{.*}}(%[[T]])
// CHECK: tensor.extract_slice %{{.*}}[%[[T]], 0] [%[[L]], 16] [1, 1] : tensor<100x16xf32> to tensor<?x16xf32>
// CHECK: linattn.scores %{{.*}}, %{{.*}} causal : tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?x?xf32>
// CHECK: linattn.query_readout %{{.*}}, %[[S]]
// CHECK-NOT: arith.divf
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%[[T]], 0] [%[[L]], 8] [1, 1] : tensor<?x8xf32> into tensor<100x8xf32>
func.func @forward_uneven_init(%fq: tensor<100x16xf32>, %fk: tensor<100x16xf32>,
                               %v: tensor<100x8xf32>, %s0: tensor<16x8xf32>, %z0: tensor<16xf32>)
    -> (tensor<100x8xf32>, tensor<16x8xf32>, tensor<16xf32>) {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v init(%s0, %z0)
      : tensor<100x16xf32>, tensor<100x16xf32>, tensor<100x8xf32>, tensor<16x8xf32>, tensor<16xf32>
      -> tensor<100x8xf32>, tensor<16x8xf32>, tensor<16xf32>
  return %o, %s, %z : tensor<100x8xf32>, tensor<16x8xf32>, tensor<16xf32>
}

// -----

// The scan's own chunk_size hint wins over the option: chunks of 8 tokens
// (static tiles, since 8 divides 40) under both RUN lines.
// CHECK-LABEL: func.func @hint_wins
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C8]]
// CHECK: linattn.scores {{.*}} -> tensor<1x8x8xf32>
func.func @hint_wins(%fq: tensor<1x40x4xf32>, %fk: tensor<1x40x4xf32>, %v: tensor<1x40x4xf32>)
    -> tensor<1x40x4xf32> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v chunk_size(8)
      : tensor<1x40x4xf32>, tensor<1x40x4xf32>, tensor<1x40x4xf32>
      -> tensor<1x40x4xf32>, tensor<1x4x4xf32>, tensor<1x4xf32>
  return %o : tensor<1x40x4xf32>
}

// -----

// A static sequence shorter than the chunk is one chunk of its own length.
// CHECK-LABEL: func.func @short_sequence
// CHECK: %[[C12:.*]] = arith.constant 12 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C12]] step %[[C12]]
// CHECK: linattn.scores {{.*}} -> tensor<12x12xf32>
func.func @short_sequence(%fq: tensor<12x4xf32>, %fk: tensor<12x4xf32>, %v: tensor<12x4xf32>)
    -> tensor<12x4xf32> {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v
      : tensor<12x4xf32>, tensor<12x4xf32>, tensor<12x4xf32>
      -> tensor<12x4xf32>, tensor<4x4xf32>, tensor<4xf32>
  return %o : tensor<12x4xf32>
}

// -----

// Reverse, dynamic N, bf16 data with f32 state: chunks are taken from the
// end (start N - t - L), the intra-chunk mask is the upper triangle (the
// transpose of the keys' causal scores against the queries), tiles are
// widened to f32 (linalg.map, which bufferizes in every pipeline) and the
// output narrowed to bf16.
// CHECK-LABEL: func.func @reverse_dynamic_bf16
// CHECK-SAME: (%[[FQ:.*]]: tensor<?x16xbf16>, %[[FK:.*]]: tensor<?x16xbf16>, %[[V:.*]]: tensor<?x8xbf16>
// CHECK: %[[N:.*]] = tensor.dim %[[FQ]], %{{.*}} : tensor<?x16xbf16>
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %[[N]] step
// CHECK: %[[L:.*]] = affine.min #{{.*}}(%[[T]])[%[[N]]]
// CHECK: %[[START:.*]] = affine.apply #{{.*}}(%[[T]], %[[L]])[%[[N]]]
// CHECK: %[[QS:.*]] = tensor.extract_slice %[[FQ]][%[[START]], 0] [%[[L]], 16]
// CHECK: %[[QC:.*]] = linalg.map { arith.extf } ins(%[[QS]] : tensor<?x16xbf16>) outs(%{{.*}} : tensor<?x16xf32>)
// CHECK: %[[KS:.*]] = tensor.extract_slice %[[FK]][%[[START]], 0] [%[[L]], 16]
// CHECK: %[[KC:.*]] = linalg.map { arith.extf } ins(%[[KS]] : tensor<?x16xbf16>) outs(%{{.*}} : tensor<?x16xf32>)
// CHECK: %[[AT:.*]] = linattn.scores %[[KC]], %[[QC]] causal
// CHECK: %[[A:.*]] = linalg.transpose ins(%[[AT]] : tensor<?x?xf32>) outs(%{{.*}} : tensor<?x?xf32>) permutation = [1, 0]
// CHECK: linattn.apply_scores %[[A]], %{{.*}} : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%[[START]], 0] [%[[L]], 8]
func.func @reverse_dynamic_bf16(%fq: tensor<?x16xbf16>, %fk: tensor<?x16xbf16>, %v: tensor<?x8xbf16>,
                                %s0: tensor<16x8xf32>, %z0: tensor<16xf32>)
    -> (tensor<?x8xbf16>, tensor<16x8xf32>, tensor<16xf32>) {
  %o, %s, %z = linattn.scan reverse %fq, %fk, %v init(%s0, %z0) normalize(eps = 1.0e-6)
      : tensor<?x16xbf16>, tensor<?x16xbf16>, tensor<?x8xbf16>, tensor<16x8xf32>, tensor<16xf32>
      -> tensor<?x8xbf16>, tensor<16x8xf32>, tensor<16xf32>
  return %o, %s, %z : tensor<?x8xbf16>, tensor<16x8xf32>, tensor<16xf32>
}

// -----

// Sizes that are dynamic everywhere are read with tensor.dim; an initial
// state less static than the loop's state type is cast to it, and the
// results are cast back to the scan's types.
// CHECK-LABEL: func.func @dynamic_everything
// CHECK: tensor.cast %{{.*}} : tensor<?x?x?xf32> to tensor<?x4x?xf32>
// CHECK: scf.for
// CHECK: tensor.cast %{{.*}} : tensor<?x4x?xf32> to tensor<?x?x?xf32>
func.func @dynamic_everything(%fq: tensor<?x?x4xf32>, %fk: tensor<?x?x?xf32>, %v: tensor<?x?x?xf32>,
                              %s0: tensor<?x?x?xf32>, %z0: tensor<?x?xf32>)
    -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>) {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v init(%s0, %z0)
      : tensor<?x?x4xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>
      -> tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>
  return %o, %s, %z : tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?xf32>
}

// -----

// Only scans are chunked: a step is left alone.
// CHECK-LABEL: func.func @negative_step
// CHECK: linattn.step
// CHECK-NOT: scf.for
func.func @negative_step(%q: tensor<4xf32>, %k: tensor<4xf32>, %v: tensor<3xf32>,
                         %s: tensor<4x3xf32>, %z: tensor<4xf32>)
    -> (tensor<3xf32>, tensor<4x3xf32>, tensor<4xf32>) {
  %o, %s1, %z1 = linattn.step %q, %k, %v, %s, %z
      : tensor<4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<4xf32>
      -> tensor<3xf32>, tensor<4x3xf32>, tensor<4xf32>
  return %o, %s1, %z1 : tensor<3xf32>, tensor<4x3xf32>, tensor<4xf32>
}

// -----

// No features: the feature tiles have no elements and are empty tensors,
// not slices (upstream rejects any offset into a dimension of size 0).
// CHECK-LABEL: func.func @no_features
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x3x0xf32>, %[[K:[^:]*]]: tensor<2x3x0xf32>, %[[V:[^:]*]]: tensor<2x3x5xf32>)
// CHECK: scf.for
// CHECK-NOT: tensor.extract_slice %[[Q]]
// CHECK-NOT: tensor.extract_slice %[[K]]
// CHECK: tensor.empty({{.*}}) : tensor<2x{{[0-9?]+}}x0xf32>
// CHECK: tensor.extract_slice %[[V]]
// CHECK: tensor.insert_slice
func.func @no_features(%fq: tensor<2x3x0xf32>, %fk: tensor<2x3x0xf32>, %v: tensor<2x3x5xf32>)
    -> (tensor<2x3x5xf32>, tensor<2x0x5xf32>, tensor<2x0xf32>) {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6)
      : tensor<2x3x0xf32>, tensor<2x3x0xf32>, tensor<2x3x5xf32>
      -> tensor<2x3x5xf32>, tensor<2x0x5xf32>, tensor<2x0xf32>
  return %o, %s, %z : tensor<2x3x5xf32>, tensor<2x0x5xf32>, tensor<2x0xf32>
}

// -----

// No values: the output tiles have no elements, so nothing is inserted
// into the output; the normalizer still sums the keys' features.
// CHECK-LABEL: func.func @no_values
// CHECK: scf.for
// CHECK-NOT: tensor.insert_slice
// CHECK: linattn.kv_summary
// CHECK: scf.yield
func.func @no_values(%fq: tensor<2x3x4xf32>, %fk: tensor<2x3x4xf32>, %v: tensor<2x3x0xf32>)
    -> (tensor<2x3x0xf32>, tensor<2x4x0xf32>, tensor<2x4xf32>) {
  %o, %s, %z = linattn.scan forward %fq, %fk, %v normalize(eps = 1.0e-6)
      : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x0xf32>
      -> tensor<2x3x0xf32>, tensor<2x4x0xf32>, tensor<2x4xf32>
  return %o, %s, %z : tensor<2x3x0xf32>, tensor<2x4x0xf32>, tensor<2x4xf32>
}
