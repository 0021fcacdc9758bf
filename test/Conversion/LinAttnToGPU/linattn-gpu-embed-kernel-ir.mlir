// RUN: linattn-opt %s --linattn-gpu-embed-kernel-ir | FileCheck %s
// RUN: linattn-opt %s --linattn-gpu-embed-kernel-ir=chip=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: linattn-opt %s --linattn-gpu-embed-kernel-ir | %linattn_python %S/../../Pipelines/Inputs/gpu_binary.py --text | linattn-opt | FileCheck %s --check-prefix=TEXT
// RUN: not linattn-opt %S/Inputs/shared-memory-kernels.mlir --linattn-gpu-embed-kernel-ir -split-input-file 2> %t.err | FileCheck %s --check-prefix=SM90
// RUN: FileCheck %s --check-prefix=SM90-ERR < %t.err
// RUN: not linattn-opt %S/Inputs/shared-memory-kernels.mlir --linattn-gpu-embed-kernel-ir=chip=sm_86 -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=SM86
// RUN: not linattn-opt %s --linattn-gpu-embed-kernel-ir=chip=gfx90a -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-CHIP

// The gpu.module becomes a gpu.binary of the same name whose object is the
// module's MLIR text, with locations; the host code and its launches are
// left alone. The text parses back to the kernels.

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    gpu.func @scale(%in: memref<?xf32>, %out: memref<?xf32>, %n: index)
        workgroup(%tile: memref<32xf32, #gpu.address_space<workgroup>>)
        kernel {
      %tid = gpu.thread_id x
      %inside = arith.cmpi ult, %tid, %n : index
      scf.if %inside {
        %x = memref.load %in[%tid] : memref<?xf32>
        %y = arith.addf %x, %x : f32
        memref.store %y, %out[%tid] : memref<?xf32>
      }
      gpu.return
    }
  }
  func.func @host(%in: memref<?xf32>, %out: memref<?xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @linattn_kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%in : memref<?xf32>, %out : memref<?xf32>, %n : index)
    return
  }
}

// CHECK-NOT: gpu.module
// CHECK: gpu.binary @linattn_kernels [#gpu.object<#nvvm.target<O = 0, chip = "sm_90">, bin = "{{.*}}gpu.module @linattn_kernels {{.*}}gpu.func @scale({{.*}}loc(
// CHECK-NOT: gpu.module
// CHECK-LABEL: func.func @host
// CHECK: gpu.launch_func @linattn_kernels::@scale

// SM80: gpu.binary @linattn_kernels [#gpu.object<#nvvm.target<O = 0, chip = "sm_80">, bin =

// TEXT: gpu.module @linattn_kernels {
// TEXT-NEXT: gpu.func @scale(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>, %{{.*}}: index) workgroup(%{{.*}} : memref<32xf32, #gpu.address_space<workgroup>>) kernel {
// TEXT: scf.if
// TEXT: arith.addf
// TEXT: gpu.return

// Shared memory as the compiled path checks it: 120000 bytes fit sm_90's
// block (227 KiB) and are embedded; on sm_86 (99 KiB) they are an error
// naming the kernel, not a launch the emulator refuses. A buffer that is not
// static is an error too; each kernel is checked.

// SM90: gpu.binary @kernels [#gpu.object<#nvvm.target<O = 0, chip = "sm_90">, bin = "{{.*}}gpu.func @huge()
// SM90: gpu.binary @kernels [#gpu.object<#nvvm.target<O = 0, chip = "sm_90">, bin = "{{.*}}gpu.func @huge2()
// SM90-ERR-NOT: bytes of shared memory
// SM90-ERR: error: workgroup buffer #0 of dynamic is not a static memref of integers or floats in #gpu.address_space<workgroup>

// SM86: error: kernel huge needs 120000 bytes of shared memory; sm_86 allows at most 101376 per block
// SM86: error: kernel huge2 needs 101392 bytes of shared memory; sm_86 allows at most 101376 per block
// SM86: error: workgroup buffer #0 of dynamic is not a static memref

// BAD-CHIP: error: linattn-gpu-embed-kernel-ir: chip 'gfx90a' is not sm_ followed by a number
