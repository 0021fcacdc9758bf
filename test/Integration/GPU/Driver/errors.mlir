// REQUIRES: cuda-toolkit
// Failures of the CUDA driver, injected by the fake driver (test/FakeCuda),
// as the real runtime library reports them through linattn-run: each names
// the driver call and its error, and the tool exits with an error. After a
// failed allocation nothing is launched: the kernel would fault on memory
// that is not there, which on a GPU ends the process's CUDA context.

// RUN: rm -f %t.oom.log
// RUN: env LD_LIBRARY_PATH=%fake_cuda_dir LINATTN_FAKE_CUDA_LOG=%t.log LINATTN_FAKE_CUDA_DEVICES=0 not linattn-run %s --entry=main --target=cuda --random-seed=1 2>&1 | FileCheck %s --check-prefix=NO-DEVICE
// RUN: env LD_LIBRARY_PATH=%fake_cuda_dir LINATTN_FAKE_CUDA_LOG=%t.log LINATTN_FAKE_CUDA_FAIL=cuLaunchKernel=CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES not linattn-run %s --entry=main --target=cuda --random-seed=1 2>&1 | FileCheck %s --check-prefix=LAUNCH
// RUN: env LD_LIBRARY_PATH=%fake_cuda_dir LINATTN_FAKE_CUDA_LOG=%t.oom.log LINATTN_FAKE_CUDA_FAIL=cuMemAllocAsync=CUDA_ERROR_OUT_OF_MEMORY not linattn-run %s --entry=main --target=cuda --random-seed=1 2>&1 | FileCheck %s --check-prefix=OOM
// RUN: FileCheck %s --check-prefix=OOM-LOG < %t.oom.log
// RUN: env LD_LIBRARY_PATH=%fake_cuda_dir LINATTN_FAKE_CUDA_LOG=%t.log LINATTN_FAKE_CUDA_CC=8.0 not linattn-run %s --entry=main --target=cuda --pipeline='linattn-lower-to-nvvm{format=isa}' --random-seed=1 2>&1 | FileCheck %s --check-prefix=OLD-CHIP
// RUN: env LD_LIBRARY_PATH=%fake_cuda_dir LINATTN_FAKE_CUDA_LOG=%t.log LINATTN_FAKE_CUDA_FAIL=cuModuleLoadData=CUDA_ERROR_INVALID_IMAGE not linattn-run %s --entry=main --target=cuda --random-seed=1 2>&1 | FileCheck %s --check-prefix=IMAGE
// RUN: %linattn_python -c "import numpy as np; [np.save('%t.' + n + '.npy', np.ones((1, 2, d), np.float32)) for n, d in (('q', 16), ('k', 16), ('v', 2400000))]"
// RUN: env LD_LIBRARY_PATH=%fake_cuda_dir LINATTN_FAKE_CUDA_LOG=%t.log not linattn-run %s --entry=wide --target=cuda --input=%t.q.npy --input=%t.k.npy --input=%t.v.npy 2>&1 | FileCheck %s --check-prefix=GRID

// NO-DEVICE: linattn-cuda-runtime: cuInit failed: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected
// NO-DEVICE: linattn-run: no CUDA device: cuInit failed: CUDA_ERROR_NO_DEVICE

// A failed launch names the kernel and its geometry.
// LAUNCH: linattn-run: the GPU runtime failed: cuLaunchKernel of linattn_scan_forward_elu_normalized_0 (grid 2x1x1, block 128x1x1, 0 bytes of dynamic shared memory) failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many resources requested for launch

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

// A dynamic Dv of 2400000 columns needs 75000 blocks of 32 columns in grid y,
// past CUDA's 65535: the launch is refused before the driver would truncate
// the size. (A static Dv that large is a compile-time error.)
// GRID: linattn-run: the GPU runtime failed: cannot launch linattn_scan_forward_features_{{[0-9]+}} (grid 1x75000x1, block 128x1x1, 0 bytes of dynamic shared memory): CUDA's grid has at most 2^31 - 1 blocks in x and 65535 in y and z
func.func @wide(%q: tensor<1x2x16xf32>, %k: tensor<1x2x16xf32>, %v: tensor<1x2x?xf32>) -> tensor<1x2x?xf32> {
  %o, %s, %z = linattn.scan forward %q, %k, %v : tensor<1x2x16xf32>, tensor<1x2x16xf32>, tensor<1x2x?xf32> -> tensor<1x2x?xf32>, tensor<1x16x?xf32>, tensor<1x16xf32>
  return %o : tensor<1x2x?xf32>
}
