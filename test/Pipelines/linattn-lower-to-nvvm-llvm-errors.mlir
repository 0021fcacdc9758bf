// RUN: not linattn-opt %s --linattn-lower-to-nvvm=format=isa 2>&1 | FileCheck %s
// A kernel the NVPTX backend cannot compile (it has no 2^x on f64) fails
// the pipeline with the backend's reason on its module; `not` fails on a
// crash, which the backend's fatal error was.
// CHECK: linattn-lower-to-nvvm-llvm-errors.mlir:[[@LINE+3]]:3: error: LLVM could not compile the GPU module: Cannot select: intrinsic %llvm.nvvm.ex2.approx.ftz
// CHECK-NOT: Stack dump
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
    llvm.func @k(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel} {
      %x = llvm.load %p : !llvm.ptr<1> -> f64
      %y = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f64"(%x) : (f64) -> f64
      llvm.store %y, %p : f64, !llvm.ptr<1>
      llvm.return
    }
  }
}
