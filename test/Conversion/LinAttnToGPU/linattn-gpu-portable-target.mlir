// RUN: linattn-opt %s --linattn-gpu-portable-target -split-input-file | FileCheck %s
// RUN: linattn-opt %s --linattn-gpu-portable-target=portable-chips=false -split-input-file | FileCheck %s --check-prefix=KEPT
// KEPT-COUNT-4: #nvvm.target<{{.*}}chip = "sm_90a"

// No op needs sm_90a: the module gets sm_90, its other fields kept.
// CHECK-LABEL: gpu.module @plain
// CHECK-SAME: [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80", flags = {fast}>]
gpu.module @plain [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80", flags = {fast}>] {
  llvm.func @k() attributes {gpu.kernel, nvvm.kernel} {
    %0 = nvvm.read.ptx.sreg.clusterid.x : i32
    llvm.return
  }
}

// -----

// wgmma needs it.
// CHECK-LABEL: gpu.module @wgmma
// CHECK-SAME: [#nvvm.target<chip = "sm_90a">]
gpu.module @wgmma [#nvvm.target<chip = "sm_90a">] {
  llvm.func @k() attributes {gpu.kernel, nvvm.kernel} {
    nvvm.wgmma.fence.aligned
    llvm.return
  }
}

// -----

// nvgpu's warpgroup ops, which become wgmma, too.
// CHECK-LABEL: gpu.module @warpgroup
// CHECK-SAME: [#nvvm.target<chip = "sm_90a">]
gpu.module @warpgroup [#nvvm.target<chip = "sm_90a">] {
  func.func @k() {
    %acc = nvgpu.warpgroup.mma.init.accumulator -> !nvgpu.warpgroup.accumulator<fragmented = vector<64x128xf32>>
    return
  }
}

// -----

// Only targets with the suffix change; other chips and targets stay.
// CHECK-LABEL: gpu.module @several
// CHECK-SAME: [#nvvm.target<chip = "sm_80">, #nvvm.target<chip = "sm_100">, #rocdl.target<chip = "gfx90a">]
gpu.module @several [#nvvm.target<chip = "sm_80">, #nvvm.target<chip = "sm_100a">, #rocdl.target<chip = "gfx90a">] {
}

// -----

// Chips that are not sm_, a number and "a" are left as they are.
// CHECK-LABEL: gpu.module @odd
// CHECK-SAME: [#nvvm.target<chip = "sm_a", verifyTarget = false>, #nvvm.target<chip = "sm_9xa", verifyTarget = false>]
gpu.module @odd [#nvvm.target<chip = "sm_a", verifyTarget = false>, #nvvm.target<chip = "sm_9xa", verifyTarget = false>] {
}

// -----

// No targets: nothing to do.
// CHECK-LABEL: gpu.module @none
// CHECK-NOT: target
gpu.module @none {
}

// -----

// Bulk copies need PTX 8.0, which sm_90a has at least and sm_90 does not
// (7.8): the portable chip keeps 8.0.
// CHECK-LABEL: gpu.module @bulk
// CHECK-SAME: [#nvvm.target<chip = "sm_90", features = "+ptx80">]
gpu.module @bulk [#nvvm.target<chip = "sm_90a">] {
  llvm.func @k(%bar: !llvm.ptr<3>, %bytes: i32) attributes {gpu.kernel, nvvm.kernel} {
    nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
    llvm.return
  }
}

// -----

// Intrinsic calls named and typed as LLVM defines them pass the check: the
// overloaded 2^x on f32 (the tensor-core feature maps'), the L2 prefetch.
// CHECK-LABEL: gpu.module @intrinsics
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: llvm.call_intrinsic "llvm.nvvm.prefetch.global.L2"
gpu.module @intrinsics [#nvvm.target<chip = "sm_90">] {
  llvm.func @k(%x: f32, %p: !llvm.ptr<1>) -> f32 attributes {gpu.kernel, nvvm.kernel} {
    %y = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%x) : (f32) -> f32
    llvm.call_intrinsic "llvm.nvvm.prefetch.global.L2"(%p) : (!llvm.ptr<1>) -> ()
    llvm.return %y : f32
  }
}
