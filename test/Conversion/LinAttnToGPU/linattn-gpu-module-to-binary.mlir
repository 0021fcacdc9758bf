// RUN: linattn-opt %s --linattn-gpu-module-to-binary=format=isa -split-input-file -verify-diagnostics | FileCheck %s
// RUN: not linattn-opt %s --linattn-gpu-module-to-binary=format=isa -split-input-file 2>&1 | FileCheck %s --check-prefix=ERR

// What the NVPTX backend compiles becomes a binary, as gpu-module-to-binary
// makes it.
// CHECK-LABEL: gpu.binary @compiles
// CHECK-SAME: #gpu.object<#nvvm.target<chip = "sm_90">
// CHECK-SAME: ex2.approx.ftz.f32
module attributes {gpu.container_module} {
  gpu.module @compiles [#nvvm.target<chip = "sm_90">] {
    llvm.func @k(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel} {
      %x = llvm.load %p : !llvm.ptr<1> -> f32
      %y = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%x) : (f32) -> f32
      llvm.store %y, %p : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}

// -----

// Calls it has no instruction for abort the backend: here they fail the
// pass on their module, with the backend's reason. A name and types LLVM
// defines (linattn-gpu-portable-target checks those) on a type NVPTX does
// not select, and the L2 prefetch, which LLVM selects only for sm_90 with
// PTX 8.0 (sm_90's minimum is 7.8).
// ERR: error: LLVM could not compile the GPU module: Cannot select: intrinsic %llvm.nvvm.ex2.approx.ftz
// ERR: error: LLVM could not compile the GPU module: Cannot select: intrinsic %llvm.nvvm.prefetch.global.L2
module attributes {gpu.container_module} {
  // expected-error @below {{LLVM could not compile the GPU module: Cannot select: intrinsic %llvm.nvvm.ex2.approx.ftz}}
  gpu.module @f64_exp2 [#nvvm.target<chip = "sm_90">] {
    llvm.func @k(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel} {
      %x = llvm.load %p : !llvm.ptr<1> -> f64
      %y = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f64"(%x) : (f64) -> f64
      llvm.store %y, %p : f64, !llvm.ptr<1>
      llvm.return
    }
  }
}

// -----

// The error is on the module that failed, after those compiled before it.
module attributes {gpu.container_module} {
  gpu.module @first [#nvvm.target<chip = "sm_90">] {
    llvm.func @k() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
  // expected-error @below {{LLVM could not compile the GPU module: Cannot select: intrinsic %llvm.nvvm.prefetch.global.L2}}
  gpu.module @prefetch [#nvvm.target<chip = "sm_90">] {
    llvm.func @k(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel} {
      llvm.call_intrinsic "llvm.nvvm.prefetch.global.L2"(%p) : (!llvm.ptr<1>) -> ()
      llvm.return
    }
  }
}

// -----

// The process goes on compiling after a failure (-split-input-file runs
// every case in one process).
// CHECK-LABEL: gpu.binary @after_failures
// CHECK-SAME: prefetch.global.L2
module attributes {gpu.container_module} {
  gpu.module @after_failures [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    llvm.func @k(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel} {
      llvm.call_intrinsic "llvm.nvvm.prefetch.global.L2"(%p) : (!llvm.ptr<1>) -> ()
      llvm.return
    }
  }
}
