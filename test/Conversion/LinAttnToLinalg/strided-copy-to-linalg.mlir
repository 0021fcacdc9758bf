// RUN: linattn-opt %s --linattn-strided-copy-to-linalg --split-input-file | FileCheck %s

// A contiguous buffer into a strided view (an insert_slice into a wider
// buffer, bufferized): memrefCopy's element walk becomes linalg.copy.
// CHECK-LABEL: func.func @into_view
// CHECK-SAME: (%[[V:.*]]: memref<8x4096x64xf32>, %[[W:.*]]: memref<8x4096x65xf32>)
// CHECK: %[[VIEW:.*]] = memref.subview %[[W]]
// CHECK-NEXT: linalg.copy ins(%[[V]] : memref<8x4096x64xf32>) outs(%[[VIEW]] : memref<8x4096x64xf32, strided<[266240, 65, 1]>>)
// CHECK-NOT: memref.copy
func.func @into_view(%v: memref<8x4096x64xf32>, %w: memref<8x4096x65xf32>) {
  %view = memref.subview %w[0, 0, 0] [8, 4096, 64] [1, 1, 1]
      : memref<8x4096x65xf32> to memref<8x4096x64xf32, strided<[266240, 65, 1]>>
  memref.copy %v, %view : memref<8x4096x64xf32> to memref<8x4096x64xf32, strided<[266240, 65, 1]>>
  return
}

// -----

// A strided source with dynamic sizes and offset (a column of a buffer).
// CHECK-LABEL: func.func @from_dynamic_view
// CHECK: linalg.copy ins(%{{.*}} : memref<?x1xf32, strided<[?, 1], offset: ?>>) outs(%{{.*}} : memref<?x1xf32>)
// CHECK-NOT: memref.copy
func.func @from_dynamic_view(%w: memref<?x?xf32>, %out: memref<?x1xf32>, %c: index) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %w, %c0 : memref<?x?xf32>
  %col = memref.subview %w[0, %c] [%n, 1] [1, 1]
      : memref<?x?xf32> to memref<?x1xf32, strided<[?, 1], offset: ?>>
  memref.copy %col, %out : memref<?x1xf32, strided<[?, 1], offset: ?>> to memref<?x1xf32>
  return
}

// -----

// Copies upstream lowers to memcpy are left: identity layouts (static or
// dynamic), a contiguous view with a static shape, unranked memrefs.
// CHECK-LABEL: func.func @contiguous
// CHECK-COUNT-4: memref.copy
// CHECK-NOT: linalg.copy
func.func @contiguous(%a: memref<4x8xf32>, %b: memref<4x8xf32>,
                      %c: memref<?x8xf32>, %d: memref<?x8xf32>,
                      %e: memref<16x8xf32>, %u: memref<*xf32>, %v: memref<*xf32>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  memref.copy %c, %d : memref<?x8xf32> to memref<?x8xf32>
  %rows = memref.subview %e[4, 0] [4, 8] [1, 1]
      : memref<16x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
  memref.copy %a, %rows : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
  memref.copy %u, %v : memref<*xf32> to memref<*xf32>
  return
}
