// The GPU emulator's model of a tensor core's dot product on one warp's
// nvvm.mma.sync m16n8k8 (tf32): the exact products and the accumulator
// aligned to the largest of them and truncated to 25 bits, summed, and the
// sum rounded to f32 toward zero. Lane l reads its fragments' registers
// (A: 4, B: 2, C: 4) from in[10 l ..] and writes D to out[4 l ..];
// mma-rounding.mlir.py makes inputs on which this model, rounding each
// product's fused multiply-add to nearest, and the exact sum rounded toward
// zero all give different results (a row of A spread over fifty binades
// among them), with a row holding an infinity and one of zeros, and checks
// every output bit for bit; no other window of 22 to 28 bits, no flooring
// of the terms and no rounding of the sum to nearest gives them all.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %linattn_python %s.py make %t/in.npy
// RUN: linattn-run %s --entry=mma --target=cuda --emulate-gpu --input=%t/in.npy --output-dir=%t | FileCheck %s --check-prefix=RUNS
// RUN: %linattn_python %s.py check %t/in.npy %t/result0.npy | FileCheck %s --check-prefix=VALUES
// RUNS: result #0: 128xf32
// VALUES: 112 of 112 outputs as the tensor cores round them
// VALUES-SAME: (not fused multiply-adds: [[FMA:[0-9]+]], not the exact sum toward zero: [[EXACT:[0-9]+]])
// VALUES-NEXT: 16 of 16 outputs of infinite and zero terms as IEEE sums
// VALUES-NEXT: windows and roundings that every output agrees with: 25 bits, terms cut toward zero, sum toward zero{{$}}

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    gpu.func @mma_tf32(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %lane = gpu.thread_id x
      %c10 = arith.constant 10 : index
      %c4 = arith.constant 4 : index
      %base = arith.muli %lane, %c10 : index
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c5 = arith.constant 5 : index
      %c6 = arith.constant 6 : index
      %c7 = arith.constant 7 : index
      %c8 = arith.constant 8 : index
      %c9 = arith.constant 9 : index
      %i0 = arith.addi %base, %c0 : index
      %i1 = arith.addi %base, %c1 : index
      %i2 = arith.addi %base, %c2 : index
      %i3 = arith.addi %base, %c3 : index
      %i4 = arith.addi %base, %c4 : index
      %i5 = arith.addi %base, %c5 : index
      %i6 = arith.addi %base, %c6 : index
      %i7 = arith.addi %base, %c7 : index
      %i8 = arith.addi %base, %c8 : index
      %i9 = arith.addi %base, %c9 : index
      %fa0 = memref.load %in[%i0] : memref<?xf32>
      %fa1 = memref.load %in[%i1] : memref<?xf32>
      %fa2 = memref.load %in[%i2] : memref<?xf32>
      %fa3 = memref.load %in[%i3] : memref<?xf32>
      %fb0 = memref.load %in[%i4] : memref<?xf32>
      %fb1 = memref.load %in[%i5] : memref<?xf32>
      %acc0 = memref.load %in[%i6] : memref<?xf32>
      %acc1 = memref.load %in[%i7] : memref<?xf32>
      %acc2 = memref.load %in[%i8] : memref<?xf32>
      %acc3 = memref.load %in[%i9] : memref<?xf32>
      %a0 = arith.bitcast %fa0 : f32 to i32
      %a1 = arith.bitcast %fa1 : f32 to i32
      %a2 = arith.bitcast %fa2 : f32 to i32
      %a3 = arith.bitcast %fa3 : f32 to i32
      %b0 = arith.bitcast %fb0 : f32 to i32
      %b1 = arith.bitcast %fb1 : f32 to i32
      %d = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%acc0, %acc1, %acc2, %acc3]
          {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
           multiplicandAPtxType = #nvvm.mma_type<tf32>,
           multiplicandBPtxType = #nvvm.mma_type<tf32>,
           shape = #nvvm.shape<m = 16, n = 8, k = 8>}
          : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
      %d1 = llvm.extractvalue %d[1] : !llvm.struct<(f32, f32, f32, f32)>
      %d2 = llvm.extractvalue %d[2] : !llvm.struct<(f32, f32, f32, f32)>
      %d3 = llvm.extractvalue %d[3] : !llvm.struct<(f32, f32, f32, f32)>
      %o = arith.muli %lane, %c4 : index
      %o1 = arith.addi %o, %c1 : index
      %o2 = arith.addi %o, %c2 : index
      %o3 = arith.addi %o, %c3 : index
      memref.store %d0, %out[%o] : memref<?xf32>
      memref.store %d1, %out[%o1] : memref<?xf32>
      memref.store %d2, %out[%o2] : memref<?xf32>
      memref.store %d3, %out[%o3] : memref<?xf32>
      gpu.return
    }
  }

  func.func private @launch_mma(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@mma_tf32, linattn.gpu_outputs = array<i64: 1>}

  func.func @mma(%x: tensor<320xf32>) -> tensor<128xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<320xf32> to memref<320xf32>
    %in_flat = memref.cast %in : memref<320xf32> to memref<?xf32>
    %out = memref.alloc() : memref<128xf32>
    %out_flat = memref.cast %out : memref<128xf32> to memref<?xf32>
    call @launch_mma(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<128xf32> to tensor<128xf32>
    return %r : tensor<128xf32>
  }
}
