// The GPU emulator's checks: hand-written kernels that do what a GPU would do
// wrong or leave undefined, launched the way convert-linattn-to-gpu launches
// its kernels (a stub that linattn-gpu-stage-buffers turns into device
// buffers and gpu.launch_func), run by linattn-run --emulate-gpu. Each must
// abort naming the kernel, the op and the thread; @ok must run.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %linattn_python -c "import numpy as np; np.save('%t/in.npy', np.arange(32, dtype=np.float32) ** 2)"
// RUN: linattn-run %s --entry=ok --target=cuda --emulate-gpu --input=%t/in.npy --output-dir=%t | FileCheck %s --check-prefix=OK
// RUN: %linattn_python -c "import numpy as np; x = np.load('%t/in.npy'); y = np.load('%t/result0.npy'); assert (y == x + x[np.arange(32) ^ 1]).all(), y; print('shuffle ok')" | FileCheck %s --check-prefix=VALUES
// OK: device: emulated GPU (MLIR kernel interpreter on the host CPU, {{[0-9]+}} threads)
// OK: result #0: 32xf32
// VALUES: shuffle ok

// RUN: not --crash linattn-run %s --entry=oob_global --target=cuda --emulate-gpu --random-seed=1 2>&1 | FileCheck %s --check-prefix=OOB-GLOBAL
// OOB-GLOBAL: linattn GPU emulator: error: out-of-bounds load from kernel argument #0: index 32, size 32
// OOB-GLOBAL-NEXT: kernel: @oob_global
// OOB-GLOBAL-NEXT: op: %{{.*}} = memref.load
// OOB-GLOBAL-NEXT: at: loc(
// OOB-GLOBAL-NEXT: block (0, 0, 0), thread (31, 0, 0)

// RUN: not --crash linattn-run %s --entry=oob_shared --target=cuda --emulate-gpu --random-seed=1 2>&1 | FileCheck %s --check-prefix=OOB-SHARED
// OOB-SHARED: error: out-of-bounds store to workgroup buffer #0: index 16, size 16
// OOB-SHARED-NEXT: kernel: @oob_shared
// OOB-SHARED-NEXT: op: memref.store
// OOB-SHARED: block (1, 0, 0), thread (16, 0, 0)

// RUN: not --crash linattn-run %s --entry=divergent_barrier --target=cuda --emulate-gpu --random-seed=1 2>&1 | FileCheck %s --check-prefix=BARRIER
// BARRIER: error: gpu.barrier reached by 16 of the 32 threads of the block (a divergent barrier); this thread does not reach it
// BARRIER-NEXT: kernel: @divergent_barrier
// BARRIER-NEXT: op: gpu.barrier
// BARRIER: thread (16, 0, 0)

// RUN: not --crash linattn-run %s --entry=uninitialized --target=cuda --emulate-gpu --random-seed=1 2>&1 | FileCheck %s --check-prefix=UNINIT
// UNINIT: error: read of uninitialized workgroup memory: element 16 of workgroup buffer #0 was not written by any thread of this block
// UNINIT-NEXT: kernel: @uninitialized
// UNINIT: thread (16, 0, 0)

// RUN: not --crash linattn-run %s --entry=race --target=cuda --emulate-gpu --random-seed=1 2>&1 | FileCheck %s --check-prefix=RACE
// RACE: error: data race on workgroup buffer #0 element 1: thread 1 wrote it since the last gpu.barrier (at memref.store
// RACE-NEXT: kernel: @race
// RACE-NEXT: op: %{{.*}} = memref.load
// RACE: thread (0, 0, 0)

// RUN: not --crash linattn-run %s --entry=shuffle --target=cuda --emulate-gpu --random-seed=1 2>&1 | FileCheck %s --check-prefix=SHUFFLE
// SHUFFLE: error: gpu.shuffle with lane 16 of the warp inactive (every lane of the width must execute it)
// SHUFFLE-NEXT: kernel: @shuffle_inactive
// SHUFFLE-NEXT: op: %{{.*}}, %{{.*}} = gpu.shuffle xor

// RUN: not --crash linattn-run %s --entry=mma --target=cuda --emulate-gpu --random-seed=1 2>&1 | FileCheck %s --check-prefix=MMA
// MMA: error: nvvm.mma.sync executed without all 32 threads of warp 0 (thread 8 inactive)
// MMA-NEXT: kernel: @mma_partial
// MMA-NEXT: op: %{{.*}} = nvvm.mma.sync

// RUN: not --crash linattn-run %s --entry=global_race --target=cuda --emulate-gpu --random-seed=1 2>&1 | FileCheck %s --check-prefix=GLOBAL-RACE
// GLOBAL-RACE: error: global memory race: this thread stores to element {{[0-9]+}} of kernel argument #1, which thread ({{[0-9]+}}, 0, 0) of block ({{[01]}}, 0, 0) stored in this launch (blocks are not ordered: the result depends on their schedule)
// GLOBAL-RACE-NEXT: kernel: @global_race
// GLOBAL-RACE-NEXT: op: memref.store

// RUN: not --crash linattn-run %s --entry=unsupported --target=cuda --emulate-gpu --random-seed=1 2>&1 | FileCheck %s --check-prefix=UNKNOWN-OP
// UNKNOWN-OP: error: unsupported op 'math.sin': the emulator does not know it
// UNKNOWN-OP-NEXT: kernel: @unsupported
// UNKNOWN-OP-NEXT: op: %{{.*}} = math.sin

// i32 loops: signed (thread t sums t, t + 7, ... below 40) and unsigned
// (from 0x7ffffff0 to 0x80000010 in steps of 8: four trips, where a signed
// comparison would make none); a step that is negative as an i32.
// RUN: linattn-run %s --entry=loops_i32 --target=cuda --emulate-gpu --input=%t/in.npy --output-dir=%t | FileCheck %s --check-prefix=OK
// RUN: %linattn_python -c "import numpy as np; y = np.load('%t/result0.npy'); e = [sum(range(t, 40, 7)) + 4000 for t in range(32)]; assert (y == e).all(), y; print('i32 loops ok')" | FileCheck %s --check-prefix=LOOPS
// LOOPS: i32 loops ok
// RUN: not --crash linattn-run %s --entry=loop_step --target=cuda --emulate-gpu --random-seed=1 2>&1 | FileCheck %s --check-prefix=STEP
// STEP: error: scf.for step -32 is not positive
// STEP-NEXT: kernel: @loop_step
// STEP-NEXT: op: %{{.*}} = scf.for
// STEP: thread (0, 0, 0)

// RUN: not --crash linattn-run %s --entry=block_size --target=cuda --emulate-gpu --random-seed=1 2>&1 | FileCheck %s --check-prefix=BLOCK-SIZE
// BLOCK-SIZE: linattn GPU emulator: error: block of 32x1x1 threads, but the kernel's known_block_size is 16x1x1
// BLOCK-SIZE-NEXT: kernel: @known_block_size

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    // out[i] = in[i] + in[i ^ 1] through a shuffle; correct.
    gpu.func @ok(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %c1 = arith.constant 1 : i32
      %c32 = arith.constant 32 : i32
      %x = memref.load %in[%tid] : memref<?xf32>
      %y, %valid = gpu.shuffle xor %x, %c1, %c32 : f32
      %sum = arith.addf %x, %y : f32
      memref.store %sum, %out[%tid] : memref<?xf32>
      gpu.return
    }
    // Every thread reads the element after its own: the last one is past
    // the end.
    gpu.func @oob_global(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %c1 = arith.constant 1 : index
      %next = arith.addi %tid, %c1 : index
      %x = memref.load %in[%next] : memref<?xf32>
      memref.store %x, %out[%tid] : memref<?xf32>
      gpu.return
    }
    // A 16-element workgroup buffer: block 0 fills it with its first 16
    // threads, block 1 with all 32.
    gpu.func @oob_shared(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<16xf32, #gpu.address_space<workgroup>>)
        kernel {
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %c0 = arith.constant 0 : index
      %c16 = arith.constant 16 : index
      %later = arith.cmpi ne, %bid, %c0 : index
      %small = arith.cmpi ult, %tid, %c16 : index
      %go = arith.ori %small, %later : i1
      %x = memref.load %in[%tid] : memref<?xf32>
      scf.if %go {
        memref.store %x, %tile[%tid] : memref<16xf32, #gpu.address_space<workgroup>>
      }
      memref.store %x, %out[%tid] : memref<?xf32>
      gpu.return
    }
    // Half the block waits at a barrier the other half never reaches.
    gpu.func @divergent_barrier(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %c16 = arith.constant 16 : index
      %low = arith.cmpi ult, %tid, %c16 : index
      scf.if %low {
        gpu.barrier
      }
      %x = memref.load %in[%tid] : memref<?xf32>
      memref.store %x, %out[%tid] : memref<?xf32>
      gpu.return
    }
    // Threads 0..15 fill the tile, every thread reads its element back.
    gpu.func @uninitialized(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<32xf32, #gpu.address_space<workgroup>>)
        kernel {
      %tid = gpu.thread_id x
      %c16 = arith.constant 16 : index
      %low = arith.cmpi ult, %tid, %c16 : index
      %x = memref.load %in[%tid] : memref<?xf32>
      scf.if %low {
        memref.store %x, %tile[%tid] : memref<32xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %y = memref.load %tile[%tid] : memref<32xf32, #gpu.address_space<workgroup>>
      memref.store %y, %out[%tid] : memref<?xf32>
      gpu.return
    }
    // Each thread reads its neighbour's element with no barrier after the
    // neighbour wrote it.
    gpu.func @race(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<32xf32, #gpu.address_space<workgroup>>)
        kernel {
      %tid = gpu.thread_id x
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %x = memref.load %in[%tid] : memref<?xf32>
      memref.store %x, %tile[%tid] : memref<32xf32, #gpu.address_space<workgroup>>
      %next = arith.addi %tid, %c1 : index
      %wrapped = arith.remui %next, %c32 : index
      %y = memref.load %tile[%wrapped] : memref<32xf32, #gpu.address_space<workgroup>>
      memref.store %y, %out[%tid] : memref<?xf32>
      gpu.return
    }
    // A full-warp shuffle executed by half the warp.
    gpu.func @shuffle_inactive(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %c16 = arith.constant 16 : index
      %c1 = arith.constant 1 : i32
      %c32 = arith.constant 32 : i32
      %low = arith.cmpi ult, %tid, %c16 : index
      %x = memref.load %in[%tid] : memref<?xf32>
      %r = scf.if %low -> f32 {
        %y, %valid = gpu.shuffle xor %x, %c1, %c32 : f32
        scf.yield %y : f32
      } else {
        scf.yield %x : f32
      }
      memref.store %r, %out[%tid] : memref<?xf32>
      gpu.return
    }
    // A tensor-core product by the first quarter of the warp.
    gpu.func @mma_partial(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %c8 = arith.constant 8 : index
      %a = arith.constant dense<1.0> : vector<2xf16>
      %c = arith.constant 0.0 : f32
      %low = arith.cmpi ult, %tid, %c8 : index
      %x = memref.load %in[%tid] : memref<?xf32>
      %r = scf.if %low -> f32 {
        %d = nvvm.mma.sync A[%a, %a, %a, %a] B[%a, %a] C[%c, %c, %c, %c]
            {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
             shape = #nvvm.shape<m = 16, n = 8, k = 16>}
            : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
        %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
        scf.yield %d0 : f32
      } else {
        scf.yield %x : f32
      }
      memref.store %r, %out[%tid] : memref<?xf32>
      gpu.return
    }
    // Both blocks of the grid write the same 32 elements.
    gpu.func @global_race(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %x = memref.load %in[%tid] : memref<?xf32>
      memref.store %x, %out[%tid] : memref<?xf32>
      gpu.return
    }
    // Declares blocks of 16 threads; @block_size launches 32.
    gpu.func @known_block_size(%in: memref<?xf32>, %out: memref<?xf32>) kernel
        attributes {known_block_size = array<i32: 16, 1, 1>} {
      %tid = gpu.thread_id x
      %x = memref.load %in[%tid] : memref<?xf32>
      memref.store %x, %out[%tid] : memref<?xf32>
      gpu.return
    }
    gpu.func @loops_i32(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %t = arith.index_cast %tid : index to i32
      %c7 = arith.constant 7 : i32
      %c8 = arith.constant 8 : i32
      %c40 = arith.constant 40 : i32
      %lo = arith.constant 0x7ffffff0 : i32
      %hi = arith.constant 0x80000010 : i32
      %zero = arith.constant 0.0 : f32
      %thousand = arith.constant 1000.0 : f32
      %sum = scf.for %i = %t to %c40 step %c7 iter_args(%acc = %zero) -> (f32) : i32 {
        %x = arith.sitofp %i : i32 to f32
        %next = arith.addf %acc, %x : f32
        scf.yield %next : f32
      }
      %total = scf.for unsigned %i = %lo to %hi step %c8 iter_args(%acc = %sum) -> (f32) : i32 {
        %next = arith.addf %acc, %thousand : f32
        scf.yield %next : f32
      }
      memref.store %total, %out[%tid] : memref<?xf32>
      gpu.return
    }
    // The step, t - 32, is negative for every thread.
    gpu.func @loop_step(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %t = arith.index_cast %tid : index to i32
      %c0 = arith.constant 0 : i32
      %c32 = arith.constant 32 : i32
      %step = arith.subi %t, %c32 : i32
      %x = memref.load %in[%tid] : memref<?xf32>
      %y = scf.for %i = %c0 to %c32 step %step iter_args(%acc = %x) -> (f32) : i32 {
        %next = arith.addf %acc, %acc : f32
        scf.yield %next : f32
      }
      memref.store %y, %out[%tid] : memref<?xf32>
      gpu.return
    }
    gpu.func @unsupported(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %x = memref.load %in[%tid] : memref<?xf32>
      %y = math.sin %x : f32
      memref.store %y, %out[%tid] : memref<?xf32>
      gpu.return
    }
  }

  // Launch stubs: grid (x, y, z), block (x, y, z), then the kernel's
  // arguments; linattn-gpu-stage-buffers copies argument 0 to the device and
  // argument 1 back.
  func.func private @launch_ok(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@ok, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_oob_global(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@oob_global, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_oob_shared(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@oob_shared, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_divergent_barrier(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@divergent_barrier, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_uninitialized(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@uninitialized, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_race(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@race, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_shuffle(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@shuffle_inactive, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_mma(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@mma_partial, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_global_race(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@global_race, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_unsupported(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@unsupported, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_loops_i32(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@loops_i32, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_loop_step(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@loop_step, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_block_size(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@known_block_size, linattn.gpu_outputs = array<i64: 1>}

  func.func @ok(%x: tensor<32xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<32xf32> to memref<32xf32>
    %in_flat = memref.cast %in : memref<32xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_ok(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func @oob_global(%x: tensor<32xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<32xf32> to memref<32xf32>
    %in_flat = memref.cast %in : memref<32xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_oob_global(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func @oob_shared(%x: tensor<32xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<32xf32> to memref<32xf32>
    %in_flat = memref.cast %in : memref<32xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_oob_shared(%c2, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func @divergent_barrier(%x: tensor<32xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<32xf32> to memref<32xf32>
    %in_flat = memref.cast %in : memref<32xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_divergent_barrier(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func @uninitialized(%x: tensor<32xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<32xf32> to memref<32xf32>
    %in_flat = memref.cast %in : memref<32xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_uninitialized(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func @race(%x: tensor<32xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<32xf32> to memref<32xf32>
    %in_flat = memref.cast %in : memref<32xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_race(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func @shuffle(%x: tensor<32xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<32xf32> to memref<32xf32>
    %in_flat = memref.cast %in : memref<32xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_shuffle(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func @mma(%x: tensor<32xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<32xf32> to memref<32xf32>
    %in_flat = memref.cast %in : memref<32xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_mma(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func @global_race(%x: tensor<32xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<32xf32> to memref<32xf32>
    %in_flat = memref.cast %in : memref<32xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_global_race(%c2, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func @unsupported(%x: tensor<32xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<32xf32> to memref<32xf32>
    %in_flat = memref.cast %in : memref<32xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_unsupported(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func @block_size(%x: tensor<32xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<32xf32> to memref<32xf32>
    %in_flat = memref.cast %in : memref<32xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_block_size(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func @loops_i32(%x: tensor<32xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<32xf32> to memref<32xf32>
    %in_flat = memref.cast %in : memref<32xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_loops_i32(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func @loop_step(%x: tensor<32xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<32xf32> to memref<32xf32>
    %in_flat = memref.cast %in : memref<32xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_loop_step(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
}
