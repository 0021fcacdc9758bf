// RUN: linattn-opt %s --linattn-gpu-stage-buffers="device-buffers=true" -split-input-file -verify-diagnostics | FileCheck %s

// The device-buffer calling convention: the result becomes an out-param
// the kernel writes directly (no buffer, no copy), a trailing !llvm.ptr is
// the stream, and the launch is asynchronous on a token chain that starts
// at it.

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    gpu.func @k(%in: memref<?xf32>, %out: memref<?xf32>, %n: index) kernel {
      gpu.return
    }
  }
  func.func private @__linattn_launch_k(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) attributes {linattn.gpu_kernel = @linattn_kernels::@k, linattn.gpu_outputs = array<i64: 1>}

  // CHECK-LABEL: module attributes {gpu.container_module, linattn.device_buffers}
  // CHECK-LABEL: func.func @step
  //  CHECK-SAME: (%[[IN:.*]]: memref<4x8xf32>, %[[N:.*]]: index, %[[OUT:.*]]: memref<4x8xf32>, %[[STREAM:.*]]: !llvm.ptr)
  //   CHECK-NOT: bufferize.result
  //       CHECK: %[[T0:.*]] = builtin.unrealized_conversion_cast %[[STREAM]] : !llvm.ptr to !gpu.async.token
  //   CHECK-NOT: memref.alloc
  //   CHECK-NOT: gpu.alloc
  //       CHECK: %[[FIN:.*]] = memref.collapse_shape %[[IN]]
  //       CHECK: %[[FOUT:.*]] = memref.collapse_shape %[[OUT]]
  //       CHECK: %[[DOUT:.*]] = memref.cast %[[FOUT]]
  //       CHECK: gpu.launch_func async [%[[T0]]] @linattn_kernels::@k {{.*}} args(%{{.*}} : memref<?xf32>, %[[DOUT]] : memref<?xf32>, %[[N]] : index)
  //   CHECK-NOT: gpu.memcpy
  //   CHECK-NOT: memref.copy
  //       CHECK: return
  //  CHECK-NEXT: }
  func.func @step(%in: memref<4x8xf32>, %n: index) -> memref<4x8xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %fin = memref.collapse_shape %in [[0, 1]] : memref<4x8xf32> into memref<32xf32>
    %din = memref.cast %fin : memref<32xf32> to memref<?xf32>
    %out = memref.alloc() : memref<4x8xf32>
    %fout = memref.collapse_shape %out [[0, 1]] : memref<4x8xf32> into memref<32xf32>
    %dout = memref.cast %fout : memref<32xf32> to memref<?xf32>
    call @__linattn_launch_k(%c1, %c1, %c1, %c32, %c1, %c1, %din, %dout, %n) : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) -> ()
    return %out : memref<4x8xf32>
  }
  // CHECK-NOT: __linattn_launch_k
}

// -----

// Dynamic shapes: the out-param has the result's dynamic type. A buffer
// between two kernels is a stream-ordered allocation, freed on the stream
// after the last launch; launches and allocations are chained in order.

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    gpu.func @k(%in: memref<?xf32>, %out: memref<?xf32>, %n: index) kernel {
      gpu.return
    }
  }
  func.func private @__linattn_launch_k(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) attributes {linattn.gpu_kernel = @linattn_kernels::@k, linattn.gpu_outputs = array<i64: 1>}

  // CHECK-LABEL: func.func @two_kernels
  //  CHECK-SAME: (%[[IN:.*]]: memref<?xf32>, %[[N:.*]]: index, %[[OUT:.*]]: memref<?xf32>, %[[STREAM:.*]]: !llvm.ptr)
  //       CHECK: %[[T0:.*]] = builtin.unrealized_conversion_cast %[[STREAM]]
  //       CHECK: %[[TMP:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] (%[[N]]) : memref<?xf32>
  //       CHECK: %[[T2:.*]] = gpu.launch_func async [%[[T1]]] @linattn_kernels::@k {{.*}} args(%[[IN]] : memref<?xf32>, %[[TMP]] : memref<?xf32>, %[[N]] : index)
  //       CHECK: %[[T3:.*]] = gpu.launch_func async [%[[T2]]] @linattn_kernels::@k {{.*}} args(%[[TMP]] : memref<?xf32>, %[[OUT]] : memref<?xf32>, %[[N]] : index)
  //       CHECK: gpu.dealloc async [%[[T3]]] %[[TMP]] : memref<?xf32>
  //  CHECK-NEXT: return
  func.func @two_kernels(%in: memref<?xf32>, %n: index) -> memref<?xf32> {
    %c1 = arith.constant 1 : index
    %tmp = memref.alloc(%n) : memref<?xf32>
    call @__linattn_launch_k(%c1, %c1, %c1, %c1, %c1, %c1, %in, %tmp, %n) : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) -> ()
    %out = memref.alloc(%n) : memref<?xf32>
    call @__linattn_launch_k(%c1, %c1, %c1, %c1, %c1, %c1, %tmp, %out, %n) : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) -> ()
    return %out : memref<?xf32>
  }
}

// -----

// A buffer between kernels that the branches of an scf.if allocate (a
// scan's output, its variant chosen at run time) is device memory in each
// branch, freed after the kernel that reads it, at the end of the block
// around the scf.if.

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    gpu.func @k(%in: memref<?xf32>, %out: memref<?xf32>, %n: index) kernel {
      gpu.return
    }
  }
  func.func private @__linattn_launch_k(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) attributes {linattn.gpu_kernel = @linattn_kernels::@k, linattn.gpu_outputs = array<i64: 1>}

  // CHECK-LABEL: func.func @branch_buffer
  //  CHECK-SAME: (%[[IN:.*]]: memref<?xf32>, %[[N:.*]]: index, %[[C:.*]]: i1, %[[OUT:.*]]: memref<?xf32>, %[[STREAM:.*]]: !llvm.ptr)
  //   CHECK-NOT: memref.alloc
  //       CHECK: %[[TMP:.*]] = scf.if %[[C]]
  //       CHECK:   %[[A:.*]], %{{.*}} = gpu.alloc async
  //       CHECK:   gpu.launch_func async {{.*}} args(%[[IN]] : memref<?xf32>, %[[A]] : memref<?xf32>
  //       CHECK:   scf.yield %[[A]]
  //       CHECK: } else {
  //       CHECK:   %[[B:.*]], %{{.*}} = gpu.alloc async
  //       CHECK:   gpu.launch_func async {{.*}} args(%[[IN]] : memref<?xf32>, %[[B]] : memref<?xf32>
  //       CHECK:   scf.yield %[[B]]
  //       CHECK: %[[T:.*]] = gpu.launch_func async {{.*}} args(%[[TMP]] : memref<?xf32>, %[[OUT]] : memref<?xf32>
  //       CHECK: gpu.dealloc async [%[[T]]] %[[TMP]] : memref<?xf32>
  //  CHECK-NEXT: return
  func.func @branch_buffer(%in: memref<?xf32>, %n: index, %c: i1) -> memref<?xf32> {
    %c1 = arith.constant 1 : index
    %tmp = scf.if %c -> memref<?xf32> {
      %a = memref.alloc(%n) : memref<?xf32>
      func.call @__linattn_launch_k(%c1, %c1, %c1, %c1, %c1, %c1, %in, %a, %n) : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) -> ()
      scf.yield %a : memref<?xf32>
    } else {
      %b = memref.alloc(%n) : memref<?xf32>
      func.call @__linattn_launch_k(%c1, %c1, %c1, %c1, %c1, %c1, %in, %b, %n) : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) -> ()
      scf.yield %b : memref<?xf32>
    }
    %out = memref.alloc(%n) : memref<?xf32>
    call @__linattn_launch_k(%c1, %c1, %c1, %c1, %c1, %c1, %tmp, %out, %n) : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) -> ()
    return %out : memref<?xf32>
  }
}

// -----

// A choice nested in a branch of another (the segments' outputs of a small
// grid in narrower tiles or not): the inner scf.if's buffer is yielded by
// the outer branch, not freed there; the outer result is freed after the
// kernel that reads it, once.

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    gpu.func @k(%in: memref<?xf32>, %out: memref<?xf32>, %n: index) kernel {
      gpu.return
    }
  }
  func.func private @__linattn_launch_k(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) attributes {linattn.gpu_kernel = @linattn_kernels::@k, linattn.gpu_outputs = array<i64: 1>}

  // CHECK-LABEL: func.func @nested_branch_buffer
  //       CHECK: %[[TMP:.*]] = scf.if
  //       CHECK:   %[[INNER:.*]] = scf.if
  //       CHECK:     %[[A:.*]], %{{.*}} = gpu.alloc async
  //       CHECK:     scf.yield %[[A]]
  //       CHECK:   } else {
  //       CHECK:     %[[B:.*]], %{{.*}} = gpu.alloc async
  //       CHECK:     scf.yield %[[B]]
  //       CHECK:   }
  //   CHECK-NOT:   gpu.dealloc
  //       CHECK:   scf.yield %[[INNER]]
  //       CHECK: } else {
  //       CHECK:   %[[C:.*]], %{{.*}} = gpu.alloc async
  //       CHECK:   scf.yield %[[C]]
  //       CHECK: %[[T:.*]] = gpu.launch_func async {{.*}} args(%[[TMP]] : memref<?xf32>
  //       CHECK: gpu.dealloc async [%[[T]]] %[[TMP]] : memref<?xf32>
  //  CHECK-NEXT: return
  func.func @nested_branch_buffer(%in: memref<?xf32>, %n: index, %c: i1, %d: i1) -> memref<?xf32> {
    %c1 = arith.constant 1 : index
    %tmp = scf.if %c -> memref<?xf32> {
      %inner = scf.if %d -> memref<?xf32> {
        %a = memref.alloc(%n) : memref<?xf32>
        func.call @__linattn_launch_k(%c1, %c1, %c1, %c1, %c1, %c1, %in, %a, %n) : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) -> ()
        scf.yield %a : memref<?xf32>
      } else {
        %b = memref.alloc(%n) : memref<?xf32>
        func.call @__linattn_launch_k(%c1, %c1, %c1, %c1, %c1, %c1, %in, %b, %n) : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) -> ()
        scf.yield %b : memref<?xf32>
      }
      scf.yield %inner : memref<?xf32>
    } else {
      %e = memref.alloc(%n) : memref<?xf32>
      func.call @__linattn_launch_k(%c1, %c1, %c1, %c1, %c1, %c1, %in, %e, %n) : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) -> ()
      scf.yield %e : memref<?xf32>
    }
    %out = memref.alloc(%n) : memref<?xf32>
    call @__linattn_launch_k(%c1, %c1, %c1, %c1, %c1, %c1, %tmp, %out, %n) : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, index) -> ()
    return %out : memref<?xf32>
  }
}

// -----

// A result that no kernel writes (an argument returned as it is) is copied
// into its out-param on the stream, device to device.

// CHECK-LABEL: func.func @returns_argument(
//  CHECK-SAME: %[[IN:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>, %[[STREAM:.*]]: !llvm.ptr)
//       CHECK: %[[T0:.*]] = builtin.unrealized_conversion_cast %[[STREAM]]
//  CHECK-NEXT: gpu.memcpy async [%[[T0]]] %[[OUT]], %[[IN]] : memref<4xf32>, memref<4xf32>
//   CHECK-NOT: memref.copy
module attributes {gpu.container_module} {
  func.func @returns_argument(%in: memref<4xf32>) -> memref<4xf32> {
    return %in : memref<4xf32>
  }
}

// -----

// negative_: host computation on device memory (an op without a kernel).

module attributes {gpu.container_module} {
  func.func @negative_host_loop(%in: memref<4xf32>) -> memref<4xf32> {
    %out = memref.alloc() : memref<4xf32>
    // expected-error @+1 {{device-buffers: 'linalg.generic' would run on the host on device memory (every computation must be a GPU kernel: no host fallback, copies or constants)}}
    linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%in : memref<4xf32>) outs(%out : memref<4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %e = math.exp %a : f32
      linalg.yield %e : f32
    }
    return %out : memref<4xf32>
  }
}

// -----

// negative_: a constant tensor lives in host memory.

module attributes {gpu.container_module} {
  memref.global "private" constant @table : memref<4xf32> = dense<1.0>
  func.func @negative_constant() -> memref<4xf32> {
    // expected-error @+1 {{device-buffers: 'memref.get_global' would run on the host on device memory}}
    %0 = memref.get_global @table : memref<4xf32>
    return %0 : memref<4xf32>
  }
}

// -----

// negative_: calls of other functions would run on the host.

module attributes {gpu.container_module} {
  func.func private @helper(memref<4xf32>)
  func.func @negative_call(%in: memref<4xf32>) {
    // expected-error @+1 {{device-buffers: @negative_call calls @helper, which would run on the host}}
    call @helper(%in) : (memref<4xf32>) -> ()
    return
  }
}

// -----

// negative_: results are buffers.

module attributes {gpu.container_module} {
  // expected-error @+1 {{device-buffers: result #0 of @negative_scalar_result is not a tensor: results are returned in device buffers}}
  func.func @negative_scalar_result(%x: f32) -> f32 {
    return %x : f32
  }
}
