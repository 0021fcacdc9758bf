// The GPU emulator's model of sm_90's bulk copies and mbarriers
// (nvvm.cp.async.bulk.shared.cluster.global completing on an mbarrier that
// nvvm.mbarrier.init, .arrive.expect_tx, .try_wait.parity and .inval
// operate): a copy reads global memory when issued and lands, visible to
// every thread, when a thread waits for the phase it was issued in, whose
// transaction count its bytes then leave. Each kernel but @ok does
// something a GPU leaves undefined (or never finishes) and must abort,
// naming the kernel, the op and the thread.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %linattn_python -c "import numpy as np; np.save('%t/in.npy', np.arange(128, dtype=np.float32) + 1)"
// RUN: linattn-run %s --entry=ok --target=cuda --emulate-gpu --input=%t/in.npy --output-dir=%t | FileCheck %s --check-prefix=OK
// RUN: %linattn_python -c "import numpy as np; x = np.load('%t/in.npy'); y = np.load('%t/result0.npy'); e = x[(4 * np.arange(1, 33)) % 128]; assert (y == e).all(), y; print('bulk ok')" | FileCheck %s --check-prefix=VALUES
// OK: result #0: 32xf32
// VALUES: bulk ok

// RUN: not --crash linattn-run %s --entry=before_wait --target=cuda --emulate-gpu --input=%t/in.npy 2>&1 | FileCheck %s --check-prefix=BEFORE-WAIT
// BEFORE-WAIT: linattn GPU emulator: error: access to element 4 of workgroup buffer #0 while the async copy of thread 0 to it is in flight
// BEFORE-WAIT-NEXT: kernel: @before_wait
// BEFORE-WAIT-NEXT: op: %{{.*}} = memref.load
// BEFORE-WAIT: thread (0, 0, 0)

// RUN: not --crash linattn-run %s --entry=short --target=cuda --emulate-gpu --input=%t/in.npy 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: error: mbarrier.try_wait.parity 0 on the mbarrier at shared address 0x200 waits for phase 0, which nothing completes: 0 arrivals pending, transaction count -16 bytes
// SHORT-NEXT: kernel: @short
// SHORT-NEXT: op: nvvm.mbarrier.try_wait.parity

// RUN: not --crash linattn-run %s --entry=extra --target=cuda --emulate-gpu --input=%t/in.npy 2>&1 | FileCheck %s --check-prefix=EXTRA
// EXTRA: error: mbarrier.try_wait.parity 0 on the mbarrier at shared address 0x200 waits for phase 0, which nothing completes: 0 arrivals pending, transaction count 16 bytes

// RUN: not --crash linattn-run %s --entry=early_phase --target=cuda --emulate-gpu --input=%t/in.npy 2>&1 | FileCheck %s --check-prefix=EARLY
// EARLY: error: phase 0 of the mbarrier at shared address 0x200 completes with 4 bulk copies on it in flight: its arrivals expected fewer bytes than were copied
// EARLY-NEXT: kernel: @early_phase
// EARLY-NEXT: op: nvvm.mbarrier.arrive.expect_tx

// RUN: not --crash linattn-run %s --entry=no_bytes --target=cuda --emulate-gpu --input=%t/in.npy 2>&1 | FileCheck %s --check-prefix=NO-BYTES
// NO-BYTES: error: access to element 4 of workgroup buffer #0 while the async copy of thread 0 to it is in flight
// NO-BYTES-NEXT: kernel: @no_bytes

// RUN: not --crash linattn-run %s --entry=unpublished --target=cuda --emulate-gpu --input=%t/in.npy 2>&1 | FileCheck %s --check-prefix=UNPUBLISHED
// UNPUBLISHED: error: bulk copy completing on the mbarrier at shared address 0x200, which thread 0 initialized with no gpu.barrier since
// UNPUBLISHED-NEXT: kernel: @unpublished
// UNPUBLISHED: thread (1, 0, 0)

// RUN: not --crash linattn-run %s --entry=unaligned --target=cuda --emulate-gpu --input=%t/in.npy 2>&1 | FileCheck %s --check-prefix=UNALIGNED
// UNALIGNED: error: bulk copy of 120 bytes, not a positive multiple of 16
// UNALIGNED-NEXT: kernel: @unaligned

// RUN: not --crash linattn-run %s --entry=not_waited --target=cuda --emulate-gpu --input=%t/in.npy 2>&1 | FileCheck %s --check-prefix=NOT-WAITED
// NOT-WAITED: error: the kernel returns with 4 bulk copies on the mbarrier at shared address 512 that no wait completed
// NOT-WAITED-NEXT: kernel: @not_waited

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    // Thread 0 arms the barrier for the 512 bytes that threads 0-3 copy (a row of 32 elements each); after the wait every thread reads another's copy.
    gpu.func @ok(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %bars: memref<1xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %c0_i32 = arith.constant 0 : i32
      %c1_i32 = arith.constant 1 : i32
      %ticks = arith.constant 10000000 : i32
      %first = arith.cmpi eq, %tid, %c0 : index
      %copies = arith.cmpi ult, %tid, %c4 : index
      %row = arith.muli %tid, %c32 : index
      %row_bytes = arith.muli %row, %c4 : index
      %tile_base = memref.extract_aligned_pointer_as_index %tile : memref<128xf32, #gpu.address_space<workgroup>> -> index
      %bar_base = memref.extract_aligned_pointer_as_index %bars : memref<1xi64, #gpu.address_space<workgroup>> -> index
      %in_base = memref.extract_aligned_pointer_as_index %in : memref<?xf32> -> index
      %dst_index = arith.addi %tile_base, %row_bytes : index
      %src_index = arith.addi %in_base, %row_bytes : index
      %dst_i64 = arith.index_castui %dst_index : index to i64
      %src_i64 = arith.index_castui %src_index : index to i64
      %bar_i64 = arith.index_castui %bar_base : index to i64
      %dst_shared = llvm.inttoptr %dst_i64 : i64 to !llvm.ptr<3>
      %dst = llvm.addrspacecast %dst_shared : !llvm.ptr<3> to !llvm.ptr<7>
      %src_generic = llvm.inttoptr %src_i64 : i64 to !llvm.ptr
      %src = llvm.addrspacecast %src_generic : !llvm.ptr to !llvm.ptr<1>
      %bar = llvm.inttoptr %bar_i64 : i64 to !llvm.ptr<3>
      %c1 = arith.constant 1 : index
      %next = arith.addi %tid, %c1 : index
      %next4 = arith.muli %next, %c4 : index
      %neighbour = arith.remui %next4, %c128 : index
      scf.if %first {
        nvvm.mbarrier.init %bar, %c1_i32 : !llvm.ptr<3>, i32
      }
      gpu.barrier
      scf.if %first {
        %bytes = arith.constant 512 : i32
        nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
      }
      scf.if %copies {
        %size = arith.constant 128 : i32
        nvvm.cp.async.bulk.shared.cluster.global %dst, %src, %bar, %size : !llvm.ptr<7>, <1>
      }
      nvvm.mbarrier.try_wait.parity %bar, %c0_i32, %ticks : !llvm.ptr<3>, i32, i32
      %x = memref.load %tile[%neighbour] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%tid] : memref<?xf32>
      gpu.barrier
      scf.if %first {
        nvvm.mbarrier.inval %bar : !llvm.ptr<3>
      }
      gpu.return
    }

    // Reads the tile before waiting.
    gpu.func @before_wait(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %bars: memref<1xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %c0_i32 = arith.constant 0 : i32
      %c1_i32 = arith.constant 1 : i32
      %ticks = arith.constant 10000000 : i32
      %first = arith.cmpi eq, %tid, %c0 : index
      %copies = arith.cmpi ult, %tid, %c4 : index
      %row = arith.muli %tid, %c32 : index
      %row_bytes = arith.muli %row, %c4 : index
      %tile_base = memref.extract_aligned_pointer_as_index %tile : memref<128xf32, #gpu.address_space<workgroup>> -> index
      %bar_base = memref.extract_aligned_pointer_as_index %bars : memref<1xi64, #gpu.address_space<workgroup>> -> index
      %in_base = memref.extract_aligned_pointer_as_index %in : memref<?xf32> -> index
      %dst_index = arith.addi %tile_base, %row_bytes : index
      %src_index = arith.addi %in_base, %row_bytes : index
      %dst_i64 = arith.index_castui %dst_index : index to i64
      %src_i64 = arith.index_castui %src_index : index to i64
      %bar_i64 = arith.index_castui %bar_base : index to i64
      %dst_shared = llvm.inttoptr %dst_i64 : i64 to !llvm.ptr<3>
      %dst = llvm.addrspacecast %dst_shared : !llvm.ptr<3> to !llvm.ptr<7>
      %src_generic = llvm.inttoptr %src_i64 : i64 to !llvm.ptr
      %src = llvm.addrspacecast %src_generic : !llvm.ptr to !llvm.ptr<1>
      %bar = llvm.inttoptr %bar_i64 : i64 to !llvm.ptr<3>
      %c1 = arith.constant 1 : index
      %next = arith.addi %tid, %c1 : index
      %next4 = arith.muli %next, %c4 : index
      %neighbour = arith.remui %next4, %c128 : index
      scf.if %first {
        nvvm.mbarrier.init %bar, %c1_i32 : !llvm.ptr<3>, i32
      }
      gpu.barrier
      scf.if %first {
        %bytes = arith.constant 512 : i32
        nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
      }
      scf.if %copies {
        %size = arith.constant 128 : i32
        nvvm.cp.async.bulk.shared.cluster.global %dst, %src, %bar, %size : !llvm.ptr<7>, <1>
      }
      %x = memref.load %tile[%neighbour] : memref<128xf32, #gpu.address_space<workgroup>>
      nvvm.mbarrier.try_wait.parity %bar, %c0_i32, %ticks : !llvm.ptr<3>, i32, i32
      memref.store %x, %out[%tid] : memref<?xf32>
      gpu.barrier
      scf.if %first {
        nvvm.mbarrier.inval %bar : !llvm.ptr<3>
      }
      gpu.return
    }

    // Expects 16 bytes fewer than it copies: the phase never completes.
    gpu.func @short(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %bars: memref<1xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %c0_i32 = arith.constant 0 : i32
      %c1_i32 = arith.constant 1 : i32
      %ticks = arith.constant 10000000 : i32
      %first = arith.cmpi eq, %tid, %c0 : index
      %copies = arith.cmpi ult, %tid, %c4 : index
      %row = arith.muli %tid, %c32 : index
      %row_bytes = arith.muli %row, %c4 : index
      %tile_base = memref.extract_aligned_pointer_as_index %tile : memref<128xf32, #gpu.address_space<workgroup>> -> index
      %bar_base = memref.extract_aligned_pointer_as_index %bars : memref<1xi64, #gpu.address_space<workgroup>> -> index
      %in_base = memref.extract_aligned_pointer_as_index %in : memref<?xf32> -> index
      %dst_index = arith.addi %tile_base, %row_bytes : index
      %src_index = arith.addi %in_base, %row_bytes : index
      %dst_i64 = arith.index_castui %dst_index : index to i64
      %src_i64 = arith.index_castui %src_index : index to i64
      %bar_i64 = arith.index_castui %bar_base : index to i64
      %dst_shared = llvm.inttoptr %dst_i64 : i64 to !llvm.ptr<3>
      %dst = llvm.addrspacecast %dst_shared : !llvm.ptr<3> to !llvm.ptr<7>
      %src_generic = llvm.inttoptr %src_i64 : i64 to !llvm.ptr
      %src = llvm.addrspacecast %src_generic : !llvm.ptr to !llvm.ptr<1>
      %bar = llvm.inttoptr %bar_i64 : i64 to !llvm.ptr<3>
      %c1 = arith.constant 1 : index
      %next = arith.addi %tid, %c1 : index
      %next4 = arith.muli %next, %c4 : index
      %neighbour = arith.remui %next4, %c128 : index
      scf.if %first {
        nvvm.mbarrier.init %bar, %c1_i32 : !llvm.ptr<3>, i32
      }
      gpu.barrier
      scf.if %first {
        %bytes = arith.constant 496 : i32
        nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
      }
      scf.if %copies {
        %size = arith.constant 128 : i32
        nvvm.cp.async.bulk.shared.cluster.global %dst, %src, %bar, %size : !llvm.ptr<7>, <1>
      }
      nvvm.mbarrier.try_wait.parity %bar, %c0_i32, %ticks : !llvm.ptr<3>, i32, i32
      %x = memref.load %tile[%neighbour] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%tid] : memref<?xf32>
      gpu.barrier
      scf.if %first {
        nvvm.mbarrier.inval %bar : !llvm.ptr<3>
      }
      gpu.return
    }

    // Expects 16 bytes more than it copies: the phase never completes.
    gpu.func @extra(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %bars: memref<1xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %c0_i32 = arith.constant 0 : i32
      %c1_i32 = arith.constant 1 : i32
      %ticks = arith.constant 10000000 : i32
      %first = arith.cmpi eq, %tid, %c0 : index
      %copies = arith.cmpi ult, %tid, %c4 : index
      %row = arith.muli %tid, %c32 : index
      %row_bytes = arith.muli %row, %c4 : index
      %tile_base = memref.extract_aligned_pointer_as_index %tile : memref<128xf32, #gpu.address_space<workgroup>> -> index
      %bar_base = memref.extract_aligned_pointer_as_index %bars : memref<1xi64, #gpu.address_space<workgroup>> -> index
      %in_base = memref.extract_aligned_pointer_as_index %in : memref<?xf32> -> index
      %dst_index = arith.addi %tile_base, %row_bytes : index
      %src_index = arith.addi %in_base, %row_bytes : index
      %dst_i64 = arith.index_castui %dst_index : index to i64
      %src_i64 = arith.index_castui %src_index : index to i64
      %bar_i64 = arith.index_castui %bar_base : index to i64
      %dst_shared = llvm.inttoptr %dst_i64 : i64 to !llvm.ptr<3>
      %dst = llvm.addrspacecast %dst_shared : !llvm.ptr<3> to !llvm.ptr<7>
      %src_generic = llvm.inttoptr %src_i64 : i64 to !llvm.ptr
      %src = llvm.addrspacecast %src_generic : !llvm.ptr to !llvm.ptr<1>
      %bar = llvm.inttoptr %bar_i64 : i64 to !llvm.ptr<3>
      %c1 = arith.constant 1 : index
      %next = arith.addi %tid, %c1 : index
      %next4 = arith.muli %next, %c4 : index
      %neighbour = arith.remui %next4, %c128 : index
      scf.if %first {
        nvvm.mbarrier.init %bar, %c1_i32 : !llvm.ptr<3>, i32
      }
      gpu.barrier
      scf.if %first {
        %bytes = arith.constant 528 : i32
        nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
      }
      scf.if %copies {
        %size = arith.constant 128 : i32
        nvvm.cp.async.bulk.shared.cluster.global %dst, %src, %bar, %size : !llvm.ptr<7>, <1>
      }
      nvvm.mbarrier.try_wait.parity %bar, %c0_i32, %ticks : !llvm.ptr<3>, i32, i32
      %x = memref.load %tile[%neighbour] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%tid] : memref<?xf32>
      gpu.barrier
      scf.if %first {
        nvvm.mbarrier.inval %bar : !llvm.ptr<3>
      }
      gpu.return
    }

    // Copies before the arrival expecting none: the phase completes with the copies in flight.
    gpu.func @early_phase(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %bars: memref<1xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %c0_i32 = arith.constant 0 : i32
      %c1_i32 = arith.constant 1 : i32
      %ticks = arith.constant 10000000 : i32
      %first = arith.cmpi eq, %tid, %c0 : index
      %copies = arith.cmpi ult, %tid, %c4 : index
      %row = arith.muli %tid, %c32 : index
      %row_bytes = arith.muli %row, %c4 : index
      %tile_base = memref.extract_aligned_pointer_as_index %tile : memref<128xf32, #gpu.address_space<workgroup>> -> index
      %bar_base = memref.extract_aligned_pointer_as_index %bars : memref<1xi64, #gpu.address_space<workgroup>> -> index
      %in_base = memref.extract_aligned_pointer_as_index %in : memref<?xf32> -> index
      %dst_index = arith.addi %tile_base, %row_bytes : index
      %src_index = arith.addi %in_base, %row_bytes : index
      %dst_i64 = arith.index_castui %dst_index : index to i64
      %src_i64 = arith.index_castui %src_index : index to i64
      %bar_i64 = arith.index_castui %bar_base : index to i64
      %dst_shared = llvm.inttoptr %dst_i64 : i64 to !llvm.ptr<3>
      %dst = llvm.addrspacecast %dst_shared : !llvm.ptr<3> to !llvm.ptr<7>
      %src_generic = llvm.inttoptr %src_i64 : i64 to !llvm.ptr
      %src = llvm.addrspacecast %src_generic : !llvm.ptr to !llvm.ptr<1>
      %bar = llvm.inttoptr %bar_i64 : i64 to !llvm.ptr<3>
      %c1 = arith.constant 1 : index
      %next = arith.addi %tid, %c1 : index
      %next4 = arith.muli %next, %c4 : index
      %neighbour = arith.remui %next4, %c128 : index
      scf.if %first {
        nvvm.mbarrier.init %bar, %c1_i32 : !llvm.ptr<3>, i32
      }
      gpu.barrier
      scf.if %copies {
        %size = arith.constant 128 : i32
        nvvm.cp.async.bulk.shared.cluster.global %dst, %src, %bar, %size : !llvm.ptr<7>, <1>
      }
      scf.if %first {
        %bytes = arith.constant 0 : i32
        nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
      }
      nvvm.mbarrier.try_wait.parity %bar, %c0_i32, %ticks : !llvm.ptr<3>, i32, i32
      %x = memref.load %tile[%neighbour] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%tid] : memref<?xf32>
      gpu.barrier
      scf.if %first {
        nvvm.mbarrier.inval %bar : !llvm.ptr<3>
      }
      gpu.return
    }

    // Arrives expecting none before copying: the phase completes at once, the wait returns, the copies are still in flight.
    gpu.func @no_bytes(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %bars: memref<1xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %c0_i32 = arith.constant 0 : i32
      %c1_i32 = arith.constant 1 : i32
      %ticks = arith.constant 10000000 : i32
      %first = arith.cmpi eq, %tid, %c0 : index
      %copies = arith.cmpi ult, %tid, %c4 : index
      %row = arith.muli %tid, %c32 : index
      %row_bytes = arith.muli %row, %c4 : index
      %tile_base = memref.extract_aligned_pointer_as_index %tile : memref<128xf32, #gpu.address_space<workgroup>> -> index
      %bar_base = memref.extract_aligned_pointer_as_index %bars : memref<1xi64, #gpu.address_space<workgroup>> -> index
      %in_base = memref.extract_aligned_pointer_as_index %in : memref<?xf32> -> index
      %dst_index = arith.addi %tile_base, %row_bytes : index
      %src_index = arith.addi %in_base, %row_bytes : index
      %dst_i64 = arith.index_castui %dst_index : index to i64
      %src_i64 = arith.index_castui %src_index : index to i64
      %bar_i64 = arith.index_castui %bar_base : index to i64
      %dst_shared = llvm.inttoptr %dst_i64 : i64 to !llvm.ptr<3>
      %dst = llvm.addrspacecast %dst_shared : !llvm.ptr<3> to !llvm.ptr<7>
      %src_generic = llvm.inttoptr %src_i64 : i64 to !llvm.ptr
      %src = llvm.addrspacecast %src_generic : !llvm.ptr to !llvm.ptr<1>
      %bar = llvm.inttoptr %bar_i64 : i64 to !llvm.ptr<3>
      %c1 = arith.constant 1 : index
      %next = arith.addi %tid, %c1 : index
      %next4 = arith.muli %next, %c4 : index
      %neighbour = arith.remui %next4, %c128 : index
      scf.if %first {
        nvvm.mbarrier.init %bar, %c1_i32 : !llvm.ptr<3>, i32
      }
      gpu.barrier
      scf.if %first {
        %bytes = arith.constant 0 : i32
        nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
      }
      scf.if %copies {
        %size = arith.constant 128 : i32
        nvvm.cp.async.bulk.shared.cluster.global %dst, %src, %bar, %size : !llvm.ptr<7>, <1>
      }
      nvvm.mbarrier.try_wait.parity %bar, %c0_i32, %ticks : !llvm.ptr<3>, i32, i32
      %x = memref.load %tile[%neighbour] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%tid] : memref<?xf32>
      gpu.barrier
      scf.if %first {
        nvvm.mbarrier.inval %bar : !llvm.ptr<3>
      }
      gpu.return
    }

    // Uses the barrier with no gpu.barrier after thread 0 initialized it.
    gpu.func @unpublished(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %bars: memref<1xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %c0_i32 = arith.constant 0 : i32
      %c1_i32 = arith.constant 1 : i32
      %ticks = arith.constant 10000000 : i32
      %first = arith.cmpi eq, %tid, %c0 : index
      %copies = arith.cmpi ult, %tid, %c4 : index
      %row = arith.muli %tid, %c32 : index
      %row_bytes = arith.muli %row, %c4 : index
      %tile_base = memref.extract_aligned_pointer_as_index %tile : memref<128xf32, #gpu.address_space<workgroup>> -> index
      %bar_base = memref.extract_aligned_pointer_as_index %bars : memref<1xi64, #gpu.address_space<workgroup>> -> index
      %in_base = memref.extract_aligned_pointer_as_index %in : memref<?xf32> -> index
      %dst_index = arith.addi %tile_base, %row_bytes : index
      %src_index = arith.addi %in_base, %row_bytes : index
      %dst_i64 = arith.index_castui %dst_index : index to i64
      %src_i64 = arith.index_castui %src_index : index to i64
      %bar_i64 = arith.index_castui %bar_base : index to i64
      %dst_shared = llvm.inttoptr %dst_i64 : i64 to !llvm.ptr<3>
      %dst = llvm.addrspacecast %dst_shared : !llvm.ptr<3> to !llvm.ptr<7>
      %src_generic = llvm.inttoptr %src_i64 : i64 to !llvm.ptr
      %src = llvm.addrspacecast %src_generic : !llvm.ptr to !llvm.ptr<1>
      %bar = llvm.inttoptr %bar_i64 : i64 to !llvm.ptr<3>
      %c1 = arith.constant 1 : index
      %next = arith.addi %tid, %c1 : index
      %next4 = arith.muli %next, %c4 : index
      %neighbour = arith.remui %next4, %c128 : index
      scf.if %first {
        nvvm.mbarrier.init %bar, %c1_i32 : !llvm.ptr<3>, i32
      }
      scf.if %first {
        %bytes = arith.constant 512 : i32
        nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
      }
      scf.if %copies {
        %size = arith.constant 128 : i32
        nvvm.cp.async.bulk.shared.cluster.global %dst, %src, %bar, %size : !llvm.ptr<7>, <1>
      }
      nvvm.mbarrier.try_wait.parity %bar, %c0_i32, %ticks : !llvm.ptr<3>, i32, i32
      %x = memref.load %tile[%neighbour] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%tid] : memref<?xf32>
      gpu.barrier
      scf.if %first {
        nvvm.mbarrier.inval %bar : !llvm.ptr<3>
      }
      gpu.return
    }

    // Copies 120 bytes a row.
    gpu.func @unaligned(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %bars: memref<1xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %c0_i32 = arith.constant 0 : i32
      %c1_i32 = arith.constant 1 : i32
      %ticks = arith.constant 10000000 : i32
      %first = arith.cmpi eq, %tid, %c0 : index
      %copies = arith.cmpi ult, %tid, %c4 : index
      %row = arith.muli %tid, %c32 : index
      %row_bytes = arith.muli %row, %c4 : index
      %tile_base = memref.extract_aligned_pointer_as_index %tile : memref<128xf32, #gpu.address_space<workgroup>> -> index
      %bar_base = memref.extract_aligned_pointer_as_index %bars : memref<1xi64, #gpu.address_space<workgroup>> -> index
      %in_base = memref.extract_aligned_pointer_as_index %in : memref<?xf32> -> index
      %dst_index = arith.addi %tile_base, %row_bytes : index
      %src_index = arith.addi %in_base, %row_bytes : index
      %dst_i64 = arith.index_castui %dst_index : index to i64
      %src_i64 = arith.index_castui %src_index : index to i64
      %bar_i64 = arith.index_castui %bar_base : index to i64
      %dst_shared = llvm.inttoptr %dst_i64 : i64 to !llvm.ptr<3>
      %dst = llvm.addrspacecast %dst_shared : !llvm.ptr<3> to !llvm.ptr<7>
      %src_generic = llvm.inttoptr %src_i64 : i64 to !llvm.ptr
      %src = llvm.addrspacecast %src_generic : !llvm.ptr to !llvm.ptr<1>
      %bar = llvm.inttoptr %bar_i64 : i64 to !llvm.ptr<3>
      %c1 = arith.constant 1 : index
      %next = arith.addi %tid, %c1 : index
      %next4 = arith.muli %next, %c4 : index
      %neighbour = arith.remui %next4, %c128 : index
      scf.if %first {
        nvvm.mbarrier.init %bar, %c1_i32 : !llvm.ptr<3>, i32
      }
      gpu.barrier
      scf.if %first {
        %bytes = arith.constant 480 : i32
        nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
      }
      scf.if %copies {
        %size = arith.constant 120 : i32
        nvvm.cp.async.bulk.shared.cluster.global %dst, %src, %bar, %size : !llvm.ptr<7>, <1>
      }
      nvvm.mbarrier.try_wait.parity %bar, %c0_i32, %ticks : !llvm.ptr<3>, i32, i32
      %x = memref.load %tile[%neighbour] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%tid] : memref<?xf32>
      gpu.barrier
      scf.if %first {
        nvvm.mbarrier.inval %bar : !llvm.ptr<3>
      }
      gpu.return
    }

    // Never waits: the copies are in flight when the kernel returns.
    gpu.func @not_waited(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %bars: memref<1xi64, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %c0_i32 = arith.constant 0 : i32
      %c1_i32 = arith.constant 1 : i32
      %ticks = arith.constant 10000000 : i32
      %first = arith.cmpi eq, %tid, %c0 : index
      %copies = arith.cmpi ult, %tid, %c4 : index
      %row = arith.muli %tid, %c32 : index
      %row_bytes = arith.muli %row, %c4 : index
      %tile_base = memref.extract_aligned_pointer_as_index %tile : memref<128xf32, #gpu.address_space<workgroup>> -> index
      %bar_base = memref.extract_aligned_pointer_as_index %bars : memref<1xi64, #gpu.address_space<workgroup>> -> index
      %in_base = memref.extract_aligned_pointer_as_index %in : memref<?xf32> -> index
      %dst_index = arith.addi %tile_base, %row_bytes : index
      %src_index = arith.addi %in_base, %row_bytes : index
      %dst_i64 = arith.index_castui %dst_index : index to i64
      %src_i64 = arith.index_castui %src_index : index to i64
      %bar_i64 = arith.index_castui %bar_base : index to i64
      %dst_shared = llvm.inttoptr %dst_i64 : i64 to !llvm.ptr<3>
      %dst = llvm.addrspacecast %dst_shared : !llvm.ptr<3> to !llvm.ptr<7>
      %src_generic = llvm.inttoptr %src_i64 : i64 to !llvm.ptr
      %src = llvm.addrspacecast %src_generic : !llvm.ptr to !llvm.ptr<1>
      %bar = llvm.inttoptr %bar_i64 : i64 to !llvm.ptr<3>
      %c1 = arith.constant 1 : index
      %next = arith.addi %tid, %c1 : index
      %next4 = arith.muli %next, %c4 : index
      %neighbour = arith.remui %next4, %c128 : index
      scf.if %first {
        nvvm.mbarrier.init %bar, %c1_i32 : !llvm.ptr<3>, i32
      }
      gpu.barrier
      scf.if %first {
        %bytes = arith.constant 512 : i32
        nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
      }
      scf.if %copies {
        %size = arith.constant 128 : i32
        nvvm.cp.async.bulk.shared.cluster.global %dst, %src, %bar, %size : !llvm.ptr<7>, <1>
      }
      %x = arith.constant 0.0 : f32
      memref.store %x, %out[%tid] : memref<?xf32>
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
  func.func private @launch_before_wait(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@before_wait, linattn.gpu_outputs = array<i64: 1>}
  func.func @before_wait(%x: tensor<128xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_before_wait(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func private @launch_short(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@short, linattn.gpu_outputs = array<i64: 1>}
  func.func @short(%x: tensor<128xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_short(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func private @launch_extra(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@extra, linattn.gpu_outputs = array<i64: 1>}
  func.func @extra(%x: tensor<128xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_extra(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func private @launch_early_phase(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@early_phase, linattn.gpu_outputs = array<i64: 1>}
  func.func @early_phase(%x: tensor<128xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_early_phase(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func private @launch_no_bytes(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@no_bytes, linattn.gpu_outputs = array<i64: 1>}
  func.func @no_bytes(%x: tensor<128xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_no_bytes(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func private @launch_unpublished(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@unpublished, linattn.gpu_outputs = array<i64: 1>}
  func.func @unpublished(%x: tensor<128xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_unpublished(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func private @launch_unaligned(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@unaligned, linattn.gpu_outputs = array<i64: 1>}
  func.func @unaligned(%x: tensor<128xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_unaligned(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func private @launch_not_waited(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@not_waited, linattn.gpu_outputs = array<i64: 1>}
  func.func @not_waited(%x: tensor<128xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_not_waited(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
}
