// RUN: linattn-opt %s --linattn-parallelize-linalg --split-input-file | FileCheck %s
// RUN: linattn-opt %s --linattn-parallelize-linalg=min-iterations=1 --split-input-file | FileCheck %s --check-prefix=SMALL

#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// An elementwise op over [8, 4096, 64]: rows (i, j) over threads, the op on
// one row of 64 inside.
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[A:.*]]: memref<8x4096x64xf32>, %[[B:.*]]: memref<8x4096x64xf32>)
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C4096:.*]] = arith.constant 4096 : index
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%[[C8]], %[[C4096]])
// CHECK: %[[RA:.*]] = memref.subview %[[A]][%[[I]], %[[J]], 0] [1, 1, 64] [1, 1, 1]
// CHECK: %[[RB:.*]] = memref.subview %[[B]][%[[I]], %[[J]], 0] [1, 1, 64] [1, 1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[RA]] : {{.*}}) outs(%[[RB]] : {{.*}})
// CHECK: math.exp
func.func @elementwise(%a: memref<8x4096x64xf32>, %b: memref<8x4096x64xf32>) {
  linalg.generic {indexing_maps = [#map, #map],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : memref<8x4096x64xf32>) outs(%b : memref<8x4096x64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A reduction over the last dimension (dO·N per row): the rows over
// threads, each reducing its 64 elements.
// CHECK-LABEL: func.func @row_sums
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) =
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
func.func @row_sums(%a: memref<8x4096x64xf32>, %s: memref<8x4096xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a : memref<8x4096x64xf32>) outs(%s : memref<8x4096xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A reduction in the middle: only the loop before it is split; dynamic
// sizes are parallelized whatever their value.
// CHECK-LABEL: func.func @middle_reduction
// CHECK: scf.parallel (%{{[^,]*}}) =
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]
func.func @middle_reduction(%a: memref<?x?x?xf32>, %s: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d2)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a : memref<?x?x?xf32>) outs(%s : memref<?x?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// linalg.fill and linalg.copy are linalg ops like the others.
// CHECK-LABEL: func.func @fill_and_copy
// CHECK: scf.parallel
// CHECK: linalg.fill
// CHECK: scf.parallel
// CHECK: linalg.copy
func.func @fill_and_copy(%a: memref<4096x65xf32>, %b: memref<4096x64xf32, strided<[65, 1]>>, %c: memref<4096x64xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%a : memref<4096x65xf32>)
  linalg.copy ins(%c : memref<4096x64xf32>) outs(%b : memref<4096x64xf32, strided<[65, 1]>>)
  return
}

// -----

// Left serial: below min-iterations (8 × 64 points), one row, a reduction
// first, one loop, tensors, and an op already inside a parallel loop.
// CHECK-LABEL: func.func @serial
// CHECK-NOT: scf.parallel
// CHECK: linalg.fill
// CHECK-NOT: scf.parallel
// CHECK: linalg.fill
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
// CHECK-NOT: scf.parallel
// CHECK: linalg.fill
// CHECK-NOT: scf.parallel
// CHECK: linalg.fill
// CHECK: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: return
// SMALL-LABEL: func.func @serial
// SMALL: scf.parallel
// SMALL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<1x64xf32, strided<[64, 1], offset: ?>>)
// SMALL-NOT: scf.parallel
// SMALL: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<1x65536xf32>)
func.func @serial(%small: memref<8x64xf32>, %row: memref<1x65536xf32>,
                  %a: memref<4096x64xf32>, %s: memref<64xf32>,
                  %flat: memref<1048576xf32>, %t: tensor<4096x64xf32>,
                  %inner: memref<8x4096x64xf32>) -> tensor<4096x64xf32> {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%small : memref<8x64xf32>)
  linalg.fill ins(%zero : f32) outs(%row : memref<1x65536xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<4096x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%flat : memref<1048576xf32>)
  %filled = linalg.fill ins(%zero : f32) outs(%t : tensor<4096x64xf32>) -> tensor<4096x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %head = memref.subview %inner[%i, 0, 0] [1, 4096, 64] [1, 1, 1]
        : memref<8x4096x64xf32> to memref<4096x64xf32, strided<[64, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%head : memref<4096x64xf32, strided<[64, 1], offset: ?>>)
    scf.reduce
  }
  return %filled : tensor<4096x64xf32>
}
