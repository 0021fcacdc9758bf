// RUN: linattn-opt %s -linattn-raise -split-input-file | FileCheck %s
// RUN: linattn-opt %s -linattn-raise -linattn-reassociate -split-input-file | FileCheck %s --check-prefix=LINEAR
// The whole front end: causal attention becomes a scan, the rest the linear
// form, and every negative case stays as it was.
// RUN: linattn-opt %s -linattn-raise -linattn-masked-to-scan -linattn-reassociate -split-input-file | FileCheck %s --check-prefix=SCAN

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The paper's normalized causal attention, written out: elu + 1 (select of
// exp - 1) and relu (maximumf) feature maps, K transposed by linalg.transpose,
// an inclusive causal mask as a select on linalg.index (j <= i), row sums and
// a division by them plus eps in the body.
// CHECK-LABEL: func.func @elu_relu_causal_normalized
// SCAN-LABEL: func.func @elu_relu_causal_normalized
// SCAN-DAG: %[[FQ:.*]] = linattn.feature_map elu
// SCAN-DAG: %[[FK:.*]] = linattn.feature_map relu
// SCAN: %[[O:.*]], %{{.*}}, %{{.*}} = linattn.scan forward %[[FQ]], %[[FK]], %{{.*}} normalize(eps = 9.9999999747524271E-7) : tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x32xf32> -> tensor<128x32xf32>, tensor<64x32xf32>, tensor<64xf32>
// SCAN-NEXT: return %[[O]]
// CHECK-SAME: (%[[Q:.*]]: tensor<128x64xf32>, %[[K:.*]]: tensor<128x64xf32>, %[[V:.*]]: tensor<128x32xf32>)
// CHECK-DAG: %[[FQ:.*]] = linattn.feature_map elu %[[Q]] : tensor<128x64xf32> -> tensor<128x64xf32>
// CHECK-DAG: %[[FK:.*]] = linattn.feature_map relu %[[K]] : tensor<128x64xf32> -> tensor<128x64xf32>
// CHECK: %[[A:.*]] = linattn.scores %[[FQ]], %[[FK]] causal : tensor<128x64xf32>, tensor<128x64xf32> -> tensor<128x128xf32>
// CHECK: %[[O:.*]] = linattn.apply_scores %[[A]], %[[V]] normalize(eps = 9.9999999747524271E-7) : tensor<128x128xf32>, tensor<128x32xf32> -> tensor<128x32xf32>
// CHECK-NEXT: return %[[O]]
// CHECK-NOT: linalg.
// The causal form is not reassociated (that is linattn-masked-to-scan's job).
// LINEAR-LABEL: func.func @elu_relu_causal_normalized
// LINEAR: linattn.scores %{{.*}}, %{{.*}} causal
// LINEAR-NOT: linattn.kv_summary
func.func @elu_relu_causal_normalized(%q: tensor<128x64xf32>, %k: tensor<128x64xf32>, %v: tensor<128x32xf32>) -> tensor<128x32xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 1.0e-6 : f32
  %eq = tensor.empty() : tensor<128x64xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<128x64xf32>) outs(%eq : tensor<128x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.cmpf ogt, %x, %zero : f32
    %e = math.exp %x : f32
    %em1 = arith.subf %e, %one : f32
    %s = arith.select %c, %x, %em1 : f32
    %p = arith.addf %s, %one : f32
    linalg.yield %p : f32
  } -> tensor<128x64xf32>
  %fk = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%k : tensor<128x64xf32>) outs(%eq : tensor<128x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<128x64xf32>
  %et = tensor.empty() : tensor<64x128xf32>
  %kt = linalg.transpose ins(%fk : tensor<128x64xf32>) outs(%et : tensor<64x128xf32>) permutation = [1, 0]
  %ea = tensor.empty() : tensor<128x128xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ea : tensor<128x128xf32>) -> tensor<128x128xf32>
  %a = linalg.matmul ins(%fq, %kt : tensor<128x64xf32>, tensor<64x128xf32>) outs(%za : tensor<128x128xf32>) -> tensor<128x128xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<128x128xf32>) outs(%ea : tensor<128x128xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c = arith.cmpi ule, %j, %i : index
    %s = arith.select %c, %x, %zero : f32
    linalg.yield %s : f32
  } -> tensor<128x128xf32>
  %er = tensor.empty() : tensor<128xf32>
  %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<128xf32>) -> tensor<128xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%m : tensor<128x128xf32>) outs(%zr : tensor<128xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<128xf32>
  %eo = tensor.empty() : tensor<128x32xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<128x32xf32>) -> tensor<128x32xf32>
  %p = linalg.matmul ins(%m, %v : tensor<128x128xf32>, tensor<128x32xf32>) outs(%zo : tensor<128x32xf32>) -> tensor<128x32xf32>
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %r : tensor<128x32xf32>, tensor<128xf32>) outs(%eo : tensor<128x32xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %de = arith.addf %d, %eps : f32
    %s = arith.divf %x, %de : f32
    linalg.yield %s : f32
  } -> tensor<128x32xf32>
  return %o : tensor<128x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#ma = affine_map<(m, n, k) -> (m, k)>
#mb = affine_map<(m, n, k) -> (n, k)>
#mc = affine_map<(m, n, k) -> (m, n)>

// Cross-attention with dynamic sizes: Q·Kᵀ as linalg.matmul with transposed-B
// indexing maps, a scale as a division by a constant, elu + 1 as two generics
// (elu with expm1, then + 1), relu as a select, and normalization as a
// multiplication by the reciprocal of (row sums + eps) computed by separate
// generics (linalg.reduce for the row sums).
// CHECK-LABEL: func.func @cross_dynamic_scaled_reciprocal
// SCAN-LABEL: func.func @cross_dynamic_scaled_reciprocal
// SCAN-NOT: linattn.scan
// SCAN: linattn.kv_summary
// SCAN: linattn.query_readout
// SCAN-NOT: linattn.scan
// SCAN: return
// CHECK-SAME: (%[[Q:.*]]: tensor<?x16xf32>, %[[K:.*]]: tensor<?x16xf32>, %[[V:.*]]: tensor<?x8xf32>
// CHECK-DAG: %[[FQ:.*]] = linattn.feature_map elu %[[Q]] : tensor<?x16xf32> -> tensor<?x16xf32>
// CHECK-DAG: %[[FK:.*]] = linattn.feature_map relu %[[K]] : tensor<?x16xf32> -> tensor<?x16xf32>
// CHECK: %[[A:.*]] = linattn.scores %[[FQ]], %[[FK]] scale(2.500000e-01) : tensor<?x16xf32>, tensor<?x16xf32> -> tensor<?x?xf32>
// CHECK: %[[O:.*]] = linattn.apply_scores %[[A]], %[[V]] normalize(eps = 9.9999997473787516E-5) : tensor<?x?xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: return %[[O]]
// Unknown lengths count as long: the linear form, eps divided by the scale.
// LINEAR-LABEL: func.func @cross_dynamic_scaled_reciprocal
// LINEAR-SAME: (%[[Q:.*]]: tensor<?x16xf32>, %[[K:.*]]: tensor<?x16xf32>, %[[V:.*]]: tensor<?x8xf32>
// LINEAR-DAG: %[[FQ:.*]] = linattn.feature_map elu %[[Q]]
// LINEAR-DAG: %[[FK:.*]] = linattn.feature_map relu %[[K]]
// LINEAR: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary %[[FK]], %[[V]] : tensor<?x16xf32>, tensor<?x8xf32> -> tensor<16x8xf32>, tensor<16xf32>
// LINEAR-NEXT: %[[O:.*]] = linattn.query_readout %[[FQ]], %[[S]] normalize(%[[Z]], eps = 3.9999998989515007E-4)
// LINEAR-NEXT: return %[[O]]
func.func @cross_dynamic_scaled_reciprocal(%q: tensor<?x16xf32>, %k: tensor<?x16xf32>, %v: tensor<?x8xf32>,
                                           %n: index, %m: index) -> tensor<?x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %four = arith.constant 4.0 : f32
  %eps = arith.constant 1.0e-4 : f32
  %eq = tensor.empty(%n) : tensor<?x16xf32>
  %ek = tensor.empty(%m) : tensor<?x16xf32>
  %elu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<?x16xf32>) outs(%eq : tensor<?x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.cmpf olt, %x, %zero : f32
    %em1 = math.expm1 %x : f32
    %s = arith.select %c, %em1, %x : f32
    linalg.yield %s : f32
  } -> tensor<?x16xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%elu : tensor<?x16xf32>) outs(%eq : tensor<?x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %p = arith.addf %one, %x : f32
    linalg.yield %p : f32
  } -> tensor<?x16xf32>
  %fk = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%k : tensor<?x16xf32>) outs(%ek : tensor<?x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.cmpf ugt, %x, %zero : f32
    %s = arith.select %c, %x, %zero : f32
    linalg.yield %s : f32
  } -> tensor<?x16xf32>
  %ea = tensor.empty(%n, %m) : tensor<?x?xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ea : tensor<?x?xf32>) -> tensor<?x?xf32>
  %a = linalg.matmul indexing_maps = [#ma, #mb, #mc]
      ins(%fq, %fk : tensor<?x16xf32>, tensor<?x16xf32>) outs(%za : tensor<?x?xf32>) -> tensor<?x?xf32>
  %sa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<?x?xf32>) outs(%ea : tensor<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.divf %x, %four : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  %er = tensor.empty(%n) : tensor<?xf32>
  %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<?xf32>) -> tensor<?xf32>
  %r = linalg.reduce ins(%sa : tensor<?x?xf32>) outs(%zr : tensor<?xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  %re = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%r : tensor<?xf32>) outs(%er : tensor<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %eps : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %rr = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%re : tensor<?xf32>) outs(%er : tensor<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.divf %one, %x : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %eo = tensor.empty(%n) : tensor<?x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<?x8xf32>) -> tensor<?x8xf32>
  %p = linalg.matmul ins(%sa, %v : tensor<?x?xf32>, tensor<?x8xf32>) outs(%zo : tensor<?x8xf32>) -> tensor<?x8xf32>
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %rr : tensor<?x8xf32>, tensor<?xf32>) outs(%eo : tensor<?x8xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %s = arith.mulf %d, %x : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#tri = affine_map<(d0, d1, d2) -> (d1, d2)>

// Identity features, a causal mask as a multiplication by a lower-triangular
// ones constant broadcast over the batch, unnormalized.
// CHECK-LABEL: func.func @tril_constant_mask
// SCAN-LABEL: func.func @tril_constant_mask
// SCAN-NOT: linattn.scores
// SCAN: %[[O:.*]], %{{.*}}, %{{.*}} = linattn.scan forward %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x8x8xf32>, tensor<2x8xf32>
// SCAN-NEXT: return %[[O]]
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8xf32>, %[[K:.*]]: tensor<2x4x8xf32>, %[[V:.*]]: tensor<2x4x8xf32>)
// CHECK: %[[A:.*]] = linattn.scores %[[Q]], %[[K]] causal : tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x4xf32>
// CHECK-NEXT: %[[O:.*]] = linattn.apply_scores %[[A]], %[[V]] : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[O]]
func.func @tril_constant_mask(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %tril = arith.constant dense<[[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]]> : tensor<4x4xf32>
  %et = tensor.empty() : tensor<2x8x4xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x8xf32>) outs(%et : tensor<2x8x4xf32>) permutation = [0, 2, 1]
  %ea = tensor.empty() : tensor<2x4x4xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ea : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %a = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%za : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %m = linalg.generic {indexing_maps = [#id3, #tri, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a, %tril : tensor<2x4x4xf32>, tensor<4x4xf32>) outs(%ea : tensor<2x4x4xf32>) {
  ^bb0(%x: f32, %l: f32, %o: f32):
    %s = arith.mulf %x, %l : f32
    linalg.yield %s : f32
  } -> tensor<2x4x4xf32>
  %eo = tensor.empty() : tensor<2x4x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o = linalg.batch_matmul ins(%m, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%zo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// negative_: elu without the + 1 is not the elu feature map: the products
// are raised with the generic as identity features, the generic stays.
// CHECK-LABEL: func.func @negative_elu_without_plus_one
// SCAN-LABEL: func.func @negative_elu_without_plus_one
// SCAN-NOT: linattn.feature_map
// SCAN: linalg.generic
// SCAN-NOT: linattn.feature_map
// SCAN: linattn.kv_summary
// SCAN: linattn.query_readout
// SCAN: return
// CHECK-NOT: linattn.feature_map
// CHECK: %[[F:.*]] = linalg.generic
// CHECK-NOT: linattn.feature_map
// CHECK: linattn.scores %[[F]],
func.func @negative_elu_without_plus_one(%q: tensor<64x16xf32>, %k: tensor<64x16xf32>, %v: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %eq = tensor.empty() : tensor<64x16xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<64x16xf32>) outs(%eq : tensor<64x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.cmpf ogt, %x, %zero : f32
    %e = math.expm1 %x : f32
    %s = arith.select %c, %x, %e : f32
    linalg.yield %s : f32
  } -> tensor<64x16xf32>
  %et = tensor.empty() : tensor<16x64xf32>
  %kt = linalg.transpose ins(%k : tensor<64x16xf32>) outs(%et : tensor<16x64xf32>) permutation = [1, 0]
  %ea = tensor.empty() : tensor<64x64xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ea : tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = linalg.matmul ins(%fq, %kt : tensor<64x16xf32>, tensor<16x64xf32>) outs(%za : tensor<64x64xf32>) -> tensor<64x64xf32>
  %eo = tensor.empty() : tensor<64x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<64x8xf32>) -> tensor<64x8xf32>
  %o = linalg.matmul ins(%a, %v : tensor<64x64xf32>, tensor<64x8xf32>) outs(%zo : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %o : tensor<64x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// negative_: max(x, 0.1) is not relu.
// CHECK-LABEL: func.func @negative_relu_threshold
// SCAN-LABEL: func.func @negative_relu_threshold
// SCAN-NOT: linattn.feature_map
// SCAN: linalg.generic
// SCAN-NOT: linattn.feature_map
// SCAN: linattn.kv_summary
// SCAN: linattn.query_readout
// SCAN: return
// CHECK-NOT: linattn.feature_map
// CHECK: %[[F:.*]] = linalg.generic
// CHECK-NOT: linattn.feature_map
// CHECK: linattn.scores %[[F]],
func.func @negative_relu_threshold(%q: tensor<64x16xf32>, %k: tensor<64x16xf32>, %v: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %eq = tensor.empty() : tensor<64x16xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<64x16xf32>) outs(%eq : tensor<64x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.constant 0.1 : f32
    %s = arith.maximumf %x, %t : f32
    linalg.yield %s : f32
  } -> tensor<64x16xf32>
  %et = tensor.empty() : tensor<16x64xf32>
  %kt = linalg.transpose ins(%k : tensor<64x16xf32>) outs(%et : tensor<16x64xf32>) permutation = [1, 0]
  %ea = tensor.empty() : tensor<64x64xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ea : tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = linalg.matmul ins(%fq, %kt : tensor<64x16xf32>, tensor<16x64xf32>) outs(%za : tensor<64x64xf32>) -> tensor<64x64xf32>
  %eo = tensor.empty() : tensor<64x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<64x8xf32>) -> tensor<64x8xf32>
  %o = linalg.matmul ins(%a, %v : tensor<64x64xf32>, tensor<64x8xf32>) outs(%zo : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %o : tensor<64x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// negative_: elu + 2 is not the elu feature map.
// CHECK-LABEL: func.func @negative_elu_plus_two
// SCAN-LABEL: func.func @negative_elu_plus_two
// SCAN-NOT: linattn.feature_map
// SCAN: linalg.generic
// SCAN-NOT: linattn.feature_map
// SCAN: linattn.kv_summary
// SCAN: linattn.query_readout
// SCAN: return
// CHECK-NOT: linattn.feature_map
// CHECK: %[[F:.*]] = linalg.generic
// CHECK-NOT: linattn.feature_map
// CHECK: linattn.scores %[[F]],
func.func @negative_elu_plus_two(%q: tensor<64x16xf32>, %k: tensor<64x16xf32>, %v: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %eq = tensor.empty() : tensor<64x16xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<64x16xf32>) outs(%eq : tensor<64x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.cmpf ogt, %x, %zero : f32
    %e = math.expm1 %x : f32
    %s = arith.select %c, %x, %e : f32
    %two = arith.constant 2.0 : f32
    %p = arith.addf %s, %two : f32
    linalg.yield %p : f32
  } -> tensor<64x16xf32>
  %et = tensor.empty() : tensor<16x64xf32>
  %kt = linalg.transpose ins(%k : tensor<64x16xf32>) outs(%et : tensor<16x64xf32>) permutation = [1, 0]
  %ea = tensor.empty() : tensor<64x64xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ea : tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = linalg.matmul ins(%fq, %kt : tensor<64x16xf32>, tensor<16x64xf32>) outs(%za : tensor<64x64xf32>) -> tensor<64x64xf32>
  %eo = tensor.empty() : tensor<64x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<64x8xf32>) -> tensor<64x8xf32>
  %o = linalg.matmul ins(%a, %v : tensor<64x64xf32>, tensor<64x8xf32>) outs(%zo : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %o : tensor<64x8xf32>
}
