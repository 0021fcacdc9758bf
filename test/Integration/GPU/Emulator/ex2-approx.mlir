// The GPU emulator's model of the tensor-core feature maps' 2^x, the
// intrinsic llvm.nvvm.ex2.approx.ftz.f32 (KernelBuilder::exp2Approx): the
// host's exp2f, with subnormal inputs read as zero and subnormal results
// flushed to zero as `.ftz` does; a GPU returns the same within 2 ulp. Other
// intrinsics, and this one on other types, are not emulated.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %linattn_python -c "import numpy as np; x = np.array([0, 1, -1, 0.5, -0.5, 10, -10, 127.5, -125, -126, -126.5, -140, -200, 1e-40, -1e-40, 200, np.inf, -np.inf, np.nan, 3.25, -3.25, 20, -20, 64, -64, 0.1, -0.1, 1e-3, -1e-3, 2, -2, 7], dtype=np.float32); np.save('%t/x.npy', x)"
// RUN: linattn-run %s --entry=ex2 --target=cuda --emulate-gpu --input=%t/x.npy --output-dir=%t | FileCheck %s --check-prefix=OK
// RUN: %linattn_python %S/ex2-approx.mlir.py %t/x.npy %t/result0.npy | FileCheck %s --check-prefix=VALUES
// RUN: not --crash linattn-run %s --entry=ex2_f64 --target=cuda --emulate-gpu --input=%t/x.npy 2>&1 | FileCheck %s --check-prefix=F64

// OK: result #0: 32xf32
// VALUES: 32 values: exp2 with subnormals flushed

// F64: error: intrinsics other than llvm.nvvm.ex2.approx.ftz.f32 (f32) are not emulated
// F64: kernel: @ex2_approx_f64

module attributes {gpu.container_module} {
  gpu.module @linattn_kernels {
    gpu.func @ex2_approx(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %x = memref.load %in[%tid] : memref<?xf32>
      %y = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%x) : (f32) -> f32
      memref.store %y, %out[%tid] : memref<?xf32>
      gpu.return
    }
    gpu.func @ex2_approx_f64(%in: memref<?xf32>, %out: memref<?xf32>) kernel {
      %tid = gpu.thread_id x
      %x = memref.load %in[%tid] : memref<?xf32>
      %w = arith.extf %x : f32 to f64
      %y = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%w) : (f64) -> f64
      %n = arith.truncf %y : f64 to f32
      memref.store %n, %out[%tid] : memref<?xf32>
      gpu.return
    }
  }

  func.func private @launch(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@ex2_approx, linattn.gpu_outputs = array<i64: 1>}
  func.func @ex2(%x: tensor<32xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<32xf32> to memref<32xf32>
    %in_flat = memref.cast %in : memref<32xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
  func.func private @launch_f64(index, index, index, index, index, index, memref<?xf32>, memref<?xf32>)
      attributes {linattn.gpu_kernel = @linattn_kernels::@ex2_approx_f64, linattn.gpu_outputs = array<i64: 1>}
  func.func @ex2_f64(%x: tensor<32xf32>) -> tensor<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %in = bufferization.to_buffer %x read_only : tensor<32xf32> to memref<32xf32>
    %in_flat = memref.cast %in : memref<32xf32> to memref<?xf32>
    %out = memref.alloc() : memref<32xf32>
    %out_flat = memref.cast %out : memref<32xf32> to memref<?xf32>
    call @launch_f64(%c1, %c1, %c1, %c32, %c1, %c1, %in_flat, %out_flat)
        : (index, index, index, index, index, index, memref<?xf32>, memref<?xf32>) -> ()
    %r = bufferization.to_tensor %out restrict writable : memref<32xf32> to tensor<32xf32>
    return %r : tensor<32xf32>
  }
}
