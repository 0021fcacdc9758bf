// RUN: linattn-opt %s --linattn-gpu-stage-buffers -split-input-file | FileCheck %s

// A launch stub call becomes device buffers, copies of the inputs (not of
// the outputs) to the device, the launch, copies of the outputs back, and
// frees; the stub is erased.

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    gpu.func @k(%in: memref<?xf32>, %out: memref<?xf32>, %n: index) kernel {
      gpu.return
    }
  }
  func.func private @__linattn_launch_k(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) attributes {linattn.gpu_kernel = @linattn_kernels::@k, linattn.gpu_outputs = array<i64: 1>}

  // CHECK-LABEL: func.func @host
  //  CHECK-SAME: (%[[IN:.*]]: memref<?xf32>, %[[OUT:.*]]: memref<?xf32>, %[[N:.*]]: index, %[[G:.*]]: index)
  //   CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
  //   CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
  //   CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
  //       CHECK: %[[D0:.*]] = memref.dim %[[IN]], %[[C0]]
  //       CHECK: %[[DIN:.*]] = gpu.alloc (%[[D0]]) : memref<?xf32>
  //       CHECK: gpu.memcpy %[[DIN]], %[[IN]] : memref<?xf32>, memref<?xf32>
  //       CHECK: %[[D1:.*]] = memref.dim %[[OUT]], %[[C0]]
  //       CHECK: %[[DOUT:.*]] = gpu.alloc (%[[D1]]) : memref<?xf32>
  //   CHECK-NOT: gpu.memcpy
  //       CHECK: gpu.launch_func @linattn_kernels::@k blocks in (%[[G]], %[[C1]], %[[C1]]) threads in (%[[C32]], %[[C1]], %[[C1]]) args(%[[DIN]] : memref<?xf32>, %[[DOUT]] : memref<?xf32>, %[[N]] : index)
  //  CHECK-NEXT: gpu.memcpy %[[OUT]], %[[DOUT]] : memref<?xf32>, memref<?xf32>
  //  CHECK-NEXT: gpu.dealloc %[[DIN]]
  //  CHECK-NEXT: gpu.dealloc %[[DOUT]]
  //   CHECK-NOT: call
  func.func @host(%in: memref<?xf32>, %out: memref<?xf32>, %n: index, %g: index) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    call @__linattn_launch_k(%g, %c1, %c1, %c32, %c1, %c1, %in, %out, %n) : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) -> ()
    return
  }
  // CHECK-NOT: __linattn_launch_k
}

// -----

// An output the kernel writes only part of (linattn.gpu_updated: a slice of
// a wider buffer, from linattn-gpu-linalg-kernels) is copied to the device
// before the launch as well as back after it, so that the elements the
// kernel does not write keep their values.

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    gpu.func @k(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      gpu.return
    }
  }
  func.func private @__linattn_launch_k(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) attributes {linattn.gpu_kernel = @linattn_kernels::@k, linattn.gpu_outputs = array<i64: 1>, linattn.gpu_updated = array<i64: 1>}

  // CHECK-LABEL: func.func @updated
  //  CHECK-SAME: (%[[IN:.*]]: memref<?xf32>, %[[OUT:.*]]: memref<?xf32>)
  //       CHECK: %[[DIN:.*]] = gpu.alloc
  //       CHECK: gpu.memcpy %[[DIN]], %[[IN]]
  //       CHECK: %[[DOUT:.*]] = gpu.alloc
  //       CHECK: gpu.memcpy %[[DOUT]], %[[OUT]]
  //       CHECK: gpu.launch_func @linattn_kernels::@k
  //  CHECK-NEXT: gpu.memcpy %[[OUT]], %[[DOUT]]
  func.func @updated(%in: memref<?xf32>, %out: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    call @__linattn_launch_k(%c1, %c1, %c1, %c1, %c1, %c1, %in, %out) : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    return
  }
}

// -----

// Calls of other functions are left alone.

// CHECK-LABEL: func.func @negative_plain_call
//       CHECK: call @f
//   CHECK-NOT: gpu.
func.func private @f(memref<?xf32>)
func.func @negative_plain_call(%m: memref<?xf32>) {
  call @f(%m) : (memref<?xf32>) -> ()
  return
}
