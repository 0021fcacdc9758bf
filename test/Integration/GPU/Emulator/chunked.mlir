// The "chunked" cases of the GPU numerical tests (../CUDA/gpu_cases.py) with the
// kernels run on the CPU by the GPU emulator (linattn-run --emulate-gpu),
// against the same float64 references and tolerances as on a GPU.
// RUN: rm -rf %t && %linattn_python %S/../CUDA/gpu_cases.py --group=chunked --emulate --tools=%linattn_obj_root/bin --workdir=%t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: chunked: {{[0-9]+}} of {{[0-9]+}} cases passed
