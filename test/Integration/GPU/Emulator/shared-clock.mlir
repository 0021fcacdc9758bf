// The GPU emulator's shared-memory clock: with
// LINATTN_GPU_EMULATOR_CLOCK=shared-wavefronts, clock64 reads the
// shared-memory wavefronts the block has taken so far, counted as the
// profile counts them (profile.mlir), so that phase-clocks instrumentation
// says what each phase asks of an SM's shared memory. One warp, which fills
// the tile before the first read; between
// the reads a 16-byte load whose lanes n and n ^ 1 share an address (2), one
// float a lane 32 words apart (all in one bank: 32) and a global load (none).
// Without the variable (or `ops`) the clock counts ops; another value is an
// error.

// RUN: env LINATTN_GPU_EMULATOR_CLOCK=shared-wavefronts linattn-run %s --entry=clocks --target=cuda --emulate-gpu | FileCheck %s --check-prefix=SHARED
// SHARED: shared clock: 34{{$}}
// SHARED: result #0: 32xf32

// RUN: linattn-run %s --entry=clocks --target=cuda --emulate-gpu | FileCheck %s --check-prefix=OPS
// RUN: env LINATTN_GPU_EMULATOR_CLOCK=ops linattn-run %s --entry=clocks --target=cuda --emulate-gpu | FileCheck %s --check-prefix=OPS
// OPS-NOT: shared clock: 34{{$}}
// OPS: shared clock: {{[0-9]+$}}

// RUN: env LINATTN_GPU_EMULATOR_CLOCK=cycles not --crash linattn-run %s --entry=clocks --target=cuda --emulate-gpu 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: linattn GPU emulator: error: LINATTN_GPU_EMULATOR_CLOCK is 'cycles': ops or shared-wavefronts

!tile = memref<1024xf32, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    gpu.func @clocks(%out: memref<?xf32>)
        workgroup(%s : !tile {llvm.align = 16 : i64}) kernel {
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %one = arith.constant 1.0 : f32
      %t = gpu.thread_id x
      %t32 = arith.muli %t, %c32 : index
      %c1 = arith.constant 1 : index
      scf.for %j = %c0 to %c32 step %c1 {
        %w = arith.addi %t32, %j : index
        memref.store %one, %s[%w] : !tile
      }
      memref.store %one, %out[%t] : memref<?xf32>
      gpu.barrier
      %a = nvvm.read.ptx.sreg.clock64 : i64
      %half = arith.divui %t, %c2 : index
      %at = arith.muli %half, %c4 : index
      %pair = vector.load %s[%at] {alignment = 16} : !tile, vector<4xf32>
      %strided = memref.load %s[%t32] : !tile
      %g = memref.load %out[%t] : memref<?xf32>
      %b = nvvm.read.ptx.sreg.clock64 : i64
      %taken = arith.subi %b, %a : i64
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        gpu.printf "shared clock: %lld\n", %taken : i64
      }
      %p0 = vector.extract %pair[0] : f32 from vector<4xf32>
      %sum = arith.addf %p0, %strided : f32
      %r = arith.addf %sum, %g : f32
      memref.store %r, %out[%t] : memref<?xf32>
      gpu.return
    }
  }
  func.func private @launch_clocks(index, index, index, index, index, index, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@clocks, linattn.gpu_outputs = array<i64: 0>}
  func.func @clocks() -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %out = memref.alloc() : memref<32xf32>
    %flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_clocks(%c1, %c1, %c1, %c32, %c1, %c1, %flat) : (index, index, index, index, index, index, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
}
