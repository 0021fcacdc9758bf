// The kernels read operands that a transpose of the leading dimensions
// produced (raised token-major attention) through a memref.transpose view of
// the transpose's source, and write a result whose only use is such a
// transpose through a view of the transposed buffer: no copy either way
// (the result's sizes, asked for the transpose's init, are the view's).
// RUN: linattn-opt %s --split-input-file --convert-linattn-to-cpu-kernels='vector-width=8 tokens-per-block=2 threads=1' | FileCheck %s

// CHECK-LABEL: func.func @scan_token_major
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x3x16xf32>, %[[K:.*]]: tensor<2x?x3x16xf32>, %[[V:.*]]: tensor<2x?x3x8xf32>)
// CHECK: %[[QB:.*]] = linattn.read_buffer %[[Q]] : tensor<2x?x3x16xf32> to memref<2x?x3x16xf32>
// CHECK: %[[QV:.*]] = memref.transpose %[[QB]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<2x?x3x16xf32> to memref<2x3x?x16xf32, strided<[?, 16, 48, 1]>>
// CHECK: %[[KB:.*]] = linattn.read_buffer %[[K]]
// CHECK: %[[KV:.*]] = memref.transpose %[[KB]] (d0, d1, d2, d3) -> (d0, d2, d1, d3)
// CHECK: %[[VB:.*]] = linattn.read_buffer %[[V]]
// CHECK: memref.transpose %[[VB]] (d0, d1, d2, d3) -> (d0, d2, d1, d3)
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<2x?x3x8xf32>
// CHECK: %[[VIEW:.*]] = memref.transpose %[[OUT]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<2x?x3x8xf32> to memref<2x3x?x8xf32, strided<[?, 8, 24, 1]>>
// CHECK: vector.load %[[KV]]
// CHECK: vector.load %[[QV]]
// CHECK: vector.store %{{.*}}, %[[VIEW]][{{.*}}] {alignment = 32 : i64, nontemporal = true}
// CHECK: memref.dim %[[VIEW]], %{{.*}} : memref<2x3x?x8xf32, strided<[?, 8, 24, 1]>>
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<2x?x3x8xf32> to tensor<2x?x3x8xf32>
// CHECK-NOT: linalg.transpose
// CHECK: return %[[R]]
func.func @scan_token_major(%q: tensor<2x?x3x16xf32>, %k: tensor<2x?x3x16xf32>, %v: tensor<2x?x3x8xf32>) -> tensor<2x?x3x8xf32> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %q, %c1 : tensor<2x?x3x16xf32>
  %eq = tensor.empty(%n) : tensor<2x3x?x16xf32>
  %tq = linalg.transpose ins(%q : tensor<2x?x3x16xf32>) outs(%eq : tensor<2x3x?x16xf32>) permutation = [0, 2, 1, 3]
  %tk = linalg.transpose ins(%k : tensor<2x?x3x16xf32>) outs(%eq : tensor<2x3x?x16xf32>) permutation = [0, 2, 1, 3]
  %ev = tensor.empty(%n) : tensor<2x3x?x8xf32>
  %tv = linalg.transpose ins(%v : tensor<2x?x3x8xf32>) outs(%ev : tensor<2x3x?x8xf32>) permutation = [0, 2, 1, 3]
  %fq = linattn.feature_map elu %tq : tensor<2x3x?x16xf32> -> tensor<2x3x?x16xf32>
  %fk = linattn.feature_map elu %tk : tensor<2x3x?x16xf32> -> tensor<2x3x?x16xf32>
  %o, %s, %z = linattn.scan forward %fq, %fk, %tv normalize(eps = 1.0e-6) : tensor<2x3x?x16xf32>, tensor<2x3x?x16xf32>, tensor<2x3x?x8xf32> -> tensor<2x3x?x8xf32>, tensor<2x3x16x8xf32>, tensor<2x3x16xf32>
  %c2 = arith.constant 2 : index
  %m = tensor.dim %o, %c2 : tensor<2x3x?x8xf32>
  %eo = tensor.empty(%m) : tensor<2x?x3x8xf32>
  %to = linalg.transpose ins(%o : tensor<2x3x?x8xf32>) outs(%eo : tensor<2x?x3x8xf32>) permutation = [0, 2, 1, 3]
  return %to : tensor<2x?x3x8xf32>
}

// -----

// A transpose that moves the last dimension is copied as before, and so is
// an output with another user besides its transpose.
// CHECK-LABEL: func.func @copied
// CHECK: %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x16x5xf32>) outs(%{{.*}} : tensor<2x5x16xf32>) permutation = [0, 2, 1]
// CHECK: linattn.read_buffer %[[T]] : tensor<2x5x16xf32> to memref<2x5x16xf32>
// CHECK: %[[O:.*]] = bufferization.to_tensor %{{.*}} restrict writable : memref<2x5x8xf32> to tensor<2x5x8xf32>
// CHECK: linalg.transpose ins(%[[O]] : tensor<2x5x8xf32>)
// CHECK: return %{{.*}}, %[[O]]
func.func @copied(%qt: tensor<2x16x5xf32>, %k: tensor<2x5x16xf32>, %v: tensor<2x5x8xf32>) -> (tensor<5x2x8xf32>, tensor<2x5x8xf32>) {
  %eq = tensor.empty() : tensor<2x5x16xf32>
  %q = linalg.transpose ins(%qt : tensor<2x16x5xf32>) outs(%eq : tensor<2x5x16xf32>) permutation = [0, 2, 1]
  %o, %s, %z = linattn.scan forward %q, %k, %v : tensor<2x5x16xf32>, tensor<2x5x16xf32>, tensor<2x5x8xf32> -> tensor<2x5x8xf32>, tensor<2x16x8xf32>, tensor<2x16xf32>
  %eo = tensor.empty() : tensor<5x2x8xf32>
  %to = linalg.transpose ins(%o : tensor<2x5x8xf32>) outs(%eo : tensor<5x2x8xf32>) permutation = [1, 0, 2]
  return %to, %o : tensor<5x2x8xf32>, tensor<2x5x8xf32>
}

// -----

// The transposed result stored into a caller's buffer: the kernel writes that
// buffer through the view, and the store goes.
// CHECK-LABEL: func.func @into_destination
// CHECK-SAME: %[[DEST:[^:]*]]: memref<2x7x3x8xf32>
// CHECK: %[[VIEW:.*]] = memref.transpose %[[DEST]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<2x7x3x8xf32> to memref<2x3x7x8xf32, strided<[168, 8, 24, 1]>>
// CHECK: vector.{{(masked)?}}store %{{.*}}, %[[VIEW]]
// CHECK-NOT: materialize_in_destination
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @into_destination(%q: tensor<2x3x7x16xf32>, %k: tensor<2x3x7x16xf32>, %v: tensor<2x3x7x8xf32>, %dest: memref<2x7x3x8xf32>) {
  %o, %s, %z = linattn.scan forward %q, %k, %v : tensor<2x3x7x16xf32>, tensor<2x3x7x16xf32>, tensor<2x3x7x8xf32> -> tensor<2x3x7x8xf32>, tensor<2x3x16x8xf32>, tensor<2x3x16xf32>
  %eo = tensor.empty() : tensor<2x7x3x8xf32>
  %to = linalg.transpose ins(%o : tensor<2x3x7x8xf32>) outs(%eo : tensor<2x7x3x8xf32>) permutation = [0, 2, 1, 3]
  bufferization.materialize_in_destination %to in restrict writable %dest : (tensor<2x7x3x8xf32>, memref<2x7x3x8xf32>) -> ()
  return
}

// -----

// The feature-map kernels (favor here, which the scan kernels do not fuse)
// read a transposed input through the same view.
// CHECK-LABEL: func.func @favor_token_major
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x9x3x4xf32>
// CHECK: %[[XB:.*]] = linattn.read_buffer %[[X]] : tensor<2x9x3x4xf32> to memref<2x9x3x4xf32>
// CHECK: %[[XV:.*]] = memref.transpose %[[XB]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<2x9x3x4xf32> to memref<2x3x9x4xf32, strided<[108, 4, 12, 1]>>
// CHECK: vector.{{(masked)?}}load %[[XV]]
func.func @favor_token_major(%x: tensor<2x9x3x4xf32>, %p: tensor<4x8xf32>) -> tensor<2x3x9x8xf32> {
  %e = tensor.empty() : tensor<2x3x9x4xf32>
  %t = linalg.transpose ins(%x : tensor<2x9x3x4xf32>) outs(%e : tensor<2x3x9x4xf32>) permutation = [0, 2, 1, 3]
  %f = linattn.feature_map favor %t projection(%p) : tensor<2x3x9x4xf32>, tensor<4x8xf32> -> tensor<2x3x9x8xf32>
  return %f : tensor<2x3x9x8xf32>
}
