// nvgpu.ldmatrix in the GPU emulator: a 16x16 f16 tile holding 0..255, read
// by one warp as four 8x8 matrices with and without .trans, each lane's
// registers written out; compared with the fragments the PTX ISA specifies
// (lanes 8i..8i+7 address the rows of matrix i; lane 4g+t receives row g,
// columns 2t and 2t+1, or with .trans column g, rows 2t and 2t+1). Then the
// errors: a row that is not 16-byte aligned, a buffer without llvm.align 16.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %linattn_python -c "import numpy as np; np.save('%t/in.npy', np.arange(256, dtype=np.float32))"
// RUN: linattn-run %s --entry=fragments --target=cuda --emulate-gpu --input=%t/in.npy --output-dir=%t | FileCheck %s --check-prefix=RUNS
// RUN: %linattn_python %s.py %t/result0.npy | FileCheck %s --check-prefix=VALUES
// RUNS: result #0: 512xf32
// VALUES: ldmatrix fragments ok

// RUN: not --crash linattn-run %s --entry=misaligned --target=cuda --emulate-gpu --input=%t/in.npy 2>&1 | FileCheck %s --check-prefix=MISALIGNED
// MISALIGNED: linattn GPU emulator: error: ldmatrix row at byte 8 of workgroup buffer #0 is not 16-byte aligned
// MISALIGNED-NEXT: kernel: @ldmatrix_misaligned
// MISALIGNED-NEXT: op: %{{.*}} = nvgpu.ldmatrix
// MISALIGNED: thread (0, 0, 0)

// RUN: not --crash linattn-run %s --entry=unaligned_buffer --target=cuda --emulate-gpu --input=%t/in.npy 2>&1 | FileCheck %s --check-prefix=UNALIGNED
// UNALIGNED: linattn GPU emulator: error: nvgpu.ldmatrix from workgroup buffer #0, which is not 16-byte aligned (llvm.align)
// UNALIGNED-NEXT: kernel: @ldmatrix_unaligned_buffer

!tile = memref<256xf16, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    // out[lane * 16 + 2i + h]: element h of register i (non-transposed),
    // out[lane * 16 + 8 + 2i + h]: the same with .trans.
    gpu.func @ldmatrix_fragments(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%s : !tile {llvm.align = 16 : i64}) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %lane = gpu.thread_id x
      scf.for %j = %c0 to %c8 step %c1 {
        %lane8 = arith.muli %lane, %c8 : index
        %at = arith.addi %lane8, %j : index
        %x = memref.load %in[%at] : memref<?xf32>
        %h = arith.truncf %x : f32 to f16
        memref.store %h, %s[%at] : !tile
      }
      gpu.barrier
      // Matrix m = lane / 8, row r = lane % 8: tile row r + 8(m % 2),
      // column 8(m / 2).
      %m = arith.divui %lane, %c8 : index
      %r = arith.remui %lane, %c8 : index
      %mlo = arith.remui %m, %c2 : index
      %mhi = arith.divui %m, %c2 : index
      %rowOff = arith.muli %mlo, %c8 : index
      %row = arith.addi %r, %rowOff : index
      %col = arith.muli %mhi, %c8 : index
      %rowAt = arith.muli %row, %c16 : index
      %at = arith.addi %rowAt, %col : index
      %plain = nvgpu.ldmatrix %s[%at] {numTiles = 4 : i32, transpose = false} : !tile -> vector<4x2xf16>
      %trans = nvgpu.ldmatrix %s[%at] {numTiles = 4 : i32, transpose = true} : !tile -> vector<4x2xf16>
      %base = arith.muli %lane, %c16 : index
      %plain0 = vector.extract %plain[0] : vector<2xf16> from vector<4x2xf16>
      %plain0_0 = vector.extract %plain0[0] : f16 from vector<2xf16>
      %plain0_0f = arith.extf %plain0_0 : f16 to f32
      %plain0_0c = arith.constant 0 : index
      %plain0_0at = arith.addi %base, %plain0_0c : index
      memref.store %plain0_0f, %out[%plain0_0at] : memref<?xf32>
      %plain0_1 = vector.extract %plain0[1] : f16 from vector<2xf16>
      %plain0_1f = arith.extf %plain0_1 : f16 to f32
      %plain0_1c = arith.constant 1 : index
      %plain0_1at = arith.addi %base, %plain0_1c : index
      memref.store %plain0_1f, %out[%plain0_1at] : memref<?xf32>
      %plain1 = vector.extract %plain[1] : vector<2xf16> from vector<4x2xf16>
      %plain1_0 = vector.extract %plain1[0] : f16 from vector<2xf16>
      %plain1_0f = arith.extf %plain1_0 : f16 to f32
      %plain1_0c = arith.constant 2 : index
      %plain1_0at = arith.addi %base, %plain1_0c : index
      memref.store %plain1_0f, %out[%plain1_0at] : memref<?xf32>
      %plain1_1 = vector.extract %plain1[1] : f16 from vector<2xf16>
      %plain1_1f = arith.extf %plain1_1 : f16 to f32
      %plain1_1c = arith.constant 3 : index
      %plain1_1at = arith.addi %base, %plain1_1c : index
      memref.store %plain1_1f, %out[%plain1_1at] : memref<?xf32>
      %plain2 = vector.extract %plain[2] : vector<2xf16> from vector<4x2xf16>
      %plain2_0 = vector.extract %plain2[0] : f16 from vector<2xf16>
      %plain2_0f = arith.extf %plain2_0 : f16 to f32
      %plain2_0c = arith.constant 4 : index
      %plain2_0at = arith.addi %base, %plain2_0c : index
      memref.store %plain2_0f, %out[%plain2_0at] : memref<?xf32>
      %plain2_1 = vector.extract %plain2[1] : f16 from vector<2xf16>
      %plain2_1f = arith.extf %plain2_1 : f16 to f32
      %plain2_1c = arith.constant 5 : index
      %plain2_1at = arith.addi %base, %plain2_1c : index
      memref.store %plain2_1f, %out[%plain2_1at] : memref<?xf32>
      %plain3 = vector.extract %plain[3] : vector<2xf16> from vector<4x2xf16>
      %plain3_0 = vector.extract %plain3[0] : f16 from vector<2xf16>
      %plain3_0f = arith.extf %plain3_0 : f16 to f32
      %plain3_0c = arith.constant 6 : index
      %plain3_0at = arith.addi %base, %plain3_0c : index
      memref.store %plain3_0f, %out[%plain3_0at] : memref<?xf32>
      %plain3_1 = vector.extract %plain3[1] : f16 from vector<2xf16>
      %plain3_1f = arith.extf %plain3_1 : f16 to f32
      %plain3_1c = arith.constant 7 : index
      %plain3_1at = arith.addi %base, %plain3_1c : index
      memref.store %plain3_1f, %out[%plain3_1at] : memref<?xf32>
      %trans0 = vector.extract %trans[0] : vector<2xf16> from vector<4x2xf16>
      %trans0_0 = vector.extract %trans0[0] : f16 from vector<2xf16>
      %trans0_0f = arith.extf %trans0_0 : f16 to f32
      %trans0_0c = arith.constant 8 : index
      %trans0_0at = arith.addi %base, %trans0_0c : index
      memref.store %trans0_0f, %out[%trans0_0at] : memref<?xf32>
      %trans0_1 = vector.extract %trans0[1] : f16 from vector<2xf16>
      %trans0_1f = arith.extf %trans0_1 : f16 to f32
      %trans0_1c = arith.constant 9 : index
      %trans0_1at = arith.addi %base, %trans0_1c : index
      memref.store %trans0_1f, %out[%trans0_1at] : memref<?xf32>
      %trans1 = vector.extract %trans[1] : vector<2xf16> from vector<4x2xf16>
      %trans1_0 = vector.extract %trans1[0] : f16 from vector<2xf16>
      %trans1_0f = arith.extf %trans1_0 : f16 to f32
      %trans1_0c = arith.constant 10 : index
      %trans1_0at = arith.addi %base, %trans1_0c : index
      memref.store %trans1_0f, %out[%trans1_0at] : memref<?xf32>
      %trans1_1 = vector.extract %trans1[1] : f16 from vector<2xf16>
      %trans1_1f = arith.extf %trans1_1 : f16 to f32
      %trans1_1c = arith.constant 11 : index
      %trans1_1at = arith.addi %base, %trans1_1c : index
      memref.store %trans1_1f, %out[%trans1_1at] : memref<?xf32>
      %trans2 = vector.extract %trans[2] : vector<2xf16> from vector<4x2xf16>
      %trans2_0 = vector.extract %trans2[0] : f16 from vector<2xf16>
      %trans2_0f = arith.extf %trans2_0 : f16 to f32
      %trans2_0c = arith.constant 12 : index
      %trans2_0at = arith.addi %base, %trans2_0c : index
      memref.store %trans2_0f, %out[%trans2_0at] : memref<?xf32>
      %trans2_1 = vector.extract %trans2[1] : f16 from vector<2xf16>
      %trans2_1f = arith.extf %trans2_1 : f16 to f32
      %trans2_1c = arith.constant 13 : index
      %trans2_1at = arith.addi %base, %trans2_1c : index
      memref.store %trans2_1f, %out[%trans2_1at] : memref<?xf32>
      %trans3 = vector.extract %trans[3] : vector<2xf16> from vector<4x2xf16>
      %trans3_0 = vector.extract %trans3[0] : f16 from vector<2xf16>
      %trans3_0f = arith.extf %trans3_0 : f16 to f32
      %trans3_0c = arith.constant 14 : index
      %trans3_0at = arith.addi %base, %trans3_0c : index
      memref.store %trans3_0f, %out[%trans3_0at] : memref<?xf32>
      %trans3_1 = vector.extract %trans3[1] : f16 from vector<2xf16>
      %trans3_1f = arith.extf %trans3_1 : f16 to f32
      %trans3_1c = arith.constant 15 : index
      %trans3_1at = arith.addi %base, %trans3_1c : index
      memref.store %trans3_1f, %out[%trans3_1at] : memref<?xf32>
      gpu.return
    }
    // Rows at element 4 + 16r: 8 bytes past a 16-byte boundary.
    gpu.func @ldmatrix_misaligned(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%s : !tile {llvm.align = 16 : i64}) kernel {
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %lane = gpu.thread_id x
      %r = arith.remui %lane, %c16 : index
      %rowAt = arith.muli %r, %c16 : index
      %at = arith.addi %rowAt, %c4 : index
      %v = nvgpu.ldmatrix %s[%at] {numTiles = 1 : i32, transpose = false} : !tile -> vector<1x2xf16>
      %e = vector.extract %v[0, 0] : f16 from vector<1x2xf16>
      %f = arith.extf %e : f16 to f32
      memref.store %f, %out[%lane] : memref<?xf32>
      gpu.return
    }
    gpu.func @ldmatrix_unaligned_buffer(%in: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%s : !tile) kernel {
      %c0 = arith.constant 0 : index
      %lane = gpu.thread_id x
      %v = nvgpu.ldmatrix %s[%c0] {numTiles = 1 : i32, transpose = false} : !tile -> vector<1x2xf16>
      %e = vector.extract %v[0, 0] : f16 from vector<1x2xf16>
      %f = arith.extf %e : f16 to f32
      memref.store %f, %out[%lane] : memref<?xf32>
      gpu.return
    }
  }

  func.func private @launch_fragments(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@ldmatrix_fragments, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_misaligned(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@ldmatrix_misaligned, linattn.gpu_outputs = array<i64: 1>}
  func.func private @launch_unaligned_buffer(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@ldmatrix_unaligned_buffer, linattn.gpu_outputs = array<i64: 1>}

  func.func @fragments(%x: tensor<256xf32>) -> tensor<512xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<256xf32> to memref<256xf32>
    %in_flat = memref.cast %in : memref<256xf32> to memref<?xf32>
    %out = memref.alloc() : memref<512xf32>
    %out_flat = memref.cast %out : memref<512xf32> to memref<?xf32>
    call @launch_fragments(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<512xf32> to tensor<512xf32>
    return %r : tensor<512xf32>
  }
  func.func @misaligned(%x: tensor<256xf32>) -> tensor<512xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<256xf32> to memref<256xf32>
    %in_flat = memref.cast %in : memref<256xf32> to memref<?xf32>
    %out = memref.alloc() : memref<512xf32>
    %out_flat = memref.cast %out : memref<512xf32> to memref<?xf32>
    call @launch_misaligned(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<512xf32> to tensor<512xf32>
    return %r : tensor<512xf32>
  }
  func.func @unaligned_buffer(%x: tensor<256xf32>) -> tensor<512xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<256xf32> to memref<256xf32>
    %in_flat = memref.cast %in : memref<256xf32> to memref<?xf32>
    %out = memref.alloc() : memref<512xf32>
    %out_flat = memref.cast %out : memref<512xf32> to memref<?xf32>
    call @launch_unaligned_buffer(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<512xf32> to tensor<512xf32>
    return %r : tensor<512xf32>
  }
}
