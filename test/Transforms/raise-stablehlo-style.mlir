// Attention as StableHLO dot_general lowers to linalg: einsum-style
// linalg.generic contractions over [B, H, N, D] tensors (batch dimensions
// first, the key operand indexed as [B, H, M, D] so no transpose is needed),
// a transpose of the values into place, elementwise generics, and
// normalization by a reduction generic.
// RUN: linattn-opt %s -linattn-raise -split-input-file | FileCheck %s
// RUN: linattn-opt %s -linattn-raise -linattn-reassociate -split-input-file | FileCheck %s --check-prefix=LINEAR

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#sum = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#q = affine_map<(b, h, n, m, d) -> (b, h, n, d)>
#k = affine_map<(b, h, n, m, d) -> (b, h, m, d)>
#s = affine_map<(b, h, n, m, d) -> (b, h, n, m)>
#a = affine_map<(b, h, n, e, m) -> (b, h, n, m)>
#v = affine_map<(b, h, n, e, m) -> (b, h, m, e)>
#o = affine_map<(b, h, n, e, m) -> (b, h, n, e)>

// CHECK-LABEL: func.func @stablehlo_relu_normalized
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x?x32xf32>, %[[K:.*]]: tensor<2x4x?x32xf32>, %[[VT:.*]]: tensor<2x4x16x?xf32>
// CHECK-DAG: %[[FQ:.*]] = linattn.feature_map relu %[[Q]] : tensor<2x4x?x32xf32> -> tensor<2x4x?x32xf32>
// CHECK-DAG: %[[FK:.*]] = linattn.feature_map relu %[[K]] : tensor<2x4x?x32xf32> -> tensor<2x4x?x32xf32>
// CHECK: %[[A:.*]] = linattn.scores %[[FQ]], %[[FK]] : tensor<2x4x?x32xf32>, tensor<2x4x?x32xf32> -> tensor<2x4x?x?xf32>
// CHECK: %[[V:.*]] = linalg.transpose ins(%[[VT]] : tensor<2x4x16x?xf32>)
// CHECK: %[[O:.*]] = linattn.apply_scores %[[A]], %[[V]] normalize(eps = 9.9999999747524271E-7) : tensor<2x4x?x?xf32>, tensor<2x4x?x16xf32> -> tensor<2x4x?x16xf32>
// CHECK-NEXT: return %[[O]]
// LINEAR-LABEL: func.func @stablehlo_relu_normalized
// LINEAR: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary %{{.*}}, %{{.*}} : tensor<2x4x?x32xf32>, tensor<2x4x?x16xf32> -> tensor<2x4x32x16xf32>, tensor<2x4x32xf32>
// LINEAR-NEXT: %[[O:.*]] = linattn.query_readout %{{.*}}, %[[S]] normalize(%[[Z]], eps = 9.9999999747524271E-7) : tensor<2x4x?x32xf32>, tensor<2x4x32x16xf32>, tensor<2x4x32xf32> -> tensor<2x4x?x16xf32>
// LINEAR-NEXT: return %[[O]]
func.func @stablehlo_relu_normalized(%q: tensor<2x4x?x32xf32>, %k: tensor<2x4x?x32xf32>, %vt: tensor<2x4x16x?xf32>,
                                     %n: index) -> tensor<2x4x?x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty(%n) : tensor<2x4x?x32xf32>
  %fq = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q : tensor<2x4x?x32xf32>) outs(%e0 : tensor<2x4x?x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %cst : f32
    linalg.yield %r : f32
  } -> tensor<2x4x?x32xf32>
  %fk = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<2x4x?x32xf32>) outs(%e0 : tensor<2x4x?x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %cst, %in : f32
    linalg.yield %r : f32
  } -> tensor<2x4x?x32xf32>
  %e1 = tensor.empty(%n, %n) : tensor<2x4x?x?xf32>
  %z1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<2x4x?x?xf32>) -> tensor<2x4x?x?xf32>
  %scores = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq, %fk : tensor<2x4x?x32xf32>, tensor<2x4x?x32xf32>) outs(%z1 : tensor<2x4x?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x?x?xf32>
  %e2 = tensor.empty(%n) : tensor<2x4x?xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<2x4x?xf32>) -> tensor<2x4x?xf32>
  %rowsum = linalg.generic {indexing_maps = [#id4, #sum], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%scores : tensor<2x4x?x?xf32>) outs(%z2 : tensor<2x4x?xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x?xf32>
  %den = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%rowsum : tensor<2x4x?xf32>) outs(%e2 : tensor<2x4x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = arith.constant 1.000000e-06 : f32
    %r = arith.addf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<2x4x?xf32>
  %e3 = tensor.empty(%n) : tensor<2x4x?x16xf32>
  %v = linalg.transpose ins(%vt : tensor<2x4x16x?xf32>) outs(%e3 : tensor<2x4x?x16xf32>) permutation = [0, 1, 3, 2]
  %z3 = linalg.fill ins(%cst : f32) outs(%e3 : tensor<2x4x?x16xf32>) -> tensor<2x4x?x16xf32>
  %out = linalg.generic {indexing_maps = [#a, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%scores, %v : tensor<2x4x?x?xf32>, tensor<2x4x?x16xf32>) outs(%z3 : tensor<2x4x?x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %p, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x?x16xf32>
  %norm = linalg.generic {indexing_maps = [#id4, #sum, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%out, %den : tensor<2x4x?x16xf32>, tensor<2x4x?xf32>) outs(%e3 : tensor<2x4x?x16xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %r = arith.divf %x, %d : f32
    linalg.yield %r : f32
  } -> tensor<2x4x?x16xf32>
  return %norm : tensor<2x4x?x16xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#sum = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#q = affine_map<(b, h, n, m, d) -> (b, h, n, d)>
#k = affine_map<(b, h, n, m, d) -> (b, h, m, d)>
#s = affine_map<(b, h, n, m, d) -> (b, h, n, m)>
#a = affine_map<(b, h, n, e, m) -> (b, h, n, m)>
#v = affine_map<(b, h, n, e, m) -> (b, h, m, e)>
#o = affine_map<(b, h, n, e, m) -> (b, h, n, e)>

// negative_: softmax attention from StableHLO (exp of the scores, row sums of
// the exponentials, a division) is left byte-identical.
// CHECK-LABEL: func.func @negative_stablehlo_softmax
// CHECK-NOT: linattn
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<1x2x8x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<1x2x8x8xf32>)
// CHECK: %[[O:.*]] = linalg.generic {{.*}} ins(%[[E]], %{{.*}} : tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[O]], %[[R]] : tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
// CHECK-NOT: linattn
// LINEAR-LABEL: func.func @negative_stablehlo_softmax
// LINEAR-NOT: linattn
func.func @negative_stablehlo_softmax(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e1 = tensor.empty() : tensor<1x2x8x8xf32>
  %z1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %scores = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) outs(%z1 : tensor<1x2x8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %exp = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scores : tensor<1x2x8x8xf32>) outs(%e1 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %e2 = tensor.empty() : tensor<1x2x8xf32>
  %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  %rowsum = linalg.generic {indexing_maps = [#id4, #sum], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<1x2x8x8xf32>) outs(%z2 : tensor<1x2x8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8xf32>
  %e3 = tensor.empty() : tensor<1x2x8x4xf32>
  %z3 = linalg.fill ins(%cst : f32) outs(%e3 : tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  %out = linalg.generic {indexing_maps = [#a, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%exp, %v : tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) outs(%z3 : tensor<1x2x8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x4xf32>
  %norm = linalg.generic {indexing_maps = [#id4, #sum, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%out, %rowsum : tensor<1x2x8x4xf32>, tensor<1x2x8xf32>) outs(%e3 : tensor<1x2x8x4xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %r = arith.divf %x, %d : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x4xf32>
  return %norm : tensor<1x2x8x4xf32>
}
