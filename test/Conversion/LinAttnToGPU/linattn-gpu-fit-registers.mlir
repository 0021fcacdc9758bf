// REQUIRES: cuda-toolkit
// RUN: linattn-opt %s --linattn-gpu-fit-registers="cuda-path=%cuda_path remarks=true" -split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// Without remarks the pass says nothing.
// RUN: linattn-opt %s --linattn-gpu-fit-registers="cuda-path=%cuda_path" -split-input-file 2>&1 | FileCheck %s
// CHECK-NOT: remark

// A kernel of few registers: its threads (16 blocks of 128) hold it, not
// its registers, so its PTX is not touched.
// REMARK: remark: linattn-gpu-fit-registers: small: {{[0-9]}} registers, 16 blocks per SM, not held by registers
// Compiling leaves the module as it was (the serializer's timing
// attributes removed).
// CHECK-LABEL: gpu.module @small [#nvvm.target<O = 3, chip = "sm_90">] {
// CHECK-NOT: nvvm.minctasm
module attributes {gpu.container_module} {
  gpu.module @small [#nvvm.target<O = 3, chip = "sm_90">] {
    llvm.func @small(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
      %0 = nvvm.read.ptx.sreg.tid.x : i32
      %1 = llvm.getelementptr %p[%0] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      %2 = llvm.load %1 : !llvm.ptr<1> -> f32
      %3 = llvm.fadd %2, %2 : f32
      llvm.store %3, %1 : f32, !llvm.ptr<1>
      llvm.return
    }
  }
  func.func @host(%p: !llvm.ptr<1>) {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @small::@small blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) args(%p : !llvm.ptr<1>)
    return
  }
}

// -----

// Dynamic shared memory counts, the most over the launches: 100 KiB (and
// 1 KiB reserved) leave room for 2 blocks of an H100's 228 KiB. A bound
// the kernel already has stays.
// REMARK: remark: linattn-gpu-fit-registers: shared: {{[0-9]}} registers, 2 blocks per SM, not held by registers
// CHECK-LABEL: gpu.module @shared
// CHECK: nvvm.minctasm = 2 : i32
module attributes {gpu.container_module} {
  gpu.module @shared [#nvvm.target<O = 3, chip = "sm_90a">] {
    llvm.func @shared(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>, nvvm.minctasm = 2 : i32} {
      %0 = nvvm.read.ptx.sreg.tid.x : i32
      %1 = llvm.getelementptr %p[%0] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      %2 = llvm.load %1 : !llvm.ptr<1> -> f32
      llvm.store %2, %1 : f32, !llvm.ptr<1>
      llvm.return
    }
  }
  func.func @host(%p: !llvm.ptr<1>) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %small = arith.constant 16384 : i32
    %large = arith.constant 102400 : i32
    gpu.launch_func @shared::@shared blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) dynamic_shared_memory_size %small args(%p : !llvm.ptr<1>)
    gpu.launch_func @shared::@shared blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) dynamic_shared_memory_size %large args(%p : !llvm.ptr<1>)
    return
  }
}

// -----

// Block sizes or dynamic shared memory that are not constants, or that
// differ between launches: the blocks per SM are unknown.
// REMARK: remark: linattn-gpu-fit-registers: threads: no launch with constant threads and dynamic shared memory
// REMARK: remark: linattn-gpu-fit-registers: bytes: no launch with constant threads and dynamic shared memory
// REMARK: remark: linattn-gpu-fit-registers: sizes: no launch with constant threads and dynamic shared memory
// REMARK: remark: linattn-gpu-fit-registers: unlaunched: no launch with constant threads and dynamic shared memory
module attributes {gpu.container_module} {
  gpu.module @unknown [#nvvm.target<O = 3, chip = "sm_90">] {
    llvm.func @threads() attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
      llvm.return
    }
    llvm.func @bytes() attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
      llvm.return
    }
    llvm.func @sizes() attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
      llvm.return
    }
    llvm.func @unlaunched() attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
      llvm.return
    }
  }
  func.func @host(%n: index, %bytes: i32) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @unknown::@threads blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1)
    gpu.launch_func @unknown::@bytes blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %bytes
    gpu.launch_func @unknown::@sizes blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1)
    gpu.launch_func @unknown::@sizes blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
    return
  }
}

// -----

// Chips whose SM the pass has no table of keep ptxas's choice.
// REMARK: remark: linattn-gpu-fit-registers: no occupancy table for sm_75; registers left to ptxas
module attributes {gpu.container_module} {
  gpu.module @turing [#nvvm.target<O = 3, chip = "sm_75">] {
    llvm.func @k() attributes {gpu.kernel, nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
      llvm.return
    }
  }
  func.func @host() {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    gpu.launch_func @turing::@k blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1)
    return
  }
}
