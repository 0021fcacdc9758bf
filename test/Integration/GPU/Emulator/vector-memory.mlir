// vector.load, vector.store, vector.insert and the aligned pointer of a
// buffer (memref.extract_aligned_pointer_as_index) in the GPU emulator. A
// bf16 buffer staged global -> shared -> global with 16-byte vector accesses,
// transformed on the way (2x + 1 per element, chunks of 8 mirrored through
// the tile, elements 0 and 7 of each chunk swapped with vector.insert),
// compared with numpy. An f32 kernel that tests the address of each thread's
// chunk at run time and picks a 16-byte aligned vector path or one without an
// alignment attribute (element alignment, legal anywhere); the device buffers
// are 256-byte aligned, so even threads take the first. Then the errors: a
// vector.load past the end, a global vector.load and a shared vector.store
// off their 16-byte alignment, a shared buffer without llvm.align,
// overlapping vector stores of two threads, a vector.load of workgroup memory
// nobody wrote. Last the aligned pointers of two workgroup buffers: their
// shared-memory addresses, one after the other at their alignments from 0
// (1040 bytes of f16, then a 64-byte aligned buffer at 1088).

// RUN: rm -rf %t && mkdir -p %t
// RUN: %linattn_python -c "import numpy as np; np.save('%t/x.npy', (np.arange(512) %% 97 - 48).astype(np.float32) / 8); np.save('%t/z.npy', np.arange(192, dtype=np.float32) / 4 - 7)"

// RUN: linattn-run %s --entry=copy --target=cuda --emulate-gpu --input=%t/x.npy --output-dir=%t/copy | FileCheck %s --check-prefix=COPY
// RUN: %linattn_python -c "import numpy as np; x = np.load('%t/x.npy'); y = np.load('%t/copy/result0.npy'); e = (2 * x + 1).reshape(64, 8)[::-1][:, [7, 1, 2, 3, 4, 5, 6, 0]].reshape(-1); assert (y == e).all(), (y, e); print('vector copy ok')" | FileCheck %s --check-prefix=COPY-VALUES
// COPY: result #0: 512xbf16
// COPY-VALUES: vector copy ok

// RUN: linattn-run %s --entry=branch --target=cuda --emulate-gpu --input=%t/z.npy --output-dir=%t/branch | FileCheck %s --check-prefix=BRANCH
// RUN: %linattn_python -c "import numpy as np; z = np.load('%t/z.npy').reshape(32, 6); y = np.load('%t/branch/result0.npy').reshape(32, 6); assert (y[:, :4] == z[:, :4]).all(), y; assert (y[:, 4] == [1, 0] * 16).all(), y[:, 4]; assert (y[:, 5] == [0, 8] * 16).all(), y[:, 5]; print('vector branch ok')" | FileCheck %s --check-prefix=BRANCH-VALUES
// BRANCH: result #0: 192xf32
// BRANCH-VALUES: vector branch ok

// RUN: not --crash linattn-run %s --entry=oob --target=cuda --emulate-gpu --input=%t/x.npy 2>&1 | FileCheck %s --check-prefix=OOB
// OOB: linattn GPU emulator: error: out-of-bounds vector.load from kernel argument #0: elements 512..519, size 512
// OOB-NEXT: kernel: @vector_oob
// OOB-NEXT: op: %{{.*}} = vector.load
// OOB-NEXT: at: loc(
// OOB-NEXT: block (0, 0, 0), thread (63, 0, 0)

// RUN: not --crash linattn-run %s --entry=misaligned_global --target=cuda --emulate-gpu --input=%t/x.npy 2>&1 | FileCheck %s --check-prefix=MISALIGNED-GLOBAL
// MISALIGNED-GLOBAL: linattn GPU emulator: error: vector.load at byte 8 of kernel argument #0 (address 0x{{[0-9a-f]*}}8) is not 16-byte aligned
// MISALIGNED-GLOBAL-NEXT: kernel: @vector_misaligned_global
// MISALIGNED-GLOBAL-NEXT: op: %{{.*}} = vector.load
// MISALIGNED-GLOBAL: thread (0, 0, 0)

// RUN: not --crash linattn-run %s --entry=misaligned_shared --target=cuda --emulate-gpu --input=%t/x.npy 2>&1 | FileCheck %s --check-prefix=MISALIGNED-SHARED
// MISALIGNED-SHARED: linattn GPU emulator: error: vector.store at byte 8 of workgroup buffer #0 is not 16-byte aligned
// MISALIGNED-SHARED-NEXT: kernel: @vector_misaligned_shared
// MISALIGNED-SHARED-NEXT: op: vector.store
// MISALIGNED-SHARED: thread (0, 0, 0)

// RUN: not --crash linattn-run %s --entry=unaligned_buffer --target=cuda --emulate-gpu --input=%t/x.npy 2>&1 | FileCheck %s --check-prefix=UNALIGNED
// UNALIGNED: linattn GPU emulator: error: vector.store to workgroup buffer #0, which is not 16-byte aligned (llvm.align)
// UNALIGNED-NEXT: kernel: @vector_unaligned_buffer
// UNALIGNED-NEXT: op: vector.store

// RUN: not --crash linattn-run %s --entry=race --target=cuda --emulate-gpu --input=%t/x.npy 2>&1 | FileCheck %s --check-prefix=RACE
// RACE: linattn GPU emulator: error: data race on workgroup buffer #0 element 4: thread 0 also wrote it since the last gpu.barrier (at vector.store
// RACE-NEXT: kernel: @vector_race
// RACE-NEXT: op: vector.store
// RACE: thread (1, 0, 0)

// RUN: not --crash linattn-run %s --entry=uninitialized --target=cuda --emulate-gpu --input=%t/x.npy 2>&1 | FileCheck %s --check-prefix=UNINIT
// UNINIT: linattn GPU emulator: error: read of uninitialized workgroup memory: element 0 of workgroup buffer #0 was not written by any thread of this block
// UNINIT-NEXT: kernel: @vector_uninitialized
// UNINIT-NEXT: op: %{{.*}} = vector.load
// UNINIT: thread (0, 0, 0)

// RUN: linattn-run %s --entry=shared_pointer --target=cuda --emulate-gpu --input=%t/x.npy --output-dir=%t/pointer | FileCheck %s --check-prefix=SHARED-POINTER
// RUN: %linattn_python -c "import numpy as np; y = np.load('%t/pointer/result0.npy'); assert (y[:64:2] == 0).all() and (y[1:64:2] == 1088).all(), y[:64]; print('shared addresses ok')" | FileCheck %s --check-prefix=SHARED-POINTER-VALUES
// SHARED-POINTER: result #0: 512xf16
// SHARED-POINTER-VALUES: shared addresses ok

!bf16tile = memref<512xbf16, #gpu.address_space<workgroup>>
!tile = memref<520xf16, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    // Thread t: chunk t of %in (8 elements, one 16-byte vector.load), 2x + 1
    // per element, into chunk 63 - t of the tile; after the barrier, chunk t
    // of the tile with its elements 0 and 7 swapped into chunk t of %out.
    gpu.func @vector_copy(%in: memref<?xbf16>, %out: memref<?xbf16>)
        workgroup(%s : !bf16tile {llvm.align = 16 : i64}) kernel {
      %c8 = arith.constant 8 : index
      %c63 = arith.constant 63 : index
      %c1f = arith.constant 1.0 : bf16
      %c2f = arith.constant 2.0 : bf16
      %t = gpu.thread_id x
      %at = arith.muli %t, %c8 : index
      %v = vector.load %in[%at] {alignment = 16} : memref<?xbf16>, vector<8xbf16>
      %x0 = vector.extract %v[0] : bf16 from vector<8xbf16>
      %d0 = arith.mulf %x0, %c2f : bf16
      %y0 = arith.addf %d0, %c1f : bf16
      %x1 = vector.extract %v[1] : bf16 from vector<8xbf16>
      %d1 = arith.mulf %x1, %c2f : bf16
      %y1 = arith.addf %d1, %c1f : bf16
      %x2 = vector.extract %v[2] : bf16 from vector<8xbf16>
      %d2 = arith.mulf %x2, %c2f : bf16
      %y2 = arith.addf %d2, %c1f : bf16
      %x3 = vector.extract %v[3] : bf16 from vector<8xbf16>
      %d3 = arith.mulf %x3, %c2f : bf16
      %y3 = arith.addf %d3, %c1f : bf16
      %x4 = vector.extract %v[4] : bf16 from vector<8xbf16>
      %d4 = arith.mulf %x4, %c2f : bf16
      %y4 = arith.addf %d4, %c1f : bf16
      %x5 = vector.extract %v[5] : bf16 from vector<8xbf16>
      %d5 = arith.mulf %x5, %c2f : bf16
      %y5 = arith.addf %d5, %c1f : bf16
      %x6 = vector.extract %v[6] : bf16 from vector<8xbf16>
      %d6 = arith.mulf %x6, %c2f : bf16
      %y6 = arith.addf %d6, %c1f : bf16
      %x7 = vector.extract %v[7] : bf16 from vector<8xbf16>
      %d7 = arith.mulf %x7, %c2f : bf16
      %y7 = arith.addf %d7, %c1f : bf16
      %w = vector.from_elements %y0, %y1, %y2, %y3, %y4, %y5, %y6, %y7 : vector<8xbf16>
      %mirror = arith.subi %c63, %t : index
      %mirrorAt = arith.muli %mirror, %c8 : index
      vector.store %w, %s[%mirrorAt] {alignment = 16} : !bf16tile, vector<8xbf16>
      gpu.barrier
      %u = vector.load %s[%at] {alignment = 16} : !bf16tile, vector<8xbf16>
      %first = vector.extract %u[0] : bf16 from vector<8xbf16>
      %last = vector.extract %u[7] : bf16 from vector<8xbf16>
      %u1 = vector.insert %last, %u[0] : bf16 into vector<8xbf16>
      %u2 = vector.insert %first, %u1[7] : bf16 into vector<8xbf16>
      vector.store %u2, %out[%at] {alignment = 16} : memref<?xbf16>, vector<8xbf16>
      gpu.return
    }
    // Thread t copies elements 6t..6t+3 (bytes 24t..): with 16-byte vector
    // accesses where both addresses are multiples of 16, else with vector
    // accesses without an alignment attribute. out[6t + 4]: the path (1 the
    // aligned one); out[6t + 5]: the input address modulo 16.
    gpu.func @vector_branch(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c5 = arith.constant 5 : index
      %c6 = arith.constant 6 : index
      %c16 = arith.constant 16 : index
      %zero = arith.constant 0.0 : f32
      %one = arith.constant 1.0 : f32
      %t = gpu.thread_id x
      %at = arith.muli %t, %c6 : index
      %bytes = arith.muli %at, %c4 : index
      %pin = memref.extract_aligned_pointer_as_index %in : memref<?xf32> -> index
      %pout = memref.extract_aligned_pointer_as_index %out : memref<?xf32> -> index
      %ain = arith.addi %pin, %bytes : index
      %aout = arith.addi %pout, %bytes : index
      %min = arith.remui %ain, %c16 : index
      %mout = arith.remui %aout, %c16 : index
      %inOk = arith.cmpi eq, %min, %c0 : index
      %outOk = arith.cmpi eq, %mout, %c0 : index
      %ok = arith.andi %inOk, %outOk : i1
      %flag = scf.if %ok -> (f32) {
        %v = vector.load %in[%at] {alignment = 16} : memref<?xf32>, vector<4xf32>
        vector.store %v, %out[%at] {alignment = 16} : memref<?xf32>, vector<4xf32>
        scf.yield %one : f32
      } else {
        %v = vector.load %in[%at] : memref<?xf32>, vector<4xf32>
        vector.store %v, %out[%at] : memref<?xf32>, vector<4xf32>
        scf.yield %zero : f32
      }
      %flagAt = arith.addi %at, %c4 : index
      memref.store %flag, %out[%flagAt] : memref<?xf32>
      %mod = arith.index_cast %min : index to i32
      %modf = arith.uitofp %mod : i32 to f32
      %modAt = arith.addi %at, %c5 : index
      memref.store %modf, %out[%modAt] : memref<?xf32>
      gpu.return
    }
    // Thread t reads chunk t + 1: thread 63's is past the end.
    gpu.func @vector_oob(%in: memref<?xf16>, %out: memref<?xf16>) kernel {
      %c8 = arith.constant 8 : index
      %t = gpu.thread_id x
      %at = arith.muli %t, %c8 : index
      %next = arith.addi %at, %c8 : index
      %v = vector.load %in[%next] {alignment = 16} : memref<?xf16>, vector<8xf16>
      vector.store %v, %out[%at] {alignment = 16} : memref<?xf16>, vector<8xf16>
      gpu.return
    }
    // 16-byte loads at element 8t + 4: 8 bytes past a 16-byte boundary.
    gpu.func @vector_misaligned_global(%in: memref<?xf16>, %out: memref<?xf16>) kernel {
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %t = gpu.thread_id x
      %at = arith.muli %t, %c8 : index
      %off = arith.addi %at, %c4 : index
      %v = vector.load %in[%off] {alignment = 16} : memref<?xf16>, vector<8xf16>
      vector.store %v, %out[%at] {alignment = 16} : memref<?xf16>, vector<8xf16>
      gpu.return
    }
    // 16-byte stores to the tile at element 8t + 4.
    gpu.func @vector_misaligned_shared(%in: memref<?xf16>, %out: memref<?xf16>)
        workgroup(%s : !tile {llvm.align = 16 : i64}) kernel {
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %t = gpu.thread_id x
      %at = arith.muli %t, %c8 : index
      %off = arith.addi %at, %c4 : index
      %v = vector.load %in[%at] {alignment = 16} : memref<?xf16>, vector<8xf16>
      vector.store %v, %s[%off] {alignment = 16} : !tile, vector<8xf16>
      vector.store %v, %out[%at] {alignment = 16} : memref<?xf16>, vector<8xf16>
      gpu.return
    }
    // 16-byte stores to a tile declared without llvm.align.
    gpu.func @vector_unaligned_buffer(%in: memref<?xf16>, %out: memref<?xf16>)
        workgroup(%s : !tile) kernel {
      %c8 = arith.constant 8 : index
      %t = gpu.thread_id x
      %at = arith.muli %t, %c8 : index
      %v = vector.load %in[%at] {alignment = 16} : memref<?xf16>, vector<8xf16>
      vector.store %v, %s[%at] {alignment = 16} : !tile, vector<8xf16>
      vector.store %v, %out[%at] {alignment = 16} : memref<?xf16>, vector<8xf16>
      gpu.return
    }
    // 8 elements stored at element 4t: threads t and t + 1 overlap.
    gpu.func @vector_race(%in: memref<?xf16>, %out: memref<?xf16>)
        workgroup(%s : !tile {llvm.align = 16 : i64}) kernel {
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %t = gpu.thread_id x
      %at = arith.muli %t, %c8 : index
      %half = arith.muli %t, %c4 : index
      %v = vector.load %in[%at] {alignment = 16} : memref<?xf16>, vector<8xf16>
      vector.store %v, %s[%half] {alignment = 8} : !tile, vector<8xf16>
      vector.store %v, %out[%at] {alignment = 16} : memref<?xf16>, vector<8xf16>
      gpu.return
    }
    // A tile read that nothing wrote.
    gpu.func @vector_uninitialized(%in: memref<?xf16>, %out: memref<?xf16>)
        workgroup(%s : !tile {llvm.align = 16 : i64}) kernel {
      %c8 = arith.constant 8 : index
      %t = gpu.thread_id x
      %at = arith.muli %t, %c8 : index
      %v = vector.load %s[%at] {alignment = 16} : !tile, vector<8xf16>
      vector.store %v, %out[%at] {alignment = 16} : memref<?xf16>, vector<8xf16>
      gpu.return
    }
    // The address of workgroup memory, which the emulator does not model.
    // Even threads write the first buffer's address, odd ones the second's.
    gpu.func @vector_shared_pointer(%in: memref<?xf16>, %out: memref<?xf16>)
        workgroup(%s : !tile {llvm.align = 16 : i64},
                  %s2 : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 64 : i64}) kernel {
      %c2 = arith.constant 2 : index
      %t = gpu.thread_id x
      %p = memref.extract_aligned_pointer_as_index %s : !tile -> index
      %p2 = memref.extract_aligned_pointer_as_index %s2 : memref<8xf32, #gpu.address_space<workgroup>> -> index
      %odd = arith.remui %t, %c2 : index
      %one = arith.constant 1 : index
      %isOdd = arith.cmpi eq, %odd, %one : index
      %m = arith.select %isOdd, %p2, %p : index
      %mi = arith.index_cast %m : index to i32
      %mf = arith.uitofp %mi : i32 to f16
      memref.store %mf, %out[%t] : memref<?xf16>
      gpu.return
    }
  }

  // Launch stubs: grid (x, y, z), block (x, y, z), then the kernel's
  // arguments; linattn-gpu-stage-buffers copies argument 0 to the device and
  // argument 1 back.
  func.func private @launch_copy(index, index, index, index, index, index, memref<?xbf16>, memref<?xbf16>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@vector_copy, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_branch(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@vector_branch, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_oob(index, index, index, index, index, index, memref<?xf16>, memref<?xf16>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@vector_oob, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_misaligned_global(index, index, index, index, index, index, memref<?xf16>, memref<?xf16>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@vector_misaligned_global, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_misaligned_shared(index, index, index, index, index, index, memref<?xf16>, memref<?xf16>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@vector_misaligned_shared, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_unaligned_buffer(index, index, index, index, index, index, memref<?xf16>, memref<?xf16>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@vector_unaligned_buffer, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_race(index, index, index, index, index, index, memref<?xf16>, memref<?xf16>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@vector_race, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_uninitialized(index, index, index, index, index, index, memref<?xf16>, memref<?xf16>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@vector_uninitialized, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_shared_pointer(index, index, index, index, index, index, memref<?xf16>, memref<?xf16>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@vector_shared_pointer, linattn.gpu_outputs = array<i64: 1>}

  func.func @copy(%x: tensor<512xbf16>) -> tensor<512xbf16> {
    %c1 = arith.constant 1 : index
    %cb = arith.constant 1 : index
    %ct = arith.constant 64 : index
    %in = bufferization.to_buffer %x read_only : tensor<512xbf16> to memref<512xbf16>
    %in_flat = memref.cast %in : memref<512xbf16> to memref<?xbf16>
    %out = memref.alloc() : memref<512xbf16>
    %out_flat = memref.cast %out : memref<512xbf16> to memref<?xbf16>
    call @launch_copy(%cb, %c1, %c1, %ct, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xbf16>, memref<?xbf16>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<512xbf16> to tensor<512xbf16>
    return %r : tensor<512xbf16>
  }
  func.func @branch(%x: tensor<192xf32>) -> tensor<192xf32> {
    %c1 = arith.constant 1 : index
    %cb = arith.constant 1 : index
    %ct = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<192xf32> to memref<192xf32>
    %in_flat = memref.cast %in : memref<192xf32> to memref<?xf32>
    %out = memref.alloc() : memref<192xf32>
    %out_flat = memref.cast %out : memref<192xf32> to memref<?xf32>
    call @launch_branch(%cb, %c1, %c1, %ct, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<192xf32> to tensor<192xf32>
    return %r : tensor<192xf32>
  }
  func.func @oob(%x: tensor<512xf16>) -> tensor<512xf16> {
    %c1 = arith.constant 1 : index
    %cb = arith.constant 1 : index
    %ct = arith.constant 64 : index
    %in = bufferization.to_buffer %x read_only : tensor<512xf16> to memref<512xf16>
    %in_flat = memref.cast %in : memref<512xf16> to memref<?xf16>
    %out = memref.alloc() : memref<512xf16>
    %out_flat = memref.cast %out : memref<512xf16> to memref<?xf16>
    call @launch_oob(%cb, %c1, %c1, %ct, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf16>, memref<?xf16>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<512xf16> to tensor<512xf16>
    return %r : tensor<512xf16>
  }
  func.func @misaligned_global(%x: tensor<512xf16>) -> tensor<512xf16> {
    %c1 = arith.constant 1 : index
    %cb = arith.constant 1 : index
    %ct = arith.constant 64 : index
    %in = bufferization.to_buffer %x read_only : tensor<512xf16> to memref<512xf16>
    %in_flat = memref.cast %in : memref<512xf16> to memref<?xf16>
    %out = memref.alloc() : memref<512xf16>
    %out_flat = memref.cast %out : memref<512xf16> to memref<?xf16>
    call @launch_misaligned_global(%cb, %c1, %c1, %ct, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf16>, memref<?xf16>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<512xf16> to tensor<512xf16>
    return %r : tensor<512xf16>
  }
  func.func @misaligned_shared(%x: tensor<512xf16>) -> tensor<512xf16> {
    %c1 = arith.constant 1 : index
    %cb = arith.constant 1 : index
    %ct = arith.constant 64 : index
    %in = bufferization.to_buffer %x read_only : tensor<512xf16> to memref<512xf16>
    %in_flat = memref.cast %in : memref<512xf16> to memref<?xf16>
    %out = memref.alloc() : memref<512xf16>
    %out_flat = memref.cast %out : memref<512xf16> to memref<?xf16>
    call @launch_misaligned_shared(%cb, %c1, %c1, %ct, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf16>, memref<?xf16>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<512xf16> to tensor<512xf16>
    return %r : tensor<512xf16>
  }
  func.func @unaligned_buffer(%x: tensor<512xf16>) -> tensor<512xf16> {
    %c1 = arith.constant 1 : index
    %cb = arith.constant 1 : index
    %ct = arith.constant 64 : index
    %in = bufferization.to_buffer %x read_only : tensor<512xf16> to memref<512xf16>
    %in_flat = memref.cast %in : memref<512xf16> to memref<?xf16>
    %out = memref.alloc() : memref<512xf16>
    %out_flat = memref.cast %out : memref<512xf16> to memref<?xf16>
    call @launch_unaligned_buffer(%cb, %c1, %c1, %ct, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf16>, memref<?xf16>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<512xf16> to tensor<512xf16>
    return %r : tensor<512xf16>
  }
  func.func @race(%x: tensor<512xf16>) -> tensor<512xf16> {
    %c1 = arith.constant 1 : index
    %cb = arith.constant 1 : index
    %ct = arith.constant 64 : index
    %in = bufferization.to_buffer %x read_only : tensor<512xf16> to memref<512xf16>
    %in_flat = memref.cast %in : memref<512xf16> to memref<?xf16>
    %out = memref.alloc() : memref<512xf16>
    %out_flat = memref.cast %out : memref<512xf16> to memref<?xf16>
    call @launch_race(%cb, %c1, %c1, %ct, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf16>, memref<?xf16>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<512xf16> to tensor<512xf16>
    return %r : tensor<512xf16>
  }
  func.func @uninitialized(%x: tensor<512xf16>) -> tensor<512xf16> {
    %c1 = arith.constant 1 : index
    %cb = arith.constant 1 : index
    %ct = arith.constant 64 : index
    %in = bufferization.to_buffer %x read_only : tensor<512xf16> to memref<512xf16>
    %in_flat = memref.cast %in : memref<512xf16> to memref<?xf16>
    %out = memref.alloc() : memref<512xf16>
    %out_flat = memref.cast %out : memref<512xf16> to memref<?xf16>
    call @launch_uninitialized(%cb, %c1, %c1, %ct, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf16>, memref<?xf16>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<512xf16> to tensor<512xf16>
    return %r : tensor<512xf16>
  }
  func.func @shared_pointer(%x: tensor<512xf16>) -> tensor<512xf16> {
    %c1 = arith.constant 1 : index
    %cb = arith.constant 1 : index
    %ct = arith.constant 64 : index
    %in = bufferization.to_buffer %x read_only : tensor<512xf16> to memref<512xf16>
    %in_flat = memref.cast %in : memref<512xf16> to memref<?xf16>
    %out = memref.alloc() : memref<512xf16>
    %out_flat = memref.cast %out : memref<512xf16> to memref<?xf16>
    call @launch_shared_pointer(%cb, %c1, %c1, %ct, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf16>, memref<?xf16>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<512xf16> to tensor<512xf16>
    return %r : tensor<512xf16>
  }
}
