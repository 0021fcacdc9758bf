// RUN: linattn-opt %s -linattn-check-sizes -split-input-file | FileCheck %s

// Causal attention over dynamic sequences: the value and key lengths agree,
// and (the causal mask) the key and query lengths. The static batch and
// feature sizes need no check.
// CHECK-LABEL: func.func @causal
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x8xf32>, %[[K:.*]]: tensor<2x?x8xf32>, %[[V:.*]]: tensor<2x?x4xf32>)
// CHECK-DAG: %[[VN:.*]] = tensor.dim %[[V]], %{{.*}} : tensor<2x?x4xf32>
// CHECK-DAG: %[[KN:.*]] = tensor.dim %[[K]], %{{.*}} : tensor<2x?x8xf32>
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %[[VN]], %[[KN]] : index
// CHECK: cf.assert %[[EQ]], "linattn.attention at {{.*}}check-sizes.mlir:{{[0-9]+}}:{{[0-9]+}}: value sequence length does not match key sequence length"
// CHECK: %[[QN:.*]] = tensor.dim %[[Q]]
// CHECK: %[[CAUSAL:.*]] = arith.cmpi eq, %{{.*}}, %[[QN]] : index
// CHECK: cf.assert %[[CAUSAL]], "linattn.attention at {{.*}}: a causal mask needs as many keys as queries: key sequence length does not match query sequence length"
// CHECK-NOT: cf.assert
// CHECK: linattn.attention
func.func @causal(%q: tensor<2x?x8xf32>, %k: tensor<2x?x8xf32>, %v: tensor<2x?x4xf32>) -> tensor<2x?x4xf32> {
  %0 = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6) : tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x4xf32> -> tensor<2x?x4xf32>
  return %0 : tensor<2x?x4xf32>
}

// -----

// Without the mask, N and M are free; only M (keys, values) is checked.
// CHECK-LABEL: func.func @noncausal
// CHECK: cf.assert %{{.*}}, "{{.*}}: value sequence length does not match key sequence length"
// CHECK-NOT: cf.assert
// CHECK: linattn.attention
func.func @noncausal(%q: tensor<2x?x8xf32>, %k: tensor<2x?x8xf32>, %v: tensor<2x?x4xf32>) -> tensor<2x?x4xf32> {
  %0 = linattn.attention elu %q, %k, %v : tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x4xf32> -> tensor<2x?x4xf32>
  return %0 : tensor<2x?x4xf32>
}

// -----

// Static shapes: the verifier has checked everything.
// CHECK-LABEL: func.func @static
// CHECK-NOT: cf.assert
func.func @static(%q: tensor<2x7x8xf32>, %k: tensor<2x7x8xf32>, %v: tensor<2x7x4xf32>) -> tensor<2x7x4xf32> {
  %0 = linattn.attention elu %q, %k, %v causal : tensor<2x7x8xf32>, tensor<2x7x8xf32>, tensor<2x7x4xf32> -> tensor<2x7x4xf32>
  return %0 : tensor<2x7x4xf32>
}

// -----

// Dynamic batch dimensions are compared with the first operand's; a static
// size on one side is compared as a constant, once (the verifier has
// checked that the static ones agree: the key's 4 stands for the results').
// CHECK-LABEL: func.func @batch
// CHECK-SAME: (%[[Q:.*]]: tensor<?x3x8xf32>, %[[K:.*]]: tensor<4x3x8xf32>, %[[V:.*]]: tensor<?x3x5xf32>)
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[QB:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<?x3x8xf32>
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %[[C4]], %[[QB]] : index
// CHECK: cf.assert %[[EQ]], "linattn.scan at {{.*}}: key batch dimension 0 does not match query batch dimension 0"
// CHECK: cf.assert %{{.*}}, "linattn.scan at {{.*}}: value batch dimension 0 does not match query batch dimension 0"
// CHECK-NOT: cf.assert
// CHECK: linattn.scan
func.func @batch(%q: tensor<?x3x8xf32>, %k: tensor<4x3x8xf32>, %v: tensor<?x3x5xf32>) -> tensor<4x3x5xf32> {
  %o, %s, %z = linattn.scan forward %q, %k, %v : tensor<?x3x8xf32>, tensor<4x3x8xf32>, tensor<?x3x5xf32> -> tensor<4x3x5xf32>, tensor<4x8x5xf32>, tensor<4x8xf32>
  return %o : tensor<4x3x5xf32>
}

// -----

// A static result size fixes what a dynamic operand size must be; a dynamic
// result size is the lowering's to derive and needs no check.
// CHECK-LABEL: func.func @static_result
// CHECK: cf.assert %{{.*}}, "linattn.step at {{.*}}: state value size does not match value feature size"
// CHECK: cf.assert %{{.*}}, "linattn.step at {{.*}}: result feature size does not match value feature size"
// CHECK-NOT: cf.assert
// CHECK: linattn.step
func.func @static_result(%q: tensor<8xf32>, %k: tensor<8xf32>, %v: tensor<?xf32>, %s: tensor<8x?xf32>, %z: tensor<8xf32>) -> tensor<6xf32> {
  %o, %s1, %z1 = linattn.step %q, %k, %v, %s, %z : tensor<8xf32>, tensor<8xf32>, tensor<?xf32>, tensor<8x?xf32>, tensor<8xf32> -> tensor<6xf32>, tensor<8x?xf32>, tensor<8xf32>
  return %o : tensor<6xf32>
}

// -----

// poly2 of a dynamic input into a static result: 1 + D + D² features.
// CHECK-LABEL: func.func @poly2
// CHECK: %[[D:.*]] = tensor.dim
// CHECK: %[[ONE_PLUS_D:.*]] = arith.addi %{{.*}}, %[[D]] : index
// CHECK: %[[D2:.*]] = arith.muli %[[D]], %[[D]] : index
// CHECK: %[[F:.*]] = arith.addi %[[ONE_PLUS_D]], %[[D2]] : index
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %[[F]], %{{.*}} : index
// CHECK: cf.assert %[[EQ]], "linattn.feature_map at {{.*}}: result feature size is not 1 + D + D^2 for the input feature size D"
// CHECK-LABEL: func.func @poly2_dynamic_result
// CHECK-NOT: cf.assert
func.func @poly2(%x: tensor<3x?xf32>) -> tensor<3x13xf32> {
  %0 = linattn.feature_map poly2 %x : tensor<3x?xf32> -> tensor<3x13xf32>
  return %0 : tensor<3x13xf32>
}
func.func @poly2_dynamic_result(%x: tensor<3x?xf32>) -> tensor<3x?xf32> {
  %0 = linattn.feature_map poly2 %x : tensor<3x?xf32> -> tensor<3x?xf32>
  return %0 : tensor<3x?xf32>
}

// -----

// favor's feature count comes from the projection, its input size must
// match the projection's rows; the projection has no batch dimensions.
// CHECK-LABEL: func.func @favor
// CHECK: cf.assert %{{.*}}, "linattn.feature_map at {{.*}}: projection input size does not match input feature size"
// CHECK-NOT: cf.assert
// CHECK: linattn.feature_map favor
func.func @favor(%x: tensor<2x5x?xf32>, %p: tensor<?x16xf32>) -> tensor<2x5x16xf32> {
  %0 = linattn.feature_map favor %x projection(%p) : tensor<2x5x?xf32>, tensor<?x16xf32> -> tensor<2x5x16xf32>
  return %0 : tensor<2x5x16xf32>
}

// -----

// Ops of other dialects are left alone.
// CHECK-LABEL: func.func @other
// CHECK-NOT: cf.assert
func.func @other(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %0 = arith.addf %a, %b : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Sizes of features are read from the feature maps' inputs: all of them
// for elementwise maps (F here), the leading ones otherwise (favor's N), so
// that the checks keep no map alive that a kernel would fuse.
// CHECK-LABEL: func.func @through_maps
// CHECK-SAME: (%[[Q:.*]]: tensor<?x?xf32>, %[[K:.*]]: tensor<?x?xf32>, %[[V:.*]]: tensor<?x4xf32>)
// CHECK-NOT: tensor.dim %{{.*}} : tensor<?x?xf32>
// CHECK: %[[KN:.*]] = tensor.dim %[[K]], %{{.*}} : tensor<?x?xf32>
// CHECK: %[[QN:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<?x?xf32>
// CHECK: cf.assert %{{.*}}, "{{.*}}: key sequence length does not match query sequence length"
// CHECK: cf.assert %{{.*}}, "{{.*}}: value sequence length does not match query sequence length"
// CHECK: %[[KF:.*]] = tensor.dim %[[K]], %{{.*}} : tensor<?x?xf32>
// CHECK: %[[QF:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<?x?xf32>
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %[[KF]], %[[QF]] : index
// CHECK: cf.assert %[[EQ]], "{{.*}}: key feature size does not match query feature size"
// CHECK: linattn.scan
// CHECK-LABEL: func.func @through_favor
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[V2:.*]]: tensor<?x4xf32>)
// CHECK: tensor.dim %[[V2]]
// CHECK: tensor.dim %[[X]]
// CHECK-NOT: tensor.dim %{{.*}} : tensor<?x32xf32>
// CHECK: linattn.scan
func.func @through_maps(%q: tensor<?x?xf32>, %k: tensor<?x?xf32>, %v: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %fq = linattn.feature_map elu %q : tensor<?x?xf32> -> tensor<?x?xf32>
  %fk = linattn.feature_map relu %k : tensor<?x?xf32> -> tensor<?x?xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %v : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x4xf32> -> tensor<?x4xf32>, tensor<?x4xf32>, tensor<?xf32>
  return %o : tensor<?x4xf32>
}
func.func @through_favor(%x: tensor<?x8xf32>, %v: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %p = arith.constant dense<0.5> : tensor<8x32xf32>
  %f = linattn.feature_map favor %x projection(%p) : tensor<?x8xf32>, tensor<8x32xf32> -> tensor<?x32xf32>
  %o, %s, %z = linattn.scan forward %f, %f, %v : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x4xf32> -> tensor<?x4xf32>, tensor<32x4xf32>, tensor<32xf32>
  return %o : tensor<?x4xf32>
}
