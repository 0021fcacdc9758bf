// linattn-lower-to-nvvm{emulate=true}: the kernels stay MLIR (no NVVM, no
// PTX, no CUDA toolkit), embedded as text that mgpuModuleLoad receives; the
// host side is the one of the compiled path. Checked in the IR, in the mock
// runtime's log (which only logs), and run by the emulator.

// RUN: linattn-opt %s --linattn-lower-to-nvvm="emulate=true" | FileCheck %s --check-prefix=IR
// RUN: linattn-opt %s --linattn-lower-to-nvvm="emulate=true" | FileCheck %s --check-prefix=NO-NVVM
// RUN: rm -f %t.mock.log %t.emulator.log
// RUN: env LINATTN_MOCK_GPU_LOG=%t.mock.log linattn-run %s --target=cuda --mock-gpu --pipeline='linattn-lower-to-nvvm{emulate=true}' --random-seed=1 | FileCheck %s --check-prefix=MOCK-OUT
// RUN: FileCheck %s --check-prefix=LOG < %t.mock.log
// RUN: env LINATTN_MOCK_GPU_LOG=%t.emulator.log linattn-run %s --target=cuda --emulate-gpu --pipeline='linattn-lower-to-nvvm{chip=sm_80}' --random-seed=1 | FileCheck %s --check-prefix=EMULATOR-OUT
// RUN: FileCheck %s --check-prefix=LOG < %t.emulator.log
// RUN: env LINATTN_EMULATE_GPU=1 linattn-run %s --target=cuda --random-seed=1 --repeat=2 | FileCheck %s --check-prefix=EMULATOR-OUT
// RUN: not linattn-run %s --target=cuda --emulate-gpu --mock-gpu --random-seed=1 2>&1 | FileCheck %s --check-prefix=BOTH

// IR-LABEL: llvm.func @causal(
// IR: gpu.launch_func <%{{.*}} : !llvm.ptr> @linattn_kernels::@linattn_scan_forward_elu_normalized_0
// IR: gpu.binary @linattn_kernels [#gpu.object<#nvvm.target<O = 0, chip = "sm_90">, bin = "{{.*}}gpu.func @linattn_scan_forward_elu_normalized_0({{.*}}scf.for

// NO-NVVM-NOT: {{^ *}}gpu.module
// NO-NVVM-NOT: nvvm.read.ptx
// NO-NVVM-NOT: llvm.func @linattn_scan

// MOCK-OUT: device: mock GPU (host memory, kernels not run)
// MOCK-OUT: result #0: 2x4x7x40xf32

// EMULATOR-OUT: device: emulated GPU (MLIR kernel interpreter on the host CPU, {{[0-9]+}} threads)
// EMULATOR-OUT: result #0: 2x4x7x40xf32

// Four buffers (q, k, v, O) of five descriptor words each, N and Dv.
// LOG: mgpu: module-load bin {{[0-9]+}} bytes
// LOG-NEXT: mgpu: stream-create s1
// LOG: mgpu: launch linattn_scan_forward_elu_normalized_0 grid 8x2x1 block 128x1x1 smem 0 params 22 s1
// LOG: mgpu: module-unload
// LOG-NOT: leak

// BOTH: linattn-run: --emulate-gpu and --mock-gpu exclude each other

func.func @causal(%q: tensor<2x4x7x16xf32>, %k: tensor<2x4x7x16xf32>, %v: tensor<2x4x7x40xf32>) -> tensor<2x4x7x40xf32> {
  %0 = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6) : tensor<2x4x7x16xf32>, tensor<2x4x7x16xf32>, tensor<2x4x7x40xf32> -> tensor<2x4x7x40xf32>
  return %0 : tensor<2x4x7x40xf32>
}
