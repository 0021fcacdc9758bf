// The GPU emulator's memory-access profile (LINATTN_GPU_EMULATOR_PROFILE):
// access patterns whose sectors and wavefronts are known, in one block of 64
// threads (two warps), each count checked. Global: a coalesced f32 load (4
// sectors a warp), one every 32 bytes (32 sectors for the bytes of 4), a
// coalesced store. Shared: stores of 33 consecutive floats a thread in a
// loop; loads at a stride of 32 words (all in one bank: 32 wavefronts), of
// 33 words (padded: 1), one word for all lanes (a broadcast: 1); 16-byte
// vector loads 32 bytes apart (two lanes of each 8-lane phase in the same
// banks: 2 wavefronts a phase), packed (1) and all of one address (a
// broadcast: lanes n and n ^ 1 read the same bytes, so the phases are of
// the pairs' first lanes, two of eight). Lane pairs: 16-byte loads where
// lanes n and n ^ 1 read the same 16 bytes (2 wavefronts, not 4), likewise
// lanes n and n ^ 2 (2), and lanes n and n + 16 (no pairs shared memory
// packs: 32 bytes apart in each 8-lane phase, 2 each). ldmatrix x4 from an 8x32 f16
// tile with rows of 64 bytes (4 rows of a matrix share banks: 4 wavefronts
// a matrix) and from the same with rows padded to 80 bytes (1). The buffers'
// footprints: all 2 KiB of the input read, the 256-byte output written.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %linattn_python -c "import numpy as np; np.save('%t/x.npy', np.arange(512, dtype=np.float32))"
// RUN: env LINATTN_GPU_EMULATOR_PROFILE=%t/profile.jsonl linattn-run %s --entry=accesses --target=cuda --emulate-gpu --input=%t/x.npy --output-dir=%t/accesses | FileCheck %s --check-prefix=RUNS
// RUN: env LINATTN_GPU_EMULATOR_PROFILE=%t/profile.jsonl linattn-run %s --entry=matrices --target=cuda --emulate-gpu --input=%t/x.npy --output-dir=%t/matrices | FileCheck %s --check-prefix=RUNS
// RUN: FileCheck %s --input-file=%t/profile.jsonl
// RUN: %linattn_python -c "import json; [json.loads(l) for l in open('%t/profile.jsonl')]; print('json ok')" | FileCheck %s --check-prefix=JSON
// Without the variable nothing is written.
// RUN: rm %t/profile.jsonl && linattn-run %s --entry=accesses --target=cuda --emulate-gpu --input=%t/x.npy --output-dir=%t/plain | FileCheck %s --check-prefix=RUNS
// RUN: not test -e %t/profile.jsonl
// A file that cannot be written is an error.
// RUN: env LINATTN_GPU_EMULATOR_PROFILE=%t/missing/profile.jsonl not --crash linattn-run %s --entry=accesses --target=cuda --emulate-gpu --input=%t/x.npy 2>&1 | FileCheck %s --check-prefix=UNWRITABLE

// RUNS: result #0
// JSON: json ok
// UNWRITABLE: linattn GPU emulator: error: cannot append to {{.*}}missing/profile.jsonl (LINATTN_GPU_EMULATOR_PROFILE)

// CHECK: {"kernel": "profile_accesses", "grid": [1, 1, 1], "block": [64, 1, 1], "ops": [
// CHECK-SAME: "kind": "global-load", "warps": 2, "bytes": 256, "units": 8, "ideal": 8, "op": "%{{[0-9]+}} = memref.load %arg0[%thread_id_x]
// CHECK-SAME: "kind": "global-load", "warps": 2, "bytes": 256, "units": 64, "ideal": 8,
// CHECK-SAME: "kind": "shared-store", "warps": 66, "bytes": 8448, "units": 66, "ideal": 66,
// CHECK-SAME: "kind": "shared-load", "warps": 2, "bytes": 256, "units": 64, "ideal": 2,
// CHECK-SAME: "kind": "shared-load", "warps": 2, "bytes": 256, "units": 2, "ideal": 2,
// CHECK-SAME: "kind": "shared-load", "warps": 2, "bytes": 256, "units": 2, "ideal": 2,
// CHECK-SAME: "kind": "shared-load", "warps": 2, "bytes": 1024, "units": 16, "ideal": 8, "op": "%{{[0-9]+}} = vector.load
// CHECK-SAME: "kind": "shared-load", "warps": 2, "bytes": 1024, "units": 8, "ideal": 8, "op": "%{{[0-9]+}} = vector.load
// CHECK-SAME: "kind": "shared-load", "warps": 2, "bytes": 1024, "units": 4, "ideal": 4, "op": "%{{[0-9]+}} = vector.load %arg2[%c0]
// CHECK-SAME: "kind": "shared-load", "warps": 2, "bytes": 1024, "units": 4, "ideal": 4, "op": "%{{[0-9]+}} = vector.load
// CHECK-SAME: "kind": "shared-load", "warps": 2, "bytes": 1024, "units": 4, "ideal": 4, "op": "%{{[0-9]+}} = vector.load
// CHECK-SAME: "kind": "shared-load", "warps": 2, "bytes": 1024, "units": 16, "ideal": 8, "op": "%{{[0-9]+}} = vector.load
// CHECK-SAME: "kind": "global-store", "warps": 2, "bytes": 256, "units": 8, "ideal": 8, "op": "memref.store
// CHECK-SAME: ], "buffers": [{"argument": 0, "read_bytes": 2048, "written_bytes": 0}, {"argument": 1, "read_bytes": 0, "written_bytes": 256}]}
// CHECK: {"kernel": "profile_matrices", "grid": [1, 1, 1], "block": [32, 1, 1], "ops": [
// CHECK-SAME: "kind": "global-load", "warps": 10, "bytes": 1280, "units": 320, "ideal": 40,
// CHECK-SAME: "kind": "shared-store", "warps": 10, "bytes": 640, "units": 10, "ideal": 10,
// CHECK-SAME: "kind": "shared-load", "warps": 1, "bytes": 512, "units": 16, "ideal": 4, "op": "%{{[0-9]+}} = nvgpu.ldmatrix
// CHECK-SAME: "kind": "shared-load", "warps": 1, "bytes": 512, "units": 4, "ideal": 4, "op": "%{{[0-9]+}} = nvgpu.ldmatrix
// CHECK-SAME: "kind": "global-store", "warps": 1, "bytes": 128, "units": 4, "ideal": 4,

!tile = memref<2112xf32, #gpu.address_space<workgroup>>
!htile = memref<320xf16, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    gpu.func @profile_accesses(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%s : !tile {llvm.align = 16 : i64}) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %c33 = arith.constant 33 : index
      %t = gpu.thread_id x
      %a = memref.load %in[%t] : memref<?xf32>
      %t8 = arith.muli %t, %c8 : index
      %b = memref.load %in[%t8] : memref<?xf32>
      %ab = arith.addf %a, %b : f32
      %t33 = arith.muli %t, %c33 : index
      scf.for %j = %c0 to %c33 step %c1 {
        %at = arith.addi %t33, %j : index
        memref.store %ab, %s[%at] : !tile
      }
      gpu.barrier
      %t32 = arith.muli %t, %c32 : index
      %x = memref.load %s[%t32] : !tile
      %y = memref.load %s[%t33] : !tile
      %z = memref.load %s[%c0] : !tile
      %u = vector.load %s[%t8] {alignment = 16} : !tile, vector<4xf32>
      %t4 = arith.muli %t, %c4 : index
      %w = vector.load %s[%t4] {alignment = 16} : !tile, vector<4xf32>
      %all = vector.load %s[%c0] {alignment = 16} : !tile, vector<4xf32>
      %c2 = arith.constant 2 : index
      %c16 = arith.constant 16 : index
      %half = arith.divui %t, %c2 : index
      %atPair1 = arith.muli %half, %c4 : index
      %pair1 = vector.load %s[%atPair1] {alignment = 16} : !tile, vector<4xf32>
      %odd = arith.remui %t, %c2 : index
      %quarter = arith.divui %t, %c4 : index
      %quarter2 = arith.muli %quarter, %c2 : index
      %unit2 = arith.addi %odd, %quarter2 : index
      %atPair2 = arith.muli %unit2, %c4 : index
      %pair2 = vector.load %s[%atPair2] {alignment = 16} : !tile, vector<4xf32>
      %low = arith.remui %t, %c16 : index
      %atHalves = arith.muli %low, %c8 : index
      %halves = vector.load %s[%atHalves] {alignment = 16} : !tile, vector<4xf32>
      %u0 = vector.extract %u[0] : f32 from vector<4xf32>
      %w0 = vector.extract %w[0] : f32 from vector<4xf32>
      %all3 = vector.extract %all[3] : f32 from vector<4xf32>
      %xy = arith.addf %x, %y : f32
      %xyz = arith.addf %xy, %z : f32
      %uw0 = arith.addf %u0, %w0 : f32
      %uw = arith.addf %uw0, %all3 : f32
      %p1 = vector.extract %pair1[1] : f32 from vector<4xf32>
      %p2 = vector.extract %pair2[2] : f32 from vector<4xf32>
      %h3 = vector.extract %halves[3] : f32 from vector<4xf32>
      %p12 = arith.addf %p1, %p2 : f32
      %ph = arith.addf %p12, %h3 : f32
      %uwp = arith.addf %uw, %ph : f32
      %r = arith.addf %xyz, %uwp : f32
      memref.store %r, %out[%t] : memref<?xf32>
      gpu.return
    }
    // Thread t writes halves 10t..10t+9 of the tile (from floats
    // 10t..10t+9 of the input); then ldmatrix x4 reads matrix i at column 8i
    // of rows 64 bytes apart, and of rows 80 bytes apart.
    gpu.func @profile_matrices(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%s : !htile {llvm.align = 16 : i64}) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c10 = arith.constant 10 : index
      %c32 = arith.constant 32 : index
      %c40 = arith.constant 40 : index
      %t = gpu.thread_id x
      %t10 = arith.muli %t, %c10 : index
      scf.for %j = %c0 to %c10 step %c1 {
        %at = arith.addi %t10, %j : index
        %v = memref.load %in[%at] : memref<?xf32>
        %h = arith.truncf %v : f32 to f16
        memref.store %h, %s[%at] : !htile
      }
      gpu.barrier
      %row = arith.remui %t, %c8 : index
      %matrix = arith.divui %t, %c8 : index
      %column = arith.muli %matrix, %c8 : index
      %narrow = arith.muli %row, %c32 : index
      %atNarrow = arith.addi %narrow, %column : index
      %padded = arith.muli %row, %c40 : index
      %atPadded = arith.addi %padded, %column : index
      %m = nvgpu.ldmatrix %s[%atNarrow] {numTiles = 4 : i32, transpose = false} : !htile -> vector<4x2xf16>
      %p = nvgpu.ldmatrix %s[%atPadded] {numTiles = 4 : i32, transpose = false} : !htile -> vector<4x2xf16>
      %m0 = vector.extract %m[0, 0] : f16 from vector<4x2xf16>
      %p0 = vector.extract %p[3, 1] : f16 from vector<4x2xf16>
      %sum = arith.addf %m0, %p0 : f16
      %r = arith.extf %sum : f16 to f32
      memref.store %r, %out[%t] : memref<?xf32>
      gpu.return
    }
  }
  func.func private @launch_accesses(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@profile_accesses, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_matrices(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@profile_matrices, linattn.gpu_outputs = array<i64: 1>}
  func.func @accesses(%x: tensor<512xf32>) -> tensor<64xf32> {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %in = bufferization.to_buffer %x read_only : tensor<512xf32> to memref<512xf32>
    %in_flat = memref.cast %in : memref<512xf32> to memref<?xf32>
    %out = memref.alloc() : memref<64xf32>
    %out_flat = memref.cast %out : memref<64xf32> to memref<?xf32>
    call @launch_accesses(%c1, %c1, %c1, %c64, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<64xf32> to tensor<64xf32>
    return %r : tensor<64xf32>
  }
  func.func @matrices(%x: tensor<512xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<512xf32> to memref<512xf32>
    %in_flat = memref.cast %in : memref<512xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_matrices(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
}
