// RUN: linattn-opt %s --split-input-file --linattn-check-placement --verify-diagnostics
// RUN: not linattn-opt %s --split-input-file --linattn-lower-to-cpu 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not linattn-opt %s --split-input-file --linattn-lower-to-nvvm=emulate 2>&1 | FileCheck %s --check-prefix=NVVM
// RUN: not linattn-opt %s --split-input-file --convert-linattn-to-gpu 2>&1 | FileCheck %s --check-prefix=GPU
// RUN: not linattn-opt %s --split-input-file --pass-pipeline='builtin.module(linattn-check-placement{lowering=my-pipeline})' 2>&1 | FileCheck %s --check-prefix=NAMED

// The lowerings rewrite the functions directly in the module they run on,
// and their launch stubs and runtime declarations go into that module: a
// linattn op in a function of a nested gpu.module or builtin.module is
// reported, by the check and at the start of every lowering, rather than
// failing later with an unrelated message.

gpu.module @device {
  func.func @in_gpu_module(%q: tensor<2x3x4xf32>, %v: tensor<2x3x5xf32>)
      -> tensor<2x3x5xf32> {
    // expected-error @+1 {{'linattn.scan' is in a function nested in 'gpu.module': the lowering pipeline lowers only the functions directly in the module it runs on}}
    %o, %s, %z = linattn.scan forward %q, %q, %v
        : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x5xf32>
        -> tensor<2x3x5xf32>, tensor<2x4x5xf32>, tensor<2x4xf32>
    return %o : tensor<2x3x5xf32>
  }
}
// CPU: 'linattn.scan' is in a function nested in 'gpu.module': linattn-lower-to-cpu lowers only the functions directly in the module it runs on
// NVVM: 'linattn.scan' is in a function nested in 'gpu.module': linattn-lower-to-nvvm lowers only the functions directly in the module it runs on
// GPU: 'linattn.scan' is in a function nested in 'gpu.module': convert-linattn-to-gpu lowers only the functions directly in the module it runs on
// NAMED: 'linattn.scan' is in a function nested in 'gpu.module': my-pipeline lowers only the functions directly in the module it runs on

// -----

// A lone top-level module is the one the lowerings run on: the nested one
// needs an explicit parent.
module {
  module @inner {
    func.func @in_nested_module(%q: tensor<4x8xf32>, %v: tensor<4x2xf32>) -> tensor<4x2xf32> {
      // expected-error @+1 {{'linattn.attention' is in a function nested in 'builtin.module'}}
      %o = linattn.attention elu %q, %q, %v causal
          : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x2xf32> -> tensor<4x2xf32>
      return %o : tensor<4x2xf32>
    }
  }
}
// CPU: 'linattn.attention' is in a function nested in 'builtin.module': linattn-lower-to-cpu
// NVVM: 'linattn.attention' is in a function nested in 'builtin.module': linattn-lower-to-nvvm
// GPU: 'linattn.attention' is in a function nested in 'builtin.module': convert-linattn-to-gpu

// -----

// An op outside any function (the module's body is a graph region).
module {
  %x = tensor.empty() : tensor<4x8xf32>
  // expected-error @+1 {{'linattn.feature_map' is not in a function: the lowering pipeline lowers only the functions directly in the module it runs on}}
  %f = linattn.feature_map elu %x : tensor<4x8xf32> -> tensor<4x8xf32>
}
// CPU: 'linattn.feature_map' is not in a function: linattn-lower-to-cpu
// NVVM: 'linattn.feature_map' is not in a function: linattn-lower-to-nvvm
// GPU: 'linattn.feature_map' is not in a function: convert-linattn-to-gpu

// -----

// The module's own functions pass, however deep the op sits in them; a
// nested module without linattn ops is no concern of the check.
func.func @top_level(%q: tensor<2x3x4xf32>, %v: tensor<2x3x5xf32>, %c: i1) -> tensor<2x3x5xf32> {
  %o = scf.if %c -> tensor<2x3x5xf32> {
    %a, %s, %z = linattn.scan forward %q, %q, %v
        : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x5xf32>
        -> tensor<2x3x5xf32>, tensor<2x4x5xf32>, tensor<2x4xf32>
    scf.yield %a : tensor<2x3x5xf32>
  } else {
    scf.yield %v : tensor<2x3x5xf32>
  }
  return %o : tensor<2x3x5xf32>
}
module @plain {
  func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
// CPU-NOT: linattn-lower-to-cpu lowers only
// CPU: llvm.func @top_level
// NVVM-NOT: linattn-lower-to-nvvm lowers only
// NVVM: llvm.func @top_level
// GPU-NOT: convert-linattn-to-gpu lowers only
// GPU: func.func @top_level
// GPU: call @__linattn_launch_
