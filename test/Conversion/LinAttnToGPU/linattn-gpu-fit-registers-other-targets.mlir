// Launches of modules for other targets than NVVM need no ptxas: the pass
// leaves them as they are.
// RUN: env PATH=%t.none linattn-opt %s --linattn-gpu-fit-registers="cuda-path=%t.none" | FileCheck %s
// CHECK: gpu.module @amd [#rocdl.target<chip = "gfx90a">]
// CHECK-NOT: minctasm
module attributes {gpu.container_module} {
  gpu.module @amd [#rocdl.target<chip = "gfx90a">] {
    llvm.func @k() attributes {gpu.kernel} {
      llvm.return
    }
  }
  func.func @host() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @amd::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}
