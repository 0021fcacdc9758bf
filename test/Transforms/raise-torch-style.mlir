// Attention as torch-mlir's linalg-on-tensors backend emits it: [B, H, N, D]
// tensors collapsed to [B*H, N, D] around linalg.batch_matmul, K transposed
// by linalg.transpose before the collapse, elementwise generics on
// tensor.empty inits, accumulators from linalg.fill.
// RUN: linattn-opt %s -linattn-raise -split-input-file | FileCheck %s
// RUN: linattn-opt %s -linattn-raise -linattn-reassociate -split-input-file | FileCheck %s --check-prefix=LINEAR

#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @torch_elu_linear_attention
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x1024x64xf32>, %[[K:.*]]: tensor<1x2x1024x64xf32>, %[[V:.*]]: tensor<1x2x1024x32xf32>)
// CHECK-DAG: %[[FQ:.*]] = linattn.feature_map elu %[[Q]] : tensor<1x2x1024x64xf32> -> tensor<1x2x1024x64xf32>
// CHECK-DAG: %[[FK:.*]] = linattn.feature_map elu %[[K]] : tensor<1x2x1024x64xf32> -> tensor<1x2x1024x64xf32>
// CHECK-DAG: %[[CQ:.*]] = tensor.collapse_shape %[[FQ]] {{\[\[}}0, 1], [2], [3]] : tensor<1x2x1024x64xf32> into tensor<2x1024x64xf32>
// CHECK-DAG: %[[CK:.*]] = tensor.collapse_shape %[[FK]] {{\[\[}}0, 1], [2], [3]] : tensor<1x2x1024x64xf32> into tensor<2x1024x64xf32>
// CHECK: %[[A:.*]] = linattn.scores %[[CQ]], %[[CK]] scale(1.250000e-01) : tensor<2x1024x64xf32>, tensor<2x1024x64xf32> -> tensor<2x1024x1024xf32>
// CHECK: %[[CV:.*]] = tensor.collapse_shape %[[V]]
// CHECK: %[[O:.*]] = linattn.apply_scores %[[A]], %[[CV]] : tensor<2x1024x1024xf32>, tensor<2x1024x32xf32> -> tensor<2x1024x32xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[O]]
// CHECK: return %[[E]]
// CHECK-NOT: linalg.batch_matmul
// LINEAR-LABEL: func.func @torch_elu_linear_attention
// LINEAR-NOT: linattn.scores
// LINEAR: %[[S:.*]], %{{.*}} = linattn.kv_summary %{{.*}}, %{{.*}} : tensor<2x1024x64xf32>, tensor<2x1024x32xf32> -> tensor<2x64x32xf32>, tensor<2x64xf32>
// LINEAR: %[[SS:.*]] = linalg.generic {{.*}} outs(%[[S]] : tensor<2x64x32xf32>)
// LINEAR: %[[O:.*]] = linattn.query_readout %{{.*}}, %[[SS]] : tensor<2x1024x64xf32>, tensor<2x64x32xf32> -> tensor<2x1024x32xf32>
// LINEAR: tensor.expand_shape %[[O]]
// LINEAR-NOT: linattn.scores
func.func @torch_elu_linear_attention(%q: tensor<1x2x1024x64xf32>, %k: tensor<1x2x1024x64xf32>,
                                      %v: tensor<1x2x1024x32xf32>) -> tensor<1x2x1024x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 1.000000e+00 : f32
  %cst_1 = arith.constant 1.250000e-01 : f32
  %0 = tensor.empty() : tensor<1x2x1024x64xf32>
  %1 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q : tensor<1x2x1024x64xf32>) outs(%0 : tensor<1x2x1024x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %20 = arith.cmpf ugt, %in, %cst : f32
    %21 = math.expm1 %in : f32
    %22 = arith.select %20, %in, %21 : f32
    %23 = arith.addf %22, %cst_0 : f32
    linalg.yield %23 : f32
  } -> tensor<1x2x1024x64xf32>
  %2 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x2x1024x64xf32>) outs(%0 : tensor<1x2x1024x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %20 = arith.cmpf ugt, %in, %cst : f32
    %21 = math.expm1 %in : f32
    %22 = arith.select %20, %in, %21 : f32
    %23 = arith.addf %22, %cst_0 : f32
    linalg.yield %23 : f32
  } -> tensor<1x2x1024x64xf32>
  %3 = tensor.empty() : tensor<1x2x64x1024xf32>
  %transposed = linalg.transpose ins(%2 : tensor<1x2x1024x64xf32>) outs(%3 : tensor<1x2x64x1024xf32>) permutation = [0, 1, 3, 2]
  %collapsed = tensor.collapse_shape %1 [[0, 1], [2], [3]] : tensor<1x2x1024x64xf32> into tensor<2x1024x64xf32>
  %collapsed_2 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x2x64x1024xf32> into tensor<2x64x1024xf32>
  %4 = tensor.empty() : tensor<2x1024x1024xf32>
  %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<2x1024x1024xf32>) -> tensor<2x1024x1024xf32>
  %6 = linalg.batch_matmul ins(%collapsed, %collapsed_2 : tensor<2x1024x64xf32>, tensor<2x64x1024xf32>) outs(%5 : tensor<2x1024x1024xf32>) -> tensor<2x1024x1024xf32>
  %7 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6 : tensor<2x1024x1024xf32>) outs(%4 : tensor<2x1024x1024xf32>) {
  ^bb0(%in: f32, %out: f32):
    %20 = arith.mulf %in, %cst_1 : f32
    linalg.yield %20 : f32
  } -> tensor<2x1024x1024xf32>
  %collapsed_3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x1024x32xf32> into tensor<2x1024x32xf32>
  %8 = tensor.empty() : tensor<2x1024x32xf32>
  %9 = linalg.fill ins(%cst : f32) outs(%8 : tensor<2x1024x32xf32>) -> tensor<2x1024x32xf32>
  %10 = linalg.batch_matmul ins(%7, %collapsed_3 : tensor<2x1024x1024xf32>, tensor<2x1024x32xf32>) outs(%9 : tensor<2x1024x32xf32>) -> tensor<2x1024x32xf32>
  %expanded = tensor.expand_shape %10 [[0, 1], [2], [3]] output_shape [1, 2, 1024, 32] : tensor<2x1024x32xf32> into tensor<1x2x1024x32xf32>
  return %expanded : tensor<1x2x1024x32xf32>
}

// -----

#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// negative_: torch's scaled_dot_product_attention decomposition, softmax
// between the products, is left byte-identical.
// CHECK-LABEL: func.func @negative_torch_softmax_attention
// CHECK-NOT: linattn
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK-NEXT: %[[CK:.*]] = tensor.collapse_shape %[[T]]
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<2x128x128xf32>
// CHECK-NEXT: %[[F:.*]] = linalg.fill
// CHECK-NEXT: %[[A:.*]] = linalg.batch_matmul ins(%{{.*}}, %[[CK]] : tensor<2x128x64xf32>, tensor<2x64x128xf32>) outs(%[[F]] : tensor<2x128x128xf32>)
// CHECK-NEXT: %[[S:.*]] = linalg.softmax dimension(2) ins(%[[A]] : tensor<2x128x128xf32>) outs(%[[E]] : tensor<2x128x128xf32>)
// CHECK: linalg.batch_matmul ins(%[[S]], %{{.*}} : tensor<2x128x128xf32>, tensor<2x128x32xf32>)
// CHECK-NOT: linattn
func.func @negative_torch_softmax_attention(%q: tensor<2x128x64xf32>, %k: tensor<1x2x128x64xf32>,
                                            %v: tensor<2x128x32xf32>) -> tensor<2x128x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<1x2x64x128xf32>
  %transposed = linalg.transpose ins(%k : tensor<1x2x128x64xf32>) outs(%0 : tensor<1x2x64x128xf32>) permutation = [0, 1, 3, 2]
  %collapsed = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x2x64x128xf32> into tensor<2x64x128xf32>
  %1 = tensor.empty() : tensor<2x128x128xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<2x128x128xf32>) -> tensor<2x128x128xf32>
  %3 = linalg.batch_matmul ins(%q, %collapsed : tensor<2x128x64xf32>, tensor<2x64x128xf32>) outs(%2 : tensor<2x128x128xf32>) -> tensor<2x128x128xf32>
  %4 = linalg.softmax dimension(2) ins(%3 : tensor<2x128x128xf32>) outs(%1 : tensor<2x128x128xf32>) -> tensor<2x128x128xf32>
  %5 = tensor.empty() : tensor<2x128x32xf32>
  %6 = linalg.fill ins(%cst : f32) outs(%5 : tensor<2x128x32xf32>) -> tensor<2x128x32xf32>
  %7 = linalg.batch_matmul ins(%4, %v : tensor<2x128x128xf32>, tensor<2x128x32xf32>) outs(%6 : tensor<2x128x32xf32>) -> tensor<2x128x32xf32>
  return %7 : tensor<2x128x32xf32>
}
