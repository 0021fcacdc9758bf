// RUN: linattn-opt %s --split-input-file --linattn-fuse-elementwise | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
#t = affine_map<(i, j) -> (j, i)>

// An elementwise chain fuses into one generic; so does a producer read
// transposed (each element still once).

// CHECK-LABEL: func.func @chain(
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: arith.divf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @chain(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>) -> tensor<4x8xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  %e = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %d = linalg.generic {indexing_maps = [#id, #t, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%e, %y : tensor<4x8xf32>, tensor<8x4xf32>)
      outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#q = affine_map<(i, j, d) -> (i, d)>
#k = affine_map<(i, j, d) -> (j, d)>
#a = affine_map<(i, j, d) -> (i, j)>

// A feature map feeding a contraction (scores = φ(Q)φ(K)ᵀ) stays a generic
// of its own: fused, its exp would run once per multiply-add, N·M·F times
// instead of N·F.

// CHECK-LABEL: func.func @into_contraction(
// CHECK: %[[FQ:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[FK:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[FQ]], %[[FK]] :
// CHECK-NOT: math.exp
// CHECK: return
func.func @into_contraction(%x: tensor<16x8xf32>, %y: tensor<16x8xf32>)
    -> tensor<16x16xf32> {
  %init = tensor.empty() : tensor<16x8xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x8xf32>) outs(%init : tensor<16x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<16x8xf32>
  %fk = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<16x8xf32>) outs(%init : tensor<16x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<16x8xf32>
  %zero = arith.constant 0.0 : f32
  %ainit = tensor.empty() : tensor<16x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ainit : tensor<16x16xf32>)
      -> tensor<16x16xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #a],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%fq, %fk : tensor<16x8xf32>, tensor<16x8xf32>)
      outs(%acc : tensor<16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %out, %m : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  return %s : tensor<16x16xf32>
}

// -----

#row = affine_map<(i, j) -> (i)>
#id = affine_map<(i, j) -> (i, j)>
#in = affine_map<(i) -> (i)>

// Neither into a broadcast (the producer's element read once per column),
// nor a producer with two uses.

// CHECK-LABEL: func.func @broadcast_and_shared(
// CHECK: %[[E:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[E]], %{{.*}} :
// CHECK-NOT: math.exp
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[E]] :
// CHECK-NOT: math.exp
// CHECK: return
func.func @broadcast_and_shared(%x: tensor<4xf32>, %y: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4xf32>) {
  %init = tensor.empty() : tensor<4xf32>
  %e = linalg.generic {indexing_maps = [#in, #in],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %binit = tensor.empty() : tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#row, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%e, %y : tensor<4xf32>, tensor<4x8xf32>)
      outs(%binit : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %r = arith.mulf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %sq = linalg.generic {indexing_maps = [#in, #in, #in],
                        iterator_types = ["parallel"]}
      ins(%e, %e : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %r = arith.mulf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %b, %sq : tensor<4x8xf32>, tensor<4xf32>
}
