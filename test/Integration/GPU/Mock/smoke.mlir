// REQUIRES: cuda-toolkit
// Without a GPU: the smoke cases of the GPU tests (one per kernel and a host
// fallback) lowered with linattn-lower-to-nvvm and run against the mock
// runtime; checks that they lower, launch, free every device buffer and
// return results of the right shapes (not their values).
// RUN: rm -rf %t && %linattn_python %S/../CUDA/gpu_cases.py --group=smoke --mock --tools=%linattn_obj_root/bin --workdir=%t | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: smoke: {{[0-9]+}} of {{[0-9]+}} cases passed
