// Attention on [B, N, H, D] tensors, the layout JAX, Flax and the reference
// code of "Transformers are RNNs" keep (tokens before heads): einsum-style
// contractions whose operands and outputs list the batch dimensions (B, H)
// around the token dimension, as StableHLO's dot_general and einsum
// lowerings emit them. Raising transposes the operands into [B, H, N, D]
// for the linattn ops and the result back; feature maps, causal masks and
// either normalization are raised through the transposes, and the feature
// maps are applied after the transposes, next to the ops that read them
// (where the kernels fuse them).
// RUN: linattn-opt %s -linattn-raise -split-input-file | FileCheck %s
// RUN: linattn-opt %s -linattn-raise -linattn-masked-to-scan -linattn-reassociate -canonicalize -split-input-file | FileCheck %s --check-prefix=FAST

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#q = affine_map<(b, h, n, m, d) -> (b, n, h, d)>
#k = affine_map<(b, h, n, m, d) -> (b, m, h, d)>
#s = affine_map<(b, h, n, m, d) -> (b, h, n, m)>
#a = affine_map<(b, n, h, e, m) -> (b, h, n, m)>
#v = affine_map<(b, n, h, e, m) -> (b, m, h, e)>
#o = affine_map<(b, n, h, e, m) -> (b, n, h, e)>

// Causal relu attention, Flax-style: scores = einsum("bnhd,bmhd->bhnm"),
// masked with select(j <= i), out = einsum("bhnm,bmhe->bnhe").
// CHECK-LABEL: func.func @causal_token_major
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x4x8xf32>, %[[K:.*]]: tensor<2x?x4x8xf32>, %[[V:.*]]: tensor<2x?x4x6xf32>)
// CHECK: %[[TQ:.*]] = linalg.transpose ins(%[[Q]] : tensor<2x?x4x8xf32>) outs(%{{.*}} : tensor<2x4x?x8xf32>) permutation = [0, 2, 1, 3]
// CHECK: %[[FQ:.*]] = linattn.feature_map relu %[[TQ]] : tensor<2x4x?x8xf32> -> tensor<2x4x?x8xf32>
// CHECK: %[[TK:.*]] = linalg.transpose ins(%[[K]] : tensor<2x?x4x8xf32>) outs(%{{.*}} : tensor<2x4x?x8xf32>) permutation = [0, 2, 1, 3]
// CHECK: %[[FK:.*]] = linattn.feature_map relu %[[TK]] : tensor<2x4x?x8xf32> -> tensor<2x4x?x8xf32>
// CHECK: %[[A:.*]] = linattn.scores %[[FQ]], %[[FK]] causal : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32> -> tensor<2x4x?x?xf32>
// CHECK: %[[TV:.*]] = linalg.transpose ins(%[[V]] : tensor<2x?x4x6xf32>) outs(%{{.*}} : tensor<2x4x?x6xf32>) permutation = [0, 2, 1, 3]
// CHECK: %[[O:.*]] = linattn.apply_scores %[[A]], %[[TV]] : tensor<2x4x?x?xf32>, tensor<2x4x?x6xf32> -> tensor<2x4x?x6xf32>
// CHECK: %[[R:.*]] = linalg.transpose ins(%[[O]] : tensor<2x4x?x6xf32>) outs(%{{.*}} : tensor<2x?x4x6xf32>) permutation = [0, 2, 1, 3]
// CHECK-NEXT: return %[[R]]
// FAST-LABEL: func.func @causal_token_major
// FAST: %[[O:.*]], %{{.*}}, %{{.*}} = linattn.scan forward %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x4x?x8xf32>, tensor<2x4x?x8xf32>, tensor<2x4x?x6xf32>
// FAST: %[[R:.*]] = linalg.transpose ins(%[[O]] : tensor<2x4x?x6xf32>) outs(%{{.*}} : tensor<2x?x4x6xf32>) permutation = [0, 2, 1, 3]
// FAST-NEXT: return %[[R]]
func.func @causal_token_major(%q: tensor<2x?x4x8xf32>, %k: tensor<2x?x4x8xf32>, %v: tensor<2x?x4x6xf32>) -> tensor<2x?x4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %c1 = arith.constant 1 : index
  %n = tensor.dim %q, %c1 : tensor<2x?x4x8xf32>
  %e0 = tensor.empty(%n) : tensor<2x?x4x8xf32>
  %fq = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q : tensor<2x?x4x8xf32>) outs(%e0 : tensor<2x?x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x?x4x8xf32>
  %fk = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<2x?x4x8xf32>) outs(%e0 : tensor<2x?x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x?x4x8xf32>
  %e1 = tensor.empty(%n, %n) : tensor<2x4x?x?xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4x?x?xf32>) -> tensor<2x4x?x?xf32>
  %scores = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq, %fk : tensor<2x?x4x8xf32>, tensor<2x?x4x8xf32>) outs(%z1 : tensor<2x4x?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x?x?xf32>
  %masked = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scores : tensor<2x4x?x?xf32>) outs(%e1 : tensor<2x4x?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %c = arith.cmpi ule, %j, %i : index
    %r = arith.select %c, %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x4x?x?xf32>
  %e3 = tensor.empty(%n) : tensor<2x?x4x6xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x?x4x6xf32>) -> tensor<2x?x4x6xf32>
  %out = linalg.generic {indexing_maps = [#a, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%masked, %v : tensor<2x4x?x?xf32>, tensor<2x?x4x6xf32>) outs(%z3 : tensor<2x?x4x6xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x?x4x6xf32>
  return %out : tensor<2x?x4x6xf32>
}

// -----

#q = affine_map<(b, h, n, m, d) -> (b, n, h, d)>
#k = affine_map<(b, h, n, m, d) -> (b, m, h, d)>
#s = affine_map<(b, h, n, m, d) -> (b, h, n, m)>
#a = affine_map<(b, n, h, e, m) -> (b, h, n, m)>
#v = affine_map<(b, n, h, e, m) -> (b, m, h, e)>
#o = affine_map<(b, n, h, e, m) -> (b, n, h, e)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#rows = affine_map<(b, h, n, m) -> (b, h, n)>
#div = affine_map<(b, n, h, e) -> (b, h, n)>

// Normalized: the rows of the output [B, N, H, Dv] divided by the row sums
// of the scores plus eps, read in the scores' layout [B, H, N].
// CHECK-LABEL: func.func @normalized_token_major
// CHECK: %[[A:.*]] = linattn.scores %{{.*}}, %{{.*}} : tensor<1x3x?x5xf32>, tensor<1x3x?x5xf32> -> tensor<1x3x?x?xf32>
// CHECK: %[[O:.*]] = linattn.apply_scores %[[A]], %{{.*}} normalize(eps = 0.0010000000474974513) : tensor<1x3x?x?xf32>, tensor<1x3x?x7xf32> -> tensor<1x3x?x7xf32>
// CHECK: %[[R:.*]] = linalg.transpose ins(%[[O]] : tensor<1x3x?x7xf32>) outs(%{{.*}} : tensor<1x?x3x7xf32>) permutation = [0, 2, 1, 3]
// CHECK-NEXT: return %[[R]]
// FAST-LABEL: func.func @normalized_token_major
// FAST: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary
// FAST: %[[O:.*]] = linattn.query_readout %{{.*}}, %[[S]] normalize(%[[Z]], eps = 0.0010000000474974513)
// FAST: %[[R:.*]] = linalg.transpose ins(%[[O]] : tensor<1x3x?x7xf32>) outs(%{{.*}} : tensor<1x?x3x7xf32>) permutation = [0, 2, 1, 3]
// FAST-NEXT: return %[[R]]
func.func @normalized_token_major(%q: tensor<1x?x3x5xf32>, %k: tensor<1x?x3x5xf32>, %v: tensor<1x?x3x7xf32>) -> tensor<1x?x3x7xf32> {
  %zero = arith.constant 0.0 : f32
  %c1 = arith.constant 1 : index
  %n = tensor.dim %q, %c1 : tensor<1x?x3x5xf32>
  %m = tensor.dim %k, %c1 : tensor<1x?x3x5xf32>
  %e1 = tensor.empty(%n, %m) : tensor<1x3x?x?xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %scores = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x?x3x5xf32>, tensor<1x?x3x5xf32>) outs(%z1 : tensor<1x3x?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x3x?x?xf32>
  %e2 = tensor.empty(%n) : tensor<1x3x?xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x3x?xf32>) -> tensor<1x3x?xf32>
  %rowsum = linalg.generic {indexing_maps = [#id4, #rows], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%scores : tensor<1x3x?x?xf32>) outs(%z2 : tensor<1x3x?xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x3x?xf32>
  %e3 = tensor.empty(%n) : tensor<1x?x3x7xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x?x3x7xf32>) -> tensor<1x?x3x7xf32>
  %num = linalg.generic {indexing_maps = [#a, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%scores, %v : tensor<1x3x?x?xf32>, tensor<1x?x3x7xf32>) outs(%z3 : tensor<1x?x3x7xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x?x3x7xf32>
  %out = linalg.generic {indexing_maps = [#id4, #div, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%num, %rowsum : tensor<1x?x3x7xf32>, tensor<1x3x?xf32>) outs(%e3 : tensor<1x?x3x7xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %eps = arith.constant 1.0e-3 : f32
    %de = arith.addf %d, %eps : f32
    %r = arith.divf %x, %de : f32
    linalg.yield %r : f32
  } -> tensor<1x?x3x7xf32>
  return %out : tensor<1x?x3x7xf32>
}

// -----

#q = affine_map<(b, h, n, m, d) -> (b, n, h, d)>
#k = affine_map<(b, h, n, m, d) -> (b, m, h, d)>
#s = affine_map<(b, h, n, m, d) -> (b, h, n, m)>
#a = affine_map<(b, n, h, e, m) -> (b, h, n, m)>
#v = affine_map<(b, n, h, e, m) -> (b, m, h, e)>
#o = affine_map<(b, n, h, e, m) -> (b, n, h, e)>
#id3 = affine_map<(b, n, h) -> (b, n, h)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#rows = affine_map<(b, h, n, m) -> (b, h, n)>
#div = affine_map<(b, n, h, e) -> (b, n, h)>

// The row sums transposed into the output's layout [B, N, H] first (as
// jnp.transpose emits it), then read there.
// CHECK-LABEL: func.func @normalized_transposed_row_sums
// CHECK: linattn.apply_scores %{{.*}}, %{{.*}} normalize(eps = 0.0010000000474974513)
// CHECK: %[[R:.*]] = linalg.transpose
// CHECK-NEXT: return %[[R]]
func.func @normalized_transposed_row_sums(%q: tensor<1x9x3x5xf32>, %k: tensor<1x9x3x5xf32>, %v: tensor<1x9x3x7xf32>) -> tensor<1x9x3x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x3x9x9xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x3x9x9xf32>) -> tensor<1x3x9x9xf32>
  %scores = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x9x3x5xf32>, tensor<1x9x3x5xf32>) outs(%z1 : tensor<1x3x9x9xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x3x9x9xf32>
  %e2 = tensor.empty() : tensor<1x3x9xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x3x9xf32>) -> tensor<1x3x9xf32>
  %rowsum = linalg.generic {indexing_maps = [#id4, #rows], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%scores : tensor<1x3x9x9xf32>) outs(%z2 : tensor<1x3x9xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x3x9xf32>
  %et = tensor.empty() : tensor<1x9x3xf32>
  %rowsumt = linalg.transpose ins(%rowsum : tensor<1x3x9xf32>) outs(%et : tensor<1x9x3xf32>) permutation = [0, 2, 1]
  %den = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%rowsumt : tensor<1x9x3xf32>) outs(%et : tensor<1x9x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %eps = arith.constant 1.0e-3 : f32
    %r = arith.addf %in, %eps : f32
    linalg.yield %r : f32
  } -> tensor<1x9x3xf32>
  %e3 = tensor.empty() : tensor<1x9x3x7xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x9x3x7xf32>) -> tensor<1x9x3x7xf32>
  %num = linalg.generic {indexing_maps = [#a, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%scores, %v : tensor<1x3x9x9xf32>, tensor<1x9x3x7xf32>) outs(%z3 : tensor<1x9x3x7xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x9x3x7xf32>
  %out = linalg.generic {indexing_maps = [#id4, #div, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%num, %den : tensor<1x9x3x7xf32>, tensor<1x9x3xf32>) outs(%e3 : tensor<1x9x3x7xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %r = arith.divf %x, %d : f32
    linalg.yield %r : f32
  } -> tensor<1x9x3x7xf32>
  return %out : tensor<1x9x3x7xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#kv_k = affine_map<(n, h, m, d, s) -> (n, s, h, d)>
#kv_v = affine_map<(n, h, m, d, s) -> (n, s, h, m)>
#kv_o = affine_map<(n, h, m, d, s) -> (n, h, m, d)>
#ksum_o = affine_map<(n, s, h, d) -> (n, h, d)>
#den_q = affine_map<(n, l, h, d) -> (n, l, h, d)>
#den_k = affine_map<(n, l, h, d) -> (n, h, d)>
#den_o = affine_map<(n, l, h, d) -> (n, l, h)>
#id3 = affine_map<(n, l, h) -> (n, l, h)>
#out_q = affine_map<(n, l, h, m, d) -> (n, l, h, d)>
#out_kv = affine_map<(n, l, h, m, d) -> (n, h, m, d)>
#out_o = affine_map<(n, l, h, m, d) -> (n, l, h, m)>
#z = affine_map<(n, l, h, m) -> (n, l, h)>

// The LinearAttention of "Transformers are RNNs" as its reference code
// writes it, on [N, L, H, D]: KV = einsum("nshd,nshm->nhmd", K, V),
// Z = 1 / (einsum("nlhd,nhd->nlh", Q, K.sum(dim=1)) + eps),
// V = einsum("nlhd,nhmd->nlhm", Q, KV) * Z, with elu + 1 feature maps.
// CHECK-LABEL: func.func @reference_linear_attention
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x4x16xf64>, %[[K:.*]]: tensor<2x?x4x16xf64>, %[[V:.*]]: tensor<2x?x4x8xf64>)
// CHECK-DAG: %[[TK:.*]] = linalg.transpose ins(%[[K]] : tensor<2x?x4x16xf64>) outs(%{{.*}} : tensor<2x4x?x16xf64>) permutation = [0, 2, 1, 3]
// CHECK-DAG: %[[FK:.*]] = linattn.feature_map elu %[[TK]]
// CHECK-DAG: %[[TV:.*]] = linalg.transpose ins(%[[V]] : tensor<2x?x4x8xf64>) outs(%{{.*}} : tensor<2x4x?x8xf64>) permutation = [0, 2, 1, 3]
// CHECK: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary %[[FK]], %[[TV]] : tensor<2x4x?x16xf64>, tensor<2x4x?x8xf64> -> tensor<2x4x16x8xf64>, tensor<2x4x16xf64>
// CHECK: %[[TQ:.*]] = linalg.transpose ins(%[[Q]] : tensor<2x?x4x16xf64>) outs(%{{.*}} : tensor<2x4x?x16xf64>) permutation = [0, 2, 1, 3]
// CHECK: %[[FQ:.*]] = linattn.feature_map elu %[[TQ]]
// CHECK: %[[O:.*]] = linattn.query_readout %[[FQ]], %[[S]] normalize(%[[Z]], eps = 9.9999999999999995E-7) : tensor<2x4x?x16xf64>, tensor<2x4x16x8xf64>, tensor<2x4x16xf64> -> tensor<2x4x?x8xf64>
// CHECK: %[[R:.*]] = linalg.transpose ins(%[[O]] : tensor<2x4x?x8xf64>) outs(%{{.*}} : tensor<2x?x4x8xf64>) permutation = [0, 2, 1, 3]
// CHECK-NEXT: return %[[R]]
func.func @reference_linear_attention(%q: tensor<2x?x4x16xf64>, %k: tensor<2x?x4x16xf64>, %v: tensor<2x?x4x8xf64>) -> tensor<2x?x4x8xf64> {
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %eps = arith.constant 1.0e-6 : f64
  %c1 = arith.constant 1 : index
  %l = tensor.dim %q, %c1 : tensor<2x?x4x16xf64>
  %s = tensor.dim %k, %c1 : tensor<2x?x4x16xf64>
  %eq = tensor.empty(%l) : tensor<2x?x4x16xf64>
  %fq = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q : tensor<2x?x4x16xf64>) outs(%eq : tensor<2x?x4x16xf64>) {
  ^bb0(%x: f64, %o: f64):
    %c = arith.cmpf ogt, %x, %zero : f64
    %e = math.expm1 %x : f64
    %sel = arith.select %c, %x, %e : f64
    %p = arith.addf %sel, %one : f64
    linalg.yield %p : f64
  } -> tensor<2x?x4x16xf64>
  %ek = tensor.empty(%s) : tensor<2x?x4x16xf64>
  %fk = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<2x?x4x16xf64>) outs(%ek : tensor<2x?x4x16xf64>) {
  ^bb0(%x: f64, %o: f64):
    %c = arith.cmpf ogt, %x, %zero : f64
    %e = math.expm1 %x : f64
    %sel = arith.select %c, %x, %e : f64
    %p = arith.addf %sel, %one : f64
    linalg.yield %p : f64
  } -> tensor<2x?x4x16xf64>
  %ekv = tensor.empty() : tensor<2x4x8x16xf64>
  %zkv = linalg.fill ins(%zero : f64) outs(%ekv : tensor<2x4x8x16xf64>) -> tensor<2x4x8x16xf64>
  %kv = linalg.generic {indexing_maps = [#kv_k, #kv_v, #kv_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fk, %v : tensor<2x?x4x16xf64>, tensor<2x?x4x8xf64>) outs(%zkv : tensor<2x4x8x16xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %r = arith.addf %acc, %p : f64
    linalg.yield %r : f64
  } -> tensor<2x4x8x16xf64>
  %eks = tensor.empty() : tensor<2x4x16xf64>
  %zks = linalg.fill ins(%zero : f64) outs(%eks : tensor<2x4x16xf64>) -> tensor<2x4x16xf64>
  %ksum = linalg.generic {indexing_maps = [#id4, #ksum_o], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%fk : tensor<2x?x4x16xf64>) outs(%zks : tensor<2x4x16xf64>) {
  ^bb0(%x: f64, %acc: f64):
    %r = arith.addf %acc, %x : f64
    linalg.yield %r : f64
  } -> tensor<2x4x16xf64>
  %ed = tensor.empty(%l) : tensor<2x?x4xf64>
  %zd = linalg.fill ins(%zero : f64) outs(%ed : tensor<2x?x4xf64>) -> tensor<2x?x4xf64>
  %den = linalg.generic {indexing_maps = [#den_q, #den_k, #den_o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%fq, %ksum : tensor<2x?x4x16xf64>, tensor<2x4x16xf64>) outs(%zd : tensor<2x?x4xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %r = arith.addf %acc, %p : f64
    linalg.yield %r : f64
  } -> tensor<2x?x4xf64>
  %zinv = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%den : tensor<2x?x4xf64>) outs(%ed : tensor<2x?x4xf64>) {
  ^bb0(%x: f64, %o: f64):
    %de = arith.addf %x, %eps : f64
    %r = arith.divf %one, %de : f64
    linalg.yield %r : f64
  } -> tensor<2x?x4xf64>
  %eo = tensor.empty(%l) : tensor<2x?x4x8xf64>
  %zo = linalg.fill ins(%zero : f64) outs(%eo : tensor<2x?x4x8xf64>) -> tensor<2x?x4x8xf64>
  %num = linalg.generic {indexing_maps = [#out_q, #out_kv, #out_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq, %kv : tensor<2x?x4x16xf64>, tensor<2x4x8x16xf64>) outs(%zo : tensor<2x?x4x8xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %r = arith.addf %acc, %p : f64
    linalg.yield %r : f64
  } -> tensor<2x?x4x8xf64>
  %out = linalg.generic {indexing_maps = [#id4, #z, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%num, %zinv : tensor<2x?x4x8xf64>, tensor<2x?x4xf64>) outs(%eo : tensor<2x?x4x8xf64>) {
  ^bb0(%x: f64, %r: f64, %o: f64):
    %p = arith.mulf %x, %r : f64
    linalg.yield %p : f64
  } -> tensor<2x?x4x8xf64>
  return %out : tensor<2x?x4x8xf64>
}

// -----

#q = affine_map<(b, h, n, m, d) -> (b, n, h, d)>
#k = affine_map<(b, h, n, m, d) -> (b, m, h, d)>
#s = affine_map<(b, h, n, m, d) -> (b, h, n, m)>
#a = affine_map<(b, n, h, e, m) -> (b, h, n, m)>
#v = affine_map<(b, n, h, e, m) -> (b, m, h, e)>
#o = affine_map<(b, n, h, e, m) -> (b, n, h, e)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#rows = affine_map<(b, h, n, m) -> (b, h, n)>
#div = affine_map<(b, n, h, e) -> (b, n, h)>

// The row sums [B, H, N] read as if they were [B, N, H] (N = H, so the IR
// is well typed): each row is divided by another row's sum. The products
// are raised; the division is not a normalization and stays.
// CHECK-LABEL: func.func @row_sums_in_the_wrong_layout
// CHECK: %[[O:.*]] = linattn.apply_scores %{{.*}}, %{{.*}} : tensor<1x4x4x4xf32>, tensor<1x4x4x7xf32> -> tensor<1x4x4x7xf32>
// CHECK: %[[R:.*]] = linalg.transpose ins(%[[O]]
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%[[R]], %{{.*}} : tensor<1x4x4x7xf32>, tensor<1x4x4xf32>)
// CHECK: arith.divf
// CHECK: return %[[D]]
// FAST-LABEL: func.func @row_sums_in_the_wrong_layout
// FAST-NOT: normalize(
// FAST: return
func.func @row_sums_in_the_wrong_layout(%q: tensor<1x4x4x5xf32>, %k: tensor<1x4x4x5xf32>, %v: tensor<1x4x4x7xf32>) -> tensor<1x4x4x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x4x4x4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %scores = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>) outs(%z1 : tensor<1x4x4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x4xf32>
  %e2 = tensor.empty() : tensor<1x4x4xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %rowsum = linalg.generic {indexing_maps = [#id4, #rows], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%scores : tensor<1x4x4x4xf32>) outs(%z2 : tensor<1x4x4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4xf32>
  %e3 = tensor.empty() : tensor<1x4x4x7xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x4x4x7xf32>) -> tensor<1x4x4x7xf32>
  %num = linalg.generic {indexing_maps = [#a, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%scores, %v : tensor<1x4x4x4xf32>, tensor<1x4x4x7xf32>) outs(%z3 : tensor<1x4x4x7xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x7xf32>
  %out = linalg.generic {indexing_maps = [#id4, #div, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%num, %rowsum : tensor<1x4x4x7xf32>, tensor<1x4x4xf32>) outs(%e3 : tensor<1x4x4x7xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %eps = arith.constant 1.0e-3 : f32
    %de = arith.addf %d, %eps : f32
    %r = arith.divf %x, %de : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x7xf32>
  return %out : tensor<1x4x4x7xf32>
}

// -----

#kv_k = affine_map<(n, h, m, d, s) -> (n, s, h, d)>
#kv_v = affine_map<(n, h, m, d, s) -> (n, s, h, m)>
#kv_o = affine_map<(n, h, m, d, s) -> (n, h, m, d)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ksum_o = affine_map<(n, s, h, d) -> (n, s, d)>
#den_q = affine_map<(n, l, h, d) -> (n, l, h, d)>
#den_k = affine_map<(n, l, h, d) -> (n, h, d)>
#den_o = affine_map<(n, l, h, d) -> (n, l, h)>
#out_q = affine_map<(n, l, h, m, d) -> (n, l, h, d)>
#out_kv = affine_map<(n, l, h, m, d) -> (n, h, m, d)>
#out_o = affine_map<(n, l, h, m, d) -> (n, l, h, m)>
#z = affine_map<(n, l, h, m) -> (n, l, h)>

// The keys summed over the heads (K.sum(dim=2)) instead of the tokens, with
// as many heads as tokens: the readout is raised, the division stays.
// CHECK-LABEL: func.func @keys_summed_over_the_heads
// CHECK: linattn.query_readout %{{.*}}, %{{.*}} : tensor<1x3x3x4xf64>, tensor<1x3x4x2xf64> -> tensor<1x3x3x2xf64>
// CHECK: %[[R:.*]] = linalg.transpose
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%[[R]], %{{.*}} : tensor<1x3x3x2xf64>, tensor<1x3x3xf64>)
// CHECK: return %[[D]]
// FAST-LABEL: func.func @keys_summed_over_the_heads
// FAST-NOT: normalize(
// FAST: return
func.func @keys_summed_over_the_heads(%q: tensor<1x3x3x4xf64>, %k: tensor<1x3x3x4xf64>, %v: tensor<1x3x3x2xf64>) -> tensor<1x3x3x2xf64> {
  %zero = arith.constant 0.0 : f64
  %ekv = tensor.empty() : tensor<1x3x2x4xf64>
  %zkv = linalg.fill ins(%zero : f64) outs(%ekv : tensor<1x3x2x4xf64>) -> tensor<1x3x2x4xf64>
  %kv = linalg.generic {indexing_maps = [#kv_k, #kv_v, #kv_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%k, %v : tensor<1x3x3x4xf64>, tensor<1x3x3x2xf64>) outs(%zkv : tensor<1x3x2x4xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %r = arith.addf %acc, %p : f64
    linalg.yield %r : f64
  } -> tensor<1x3x2x4xf64>
  %eks = tensor.empty() : tensor<1x3x4xf64>
  %zks = linalg.fill ins(%zero : f64) outs(%eks : tensor<1x3x4xf64>) -> tensor<1x3x4xf64>
  %ksum = linalg.generic {indexing_maps = [#id4, #ksum_o], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%k : tensor<1x3x3x4xf64>) outs(%zks : tensor<1x3x4xf64>) {
  ^bb0(%x: f64, %acc: f64):
    %r = arith.addf %acc, %x : f64
    linalg.yield %r : f64
  } -> tensor<1x3x4xf64>
  %ed = tensor.empty() : tensor<1x3x3xf64>
  %zd = linalg.fill ins(%zero : f64) outs(%ed : tensor<1x3x3xf64>) -> tensor<1x3x3xf64>
  %den = linalg.generic {indexing_maps = [#den_q, #den_k, #den_o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %ksum : tensor<1x3x3x4xf64>, tensor<1x3x4xf64>) outs(%zd : tensor<1x3x3xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %r = arith.addf %acc, %p : f64
    linalg.yield %r : f64
  } -> tensor<1x3x3xf64>
  %eo = tensor.empty() : tensor<1x3x3x2xf64>
  %zo = linalg.fill ins(%zero : f64) outs(%eo : tensor<1x3x3x2xf64>) -> tensor<1x3x3x2xf64>
  %num = linalg.generic {indexing_maps = [#out_q, #out_kv, #out_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %kv : tensor<1x3x3x4xf64>, tensor<1x3x2x4xf64>) outs(%zo : tensor<1x3x3x2xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %r = arith.addf %acc, %p : f64
    linalg.yield %r : f64
  } -> tensor<1x3x3x2xf64>
  %out = linalg.generic {indexing_maps = [#id4, #z, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%num, %den : tensor<1x3x3x2xf64>, tensor<1x3x3xf64>) outs(%eo : tensor<1x3x3x2xf64>) {
  ^bb0(%x: f64, %d: f64, %o: f64):
    %eps = arith.constant 1.0e-6 : f64
    %de = arith.addf %d, %eps : f64
    %r = arith.divf %x, %de : f64
    linalg.yield %r : f64
  } -> tensor<1x3x3x2xf64>
  return %out : tensor<1x3x3x2xf64>
}

// -----

// A feature map transposed in its leading dimensions is applied after the
// transpose, also in IR written with linattn ops (favor's projection acts
// on the last dimension, which stays). The dim of the map's result reads
// the input's.
// CHECK-LABEL: func.func @sink_feature_map
// CHECK-SAME: (%[[X:.*]]: tensor<2x?x3x8xf32>, %[[P:.*]]: tensor<8x16xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x?x3x8xf32>) outs(%{{.*}} : tensor<2x3x?x8xf32>) permutation = [0, 2, 1, 3]
// CHECK: %[[F:.*]] = linattn.feature_map favor %[[T]] projection(%[[P]]) : tensor<2x3x?x8xf32>, tensor<8x16xf32> -> tensor<2x3x?x16xf32>
// CHECK: %[[S:.*]], %{{.*}} = linattn.kv_summary %[[F]], %{{.*}}
func.func @sink_feature_map(%x: tensor<2x?x3x8xf32>, %p: tensor<8x16xf32>, %v: tensor<2x3x?x4xf32>) -> tensor<2x3x16x4xf32> {
  %c1 = arith.constant 1 : index
  %f = linattn.feature_map favor %x projection(%p) : tensor<2x?x3x8xf32>, tensor<8x16xf32> -> tensor<2x?x3x16xf32>
  %n = tensor.dim %f, %c1 : tensor<2x?x3x16xf32>
  %e = tensor.empty(%n) : tensor<2x3x?x16xf32>
  %t = linalg.transpose ins(%f : tensor<2x?x3x16xf32>) outs(%e : tensor<2x3x?x16xf32>) permutation = [0, 2, 1, 3]
  %s, %z = linattn.kv_summary %t, %v : tensor<2x3x?x16xf32>, tensor<2x3x?x4xf32> -> tensor<2x3x16x4xf32>, tensor<2x3x16xf32>
  return %s : tensor<2x3x16x4xf32>
}

// -----

// The map stays where it is when it has another user, or when the
// transpose moves its last dimension.
// CHECK-LABEL: func.func @feature_map_stays
// CHECK: %[[F:.*]] = linattn.feature_map elu %{{.*}} : tensor<2x5x3x8xf32>
// CHECK: linalg.transpose ins(%[[F]] : tensor<2x5x3x8xf32>) outs(%{{.*}} : tensor<2x3x5x8xf32>)
// CHECK: %[[G:.*]] = linattn.feature_map elu %{{.*}} : tensor<2x5x3x8xf32>
// CHECK: linalg.transpose ins(%[[G]] : tensor<2x5x3x8xf32>) outs(%{{.*}} : tensor<2x5x8x3xf32>)
func.func @feature_map_stays(%x: tensor<2x5x3x8xf32>, %y: tensor<2x5x3x8xf32>) -> (tensor<2x3x5x8xf32>, tensor<2x5x3x8xf32>, tensor<2x5x8x3xf32>) {
  %f = linattn.feature_map elu %x : tensor<2x5x3x8xf32> -> tensor<2x5x3x8xf32>
  %e = tensor.empty() : tensor<2x3x5x8xf32>
  %t = linalg.transpose ins(%f : tensor<2x5x3x8xf32>) outs(%e : tensor<2x3x5x8xf32>) permutation = [0, 2, 1, 3]
  %g = linattn.feature_map elu %y : tensor<2x5x3x8xf32> -> tensor<2x5x3x8xf32>
  %e2 = tensor.empty() : tensor<2x5x8x3xf32>
  %u = linalg.transpose ins(%g : tensor<2x5x3x8xf32>) outs(%e2 : tensor<2x5x8x3xf32>) permutation = [0, 1, 3, 2]
  return %t, %f, %u : tensor<2x3x5x8xf32>, tensor<2x5x3x8xf32>, tensor<2x5x8x3xf32>
}
