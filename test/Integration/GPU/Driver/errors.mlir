// REQUIRES: cuda-toolkit
// Failures of the CUDA driver, injected by the fake driver (test/FakeCuda),
// as the real runtime library reports them through linattn-run: each names
// the driver call and its error, and the tool exits with an error. After a
// failed allocation nothing is launched: the kernel would fault on memory
// that is not there, which on a GPU ends the process's CUDA context.

// RUN: rm -f %t.oom.log
// RUN: env LD_LIBRARY_PATH=%fake_cuda_dir LINATTN_FAKE_CUDA_LOG=%t.log LINATTN_FAKE_CUDA_DEVICES=0 not linattn-run %s --target=cuda --random-seed=1 2>&1 | FileCheck %s --check-prefix=NO-DEVICE
// RUN: env LD_LIBRARY_PATH=%fake_cuda_dir LINATTN_FAKE_CUDA_LOG=%t.log LINATTN_FAKE_CUDA_FAIL=cuLaunchKernel=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES not linattn-run %s --target=cuda --random-seed=1 2>&1 | FileCheck %s --check-prefix=LAUNCH
// RUN: env LD_LIBRARY_PATH=%fake_cuda_dir LINATTN_FAKE_CUDA_LOG=%t.oom.log LINATTN_FAKE_CUDA_FAIL=cuMemAllocAsync=CUDA_ERROR_OUT_OF_MEMORY not linattn-run %s --target=cuda --random-seed=1 2>&1 | FileCheck %s --check-prefix=OOM
// RUN: FileCheck %s --check-prefix=OOM-LOG < %t.oom.log
// RUN: env LD_LIBRARY_PATH=%fake_cuda_dir LINATTN_FAKE_CUDA_LOG=%t.log LINATTN_FAKE_CUDA_CC=8.0 not linattn-run %s --target=cuda --pipeline='linattn-lower-to-nvvm{format=isa}' --random-seed=1 2>&1 | FileCheck %s --check-prefix=OLD-CHIP
// RUN: env LD_LIBRARY_PATH=%fake_cuda_dir LINATTN_FAKE_CUDA_LOG=%t.log LINATTN_FAKE_CUDA_FAIL=cuModuleLoadData=CUDA_ERROR_INVALID_IMAGE not linattn-run %s --target=cuda --random-seed=1 2>&1 | FileCheck %s --check-prefix=IMAGE

// NO-DEVICE: linattn-cuda-runtime: cuInit failed: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected
// NO-DEVICE: linattn-run: no CUDA device: cuInit failed: CUDA_ERROR_NO_DEVICE

// LAUNCH: linattn-run: the GPU runtime failed: cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many resources requested for launch

// The inputs' buffers are not allocated: their copies fail in the driver,
// the kernel is skipped, and the first failure is the one reported.
// OOM: linattn-cuda-runtime: cuMemAllocAsync failed: CUDA_ERROR_OUT_OF_MEMORY: out of memory
// OOM: linattn-cuda-runtime: kernels are not launched until the failure above is cleared
// OOM: linattn-run: the GPU runtime failed: cuMemAllocAsync failed: CUDA_ERROR_OUT_OF_MEMORY: out of memory
// OOM-LOG-NOT: cuda: launch
// OOM-LOG: cuda: module-unload

// PTX for sm_90 on a device of compute capability 8.0: the driver cannot
// compile it, and the launch says its kernel failed to load.
// OLD-CHIP: linattn-cuda-runtime: cuModuleLoadDataEx (PTX JIT) failed: CUDA_ERROR_INVALID_PTX
// OLD-CHIP: linattn-cuda-runtime: no module to find kernel linattn_scan_forward_elu_normalized_0 in (it failed to load)
// OLD-CHIP: linattn-run: the GPU runtime failed: cuModuleLoadDataEx (PTX JIT) failed: CUDA_ERROR_INVALID_PTX

// IMAGE: linattn-run: the GPU runtime failed: cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE: device kernel image is invalid

func.func @main(%q: tensor<2x7x16xf32>, %k: tensor<2x7x16xf32>, %v: tensor<2x7x8xf32>) -> tensor<2x7x8xf32> {
  %0 = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6) : tensor<2x7x16xf32>, tensor<2x7x16xf32>, tensor<2x7x8xf32> -> tensor<2x7x8xf32>
  return %0 : tensor<2x7x8xf32>
}
