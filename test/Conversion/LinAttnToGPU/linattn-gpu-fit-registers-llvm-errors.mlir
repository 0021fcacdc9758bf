// REQUIRES: cuda-toolkit
// The pass compiles each module to PTX as gpu-module-to-binary would: what
// the NVPTX backend cannot compile (it has no 2^x on f64) is an error on the
// module, with the backend's reason, where the backend would abort.
// RUN: not linattn-opt %s --linattn-gpu-fit-registers="cuda-path=%cuda_path" 2>&1 | FileCheck %s
// CHECK: linattn-gpu-fit-registers-llvm-errors.mlir:[[@LINE+4]]:3: error: LLVM could not compile the GPU module: Cannot select: intrinsic %llvm.nvvm.ex2.approx.ftz
// CHECK-NOT: Stack dump

module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<O = 3, chip = "sm_90">] {
    llvm.func @k(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
      %x = llvm.load %p : !llvm.ptr<1> -> f64
      %y = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f64"(%x) : (f64) -> f64
      llvm.store %y, %p : f64, !llvm.ptr<1>
      llvm.return
    }
  }
  func.func @host(%p: !llvm.ptr<1>) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %c0 = arith.constant 0 : i32
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c0 args(%p : !llvm.ptr<1>)
    return
  }
}
