// arith.addf, maximumf and minimumf on vectors of bf16 and f16 in the GPU
// emulator: element by element, each result rounded once to the element type
// (what NVPTX's add.rn.bf16x2, max.NaN.bf16x2 and their f16x2 forms compute
// two at a time; the chunk loops apply elu + 1 to their staged 16-bit groups
// as max(x, 0) + exp(min(x, 0)) with them). Each thread takes four x and four
// y (the input's first and second halves), rounds them to bf16 and to f16
// and widens the sums, maxima and minima back; numpy computes the same, with
// ties, NaN, signed zeros and f16 overflow among the inputs.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %linattn_python %s.py --make %t/x.npy
// RUN: linattn-run %s --entry=arith --target=cuda --emulate-gpu --input=%t/x.npy --output-dir=%t | FileCheck %s
// RUN: %linattn_python %s.py %t/x.npy %t | FileCheck %s --check-prefix=VALUES
// CHECK-COUNT-6: result #{{[0-5]}}: 128xf32
// VALUES: 128 pairs: bf16 and f16 sums rounded once, maxima and minima with NaN and signed zeros

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    gpu.func @arith(%in: memref<?xf32>, %bsum: memref<?xf32>, %bmax: memref<?xf32>, %bmin: memref<?xf32>,
                    %hsum: memref<?xf32>, %hmax: memref<?xf32>, %hmin: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %c4 = arith.constant 4 : index
      %c128 = arith.constant 128 : index
      %at = arith.muli %tid, %c4 : index
      %yat = arith.addi %at, %c128 : index
      %x = vector.load %in[%at] : memref<?xf32>, vector<4xf32>
      %y = vector.load %in[%yat] : memref<?xf32>, vector<4xf32>
      %bx = arith.truncf %x : vector<4xf32> to vector<4xbf16>
      %by = arith.truncf %y : vector<4xf32> to vector<4xbf16>
      %bs = arith.addf %bx, %by : vector<4xbf16>
      %bM = arith.maximumf %bx, %by : vector<4xbf16>
      %bm = arith.minimumf %bx, %by : vector<4xbf16>
      %bsw = arith.extf %bs : vector<4xbf16> to vector<4xf32>
      %bMw = arith.extf %bM : vector<4xbf16> to vector<4xf32>
      %bmw = arith.extf %bm : vector<4xbf16> to vector<4xf32>
      vector.store %bsw, %bsum[%at] : memref<?xf32>, vector<4xf32>
      vector.store %bMw, %bmax[%at] : memref<?xf32>, vector<4xf32>
      vector.store %bmw, %bmin[%at] : memref<?xf32>, vector<4xf32>
      %hx = arith.truncf %x : vector<4xf32> to vector<4xf16>
      %hy = arith.truncf %y : vector<4xf32> to vector<4xf16>
      %hs = arith.addf %hx, %hy : vector<4xf16>
      %hM = arith.maximumf %hx, %hy : vector<4xf16>
      %hm = arith.minimumf %hx, %hy : vector<4xf16>
      %hsw = arith.extf %hs : vector<4xf16> to vector<4xf32>
      %hMw = arith.extf %hM : vector<4xf16> to vector<4xf32>
      %hmw = arith.extf %hm : vector<4xf16> to vector<4xf32>
      vector.store %hsw, %hsum[%at] : memref<?xf32>, vector<4xf32>
      vector.store %hMw, %hmax[%at] : memref<?xf32>, vector<4xf32>
      vector.store %hmw, %hmin[%at] : memref<?xf32>, vector<4xf32>
      gpu.return
    }
  }

  func.func private @launch(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, memref<?xf32>,
                            memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@arith, linattn.gpu_outputs = array<i64: 1, 2, 3, 4, 5, 6>}
  func.func @arith(%x: tensor<256xf32>) -> (tensor<128xf32>, tensor<128xf32>, tensor<128xf32>,
                                            tensor<128xf32>, tensor<128xf32>, tensor<128xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<256xf32> to memref<256xf32>
    %in_flat = memref.cast %in : memref<256xf32> to memref<?xf32>
    %o0 = memref.alloc() : memref<128xf32>
    %o1 = memref.alloc() : memref<128xf32>
    %o2 = memref.alloc() : memref<128xf32>
    %o3 = memref.alloc() : memref<128xf32>
    %o4 = memref.alloc() : memref<128xf32>
    %o5 = memref.alloc() : memref<128xf32>
    %f0 = memref.cast %o0 : memref<128xf32> to memref<?xf32>
    %f1 = memref.cast %o1 : memref<128xf32> to memref<?xf32>
    %f2 = memref.cast %o2 : memref<128xf32> to memref<?xf32>
    %f3 = memref.cast %o3 : memref<128xf32> to memref<?xf32>
    %f4 = memref.cast %o4 : memref<128xf32> to memref<?xf32>
    %f5 = memref.cast %o5 : memref<128xf32> to memref<?xf32>
    call @launch(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %f0, %f1, %f2, %f3, %f4, %f5)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, memref<?xf32>,
           memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
    %r0 = bufferization.to_tensor %o0 restrict writable : memref<128xf32> to tensor<128xf32>
    %r1 = bufferization.to_tensor %o1 restrict writable : memref<128xf32> to tensor<128xf32>
    %r2 = bufferization.to_tensor %o2 restrict writable : memref<128xf32> to tensor<128xf32>
    %r3 = bufferization.to_tensor %o3 restrict writable : memref<128xf32> to tensor<128xf32>
    %r4 = bufferization.to_tensor %o4 restrict writable : memref<128xf32> to tensor<128xf32>
    %r5 = bufferization.to_tensor %o5 restrict writable : memref<128xf32> to tensor<128xf32>
    return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<128xf32>, tensor<128xf32>, tensor<128xf32>,
                                          tensor<128xf32>, tensor<128xf32>, tensor<128xf32>
  }
}
