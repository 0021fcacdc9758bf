// RUN: not linattn-opt %s --linattn-lower-to-cpu 2>&1 | FileCheck %s
// RUN: not linattn-opt %s --linattn-lower-to-nvvm=emulate=true 2>&1 | FileCheck %s
// A negative dimension index is an error at its op in both pipelines. The
// GPU pipeline's canonicalizer crashed on it once bufferization made it a
// memref.dim (upstream's dim-of-gpu.alloc pattern indexes the shape with
// it), and the CPU pipeline generated a read before the memref descriptor's
// sizes; `not` fails on a crash.
// CHECK: dim-index-errors.mlir:[[@LINE+6]]:11: error: dimension index -1 is out of range for 'tensor<?x?xf32>' (rank 2)
// CHECK-NOT: Stack dump
func.func @slice(%t: tensor<?x?xf32>, %n: index) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c-1 = arith.subi %c0, %c1 : index
  %cols = tensor.dim %t, %c-1 : tensor<?x?xf32>
  %s = tensor.extract_slice %t[0, 0] [%n, %cols] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  return %s : tensor<?x?xf32>
}
