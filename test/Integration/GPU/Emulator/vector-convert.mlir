// arith.truncf and arith.extf on vectors in the GPU emulator: element by
// element, each rounded to nearest even as the scalar conversions are (the
// chunk loops round their staged features to bf16 or f16 as one vector,
// which NVPTX converts two at a time). Each thread rounds four f32 values
// to bf16 and to f16 and widens them back; numpy computes the same
// roundings, ties and values past f16's range among the inputs.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %linattn_python -c "import numpy as np; r = np.random.default_rng(7); x = (r.standard_normal(128) * 4.0 ** r.integers(-8, 9, 128)).astype(np.float32); x[:8] = [1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, 1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 70000, -1e-9, 0, -0.0]; np.save('%t/x.npy', x)"
// RUN: linattn-run %s --entry=round --target=cuda --emulate-gpu --input=%t/x.npy --output-dir=%t | FileCheck %s
// RUN: %linattn_python %s.py %t/x.npy %t/result0.npy %t/result1.npy | FileCheck %s --check-prefix=VALUES
// CHECK: result #0: 128xf32
// CHECK: result #1: 128xf32
// VALUES: 128 values rounded to bf16 and f16 as numpy rounds them

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    gpu.func @round(%in: memref<?xf32>, %bf: memref<?xf32>, %half: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %c4 = arith.constant 4 : index
      %at = arith.muli %tid, %c4 : index
      %x = vector.load %in[%at] : memref<?xf32>, vector<4xf32>
      %b = arith.truncf %x : vector<4xf32> to vector<4xbf16>
      %bw = arith.extf %b : vector<4xbf16> to vector<4xf32>
      vector.store %bw, %bf[%at] : memref<?xf32>, vector<4xf32>
      %h = arith.truncf %x : vector<4xf32> to vector<4xf16>
      %hw = arith.extf %h : vector<4xf16> to vector<4xf32>
      vector.store %hw, %half[%at] : memref<?xf32>, vector<4xf32>
      gpu.return
    }
  }

  func.func private @launch(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@round, linattn.gpu_outputs = array<i64: 1, 2>}
  func.func @round(%x: tensor<128xf32>) -> (tensor<128xf32>, tensor<128xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<128xf32> to memref<128xf32>
    %in_flat = memref.cast %in : memref<128xf32> to memref<?xf32>
    %bf = memref.alloc() : memref<128xf32>
    %bf_flat = memref.cast %bf : memref<128xf32> to memref<?xf32>
    %half = memref.alloc() : memref<128xf32>
    %half_flat = memref.cast %half : memref<128xf32> to memref<?xf32>
    call @launch(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %bf_flat, %half_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
    %rb = bufferization.to_tensor %bf restrict writable : memref<128xf32> to tensor<128xf32>
    %rh = bufferization.to_tensor %half restrict writable : memref<128xf32> to tensor<128xf32>
    return %rb, %rh : tensor<128xf32>, tensor<128xf32>
  }
}
