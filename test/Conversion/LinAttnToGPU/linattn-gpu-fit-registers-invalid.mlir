// Without ptxas (no toolkit at cuda-path, none on PATH) kernels that are
// launched cannot be fitted: an error, not a silent skip.
// RUN: not env PATH=%t.none linattn-opt %s --linattn-gpu-fit-registers="cuda-path=%t.none" 2>&1 | FileCheck %s
// CHECK: error: linattn-gpu-fit-registers: no ptxas in {{.*}}.none/bin or PATH

// A module that launches nothing needs no ptxas.
// RUN: env PATH=%t.none linattn-opt %S/linattn-gpu-portable-target.mlir --linattn-gpu-fit-registers -split-input-file | FileCheck %s --check-prefix=NOLAUNCH
// NOLAUNCH: gpu.module @plain

module attributes {gpu.container_module} {
  gpu.module @m [#nvvm.target<O = 3, chip = "sm_90">] {
    llvm.func @k() attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
      llvm.return
    }
  }
  func.func @host() {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1)
    return
  }
}
