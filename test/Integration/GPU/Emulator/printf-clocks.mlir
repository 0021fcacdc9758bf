// The GPU emulator's gpu.printf, clock64 and globaltimer, which the
// phase-clocks instrumentation uses. printf: each active lane formats the
// line in lane order (here lanes 0 and 1 of a block of 4); i32 signed and
// unsigned, i64 and index with ll, f32 and f64, width and precision, %%.
// clock64 counts the ops the block executed: the same for every lane, the
// ops from one read to the next (a timer read and the second clock read).
// A conversion the emulator does not format, a count of arguments unlike
// the format's, and an argument the GPU's vprintf would read other bytes of
// than it has (i8 for %d, index for %d) fail when the kernel is compiled.

// RUN: linattn-run %s --entry=ok --target=cuda --emulate-gpu | FileCheck %s --check-prefix=OK
// OK: lane 0: i32 -3 u32 4294967293 i64 -9000000000 index 0 x ff f32 1.50 f64 -2.250e+00 [ 7] 100%
// OK-NEXT: lane 1: i32 -3 u32 4294967293 i64 -9000000000 index 1 x ff f32 1.50 f64 -2.250e+00 [ 7] 100%
// OK-NEXT: clock: 2 ops, timer later: 1
// OK-NOT: lane 2
// OK: result #0: 4xf32

// RUN: not --crash linattn-run %s --entry=string --target=cuda --emulate-gpu 2>&1 | FileCheck %s --check-prefix=STRING
// STRING: linattn GPU emulator: error: printf conversions other than integers and floats are not emulated
// STRING-NEXT: kernel: @string

// RUN: not --crash linattn-run %s --entry=extra --target=cuda --emulate-gpu 2>&1 | FileCheck %s --check-prefix=EXTRA
// EXTRA: linattn GPU emulator: error: printf has more arguments than conversions
// EXTRA-NEXT: kernel: @extra

// RUN: not --crash linattn-run %s --entry=mismatch --target=cuda --emulate-gpu 2>&1 | FileCheck %s --check-prefix=MISMATCH
// MISMATCH: linattn GPU emulator: error: a printf argument's type does not match its conversion (i32 without a length, i64 and index with l or ll, f32 or f64)
// MISMATCH-NEXT: kernel: @mismatch
// RUN: not --crash linattn-run %s --entry=narrow --target=cuda --emulate-gpu 2>&1 | FileCheck %s --check-prefix=NARROW
// NARROW: error: a printf argument's type does not match its conversion
// NARROW-NEXT: kernel: @narrow
// RUN: not --crash linattn-run %s --entry=unlengthed --target=cuda --emulate-gpu 2>&1 | FileCheck %s --check-prefix=UNLENGTHED
// UNLENGTHED: error: a printf argument's type does not match its conversion
// UNLENGTHED-NEXT: kernel: @unlengthed

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    gpu.func @ok(%out: memref<?xf32>) kernel {
      %c2 = arith.constant 2 : index
      %t = gpu.thread_id x
      %m3 = arith.constant -3 : i32
      %big = arith.constant -9000000000 : i64
      %ff = arith.constant 255 : i32
      %f = arith.constant 1.5 : f32
      %d = arith.constant -2.25 : f64
      %w = arith.constant 7 : i32
      %low = arith.cmpi ult, %t, %c2 : index
      scf.if %low {
        gpu.printf "lane %lld: i32 %d u32 %u i64 %lld index %lld x %x f32 %.2f f64 %.3e [%2d] 100%%\n", %t, %m3, %m3, %big, %t, %ff, %f, %d, %w : index, i32, i32, i64, index, i32, f32, f64, i32
      }
      %c0 = arith.constant 0 : index
      %first = arith.cmpi eq, %t, %c0 : index
      %a = nvvm.read.ptx.sreg.clock64 : i64
      %t0 = nvvm.read.ptx.sreg.globaltimer : i64
      %b = nvvm.read.ptx.sreg.clock64 : i64
      %t1 = nvvm.read.ptx.sreg.globaltimer : i64
      %ops = arith.subi %b, %a : i64
      %ge = arith.cmpi uge, %t1, %t0 : i64
      %later = arith.extui %ge : i1 to i32
      scf.if %first {
        gpu.printf "clock: %lld ops, timer later: %d\n", %ops, %later : i64, i32
      }
      %one = arith.constant 1.0 : f32
      memref.store %one, %out[%t] : memref<?xf32>
      gpu.return
    }
    gpu.func @string(%out: memref<?xf32>) kernel {
      %t = gpu.thread_id x
      gpu.printf "%s\n", %t : index
      gpu.return
    }
    gpu.func @extra(%out: memref<?xf32>) kernel {
      %t = gpu.thread_id x
      gpu.printf "no conversion\n", %t : index
      gpu.return
    }
    gpu.func @mismatch(%out: memref<?xf32>) kernel {
      %f = arith.constant 1.0 : f32
      gpu.printf "%d\n", %f : f32
      gpu.return
    }
    gpu.func @narrow(%out: memref<?xf32>) kernel {
      %b = arith.constant -1 : i8
      gpu.printf "%d\n", %b : i8
      gpu.return
    }
    gpu.func @unlengthed(%out: memref<?xf32>) kernel {
      %t = gpu.thread_id x
      gpu.printf "%d\n", %t : index
      gpu.return
    }
  }
  func.func private @launch_ok(index, index, index, index, index, index, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@ok, linattn.gpu_outputs = array<i64: 0>}
  func.func private @launch_string(index, index, index, index, index, index, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@string, linattn.gpu_outputs = array<i64: 0>}
  func.func private @launch_extra(index, index, index, index, index, index, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@extra, linattn.gpu_outputs = array<i64: 0>}
  func.func private @launch_mismatch(index, index, index, index, index, index, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@mismatch, linattn.gpu_outputs = array<i64: 0>}
  func.func private @launch_narrow(index, index, index, index, index, index, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@narrow, linattn.gpu_outputs = array<i64: 0>}
  func.func private @launch_unlengthed(index, index, index, index, index, index, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@unlengthed, linattn.gpu_outputs = array<i64: 0>}
  func.func @ok() -> tensor<4xf32> {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %out = memref.alloc() : memref<4xf32>
    %flat = memref.cast %out : memref<4xf32> to memref<?xf32>
    call @launch_ok(%c1, %c1, %c1, %c4, %c1, %c1, %flat) : (index, index, index, index, index, index, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict : memref<4xf32> to tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func @string() -> tensor<4xf32> {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %out = memref.alloc() : memref<4xf32>
    %flat = memref.cast %out : memref<4xf32> to memref<?xf32>
    call @launch_string(%c1, %c1, %c1, %c4, %c1, %c1, %flat) : (index, index, index, index, index, index, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict : memref<4xf32> to tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func @extra() -> tensor<4xf32> {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %out = memref.alloc() : memref<4xf32>
    %flat = memref.cast %out : memref<4xf32> to memref<?xf32>
    call @launch_extra(%c1, %c1, %c1, %c4, %c1, %c1, %flat) : (index, index, index, index, index, index, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict : memref<4xf32> to tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func @mismatch() -> tensor<4xf32> {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %out = memref.alloc() : memref<4xf32>
    %flat = memref.cast %out : memref<4xf32> to memref<?xf32>
    call @launch_mismatch(%c1, %c1, %c1, %c4, %c1, %c1, %flat) : (index, index, index, index, index, index, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict : memref<4xf32> to tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func @narrow() -> tensor<4xf32> {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %out = memref.alloc() : memref<4xf32>
    %flat = memref.cast %out : memref<4xf32> to memref<?xf32>
    call @launch_narrow(%c1, %c1, %c1, %c4, %c1, %c1, %flat) : (index, index, index, index, index, index, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict : memref<4xf32> to tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func @unlengthed() -> tensor<4xf32> {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %out = memref.alloc() : memref<4xf32>
    %flat = memref.cast %out : memref<4xf32> to memref<?xf32>
    call @launch_unlengthed(%c1, %c1, %c1, %c4, %c1, %c1, %flat) : (index, index, index, index, index, index, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict : memref<4xf32> to tensor<4xf32>
    return %r : tensor<4xf32>
  }
}
