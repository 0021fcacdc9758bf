// RUN: linattn-opt %s --cse --one-shot-bufferize="bufferize-function-boundaries" -split-input-file | FileCheck %s

// linattn.read_buffer reads its tensor where it stands: CSE keeps both reads
// of %x (a read effect, with a write between them), and One-Shot Bufferize
// gives %y, filled into the tensor.empty that %x was filled into, a buffer
// of its own, because %x is read after it.
// CHECK-LABEL: func.func @read_after_write
//  CHECK-SAME: (%[[A:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>, %[[C:.*]]: memref<8xf32>)
//       CHECK: %[[Y:.*]] = memref.alloc() {{.*}}: memref<8xf32>
//       CHECK: %[[X:.*]] = memref.alloc() {{.*}}: memref<8xf32>
//       CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[X]] : memref<8xf32>)
//       CHECK: memref.copy %[[X]], %[[A]]
//       CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[Y]] : memref<8xf32>)
//       CHECK: memref.copy %[[Y]], %[[B]]
//       CHECK: memref.copy %[[X]], %[[C]]
func.func @read_after_write(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %x = linalg.fill ins(%one : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %m1 = linattn.read_buffer %x : tensor<8xf32> to memref<8xf32>
  memref.copy %m1, %a : memref<8xf32> to memref<8xf32>
  %y = linalg.fill ins(%two : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %m2 = linattn.read_buffer %y : tensor<8xf32> to memref<8xf32>
  memref.copy %m2, %b : memref<8xf32> to memref<8xf32>
  %m3 = linattn.read_buffer %x : tensor<8xf32> to memref<8xf32>
  memref.copy %m3, %c : memref<8xf32> to memref<8xf32>
  return
}

// -----

// A slice's buffer has a strided layout: read as an identity-layout buffer,
// it is copied into one (never cast, which could fail at run time).
// CHECK-LABEL: func.func @strided_slice
//       CHECK: %[[S:.*]] = memref.subview
//       CHECK: %[[COPY:.*]] = memref.alloc() {{.*}}: memref<2x2xf32>
//       CHECK: memref.copy %[[S]], %[[COPY]]
//       CHECK: return %[[COPY]]
func.func @strided_slice(%t: tensor<4x4xf32>) -> memref<2x2xf32> {
  %s = tensor.extract_slice %t[0, 0] [2, 2] [1, 1] : tensor<4x4xf32> to tensor<2x2xf32>
  %m = linattn.read_buffer %s : tensor<2x2xf32> to memref<2x2xf32>
  return %m : memref<2x2xf32>
}

// -----

// A slice of dynamic strides is copied too: its strides are those of the
// tensor it is cut from (row pitch %w, not %n), which a cast to the identity
// layout would hide from the kernel that reads it.
// CHECK-LABEL: func.func @dynamic_slice
//  CHECK-SAME: (%[[T:.*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>, %[[N:.*]]: index)
//       CHECK: %[[S:.*]] = memref.subview %[[T]][0, 0] [%{{.*}}, %[[N]]] [1, 1]
//       CHECK: %[[COPY:.*]] = memref.alloc(%{{.*}}, %{{.*}}) {{.*}}: memref<?x?xf32>
//       CHECK: memref.copy %[[S]], %[[COPY]]
//   CHECK-NOT: memref.cast
//       CHECK: return %[[COPY]]
func.func @dynamic_slice(%t: tensor<?x?xf32>, %n: index) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %t, %c0 : tensor<?x?xf32>
  %s = tensor.extract_slice %t[0, 0] [%rows, %n] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %m = linattn.read_buffer %s : tensor<?x?xf32> to memref<?x?xf32>
  return %m : memref<?x?xf32>
}
