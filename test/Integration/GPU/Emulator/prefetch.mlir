// The GPU emulator's model of the chunk loops' L2 prefetch (the inline PTX
// "prefetch.L2 [$0];" of convert-linattn-to-gpu{prefetch-chunks}): it moves
// nothing the kernel reads, but its address must lie in one of the launch's
// global buffers, and the profile counts its 128-byte lines as 32-byte
// sectors without adding them to the buffers' footprint. Other inline PTX is
// not emulated.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %linattn_python -c "import numpy as np; np.save('%t/x.npy', np.arange(256, dtype=np.float32))"
// RUN: env LINATTN_GPU_EMULATOR_PROFILE=%t/profile.jsonl linattn-run %s --entry=inside --target=cuda --emulate-gpu --input=%t/x.npy --output-dir=%t | FileCheck %s --check-prefix=OK
// RUN: %linattn_python -c "import numpy as np; x = np.load('%t/x.npy'); y = np.load('%t/result0.npy'); assert (y == x[:32]).all(), y; print('copy ok')" | FileCheck %s --check-prefix=VALUES
// RUN: FileCheck %s --input-file=%t/profile.jsonl --check-prefix=PROFILE
// RUN: not --crash linattn-run %s --entry=past_end --target=cuda --emulate-gpu --input=%t/x.npy 2>&1 | FileCheck %s --check-prefix=PAST-END
// RUN: not --crash linattn-run %s --entry=other_asm --target=cuda --emulate-gpu --input=%t/x.npy 2>&1 | FileCheck %s --check-prefix=OTHER

// OK: result #0: 32xf32
// VALUES: copy ok

// Lanes 0-31 prefetch elements 0, 8, ..., 248 (1 KiB: 8 lines of 128 bytes
// when the buffer starts one, 9 at most); the loads read 128 bytes.
// PROFILE: {"kernel": "prefetch_inside", "grid": [1, 1, 1], "block": [32, 1, 1], "ops": [
// PROFILE-SAME: "kind": "prefetch", "warps": 1, "bytes": 4096, "units": {{32|36}}, "ideal": {{32|36}}
// PROFILE-SAME: "kind": "global-load", "warps": 1, "bytes": 128, "units": 4, "ideal": 4
// PROFILE-SAME: "buffers": [{"argument": 0, "read_bytes": 128, "written_bytes": 0}

// PAST-END: linattn GPU emulator: error: prefetch of address 0x{{[0-9a-f]+}}, which is in none of the kernel's global buffers
// PAST-END-NEXT: kernel: @prefetch_past_end
// PAST-END-NEXT: op: llvm.inline_asm
// PAST-END: thread (0, 0, 0)

// OTHER: error: inline PTX other than the prefetch "prefetch.L2 [$0];" is not emulated
// OTHER: kernel: @prefetch_other_asm

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    gpu.func @prefetch_inside(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %base = memref.extract_aligned_pointer_as_index %in : memref<?xf32> -> index
      %bytes = arith.muli %tid, %c32 : index
      %at = arith.addi %base, %bytes : index
      %address = arith.index_castui %at : index to i64
      llvm.inline_asm has_side_effects "prefetch.L2 [$0];", "l" %address : (i64) -> ()
      %x = memref.load %in[%tid] : memref<?xf32>
      memref.store %x, %out[%tid] : memref<?xf32>
      gpu.return
    }
    // Thread 0 prefetches the byte after the buffer's last.
    gpu.func @prefetch_past_end(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1024 = arith.constant 1024 : index
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        %base = memref.extract_aligned_pointer_as_index %in : memref<?xf32> -> index
        %at = arith.addi %base, %c1024 : index
        %address = arith.index_castui %at : index to i64
        llvm.inline_asm has_side_effects "prefetch.L2 [$0];", "l" %address : (i64) -> ()
      }
      gpu.return
    }
    gpu.func @prefetch_other_asm(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %base = memref.extract_aligned_pointer_as_index %in : memref<?xf32> -> index
      %address = arith.index_castui %base : index to i64
      llvm.inline_asm has_side_effects "prefetch.L1 [$0];", "l" %address : (i64) -> ()
      gpu.return
    }
  }

  func.func private @launch_inside(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@prefetch_inside, linattn.gpu_outputs = array<i64: 1>}
  func.func @inside(%x: tensor<256xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<256xf32> to memref<256xf32>
    %in_flat = memref.cast %in : memref<256xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_inside(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func private @launch_past_end(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@prefetch_past_end, linattn.gpu_outputs = array<i64: 1>}
  func.func @past_end(%x: tensor<256xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<256xf32> to memref<256xf32>
    %in_flat = memref.cast %in : memref<256xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_past_end(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func private @launch_other_asm(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@prefetch_other_asm, linattn.gpu_outputs = array<i64: 1>}
  func.func @other_asm(%x: tensor<256xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<256xf32> to memref<256xf32>
    %in_flat = memref.cast %in : memref<256xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_other_asm(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
}
