// vector.bitcast in the GPU emulator: elements packed little-endian, as
// numpy's views see them. Each thread reinterprets four f32 values as eight
// f16 (one value split in two: the chunk loops' pairs of 16-bit values
// stored as one i32), as two f64 (two joined), back from the f16 (two
// joined) and from the f64 (one split), and three of them as four i24 and
// back (widths that do not divide each other, through the bytes). The
// inputs are finite f16 bit patterns, so that widening and narrowing the
// f16 is exact.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %linattn_python -c "import numpy as np; r = np.random.default_rng(11); h = r.integers(0, 0x7c00, 256).astype(np.uint16) | (r.integers(0, 2, 256).astype(np.uint16) << 15); np.save('%t/x.npy', h.view(np.float32))"
// RUN: linattn-run %s --entry=bitcasts --target=cuda --emulate-gpu --input=%t/x.npy --output-dir=%t | FileCheck %s
// RUN: %linattn_python %s.py %t | FileCheck %s --check-prefix=VALUES
// CHECK: result #0: 256xf32
// CHECK: result #1: 64xf64
// CHECK: result #2: 128xf32
// CHECK: result #3: 128xf32
// CHECK: result #4: 96xf32
// VALUES: vector.bitcast: 32 threads' f32 as f16, f64 and back, i24 and back

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    gpu.func @bitcasts(%in: memref<?xf32>, %halves: memref<?xf32>,
                       %doubles: memref<?xf64>, %fromHalves: memref<?xf32>,
                       %fromDoubles: memref<?xf32>, %fromI24: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %at = arith.muli %tid, %c4 : index
      %x = vector.load %in[%at] : memref<?xf32>, vector<4xf32>
      // Split: each f32 into two f16.
      %h = vector.bitcast %x : vector<4xf32> to vector<8xf16>
      %hw = arith.extf %h : vector<8xf16> to vector<8xf32>
      %at8 = arith.muli %tid, %c8 : index
      vector.store %hw, %halves[%at8] : memref<?xf32>, vector<8xf32>
      // Joined: two f32 into one f64.
      %d = vector.bitcast %x : vector<4xf32> to vector<2xf64>
      %at2 = arith.muli %tid, %c2 : index
      vector.store %d, %doubles[%at2] : memref<?xf64>, vector<2xf64>
      // Back: two f16 into each f32, each f64 into two f32.
      %hn = arith.truncf %hw : vector<8xf32> to vector<8xf16>
      %xh = vector.bitcast %hn : vector<8xf16> to vector<4xf32>
      vector.store %xh, %fromHalves[%at] : memref<?xf32>, vector<4xf32>
      %xd = vector.bitcast %d : vector<2xf64> to vector<4xf32>
      vector.store %xd, %fromDoubles[%at] : memref<?xf32>, vector<4xf32>
      // Neither width divides the other: three f32 as four i24, and back.
      %three = vector.load %in[%at] : memref<?xf32>, vector<3xf32>
      %i = vector.bitcast %three : vector<3xf32> to vector<4xi24>
      %x3 = vector.bitcast %i : vector<4xi24> to vector<3xf32>
      %at3 = arith.muli %tid, %c3 : index
      vector.store %x3, %fromI24[%at3] : memref<?xf32>, vector<3xf32>
      gpu.return
    }
  }

  func.func private @launch(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, memref<?xf64>, memref<?xf32>, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@bitcasts, linattn.gpu_outputs = array<i64: 1, 2, 3, 4, 5>}
  func.func @bitcasts(%x: tensor<128xf32>) -> (tensor<256xf32>, tensor<64xf64>, tensor<128xf32>, tensor<128xf32>, tensor<96xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %halves = memref.alloc() : memref<256xf32>
    %halves_flat = memref.cast %halves : memref<256xf32> to memref<?xf32>
    %doubles = memref.alloc() : memref<64xf64>
    %doubles_flat = memref.cast %doubles : memref<64xf64> to memref<?xf64>
    %fh = memref.alloc() : memref<128xf32>
    %fh_flat = memref.cast %fh : memref<128xf32> to memref<?xf32>
    %fd = memref.alloc() : memref<128xf32>
    %fd_flat = memref.cast %fd : memref<128xf32> to memref<?xf32>
    %fi = memref.alloc() : memref<96xf32>
    %fi_flat = memref.cast %fi : memref<96xf32> to memref<?xf32>
    call @launch(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %halves_flat, %doubles_flat, %fh_flat, %fd_flat, %fi_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, memref<?xf64>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
    %r0 = bufferization.to_tensor %halves restrict writable : memref<256xf32> to tensor<256xf32>
    %r1 = bufferization.to_tensor %doubles restrict writable : memref<64xf64> to tensor<64xf64>
    %r2 = bufferization.to_tensor %fh restrict writable : memref<128xf32> to tensor<128xf32>
    %r3 = bufferization.to_tensor %fd restrict writable : memref<128xf32> to tensor<128xf32>
    %r4 = bufferization.to_tensor %fi restrict writable : memref<96xf32> to tensor<96xf32>
    return %r0, %r1, %r2, %r3, %r4 : tensor<256xf32>, tensor<64xf64>, tensor<128xf32>, tensor<128xf32>, tensor<96xf32>
  }
}
