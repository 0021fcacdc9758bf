// The GPU emulator's model of async copies (nvgpu.device_async_copy, its
// groups closed by nvgpu.device_async_create_group or
// nvvm.cp.async.commit.group and waited for by nvgpu.device_async_wait or
// nvvm.cp.async.wait.group: cp.async):
// a copy reads global memory when issued and claims its shared elements
// until a wait of the issuing thread completes it, which then counts as
// that thread's store (other threads read it after a barrier). Each
// kernel but @ok does something a GPU leaves undefined and must abort,
// naming the kernel, the op and the thread.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %linattn_python -c "import numpy as np; np.save('%t/in.npy', np.arange(128, dtype=np.float32) + 1)"
// RUN: linattn-run %s --entry=ok --target=cuda --emulate-gpu --input=%t/in.npy --output-dir=%t | FileCheck %s --check-prefix=OK
// RUN: %linattn_python -c "import numpy as np; x = np.load('%t/in.npy'); y = np.load('%t/result0.npy'); t = (np.arange(32) + 1) % 32; e = np.where(t < 16, x[4 * t], 0); assert (y == e).all(), y; print('async ok')" | FileCheck %s --check-prefix=VALUES
// OK: result #0: 32xf32
// VALUES: async ok

// RUN: not --crash linattn-run %s --entry=in_flight --target=cuda --emulate-gpu --input=%t/in.npy 2>&1 | FileCheck %s --check-prefix=IN-FLIGHT
// IN-FLIGHT: linattn GPU emulator: error: access to element 0 of workgroup buffer #0 while the async copy of thread 0 to it is in flight (no wait has completed it: of that thread for a cp.async, of any thread on its mbarrier for a bulk copy)
// IN-FLIGHT-NEXT: kernel: @in_flight
// IN-FLIGHT-NEXT: op: %{{.*}} = memref.load
// IN-FLIGHT: thread (0, 0, 0)

// RUN: not --crash linattn-run %s --entry=wait_pending --target=cuda --emulate-gpu --input=%t/in.npy 2>&1 | FileCheck %s --check-prefix=PENDING
// PENDING: error: access to element 4 of workgroup buffer #0 while the async copy of thread 1 to it is in flight
// PENDING-NEXT: kernel: @wait_pending
// PENDING: thread (0, 0, 0)

// RUN: not --crash linattn-run %s --entry=no_barrier --target=cuda --emulate-gpu --input=%t/in.npy 2>&1 | FileCheck %s --check-prefix=NO-BARRIER
// NO-BARRIER: error: data race on workgroup buffer #0 element 4: thread 1 wrote it since the last gpu.barrier (at %{{[0-9]+}} = nvgpu.device_async_copy
// NO-BARRIER-NEXT: kernel: @no_barrier
// NO-BARRIER: thread (0, 0, 0)

// RUN: not --crash linattn-run %s --entry=issue_race --target=cuda --emulate-gpu --input=%t/in.npy 2>&1 | FileCheck %s --check-prefix=ISSUE-RACE
// ISSUE-RACE: error: data race on workgroup buffer #0 element 0: thread 31 read it since the last gpu.barrier
// ISSUE-RACE-NEXT: kernel: @issue_race
// ISSUE-RACE-NEXT: op: %{{.*}} = nvgpu.device_async_copy
// ISSUE-RACE: thread (0, 0, 0)

// RUN: not --crash linattn-run %s --entry=never_waited --target=cuda --emulate-gpu --input=%t/in.npy 2>&1 | FileCheck %s --check-prefix=NEVER
// NEVER: error: the kernel returns with 1 async copies of this thread that no wait completed
// NEVER-NEXT: kernel: @never_waited
// NEVER: thread (0, 0, 0)

// RUN: not --crash linattn-run %s --entry=misaligned --target=cuda --emulate-gpu --input=%t/in.npy 2>&1 | FileCheck %s --check-prefix=MISALIGNED
// MISALIGNED: error: async copy to byte 4 of workgroup buffer #0, which is not 16-byte aligned
// MISALIGNED-NEXT: kernel: @misaligned

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    // Threads 0-15 copy 4 elements each, 16-31 zero-fill theirs; after
    // the wait and a barrier each reads its neighbour's first element.
    gpu.func @ok(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %c128 = arith.constant 128 : index
      %at = arith.muli %tid, %c4 : index
      %next = arith.addi %at, %c4 : index
      %neighbour = arith.remui %next, %c128 : index
      %low = arith.cmpi ult, %tid, %c16 : index
      %n = arith.select %low, %c4, %c0 : index
      %cp = nvgpu.device_async_copy %in[%at], %tile[%at], 4, %n {bypassL1} : memref<?xf32> to memref<128xf32, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group %cp
      nvgpu.device_async_wait %g {numGroups = 0 : i32}
      gpu.barrier
      %x = memref.load %tile[%neighbour] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%tid] : memref<?xf32>
      gpu.return
    }
    // Reads its own copy before any wait.
    gpu.func @in_flight(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %c128 = arith.constant 128 : index
      %at = arith.muli %tid, %c4 : index
      %next = arith.addi %at, %c4 : index
      %neighbour = arith.remui %next, %c128 : index
      %cp = nvgpu.device_async_copy %in[%at], %tile[%at], 4 {bypassL1} : memref<?xf32> to memref<128xf32, #gpu.address_space<workgroup>>
      nvvm.cp.async.commit.group
      %x = memref.load %tile[%at] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%tid] : memref<?xf32>
      nvvm.cp.async.wait.group 0
      gpu.return
    }
    // Commits a second (empty) group and waits for all but one: the
    // copies' group stays in flight, and the barrier does not complete it.
    gpu.func @wait_pending(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %c128 = arith.constant 128 : index
      %at = arith.muli %tid, %c4 : index
      %next = arith.addi %at, %c4 : index
      %neighbour = arith.remui %next, %c128 : index
      %cp = nvgpu.device_async_copy %in[%at], %tile[%at], 4 {bypassL1} : memref<?xf32> to memref<128xf32, #gpu.address_space<workgroup>>
      nvvm.cp.async.commit.group
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 2
      gpu.barrier
      %x = memref.load %tile[%neighbour] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%tid] : memref<?xf32>
      nvvm.cp.async.wait.group 0
      gpu.return
    }
    // Reads the neighbour's copy after its own wait but with no barrier.
    gpu.func @no_barrier(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %c128 = arith.constant 128 : index
      %at = arith.muli %tid, %c4 : index
      %next = arith.addi %at, %c4 : index
      %neighbour = arith.remui %next, %c128 : index
      %cp = nvgpu.device_async_copy %in[%at], %tile[%at], 4 {bypassL1} : memref<?xf32> to memref<128xf32, #gpu.address_space<workgroup>>
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      %x = memref.load %tile[%neighbour] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%tid] : memref<?xf32>
      gpu.return
    }
    // Issues a copy into elements another thread read since the last
    // barrier.
    gpu.func @issue_race(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %c128 = arith.constant 128 : index
      %at = arith.muli %tid, %c4 : index
      %next = arith.addi %at, %c4 : index
      %neighbour = arith.remui %next, %c128 : index
      %v = memref.load %in[%at] : memref<?xf32>
      memref.store %v, %tile[%at] : memref<128xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %x = memref.load %tile[%neighbour] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%tid] : memref<?xf32>
      %cp = nvgpu.device_async_copy %in[%at], %tile[%at], 4 {bypassL1} : memref<?xf32> to memref<128xf32, #gpu.address_space<workgroup>>
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      gpu.return
    }
    // Returns with its copy committed and never waited for.
    gpu.func @never_waited(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %c128 = arith.constant 128 : index
      %at = arith.muli %tid, %c4 : index
      %next = arith.addi %at, %c4 : index
      %neighbour = arith.remui %next, %c128 : index
      %cp = nvgpu.device_async_copy %in[%at], %tile[%at], 4 {bypassL1} : memref<?xf32> to memref<128xf32, #gpu.address_space<workgroup>>
      nvvm.cp.async.commit.group
      gpu.return
    }
    // Copies 16 bytes to an element offset of 1 (4 bytes).
    gpu.func @misaligned(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<132xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %c128 = arith.constant 128 : index
      %at = arith.muli %tid, %c4 : index
      %next = arith.addi %at, %c4 : index
      %neighbour = arith.remui %next, %c128 : index
      %off = arith.addi %at, %c1 : index
      %small = arith.cmpi ult, %tid, %c16 : index
      %dst = arith.select %small, %off, %at : index
      %cp = nvgpu.device_async_copy %in[%at], %tile[%dst], 4 {bypassL1} : memref<?xf32> to memref<132xf32, #gpu.address_space<workgroup>>
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      gpu.return
    }
  }
  func.func private @launch_ok(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@ok, linattn.gpu_outputs = array<i64: 1>}
  func.func @ok(%x: tensor<128xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_ok(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func private @launch_in_flight(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@in_flight, linattn.gpu_outputs = array<i64: 1>}
  func.func @in_flight(%x: tensor<128xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_in_flight(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func private @launch_wait_pending(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@wait_pending, linattn.gpu_outputs = array<i64: 1>}
  func.func @wait_pending(%x: tensor<128xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_wait_pending(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func private @launch_no_barrier(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@no_barrier, linattn.gpu_outputs = array<i64: 1>}
  func.func @no_barrier(%x: tensor<128xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_no_barrier(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func private @launch_issue_race(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@issue_race, linattn.gpu_outputs = array<i64: 1>}
  func.func @issue_race(%x: tensor<128xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_issue_race(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func private @launch_never_waited(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@never_waited, linattn.gpu_outputs = array<i64: 1>}
  func.func @never_waited(%x: tensor<128xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_never_waited(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func private @launch_misaligned(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@misaligned, linattn.gpu_outputs = array<i64: 1>}
  func.func @misaligned(%x: tensor<128xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_misaligned(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
}
