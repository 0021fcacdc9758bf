// RUN: linattn-opt %s -linattn-raise -split-input-file | FileCheck %s

// The linear form as written, φ(Q)(φ(K)ᵀV): the summary contraction becomes
// linattn.kv_summary, the readout linattn.query_readout, and a division by
// φ(Q)·Σₘ φ(kₘ) + eps the readout's normalization by the summary's z.

#id = affine_map<(d0, d1) -> (d0, d1)>
#mv_in = affine_map<(d0, d1) -> (d0, d1)>
#mv_vec = affine_map<(d0, d1) -> (d1)>
#mv_out = affine_map<(d0, d1) -> (d0)>
#row = affine_map<(d0, d1) -> (d0)>

// Two dimensions: elu + 1 maps, φ(K) transposed by linalg.transpose, the
// token sum by linalg.reduce, the products with it by a generic, eps added
// in the division's body.
// CHECK-LABEL: func.func @linear_form_2d
// CHECK-SAME: (%[[Q:.*]]: tensor<128x64xf32>, %[[K:.*]]: tensor<100x64xf32>, %[[V:.*]]: tensor<100x32xf32>)
// CHECK-DAG: %[[FQ:.*]] = linattn.feature_map elu %[[Q]] : tensor<128x64xf32> -> tensor<128x64xf32>
// CHECK-DAG: %[[FK:.*]] = linattn.feature_map elu %[[K]] : tensor<100x64xf32> -> tensor<100x64xf32>
// CHECK: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary %[[FK]], %[[V]] : tensor<100x64xf32>, tensor<100x32xf32> -> tensor<64x32xf32>, tensor<64xf32>
// CHECK: %[[O:.*]] = linattn.query_readout %[[FQ]], %[[S]] normalize(%[[Z]], eps = 9.9999999747524271E-7) : tensor<128x64xf32>, tensor<64x32xf32>, tensor<64xf32> -> tensor<128x32xf32>
// CHECK: return %[[O]]
func.func @linear_form_2d(%q: tensor<128x64xf32>, %k: tensor<100x64xf32>, %v: tensor<100x32xf32>) -> tensor<128x32xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 1.0e-6 : f32
  %eq = tensor.empty() : tensor<128x64xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<128x64xf32>) outs(%eq : tensor<128x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.cmpf ogt, %x, %zero : f32
    %e = math.expm1 %x : f32
    %s = arith.select %c, %x, %e : f32
    %p = arith.addf %s, %one : f32
    linalg.yield %p : f32
  } -> tensor<128x64xf32>
  %ek = tensor.empty() : tensor<100x64xf32>
  %fk = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%k : tensor<100x64xf32>) outs(%ek : tensor<100x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.cmpf ogt, %x, %zero : f32
    %e = math.expm1 %x : f32
    %s = arith.select %c, %x, %e : f32
    %p = arith.addf %s, %one : f32
    linalg.yield %p : f32
  } -> tensor<100x64xf32>
  %et = tensor.empty() : tensor<64x100xf32>
  %kt = linalg.transpose ins(%fk : tensor<100x64xf32>) outs(%et : tensor<64x100xf32>) permutation = [1, 0]
  %es = tensor.empty() : tensor<64x32xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<64x32xf32>) -> tensor<64x32xf32>
  %kv = linalg.matmul ins(%kt, %v : tensor<64x100xf32>, tensor<100x32xf32>) outs(%zs : tensor<64x32xf32>) -> tensor<64x32xf32>
  %eo = tensor.empty() : tensor<128x32xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<128x32xf32>) -> tensor<128x32xf32>
  %num = linalg.matmul ins(%fq, %kv : tensor<128x64xf32>, tensor<64x32xf32>) outs(%zo : tensor<128x32xf32>) -> tensor<128x32xf32>
  %ez = tensor.empty() : tensor<64xf32>
  %zz = linalg.fill ins(%zero : f32) outs(%ez : tensor<64xf32>) -> tensor<64xf32>
  %ksum = linalg.reduce ins(%fk : tensor<100x64xf32>) outs(%zz : tensor<64xf32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %a = arith.addf %x, %acc : f32
      linalg.yield %a : f32
    }
  %ed = tensor.empty() : tensor<128xf32>
  %zd = linalg.fill ins(%zero : f32) outs(%ed : tensor<128xf32>) -> tensor<128xf32>
  %den = linalg.generic {indexing_maps = [#mv_in, #mv_vec, #mv_out], iterator_types = ["parallel", "reduction"]}
      ins(%fq, %ksum : tensor<128x64xf32>, tensor<64xf32>) outs(%zd : tensor<128xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<128xf32>
  %out = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%num, %den : tensor<128x32xf32>, tensor<128xf32>) outs(%eo : tensor<128x32xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %de = arith.addf %d, %eps : f32
    %r = arith.divf %x, %de : f32
    linalg.yield %r : f32
  } -> tensor<128x32xf32>
  return %out : tensor<128x32xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#sum_in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#sum_out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>

// As torch-mlir emits `(q @ (k.transpose(-2, -1) @ v)) / (q @ k.sum(-2).unsqueeze(-1) + eps)`
// on [B, H, N, D]: relu maps, each batched product on [B*H, ...] between a
// collapse and an expand (a collapse of its own for each use of φ(Q)), the
// token sum on the four-dimensional keys, kept as a column, eps added by a
// generic of its own, the division broadcast along the kept dimension.
// CHECK-LABEL: func.func @torch_linear_attention
// CHECK-SAME: (%[[Q:.*]]: tensor<2x3x128x64xf32>, %[[K:.*]]: tensor<2x3x128x64xf32>, %[[V:.*]]: tensor<2x3x128x32xf32>)
// CHECK-DAG: %[[FQ:.*]] = linattn.feature_map relu %[[Q]]
// CHECK-DAG: %[[FK:.*]] = linattn.feature_map relu %[[K]]
// CHECK-DAG: %[[CK:.*]] = tensor.collapse_shape %[[FK]] {{\[\[}}0, 1], [2], [3]] : tensor<2x3x128x64xf32> into tensor<6x128x64xf32>
// CHECK-DAG: %[[CV:.*]] = tensor.collapse_shape %[[V]] {{\[\[}}0, 1], [2], [3]] : tensor<2x3x128x32xf32> into tensor<6x128x32xf32>
// CHECK: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary %[[CK]], %[[CV]] : tensor<6x128x64xf32>, tensor<6x128x32xf32> -> tensor<6x64x32xf32>, tensor<6x64xf32>
// CHECK: %[[CQ:.*]] = tensor.collapse_shape %[[FQ]]
// CHECK: %[[O:.*]] = linattn.query_readout %[[CQ]], %[[S]] normalize(%[[Z]], eps = 9.9999999747524271E-7) : tensor<6x128x64xf32>, tensor<6x64x32xf32>, tensor<6x64xf32> -> tensor<6x128x32xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[O]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 3, 128, 32] : tensor<6x128x32xf32> into tensor<2x3x128x32xf32>
// CHECK: return %[[E]]
func.func @torch_linear_attention(%q: tensor<2x3x128x64xf32>, %k: tensor<2x3x128x64xf32>, %v: tensor<2x3x128x32xf32>) -> tensor<2x3x128x32xf32> {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-6 : f32
  %e4 = tensor.empty() : tensor<2x3x128x64xf32>
  %fq = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%q : tensor<2x3x128x64xf32>) outs(%e4 : tensor<2x3x128x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x3x128x64xf32>
  %fk = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<2x3x128x64xf32>) outs(%e4 : tensor<2x3x128x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<2x3x128x64xf32>
  // kv = k.transpose(-2, -1) @ v
  %et = tensor.empty() : tensor<2x3x64x128xf32>
  %kt = linalg.transpose ins(%fk : tensor<2x3x128x64xf32>) outs(%et : tensor<2x3x64x128xf32>) permutation = [0, 1, 3, 2]
  %ckt = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x3x64x128xf32> into tensor<6x64x128xf32>
  %cv = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x3x128x32xf32> into tensor<6x128x32xf32>
  %es = tensor.empty() : tensor<6x64x32xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<6x64x32xf32>) -> tensor<6x64x32xf32>
  %kv = linalg.batch_matmul ins(%ckt, %cv : tensor<6x64x128xf32>, tensor<6x128x32xf32>) outs(%zs : tensor<6x64x32xf32>) -> tensor<6x64x32xf32>
  %kv4 = tensor.expand_shape %kv [[0, 1], [2], [3]] output_shape [2, 3, 64, 32] : tensor<6x64x32xf32> into tensor<2x3x64x32xf32>
  // num = q @ kv
  %cq = tensor.collapse_shape %fq [[0, 1], [2], [3]] : tensor<2x3x128x64xf32> into tensor<6x128x64xf32>
  %ckv = tensor.collapse_shape %kv4 [[0, 1], [2], [3]] : tensor<2x3x64x32xf32> into tensor<6x64x32xf32>
  %eo = tensor.empty() : tensor<6x128x32xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<6x128x32xf32>) -> tensor<6x128x32xf32>
  %num = linalg.batch_matmul ins(%cq, %ckv : tensor<6x128x64xf32>, tensor<6x64x32xf32>) outs(%zo : tensor<6x128x32xf32>) -> tensor<6x128x32xf32>
  %num4 = tensor.expand_shape %num [[0, 1], [2], [3]] output_shape [2, 3, 128, 32] : tensor<6x128x32xf32> into tensor<2x3x128x32xf32>
  // den = q @ k.sum(-2).unsqueeze(-1) + eps
  %ez = tensor.empty() : tensor<2x3x64xf32>
  %zz = linalg.fill ins(%zero : f32) outs(%ez : tensor<2x3x64xf32>) -> tensor<2x3x64xf32>
  %ksum = linalg.generic {indexing_maps = [#sum_in, #sum_out], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%fk : tensor<2x3x128x64xf32>) outs(%zz : tensor<2x3x64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %a = arith.addf %x, %acc : f32
    linalg.yield %a : f32
  } -> tensor<2x3x64xf32>
  %kcol = tensor.expand_shape %ksum [[0], [1], [2, 3]] output_shape [2, 3, 64, 1] : tensor<2x3x64xf32> into tensor<2x3x64x1xf32>
  %cq2 = tensor.collapse_shape %fq [[0, 1], [2], [3]] : tensor<2x3x128x64xf32> into tensor<6x128x64xf32>
  %ckcol = tensor.collapse_shape %kcol [[0, 1], [2], [3]] : tensor<2x3x64x1xf32> into tensor<6x64x1xf32>
  %ed = tensor.empty() : tensor<6x128x1xf32>
  %zd = linalg.fill ins(%zero : f32) outs(%ed : tensor<6x128x1xf32>) -> tensor<6x128x1xf32>
  %den = linalg.batch_matmul ins(%cq2, %ckcol : tensor<6x128x64xf32>, tensor<6x64x1xf32>) outs(%zd : tensor<6x128x1xf32>) -> tensor<6x128x1xf32>
  %den4 = tensor.expand_shape %den [[0, 1], [2], [3]] output_shape [2, 3, 128, 1] : tensor<6x128x1xf32> into tensor<2x3x128x1xf32>
  %ee = tensor.empty() : tensor<2x3x128x1xf32>
  %dene = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%den4 : tensor<2x3x128x1xf32>) outs(%ee : tensor<2x3x128x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    %a = arith.addf %x, %eps : f32
    linalg.yield %a : f32
  } -> tensor<2x3x128x1xf32>
  %eout = tensor.empty() : tensor<2x3x128x32xf32>
  %out = linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%num4, %dene : tensor<2x3x128x32xf32>, tensor<2x3x128x1xf32>) outs(%eout : tensor<2x3x128x32xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %r = arith.divf %x, %d : f32
    linalg.yield %r : f32
  } -> tensor<2x3x128x32xf32>
  return %out : tensor<2x3x128x32xf32>
}

// -----

#q4 = affine_map<(b, h, n, f) -> (b, h, n, f)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// einsum("bhmf,bhmd->bhfd"): loops (b, h, f, d, m).
#s_k = affine_map<(b, h, f, d, m) -> (b, h, m, f)>
#s_v = affine_map<(b, h, f, d, m) -> (b, h, m, d)>
#s_o = affine_map<(b, h, f, d, m) -> (b, h, f, d)>
// einsum("bhnf,bhfd->bhnd"): loops (b, h, n, d, f).
#o_q = affine_map<(b, h, n, d, f) -> (b, h, n, f)>
#o_s = affine_map<(b, h, n, d, f) -> (b, h, f, d)>
#o_o = affine_map<(b, h, n, d, f) -> (b, h, n, d)>
// einsum("bhnf,bhf->bhn"): loops (b, h, n, f).
#d_q = affine_map<(b, h, n, f) -> (b, h, n, f)>
#d_z = affine_map<(b, h, n, f) -> (b, h, f)>
#d_o = affine_map<(b, h, n, f) -> (b, h, n)>
#ksum_out = affine_map<(b, h, m, f) -> (b, h, f)>
#row4 = affine_map<(b, h, n, d) -> (b, h, n)>
#id3 = affine_map<(b, h, n) -> (b, h, n)>

// fast-transformers' LinearAttention as einsum generics on [B, H, N, F]
// with dynamic tokens: the summary reads φ(K) as [M, F] through its maps
// (no transpose op), elu + 1 as an elu generic then a + 1 generic, and the
// division a multiplication by 1 / (d + eps) computed elementwise.
// CHECK-LABEL: func.func @einsum_linear_attention
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x?x16xf64>, %[[K:.*]]: tensor<1x4x?x16xf64>, %[[V:.*]]: tensor<1x4x?x8xf64>)
// CHECK-DAG: %[[FQ:.*]] = linattn.feature_map elu %[[Q]]
// CHECK-DAG: %[[FK:.*]] = linattn.feature_map elu %[[K]]
// CHECK: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary %[[FK]], %[[V]] : tensor<1x4x?x16xf64>, tensor<1x4x?x8xf64> -> tensor<1x4x16x8xf64>, tensor<1x4x16xf64>
// CHECK: %[[O:.*]] = linattn.query_readout %[[FQ]], %[[S]] normalize(%[[Z]], eps = 1.000000e-03) : tensor<1x4x?x16xf64>, tensor<1x4x16x8xf64>, tensor<1x4x16xf64> -> tensor<1x4x?x8xf64>
// CHECK: return %[[O]]
func.func @einsum_linear_attention(%q: tensor<1x4x?x16xf64>, %k: tensor<1x4x?x16xf64>, %v: tensor<1x4x?x8xf64>) -> tensor<1x4x?x8xf64> {
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %eps = arith.constant 1.0e-3 : f64
  %c2 = arith.constant 2 : index
  %n = tensor.dim %q, %c2 : tensor<1x4x?x16xf64>
  %m = tensor.dim %k, %c2 : tensor<1x4x?x16xf64>
  %eq = tensor.empty(%n) : tensor<1x4x?x16xf64>
  %eluq = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%q : tensor<1x4x?x16xf64>) outs(%eq : tensor<1x4x?x16xf64>) {
  ^bb0(%x: f64, %o: f64):
    %c = arith.cmpf ogt, %x, %zero : f64
    %e = math.expm1 %x : f64
    %s = arith.select %c, %x, %e : f64
    linalg.yield %s : f64
  } -> tensor<1x4x?x16xf64>
  %fq = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%eluq : tensor<1x4x?x16xf64>) outs(%eq : tensor<1x4x?x16xf64>) {
  ^bb0(%x: f64, %o: f64):
    %p = arith.addf %x, %one : f64
    linalg.yield %p : f64
  } -> tensor<1x4x?x16xf64>
  %ek = tensor.empty(%m) : tensor<1x4x?x16xf64>
  %eluk = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<1x4x?x16xf64>) outs(%ek : tensor<1x4x?x16xf64>) {
  ^bb0(%x: f64, %o: f64):
    %c = arith.cmpf ogt, %x, %zero : f64
    %e = math.expm1 %x : f64
    %s = arith.select %c, %x, %e : f64
    linalg.yield %s : f64
  } -> tensor<1x4x?x16xf64>
  %fk = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%eluk : tensor<1x4x?x16xf64>) outs(%ek : tensor<1x4x?x16xf64>) {
  ^bb0(%x: f64, %o: f64):
    %p = arith.addf %x, %one : f64
    linalg.yield %p : f64
  } -> tensor<1x4x?x16xf64>
  %es = tensor.empty() : tensor<1x4x16x8xf64>
  %zs = linalg.fill ins(%zero : f64) outs(%es : tensor<1x4x16x8xf64>) -> tensor<1x4x16x8xf64>
  %kv = linalg.generic {indexing_maps = [#s_k, #s_v, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%fk, %v : tensor<1x4x?x16xf64>, tensor<1x4x?x8xf64>) outs(%zs : tensor<1x4x16x8xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %acc, %p : f64
    linalg.yield %s : f64
  } -> tensor<1x4x16x8xf64>
  %eo = tensor.empty(%n) : tensor<1x4x?x8xf64>
  %zo = linalg.fill ins(%zero : f64) outs(%eo : tensor<1x4x?x8xf64>) -> tensor<1x4x?x8xf64>
  %num = linalg.generic {indexing_maps = [#o_q, #o_s, #o_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%fq, %kv : tensor<1x4x?x16xf64>, tensor<1x4x16x8xf64>) outs(%zo : tensor<1x4x?x8xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %acc, %p : f64
    linalg.yield %s : f64
  } -> tensor<1x4x?x8xf64>
  %ez = tensor.empty() : tensor<1x4x16xf64>
  %zz = linalg.fill ins(%zero : f64) outs(%ez : tensor<1x4x16xf64>) -> tensor<1x4x16xf64>
  %ksum = linalg.generic {indexing_maps = [#q4, #ksum_out], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%fk : tensor<1x4x?x16xf64>) outs(%zz : tensor<1x4x16xf64>) {
  ^bb0(%x: f64, %acc: f64):
    %a = arith.addf %acc, %x : f64
    linalg.yield %a : f64
  } -> tensor<1x4x16xf64>
  %ed = tensor.empty(%n) : tensor<1x4x?xf64>
  %zd = linalg.fill ins(%zero : f64) outs(%ed : tensor<1x4x?xf64>) -> tensor<1x4x?xf64>
  %den = linalg.generic {indexing_maps = [#d_z, #d_q, #d_o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ksum, %fq : tensor<1x4x16xf64>, tensor<1x4x?x16xf64>) outs(%zd : tensor<1x4x?xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %b, %a : f64
    %s = arith.addf %p, %acc : f64
    linalg.yield %s : f64
  } -> tensor<1x4x?xf64>
  %recip = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%den : tensor<1x4x?xf64>) outs(%ed : tensor<1x4x?xf64>) {
  ^bb0(%x: f64, %o: f64):
    %de = arith.addf %x, %eps : f64
    %r = arith.divf %one, %de : f64
    linalg.yield %r : f64
  } -> tensor<1x4x?xf64>
  %out = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%num, %recip : tensor<1x4x?x8xf64>, tensor<1x4x?xf64>) outs(%eo : tensor<1x4x?x8xf64>) {
  ^bb0(%x: f64, %r: f64, %o: f64):
    %p = arith.mulf %r, %x : f64
    linalg.yield %p : f64
  } -> tensor<1x4x?x8xf64>
  return %out : tensor<1x4x?x8xf64>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#mv_vec = affine_map<(d0, d1) -> (d1)>

// negative_: each divisor below is not φ(Q)·Σₘ φ(kₘ) + eps with eps > 0:
// the sum of the queries, the sums over the features, eps = 0. The products
// are raised; the divisions stay as written.
// CHECK-LABEL: func.func @negative_divisors
// CHECK: %[[S:.*]], %{{.*}} = linattn.kv_summary %arg1, %arg2 : tensor<100x64xf32>, tensor<100x32xf32> -> tensor<64x32xf32>, tensor<64xf32>
// CHECK: %[[O:.*]] = linattn.query_readout %arg0, %[[S]] : tensor<128x64xf32>, tensor<64x32xf32> -> tensor<128x32xf32>
// CHECK-NOT: normalize
// CHECK-COUNT-3: arith.divf
// CHECK-NOT: normalize
// CHECK: return
func.func @negative_divisors(%q: tensor<128x64xf32>, %k: tensor<100x64xf32>, %v: tensor<100x32xf32>) -> (tensor<128x32xf32>, tensor<128x32xf32>, tensor<128x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-6 : f32
  %et = tensor.empty() : tensor<64x100xf32>
  %kt = linalg.transpose ins(%k : tensor<100x64xf32>) outs(%et : tensor<64x100xf32>) permutation = [1, 0]
  %es = tensor.empty() : tensor<64x32xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<64x32xf32>) -> tensor<64x32xf32>
  %kv = linalg.matmul ins(%kt, %v : tensor<64x100xf32>, tensor<100x32xf32>) outs(%zs : tensor<64x32xf32>) -> tensor<64x32xf32>
  %eo = tensor.empty() : tensor<128x32xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<128x32xf32>) -> tensor<128x32xf32>
  %num = linalg.matmul ins(%q, %kv : tensor<128x64xf32>, tensor<64x32xf32>) outs(%zo : tensor<128x32xf32>) -> tensor<128x32xf32>
  %ez = tensor.empty() : tensor<64xf32>
  %zz = linalg.fill ins(%zero : f32) outs(%ez : tensor<64xf32>) -> tensor<64xf32>
  %ed = tensor.empty() : tensor<128xf32>
  %zd = linalg.fill ins(%zero : f32) outs(%ed : tensor<128xf32>) -> tensor<128xf32>
  // Σ over the queries' tokens.
  %qsum = linalg.reduce ins(%q : tensor<128x64xf32>) outs(%zz : tensor<64xf32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %a = arith.addf %x, %acc : f32
      linalg.yield %a : f32
    }
  %den1 = linalg.matvec ins(%q, %qsum : tensor<128x64xf32>, tensor<64xf32>) outs(%zd : tensor<128xf32>) -> tensor<128xf32>
  // Σ over the queries' features: a row sum, not a product.
  %den2 = linalg.reduce ins(%q : tensor<128x64xf32>) outs(%zd : tensor<128xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %a = arith.addf %x, %acc : f32
      linalg.yield %a : f32
    }
  // The right product, eps = 0.
  %ksum = linalg.reduce ins(%k : tensor<100x64xf32>) outs(%zz : tensor<64xf32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %a = arith.addf %x, %acc : f32
      linalg.yield %a : f32
    }
  %den3 = linalg.matvec ins(%q, %ksum : tensor<128x64xf32>, tensor<64xf32>) outs(%zd : tensor<128xf32>) -> tensor<128xf32>
  %out1 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%num, %den1 : tensor<128x32xf32>, tensor<128xf32>) outs(%eo : tensor<128x32xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %de = arith.addf %d, %eps : f32
    %r = arith.divf %x, %de : f32
    linalg.yield %r : f32
  } -> tensor<128x32xf32>
  %out2 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%num, %den2 : tensor<128x32xf32>, tensor<128xf32>) outs(%eo : tensor<128x32xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %de = arith.addf %d, %eps : f32
    %r = arith.divf %x, %de : f32
    linalg.yield %r : f32
  } -> tensor<128x32xf32>
  %out3 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%num, %den3 : tensor<128x32xf32>, tensor<128xf32>) outs(%eo : tensor<128x32xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %de = arith.addf %d, %zero : f32
    %r = arith.divf %x, %de : f32
    linalg.yield %r : f32
  } -> tensor<128x32xf32>
  return %out1, %out2, %out3 : tensor<128x32xf32>, tensor<128x32xf32>, tensor<128x32xf32>
}

// -----

#st_v = affine_map<(d, f, m) -> (m, d)>
#st_k = affine_map<(d, f, m) -> (m, f)>
#st_o = affine_map<(d, f, m) -> (d, f)>
#rd_q = affine_map<(n, d, f) -> (n, f)>
#rd_st = affine_map<(n, d, f) -> (d, f)>
#rd_o = affine_map<(n, d, f) -> (n, d)>

// The summary computed transposed, Sᵀ[d, f] = Σₘ V[m, d] K[m, f]
// (einsum "md,mf->df"), and read transposed by the readout (einsum
// "nf,df->nd"): the same linear form. A summary that accumulates onto ones
// is not KᵀV and is not raised.
// CHECK-LABEL: func.func @transposed_summary
// CHECK-SAME: (%[[Q:.*]]: tensor<128x32xf32>, %[[K:.*]]: tensor<100x32xf32>, %[[V:.*]]: tensor<100x24xf32>)
// CHECK: %[[S:.*]], %{{.*}} = linattn.kv_summary %[[K]], %[[V]] : tensor<100x32xf32>, tensor<100x24xf32> -> tensor<32x24xf32>, tensor<32xf32>
// CHECK: %[[O1:.*]] = linattn.query_readout %[[Q]], %[[S]] : tensor<128x32xf32>, tensor<32x24xf32> -> tensor<128x24xf32>
// CHECK: %[[ONES:.*]] = linalg.matmul
// CHECK: %[[O2:.*]] = linalg.matmul ins(%[[Q]], %[[ONES]]
// CHECK: return %[[O1]], %[[O2]]
func.func @transposed_summary(%q: tensor<128x32xf32>, %k: tensor<100x32xf32>, %v: tensor<100x24xf32>) -> (tensor<128x24xf32>, tensor<128x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %es = tensor.empty() : tensor<24x32xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<24x32xf32>) -> tensor<24x32xf32>
  %st = linalg.generic {indexing_maps = [#st_v, #st_k, #st_o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%v, %k : tensor<100x24xf32>, tensor<100x32xf32>) outs(%zs : tensor<24x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<24x32xf32>
  %eo = tensor.empty() : tensor<128x24xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<128x24xf32>) -> tensor<128x24xf32>
  %out1 = linalg.generic {indexing_maps = [#rd_q, #rd_st, #rd_o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %st : tensor<128x32xf32>, tensor<24x32xf32>) outs(%zo : tensor<128x24xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<128x24xf32>
  %et = tensor.empty() : tensor<32x100xf32>
  %kt = linalg.transpose ins(%k : tensor<100x32xf32>) outs(%et : tensor<32x100xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<32x24xf32>
  %ones = linalg.fill ins(%one : f32) outs(%e2 : tensor<32x24xf32>) -> tensor<32x24xf32>
  %kv = linalg.matmul ins(%kt, %v : tensor<32x100xf32>, tensor<100x24xf32>) outs(%ones : tensor<32x24xf32>) -> tensor<32x24xf32>
  %out2 = linalg.matmul ins(%q, %kv : tensor<128x32xf32>, tensor<32x24xf32>) outs(%zo : tensor<128x24xf32>) -> tensor<128x24xf32>
  return %out1, %out2 : tensor<128x24xf32>, tensor<128x24xf32>
}

// -----

#k3 = affine_map<(h, d, e, n) -> (h, n, d)>
#v3 = affine_map<(h, d, e, n) -> (h, n, e)>
#c3 = affine_map<(h, d, e, n) -> (h, d, e)>
#ctx = affine_map<(h, n, e, d) -> (h, d, e)>
#q3 = affine_map<(h, n, e, d) -> (h, n, d)>
#o3 = affine_map<(h, n, e, d) -> (h, n, e)>
#dq = affine_map<(h, n, d) -> (h, n, d)>
#dz = affine_map<(h, n, d) -> (h, d)>
#dn = affine_map<(h, n, d) -> (h, n)>
#id2 = affine_map<(h, n) -> (h, n)>
#id3 = affine_map<(h, n, e) -> (h, n, e)>
#row3 = affine_map<(h, n, e) -> (h, n)>

// Performer-style einsums with their operands in the order the source
// writes them: context = einsum('hnd,hne->hde', k, v), out =
// einsum('hde,hnd->hne', context, q) (the summary first), scaled by
// 1 / (einsum('hnd,hd->hn', q, k.sum(-2)) + eps).
// CHECK-LABEL: func.func @performer_einsums
// CHECK-SAME: (%[[Q:.*]]: tensor<4x50x16xf32>, %[[K:.*]]: tensor<4x60x16xf32>, %[[V:.*]]: tensor<4x60x8xf32>)
// CHECK: %[[S:.*]], %[[Z:.*]] = linattn.kv_summary %[[K]], %[[V]] : tensor<4x60x16xf32>, tensor<4x60x8xf32> -> tensor<4x16x8xf32>, tensor<4x16xf32>
// CHECK: %[[O:.*]] = linattn.query_readout %[[Q]], %[[S]] normalize(%[[Z]], eps = 0.10000000149011612) : tensor<4x50x16xf32>, tensor<4x16x8xf32>, tensor<4x16xf32> -> tensor<4x50x8xf32>
// CHECK: return %[[O]]
func.func @performer_einsums(%q: tensor<4x50x16xf32>, %k: tensor<4x60x16xf32>, %v: tensor<4x60x8xf32>) -> tensor<4x50x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 0.1 : f32
  %ec = tensor.empty() : tensor<4x16x8xf32>
  %zc = linalg.fill ins(%zero : f32) outs(%ec : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %context = linalg.generic {indexing_maps = [#k3, #v3, #c3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%k, %v : tensor<4x60x16xf32>, tensor<4x60x8xf32>) outs(%zc : tensor<4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16x8xf32>
  %eo = tensor.empty() : tensor<4x50x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x50x8xf32>) -> tensor<4x50x8xf32>
  %num = linalg.generic {indexing_maps = [#ctx, #q3, #o3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%context, %q : tensor<4x16x8xf32>, tensor<4x50x16xf32>) outs(%zo : tensor<4x50x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x50x8xf32>
  %ez = tensor.empty() : tensor<4x16xf32>
  %zz = linalg.fill ins(%zero : f32) outs(%ez : tensor<4x16xf32>) -> tensor<4x16xf32>
  %ksum = linalg.reduce ins(%k : tensor<4x60x16xf32>) outs(%zz : tensor<4x16xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %a = arith.addf %x, %acc : f32
      linalg.yield %a : f32
    }
  %ed = tensor.empty() : tensor<4x50xf32>
  %zd = linalg.fill ins(%zero : f32) outs(%ed : tensor<4x50xf32>) -> tensor<4x50xf32>
  %den = linalg.generic {indexing_maps = [#dq, #dz, #dn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%q, %ksum : tensor<4x50x16xf32>, tensor<4x16xf32>) outs(%zd : tensor<4x50xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x50xf32>
  %dinv = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%den : tensor<4x50xf32>) outs(%ed : tensor<4x50xf32>) {
  ^bb0(%x: f32, %o: f32):
    %de = arith.addf %x, %eps : f32
    %r = arith.divf %one, %de : f32
    linalg.yield %r : f32
  } -> tensor<4x50xf32>
  %out = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%num, %dinv : tensor<4x50x8xf32>, tensor<4x50xf32>) outs(%eo : tensor<4x50x8xf32>) {
  ^bb0(%x: f32, %r: f32, %o: f32):
    %p = arith.mulf %x, %r : f32
    linalg.yield %p : f32
  } -> tensor<4x50x8xf32>
  return %out : tensor<4x50x8xf32>
}

// -----

// On [N, L, H, D] (fast-transformers' layout): the keys permuted to
// [N, H, D, L] by one transpose, which also moves the heads, the values and
// queries to [N, H, L, D], each collapsed to [N*H, ...] for batch_matmul.
// The keys come back as [N, H, L, D] by a transpose of their own.
// CHECK-LABEL: func.func @heads_third_layout
// CHECK-SAME: (%[[Q:.*]]: tensor<2x128x3x16xf32>, %[[K:.*]]: tensor<2x100x3x16xf32>, %[[V:.*]]: tensor<2x100x3x8xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x3x100x16xf32>
// CHECK: %[[KT:.*]] = linalg.transpose ins(%[[K]] : tensor<2x100x3x16xf32>) outs(%[[E]] : tensor<2x3x100x16xf32>) permutation = [0, 2, 1, 3]
// CHECK: %[[CK:.*]] = tensor.collapse_shape %[[KT]] {{\[\[}}0, 1], [2], [3]] : tensor<2x3x100x16xf32> into tensor<6x100x16xf32>
// CHECK: %[[S:.*]], %{{.*}} = linattn.kv_summary %[[CK]], %{{.*}} : tensor<6x100x16xf32>, tensor<6x100x8xf32> -> tensor<6x16x8xf32>, tensor<6x16xf32>
// CHECK: linattn.query_readout %{{.*}}, %[[S]] : tensor<6x128x16xf32>, tensor<6x16x8xf32> -> tensor<6x128x8xf32>
func.func @heads_third_layout(%q: tensor<2x128x3x16xf32>, %k: tensor<2x100x3x16xf32>, %v: tensor<2x100x3x8xf32>) -> tensor<6x128x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ek = tensor.empty() : tensor<2x3x16x100xf32>
  %kt = linalg.transpose ins(%k : tensor<2x100x3x16xf32>) outs(%ek : tensor<2x3x16x100xf32>) permutation = [0, 2, 3, 1]
  %ckt = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x3x16x100xf32> into tensor<6x16x100xf32>
  %ev = tensor.empty() : tensor<2x3x100x8xf32>
  %vt = linalg.transpose ins(%v : tensor<2x100x3x8xf32>) outs(%ev : tensor<2x3x100x8xf32>) permutation = [0, 2, 1, 3]
  %cv = tensor.collapse_shape %vt [[0, 1], [2], [3]] : tensor<2x3x100x8xf32> into tensor<6x100x8xf32>
  %es = tensor.empty() : tensor<6x16x8xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<6x16x8xf32>) -> tensor<6x16x8xf32>
  %kv = linalg.batch_matmul ins(%ckt, %cv : tensor<6x16x100xf32>, tensor<6x100x8xf32>) outs(%zs : tensor<6x16x8xf32>) -> tensor<6x16x8xf32>
  %eq = tensor.empty() : tensor<2x3x128x16xf32>
  %qt = linalg.transpose ins(%q : tensor<2x128x3x16xf32>) outs(%eq : tensor<2x3x128x16xf32>) permutation = [0, 2, 1, 3]
  %cq = tensor.collapse_shape %qt [[0, 1], [2], [3]] : tensor<2x3x128x16xf32> into tensor<6x128x16xf32>
  %eo = tensor.empty() : tensor<6x128x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<6x128x8xf32>) -> tensor<6x128x8xf32>
  %out = linalg.batch_matmul ins(%cq, %kv : tensor<6x128x16xf32>, tensor<6x16x8xf32>) outs(%zo : tensor<6x128x8xf32>) -> tensor<6x128x8xf32>
  return %out : tensor<6x128x8xf32>
}
