// RUN: linattn-opt %s -linattn-lower-asserts -split-input-file -verify-diagnostics | FileCheck %s

// A failed assert writes its message and a newline to stderr (fd 2), then
// aborts; a passing one branches on.
// CHECK-DAG: llvm.mlir.global private constant @[[MSG:linattn_assert_message[_0-9]*]]("sizes differ\0A")
// CHECK-DAG: llvm.func @write(i32, !llvm.ptr, i64) -> i64
// CHECK-DAG: llvm.func @abort()
// CHECK-LABEL: func.func @check
// CHECK: cf.cond_br %{{.*}}, ^[[OK:.*]], ^[[FAIL:.*]]
// CHECK: ^[[FAIL]]:
// CHECK: %[[TEXT:.*]] = llvm.mlir.addressof @[[MSG]] : !llvm.ptr
// CHECK: %[[FD:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: %[[LEN:.*]] = llvm.mlir.constant(13 : i64) : i64
// CHECK: llvm.call @write(%[[FD]], %[[TEXT]], %[[LEN]])
// CHECK: llvm.call @abort()
// CHECK: llvm.unreachable
// CHECK: ^[[OK]]:
// CHECK: return
func.func @check(%ok: i1) {
  cf.assert %ok, "sizes differ"
  return
}

// -----

// Two asserts: two messages, one declaration of each C function.
// CHECK-COUNT-2: llvm.mlir.global private constant @linattn_assert_message
// CHECK-COUNT-1: llvm.func @write
// CHECK-LABEL: func.func @two
// CHECK-NOT: cf.assert
func.func @two(%a: i1, %b: i1) {
  cf.assert %a, "first"
  cf.assert %b, "second"
  return
}

// -----

// Device code keeps its asserts: the kernel cannot call write.
// CHECK-LABEL: gpu.module @kernels
// CHECK: cf.assert
// CHECK-NOT: llvm.func @write
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%ok: i1) kernel {
      cf.assert %ok, "in a kernel"
      gpu.return
    }
  }
}

// -----

// A module whose `write` is something else is an error, not a wrong call.
// expected-error @+1 {{'write' is not the C function '!llvm.func<i64 (i32, ptr, i64)>' that the lowered cf.assert calls}}
func.func private @write(%x: f32)
func.func @clash(%ok: i1) {
  cf.assert %ok, "message"
  return
}
