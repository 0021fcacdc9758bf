// RUN: linattn-opt %s --linattn-gpu-portable-target -split-input-file -verify-diagnostics
// RUN: linattn-opt %s --linattn-gpu-portable-target=portable-chips=false -split-input-file -verify-diagnostics

// Bulk copies below PTX 8.0 (which NVPTX cannot select, and would abort
// on): the features' version.
gpu.module @old_features [#nvvm.target<chip = "sm_90a", features = "+ptx78">] {
  llvm.func @k(%dst: !llvm.ptr<7>, %src: !llvm.ptr<1>, %bar: !llvm.ptr<3>, %size: i32) attributes {gpu.kernel, nvvm.kernel} {
    // expected-error @below {{kernels with bulk copies (nvvm.cp.async.bulk.shared.cluster.global) need PTX 8.0 or later; the target #nvvm.target<chip = "sm_90a", features = "+ptx78"> emits PTX 7.8}}
    nvvm.cp.async.bulk.shared.cluster.global %dst, %src, %bar, %size : !llvm.ptr<7>, <1>
    llvm.return
  }
}

// -----

// The minimum of sm_90 without features.
gpu.module @portable_chip [#nvvm.target<chip = "sm_90">] {
  llvm.func @k(%bar: !llvm.ptr<3>, %phase: i32, %ticks: i32) attributes {gpu.kernel, nvvm.kernel} {
    // expected-error @below {{need PTX 8.0 or later; the target #nvvm.target<chip = "sm_90"> emits PTX 7.8}}
    nvvm.mbarrier.try_wait.parity %bar, %phase, %ticks : !llvm.ptr<3>, i32, i32
    llvm.return
  }
}

// -----

// With portable-chips=false the pass only checks.
gpu.module @checked_only [#nvvm.target<chip = "sm_90", features = "+ptx78">] {
  llvm.func @k(%bar: !llvm.ptr<3>, %bytes: i32) attributes {gpu.kernel, nvvm.kernel} {
    // expected-error @below {{need PTX 8.0 or later}}
    nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
    llvm.return
  }
}

// -----

// An overloaded intrinsic named for other types than its operands': LLVM
// would take the name's, and NVPTX, unable to select it, abort.
gpu.module @intrinsic_suffix [#nvvm.target<chip = "sm_90">] {
  llvm.func @k(%x: f64) -> f64 attributes {gpu.kernel, nvvm.kernel} {
    // expected-error @below {{'llvm.nvvm.ex2.approx.ftz.f32' on these types is 'llvm.nvvm.ex2.approx.ftz.f64'}}
    %y = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%x) : (f64) -> f64
    llvm.return %y : f64
  }
}

// -----

// A name that is no intrinsic's.
gpu.module @intrinsic_unknown [#nvvm.target<chip = "sm_90">] {
  llvm.func @k(%x: f32) -> f32 attributes {gpu.kernel, nvvm.kernel} {
    // expected-error @below {{'llvm.nvvm.no.such.thing' is not an LLVM intrinsic}}
    %y = llvm.call_intrinsic "llvm.nvvm.no.such.thing"(%x) : (f32) -> f32
    llvm.return %y : f32
  }
}

// -----

// Operands the intrinsic does not take: a non-overloaded intrinsic with one
// operand too many.
gpu.module @intrinsic_operands [#nvvm.target<chip = "sm_90">] {
  llvm.func @k(%p: !llvm.ptr<1>, %x: i32) attributes {gpu.kernel, nvvm.kernel} {
    // expected-error @below {{the operand and result types of 'llvm.nvvm.prefetch.global.L2' are not the intrinsic's}}
    llvm.call_intrinsic "llvm.nvvm.prefetch.global.L2"(%p, %x) : (!llvm.ptr<1>, i32) -> ()
    llvm.return
  }
}
