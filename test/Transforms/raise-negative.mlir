// Attention-like IR that is not linear attention, or not exactly: every
// case must come out of the whole front end byte-identical to what went in.
// RUN: linattn-opt %s -split-input-file > %t.before
// RUN: linattn-opt %s -split-input-file -linattn-raise -linattn-masked-to-scan -linattn-reassociate > %t.after
// RUN: diff %t.before %t.after
// RUN: FileCheck %s < %t.after

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// negative_: a strict mask (j < i) hides the diagonal; linattn.scores causal
// keeps it. Left untouched.
// CHECK-LABEL: func.func @negative_strict_mask
// CHECK-NOT: linattn
// CHECK: %[[A:.*]] = linalg.matmul
// CHECK-NEXT: %[[M:.*]] = linalg.generic
// CHECK-NOT: linattn
// CHECK: linalg.matmul ins(%[[M]],
// CHECK-NEXT: return
func.func @negative_strict_mask(%q: tensor<64x16xf32>, %k: tensor<64x16xf32>, %v: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<16x64xf32>
  %kt = linalg.transpose ins(%k : tensor<64x16xf32>) outs(%et : tensor<16x64xf32>) permutation = [1, 0]
  %ea = tensor.empty() : tensor<64x64xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ea : tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = linalg.matmul ins(%q, %kt : tensor<64x16xf32>, tensor<16x64xf32>) outs(%za : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x64xf32>) outs(%ea : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c = arith.cmpi ult, %j, %i : index
    %s = arith.select %c, %x, %zero : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %eo = tensor.empty() : tensor<64x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<64x8xf32>) -> tensor<64x8xf32>
  %o = linalg.matmul ins(%m, %v : tensor<64x64xf32>, tensor<64x8xf32>) outs(%zo : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %o : tensor<64x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// negative_: an upper-triangular mask (j >= i) is anti-causal.
// CHECK-LABEL: func.func @negative_upper_mask
// CHECK-NOT: linattn
// CHECK: %[[A:.*]] = linalg.matmul
// CHECK-NEXT: %[[M:.*]] = linalg.generic
// CHECK-NOT: linattn
// CHECK: linalg.matmul ins(%[[M]],
// CHECK-NEXT: return
func.func @negative_upper_mask(%q: tensor<64x16xf32>, %k: tensor<64x16xf32>, %v: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<16x64xf32>
  %kt = linalg.transpose ins(%k : tensor<64x16xf32>) outs(%et : tensor<16x64xf32>) permutation = [1, 0]
  %ea = tensor.empty() : tensor<64x64xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ea : tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = linalg.matmul ins(%q, %kt : tensor<64x16xf32>, tensor<16x64xf32>) outs(%za : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x64xf32>) outs(%ea : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c = arith.cmpi sge, %j, %i : index
    %s = arith.select %c, %x, %zero : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %eo = tensor.empty() : tensor<64x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<64x8xf32>) -> tensor<64x8xf32>
  %o = linalg.matmul ins(%m, %v : tensor<64x64xf32>, tensor<64x8xf32>) outs(%zo : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %o : tensor<64x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// negative_: a mask shifted by one (j <= i + 1) sees one future token.
// CHECK-LABEL: func.func @negative_offset_mask
// CHECK-NOT: linattn
// CHECK: %[[A:.*]] = linalg.matmul
// CHECK-NEXT: %[[M:.*]] = linalg.generic
// CHECK-NOT: linattn
// CHECK: linalg.matmul ins(%[[M]],
// CHECK-NEXT: return
func.func @negative_offset_mask(%q: tensor<64x16xf32>, %k: tensor<64x16xf32>, %v: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<16x64xf32>
  %kt = linalg.transpose ins(%k : tensor<64x16xf32>) outs(%et : tensor<16x64xf32>) permutation = [1, 0]
  %ea = tensor.empty() : tensor<64x64xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ea : tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = linalg.matmul ins(%q, %kt : tensor<64x16xf32>, tensor<16x64xf32>) outs(%za : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x64xf32>) outs(%ea : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c1 = arith.constant 1 : index
    %i1 = arith.addi %i, %c1 : index
    %c = arith.cmpi sle, %j, %i1 : index
    %s = arith.select %c, %x, %zero : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %eo = tensor.empty() : tensor<64x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<64x8xf32>) -> tensor<64x8xf32>
  %o = linalg.matmul ins(%m, %v : tensor<64x64xf32>, tensor<64x8xf32>) outs(%zo : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %o : tensor<64x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// negative_: select(j <= i, 0, a) keeps the upper triangle.
// CHECK-LABEL: func.func @negative_inverted_select
// CHECK-NOT: linattn
// CHECK: %[[A:.*]] = linalg.matmul
// CHECK-NEXT: %[[M:.*]] = linalg.generic
// CHECK-NOT: linattn
// CHECK: linalg.matmul ins(%[[M]],
// CHECK-NEXT: return
func.func @negative_inverted_select(%q: tensor<64x16xf32>, %k: tensor<64x16xf32>, %v: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<16x64xf32>
  %kt = linalg.transpose ins(%k : tensor<64x16xf32>) outs(%et : tensor<16x64xf32>) permutation = [1, 0]
  %ea = tensor.empty() : tensor<64x64xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ea : tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = linalg.matmul ins(%q, %kt : tensor<64x16xf32>, tensor<16x64xf32>) outs(%za : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x64xf32>) outs(%ea : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c = arith.cmpi sle, %j, %i : index
    %s = arith.select %c, %zero, %x : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %eo = tensor.empty() : tensor<64x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<64x8xf32>) -> tensor<64x8xf32>
  %o = linalg.matmul ins(%m, %v : tensor<64x64xf32>, tensor<64x8xf32>) outs(%zo : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %o : tensor<64x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// negative_: exp of the scores is not linear in them (the start of a softmax).
// CHECK-LABEL: func.func @negative_exp_scores
// CHECK-NOT: linattn
// CHECK: %[[A:.*]] = linalg.matmul
// CHECK-NEXT: %[[M:.*]] = linalg.generic
// CHECK-NOT: linattn
// CHECK: linalg.matmul ins(%[[M]],
// CHECK-NEXT: return
func.func @negative_exp_scores(%q: tensor<64x16xf32>, %k: tensor<64x16xf32>, %v: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<16x64xf32>
  %kt = linalg.transpose ins(%k : tensor<64x16xf32>) outs(%et : tensor<16x64xf32>) permutation = [1, 0]
  %ea = tensor.empty() : tensor<64x64xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ea : tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = linalg.matmul ins(%q, %kt : tensor<64x16xf32>, tensor<16x64xf32>) outs(%za : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x64xf32>) outs(%ea : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = math.exp %x : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %eo = tensor.empty() : tensor<64x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<64x8xf32>) -> tensor<64x8xf32>
  %o = linalg.matmul ins(%m, %v : tensor<64x64xf32>, tensor<64x8xf32>) outs(%zo : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %o : tensor<64x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// negative_: an additive bias on the scores is not a scale.
// CHECK-LABEL: func.func @negative_bias
// CHECK-NOT: linattn
// CHECK: %[[A:.*]] = linalg.matmul
// CHECK-NEXT: %[[M:.*]] = linalg.generic
// CHECK-NOT: linattn
// CHECK: linalg.matmul ins(%[[M]],
// CHECK-NEXT: return
func.func @negative_bias(%q: tensor<64x16xf32>, %k: tensor<64x16xf32>, %v: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %et = tensor.empty() : tensor<16x64xf32>
  %kt = linalg.transpose ins(%k : tensor<64x16xf32>) outs(%et : tensor<16x64xf32>) permutation = [1, 0]
  %ea = tensor.empty() : tensor<64x64xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ea : tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = linalg.matmul ins(%q, %kt : tensor<64x16xf32>, tensor<16x64xf32>) outs(%za : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x64xf32>) outs(%ea : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %one : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %eo = tensor.empty() : tensor<64x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<64x8xf32>) -> tensor<64x8xf32>
  %o = linalg.matmul ins(%m, %v : tensor<64x64xf32>, tensor<64x8xf32>) outs(%zo : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %o : tensor<64x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// negative_: a constant mask that is not inclusive lower-triangular ones
// (here the strict lower triangle).
// CHECK-LABEL: func.func @negative_wrong_tril_constant
// CHECK-NOT: linattn
// CHECK: %[[A:.*]] = linalg.matmul
// CHECK: %[[M:.*]] = linalg.generic {{.*}} ins(%[[A]], %{{.*}} : tensor<64x64xf32>, tensor<64x64xf32>)
// CHECK-NOT: linattn
// CHECK: linalg.matmul ins(%[[M]],
// CHECK-NEXT: return
func.func @negative_wrong_tril_constant(%q: tensor<64x16xf32>, %k: tensor<64x16xf32>, %v: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<16x64xf32>
  %kt = linalg.transpose ins(%k : tensor<64x16xf32>) outs(%et : tensor<16x64xf32>) permutation = [1, 0]
  %ea = tensor.empty() : tensor<64x64xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ea : tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = linalg.matmul ins(%q, %kt : tensor<64x16xf32>, tensor<16x64xf32>) outs(%za : tensor<64x64xf32>) -> tensor<64x64xf32>
  %l = arith.constant dense<0.0> : tensor<64x64xf32>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %l : tensor<64x64xf32>, tensor<64x64xf32>) outs(%ea : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.mulf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %eo = tensor.empty() : tensor<64x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<64x8xf32>) -> tensor<64x8xf32>
  %o = linalg.matmul ins(%m, %v : tensor<64x64xf32>, tensor<64x8xf32>) outs(%zo : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %o : tensor<64x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// negative_: softmax attention (linalg.softmax) is not reassociable.
// CHECK-LABEL: func.func @negative_softmax
// CHECK-NOT: linattn
// CHECK: %[[A:.*]] = linalg.matmul
// CHECK-NEXT: %[[M:.*]] = linalg.softmax dimension(1) ins(%[[A]] : tensor<64x64xf32>)
// CHECK: linalg.matmul ins(%[[M]],
// CHECK-NEXT: return
func.func @negative_softmax(%q: tensor<64x16xf32>, %k: tensor<64x16xf32>, %v: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<16x64xf32>
  %kt = linalg.transpose ins(%k : tensor<64x16xf32>) outs(%et : tensor<16x64xf32>) permutation = [1, 0]
  %ea = tensor.empty() : tensor<64x64xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ea : tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = linalg.matmul ins(%q, %kt : tensor<64x16xf32>, tensor<16x64xf32>) outs(%za : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.softmax dimension(1) ins(%a : tensor<64x64xf32>) outs(%ea : tensor<64x64xf32>) -> tensor<64x64xf32>
  %eo = tensor.empty() : tensor<64x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<64x8xf32>) -> tensor<64x8xf32>
  %o = linalg.matmul ins(%m, %v : tensor<64x64xf32>, tensor<64x8xf32>) outs(%zo : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %o : tensor<64x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// negative_: softmax written out: exp of the scores, row sums, a division.
// CHECK-LABEL: func.func @negative_exp_rowsum_softmax
// CHECK-NOT: linattn
// CHECK: linalg.matmul
// CHECK-NEXT: %[[E:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK: linalg.matmul ins(%[[E]],
// CHECK-NEXT: %[[O:.*]] = linalg.generic
// CHECK: arith.divf
// CHECK: return %[[O]]
func.func @negative_exp_rowsum_softmax(%q: tensor<64x16xf32>, %k: tensor<64x16xf32>, %v: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<16x64xf32>
  %kt = linalg.transpose ins(%k : tensor<64x16xf32>) outs(%et : tensor<16x64xf32>) permutation = [1, 0]
  %ea = tensor.empty() : tensor<64x64xf32>
  %za = linalg.fill ins(%zero : f32) outs(%ea : tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = linalg.matmul ins(%q, %kt : tensor<64x16xf32>, tensor<16x64xf32>) outs(%za : tensor<64x64xf32>) -> tensor<64x64xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<64x64xf32>) outs(%ea : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = math.exp %x : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %er = tensor.empty() : tensor<64xf32>
  %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<64x64xf32>) outs(%zr : tensor<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %eo = tensor.empty() : tensor<64x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<64x8xf32>) -> tensor<64x8xf32>
  %p = linalg.matmul ins(%e, %v : tensor<64x64xf32>, tensor<64x8xf32>) outs(%zo : tensor<64x8xf32>) -> tensor<64x8xf32>
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %r : tensor<64x8xf32>, tensor<64xf32>) outs(%eo : tensor<64x8xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %s = arith.divf %x, %d : f32
    linalg.yield %s : f32
  } -> tensor<64x8xf32>
  return %o : tensor<64x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// negative_: the score product accumulates onto a tensor that is not zeros.
// CHECK-LABEL: func.func @negative_nonzero_accumulator
// CHECK-NOT: linattn
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<64x16xf32>, tensor<16x64xf32>) outs(%[[ACC:.*]] : tensor<64x64xf32>)
// CHECK: linalg.matmul
// CHECK-NEXT: return
func.func @negative_nonzero_accumulator(%q: tensor<64x16xf32>, %k: tensor<64x16xf32>, %v: tensor<64x8xf32>, %acc: tensor<64x64xf32>) -> tensor<64x8xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<16x64xf32>
  %kt = linalg.transpose ins(%k : tensor<64x16xf32>) outs(%et : tensor<16x64xf32>) permutation = [1, 0]
  %a = linalg.matmul ins(%q, %kt : tensor<64x16xf32>, tensor<16x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  %eo = tensor.empty() : tensor<64x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<64x8xf32>) -> tensor<64x8xf32>
  %o = linalg.matmul ins(%a, %v : tensor<64x64xf32>, tensor<64x8xf32>) outs(%zo : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %o : tensor<64x8xf32>
}

// -----

#q = affine_map<(b, n, h, m, d) -> (b, n, h, d)>
#k = affine_map<(b, n, h, m, d) -> (b, m, h, d)>
#s = affine_map<(b, n, h, m, d) -> (b, n, h, m)>
#a = affine_map<(b, n, h, e, m) -> (b, n, h, m)>
#v = affine_map<(b, n, h, e, m) -> (b, m, h, e)>
#o = affine_map<(b, n, h, e, m) -> (b, n, h, e)>
// negative_: scores kept as [B, N, H, M], the heads between the query and
// key dimensions. linattn.scores is [B, H, N, M]; such scores are left alone
// rather than transposed (a causal mask or a row sum on them would index
// other dimensions).
// CHECK-LABEL: func.func @negative_scores_heads_inside
// CHECK-NOT: linattn
// CHECK: return
func.func @negative_scores_heads_inside(%q: tensor<1x8x2x4xf32>, %k: tensor<1x8x2x4xf32>, %v: tensor<1x8x2x3xf32>) -> tensor<1x8x2x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x8x2x8xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x8x2x8xf32>) -> tensor<1x8x2x8xf32>
  %scores = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) outs(%z1 : tensor<1x8x2x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x8x2x8xf32>
  %e3 = tensor.empty() : tensor<1x8x2x3xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x8x2x3xf32>) -> tensor<1x8x2x3xf32>
  %out = linalg.generic {indexing_maps = [#a, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%scores, %v : tensor<1x8x2x8xf32>, tensor<1x8x2x3xf32>) outs(%z3 : tensor<1x8x2x3xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x8x2x3xf32>
  return %out : tensor<1x8x2x3xf32>
}

// -----

#kv_k = affine_map<(b, h, f, e, m) -> (b, h, m, f)>
#kv_v = affine_map<(b, h, f, e, m) -> (b, h, m, e)>
#kv_o = affine_map<(b, h, f, e, m) -> (b, h, f, e)>
#o_q = affine_map<(b, h, n, e, f) -> (b, h, n, f)>
#o_s = affine_map<(b, h, n, e, f) -> (h, b, f, e)>
#o_o = affine_map<(b, h, n, e, f) -> (b, h, n, e)>
// negative_: the readout reads the summary [B, H, F, Dv] with its batch
// dimensions swapped (B = H, so the IR is well typed): queries of head h
// of batch b read the summary of head b of batch h. Not the linear form.
// CHECK-LABEL: func.func @negative_summary_batch_swapped
// CHECK-NOT: linattn
// CHECK: return
func.func @negative_summary_batch_swapped(%q: tensor<2x2x5x4xf32>, %k: tensor<2x2x6x4xf32>, %v: tensor<2x2x6x3xf32>) -> tensor<2x2x5x3xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<2x2x4x3xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x2x4x3xf32>) -> tensor<2x2x4x3xf32>
  %kv = linalg.generic {indexing_maps = [#kv_k, #kv_v, #kv_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%k, %v : tensor<2x2x6x4xf32>, tensor<2x2x6x3xf32>) outs(%zs : tensor<2x2x4x3xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x2x4x3xf32>
  %eo = tensor.empty() : tensor<2x2x5x3xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x2x5x3xf32>) -> tensor<2x2x5x3xf32>
  %out = linalg.generic {indexing_maps = [#o_q, #o_s, #o_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %kv : tensor<2x2x5x4xf32>, tensor<2x2x4x3xf32>) outs(%zo : tensor<2x2x5x3xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x2x5x3xf32>
  return %out : tensor<2x2x5x3xf32>
}

// -----

// negative_: a chain of products X·W₁·W₂ with W₁ stored [F, M]: nothing
// transposes it into [M, F] keys, so it is not read as attention (the
// product of [B, N, H, D] tensors transposes only the heads, never the
// trailing feature dimension).
// CHECK-LABEL: func.func @negative_weight_chain
// CHECK-NOT: linattn
// CHECK: return
func.func @negative_weight_chain(%x: tensor<32x16xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x8xf32>) -> tensor<32x8xf32> {
  %zero = arith.constant 0.0 : f32
  %eh = tensor.empty() : tensor<32x64xf32>
  %zh = linalg.fill ins(%zero : f32) outs(%eh : tensor<32x64xf32>) -> tensor<32x64xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<32x16xf32>, tensor<16x64xf32>) outs(%zh : tensor<32x64xf32>) -> tensor<32x64xf32>
  %eo = tensor.empty() : tensor<32x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<32x8xf32>) -> tensor<32x8xf32>
  %o = linalg.matmul ins(%h, %w2 : tensor<32x64xf32>, tensor<64x8xf32>) outs(%zo : tensor<32x8xf32>) -> tensor<32x8xf32>
  return %o : tensor<32x8xf32>
}
