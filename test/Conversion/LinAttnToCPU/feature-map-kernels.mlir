// RUN: linattn-opt %s --split-input-file --convert-linattn-to-cpu-kernels='vector-width=8 tokens-per-block=2 column-vectors=2 threads=1' | FileCheck %s
// RUN: linattn-opt %s --split-input-file --convert-linattn-to-cpu-kernels='vector-width=8 tokens-per-block=1 column-vectors=1 threads=1' | FileCheck %s --check-prefix=ONE

// favor: parallel over the batch and blocks of two rows, a short last block
// row by row; per row |x|²/2 (a vector sum); per tile of two rows by two
// vectors of features the D steps of broadcast FMAs carry four
// accumulators; then exp of the tile minus the norms, times 1/√m. The 20
// features are one full tile of 16, then one masked vector.
// CHECK-LABEL: func.func @favor
// CHECK-NOT: linattn.feature_map
// CHECK: %[[X:.*]] = linattn.read_buffer %{{.*}} : tensor<2x?x8xf32> to memref<2x?x8xf32>
// CHECK: %[[P:.*]] = linattn.read_buffer %{{.*}} : tensor<8x20xf32> to memref<8x20xf32>
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<2x?x20xf32>
// CHECK: math.sqrt
// CHECK: scf.parallel
// CHECK: scf.if
// CHECK: vector.reduction <add>
// CHECK: vector.reduction <add>
// CHECK: scf.for
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-2: vector.load %[[P]]
// CHECK: memref.load %[[X]]
// CHECK: vector.broadcast
// CHECK-COUNT-2: vector.fma
// CHECK: memref.load %[[X]]
// CHECK: vector.broadcast
// CHECK-COUNT-2: vector.fma
// CHECK: math.roundeven
// CHECK: arith.select {{.*}} : vector<8xi1>, vector<8xf32>
// CHECK: vector.store {{.*}}, %[[OUT]]
// CHECK: vector.create_mask
// CHECK: vector.maskedload %[[P]]
// CHECK: vector.maskedstore %[[OUT]]
// CHECK: } else {
// CHECK: scf.for
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// ONE-LABEL: func.func @favor
// ONE: scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>) {
func.func @favor(%x: tensor<2x?x8xf32>, %p: tensor<8x20xf32>) -> tensor<2x?x20xf32> {
  %0 = linattn.feature_map favor %x projection(%p) : tensor<2x?x8xf32>, tensor<8x20xf32> -> tensor<2x?x20xf32>
  return %0 : tensor<2x?x20xf32>
}

// -----

// poly2 of 16-bit data computes in f32 and rounds once: the constant
// feature, the input copied after it, then D scaled copies (masked tails).
// A dynamic D sizes the result 1 + D + D².
// CHECK-LABEL: func.func @poly2
// CHECK: tensor.dim
// CHECK: %[[D:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x?xf16>
// CHECK: %[[D2:.*]] = arith.muli %[[D]], %[[D]] : index
// CHECK: %[[F:.*]] = arith.addi %{{.*}}, %[[D2]] : index
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %[[F]]) {alignment = 64 : i64} : memref<?x?xf16>
// CHECK: scf.parallel
// CHECK: memref.store %{{.*}}, %[[OUT]]
// CHECK: arith.extf {{.*}} : vector<8xf16> to vector<8xf32>
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xf16>
// CHECK: vector.maskedstore %[[OUT]]
// CHECK: scf.for
// CHECK: arith.mulf {{.*}} : f32
// CHECK: arith.mulf {{.*}} : vector<8xf32>
// CHECK: vector.store {{.*}}, %[[OUT]]
func.func @poly2(%x: tensor<?x?xf16>) -> tensor<?x?xf16> {
  %0 = linattn.feature_map poly2 %x : tensor<?x?xf16> -> tensor<?x?xf16>
  return %0 : tensor<?x?xf16>
}

// -----

// f64 computes in f64 (half the lanes), one row without a parallel loop.
// CHECK-LABEL: func.func @favor_f64
// CHECK-NOT: scf.parallel
// CHECK: vector.fma {{.*}} : vector<4xf64>
// CHECK: arith.bitcast {{.*}} : vector<4xi64> to vector<4xf64>
func.func @favor_f64(%x: tensor<3xf64>, %p: tensor<3x6xf64>) -> tensor<6xf64> {
  %0 = linattn.feature_map favor %x projection(%p) : tensor<3xf64>, tensor<3x6xf64> -> tensor<6xf64>
  return %0 : tensor<6xf64>
}

// -----

// A result stored into a restrict writable destination is written in place.
// CHECK-LABEL: func.func @favor_into
// CHECK-SAME: %[[DEST:[a-z0-9]+]]: memref<4x16xf32>
// CHECK-NOT: memref.alloc
// CHECK: vector.store {{.*}}, %[[DEST]]
// CHECK-NOT: bufferization.materialize_in_destination
func.func @favor_into(%x: tensor<4x8xf32>, %p: tensor<8x16xf32>, %dest: memref<4x16xf32>) {
  %0 = linattn.feature_map favor %x projection(%p) : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  bufferization.materialize_in_destination %0 in restrict writable %dest : (tensor<4x16xf32>, memref<4x16xf32>) -> ()
  return
}

// -----

// Elementwise maps that no kernel fuses have a kernel of their own too:
// rows in parallel, vector by vector, elu + 1 as x + 1 or the polynomial
// exp of min(x, 0), selected.
// CHECK-LABEL: func.func @elu
//   CHECK-NOT: linattn.feature_map
//       CHECK: %[[X:.*]] = linattn.read_buffer %arg0
//       CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
//       CHECK: scf.parallel (%[[ROW:.*]]) =
//       CHECK: scf.for %[[COL:.*]] =
//       CHECK: %[[V:.*]] = vector.load %[[X]][%[[ROW]], %[[COL]]] : memref<4x8xf32>, vector<8xf32>
//       CHECK: %[[POS:.*]] = arith.cmpf ogt, %[[V]]
//       CHECK: %[[SHIFTED:.*]] = arith.addf %[[V]]
//       CHECK: arith.minimumf %[[V]]
//       CHECK: math.roundeven
//       CHECK: %[[Y:.*]] = arith.select %[[POS]], %[[SHIFTED]], %{{.*}} : vector<8xi1>, vector<8xf32>
//       CHECK: vector.store %[[Y]], %[[OUT]][%[[ROW]], %[[COL]]]
//       CHECK: vector.maskedload
//       CHECK: bufferization.to_tensor %[[OUT]]
func.func @elu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = linattn.feature_map elu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
