// linattn-run --target=cuda on a machine without a GPU: the CUDA runtime
// library loads (libcuda is opened at run time) and says why it cannot run;
// with LINATTN_CUDA_ABORT_ON_ERROR=1 it aborts instead. Unknown targets and
// runtimes that are not linattn's are reported too.
// REQUIRES: cuda-toolkit
// UNSUPPORTED: cuda-gpu
// RUN: not linattn-run %s --target=cuda --random-seed=0 2>&1 | FileCheck %s --check-prefix=NO-GPU
// RUN: env LINATTN_CUDA_ABORT_ON_ERROR=1 not --crash linattn-run %s --target=cuda --random-seed=0 2>&1 | FileCheck %s --check-prefix=ABORT
// RUN: not linattn-run %s --target=tpu --random-seed=0 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not linattn-run %s --target=cuda --gpu-runtime=%t.missing.so --random-seed=0 2>&1 | FileCheck %s --check-prefix=MISSING

// (No driver: "cannot load the CUDA driver (libcuda.so.1)"; a driver
// without a device: "cuInit failed: CUDA_ERROR_NO_DEVICE: ...".)
// NO-GPU: linattn-cuda-runtime: {{cannot load the CUDA driver|cuInit failed}}
// NO-GPU: linattn-run: no CUDA device: {{cannot load the CUDA driver|cuInit failed}}
// ABORT: linattn-cuda-runtime: {{cannot load the CUDA driver|cuInit failed}}
// TARGET: for the --target option: Cannot find option named 'tpu'!
// MISSING: linattn-run: cannot load the GPU runtime {{.*}}.missing.so

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
