// RUN: linattn-opt %s --linattn-lower-to-cpu | FileCheck %s
// RUN: linattn-opt %s --linattn-lower-to-cpu='c-interface=false fuse-elementwise=false' | FileCheck %s --check-prefix=NOWRAP
// RUN: linattn-opt %s --linattn-lower-to-cpu | linattn-opt | FileCheck %s --check-prefix=LLVM

// The pipeline leaves only the LLVM dialect, with C wrappers on request.

// CHECK-LABEL: llvm.func @attention(
// CHECK-LABEL: llvm.func @_mlir_ciface_attention(
// CHECK-NOT: linattn.
// NOWRAP-NOT: _mlir_ciface_
// LLVM-NOT: {{(linalg|tensor|memref|scf|arith|func)\.}}
func.func @attention(%q: tensor<2x?x8xf32>, %k: tensor<2x?x8xf32>,
                     %v: tensor<2x?x4xf32>) -> tensor<2x?x4xf32> {
  %o = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-06)
      : tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x4xf32> -> tensor<2x?x4xf32>
  return %o : tensor<2x?x4xf32>
}

// CHECK-LABEL: llvm.func @scan(
func.func @scan(%q: tensor<?x8xf32>, %k: tensor<?x8xf32>, %v: tensor<?x4xf32>)
    -> (tensor<?x4xf32>, tensor<8x4xf32>, tensor<8xf32>) {
  %o, %s, %z = linattn.scan reverse %q, %k, %v
      : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32>
      -> tensor<?x4xf32>, tensor<8x4xf32>, tensor<8xf32>
  return %o, %s, %z : tensor<?x4xf32>, tensor<8x4xf32>, tensor<8xf32>
}

// Target options: the CPU and features go on every llvm.func, and the
// features decide the kernels' vector width (8 lanes without AVX-512).
// RUN: linattn-opt %s --linattn-lower-to-cpu='target-cpu=x86-64-v3 target-features=+avx2,+fma,-avx512f' | FileCheck %s --check-prefix=TARGET
// RUN: linattn-opt %s --linattn-lower-to-cpu='target-features=+avx2,+fma,-avx512f' --mlir-print-ir-after=convert-linattn-to-cpu-kernels -o /dev/null 2>&1 | FileCheck %s --check-prefix=AVX2
// RUN: linattn-opt %s --linattn-lower-to-cpu='target-features=+avx512f' --mlir-print-ir-after=convert-linattn-to-cpu-kernels -o /dev/null 2>&1 | FileCheck %s --check-prefix=AVX512
// RUN: not linattn-opt %s --linattn-lower-to-cpu='target-features=avx2' 2>&1 | FileCheck %s --check-prefix=BADFEATURES
// TARGET: llvm.func @attention({{.*}}target_cpu = "x86-64-v3", target_features = #llvm.target_features<["+avx2", "+fma", "-avx512f"]>
// AVX2: vector.fma {{.*}} : vector<8xf32>
// AVX2-NOT: vector<16xf32>
// AVX512: vector.fma {{.*}} : vector<16xf32>
// BADFEATURES: malformed target features 'avx2': expected a comma-separated list of +feature or -feature

// A CPU alone gives the kernels its features (x86-64-v3: AVX2, 8 lanes), and
// a CPU name LLVM does not know is an error, not a warning and code for no
// CPU.
// RUN: linattn-opt %s --linattn-lower-to-cpu='target-cpu=x86-64-v3' --mlir-print-ir-after=convert-linattn-to-cpu-kernels -o /dev/null 2>&1 | FileCheck %s --check-prefix=AVX2
// RUN: linattn-opt %s --linattn-lower-to-cpu='target-cpu=znver4' --mlir-print-ir-after=convert-linattn-to-cpu-kernels -o /dev/null 2>&1 | FileCheck %s --check-prefix=AVX512
// RUN: linattn-opt %s --linattn-lower-to-cpu='target-cpu=x86-64-v3 target-features=+avx512f' --mlir-print-ir-after=convert-linattn-to-cpu-kernels -o /dev/null 2>&1 | FileCheck %s --check-prefix=AVX512
// Features alone change the host CPU's (this host has AVX2, as every x86-64
// machine of the last decade).
// RUN: linattn-opt %s --linattn-lower-to-cpu='target-features=-avx512f' --mlir-print-ir-after=convert-linattn-to-cpu-kernels -o /dev/null 2>&1 | FileCheck %s --check-prefix=AVX2
// RUN: not linattn-opt %s --linattn-lower-to-cpu='target-cpu=bogus' 2>&1 | FileCheck %s --check-prefix=BADCPU
// RUN: not linattn-opt %s --linattn-lower-to-cpu='target-cpu=native' 2>&1 | FileCheck %s --check-prefix=NATIVE
// RUN: not linattn-opt %s --linattn-lower-to-cpu='kernels=false target-cpu=i686' 2>&1 | FileCheck %s --check-prefix=I686
// BADCPU: error: unknown target CPU 'bogus': not an x86-64 CPU or level LLVM knows (e.g. znver4, sapphirerapids, x86-64-v3, generic)
// NATIVE: error: unknown target CPU 'native': {{.*}}; leave target-cpu empty for the host's
// I686: error: unknown target CPU 'i686'

// chunk-size runs linattn-chunk-scan first: the scan becomes chunks of
// linalg products and no kernel is left to build.
// RUN: linattn-opt %s --linattn-lower-to-cpu='chunk-size=16' --mlir-print-ir-after=linattn-chunk-scan -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHUNK
// CHUNK-LABEL: func.func @scan(
// CHUNK-NOT: = linattn.scan
// CHUNK: scf.for

// Destination passing, as the Python package calls: the causal scan writes
// the caller's output buffer in place and the non-causal readout too. After
// bufferization neither function allocates a buffer of the output's shape or
// copies into %o (the scan's unused final state still gets buffers).
// RUN: linattn-opt %s --linattn-lower-to-cpu --mlir-print-ir-after=convert-bufferization-to-memref -o /dev/null 2>&1 | FileCheck %s --check-prefix=INPLACE
// INPLACE-LABEL: func.func @causal_into(
// INPLACE-SAME: %[[O:[a-z0-9]+]]: memref<2x3x?x8xf32>)
// INPLACE-NOT: memref.alloc({{.*}}) {{.*}} : memref<2x3x?x8xf32>
// INPLACE-NOT: memref.copy
// INPLACE: vector.{{(masked)?}}store {{.*}}%[[O]][
// INPLACE-NOT: memref.copy
// INPLACE: return
// INPLACE-LABEL: func.func @full_into(
// INPLACE-SAME: %[[O2:[a-z0-9]+]]: memref<2x3x?x8xf32>)
// INPLACE-NOT: memref.alloc({{.*}}) {{.*}} : memref<2x3x?x8xf32>
// INPLACE-NOT: memref.copy
// INPLACE: vector.{{(masked)?}}store {{.*}}%[[O2]][
// INPLACE-NOT: memref.copy
// INPLACE: return
func.func @causal_into(%q: memref<2x3x?x16xf32>, %k: memref<2x3x?x16xf32>,
                       %v: memref<2x3x?x8xf32>, %o: memref<2x3x?x8xf32>) {
  %tq = bufferization.to_tensor %q restrict : memref<2x3x?x16xf32> to tensor<2x3x?x16xf32>
  %tk = bufferization.to_tensor %k restrict : memref<2x3x?x16xf32> to tensor<2x3x?x16xf32>
  %tv = bufferization.to_tensor %v restrict : memref<2x3x?x8xf32> to tensor<2x3x?x8xf32>
  %r = linattn.attention elu %tq, %tk, %tv causal normalize(eps = 1.0e-06)
      : tensor<2x3x?x16xf32>, tensor<2x3x?x16xf32>, tensor<2x3x?x8xf32>
      -> tensor<2x3x?x8xf32>
  bufferization.materialize_in_destination %r in restrict writable %o
      : (tensor<2x3x?x8xf32>, memref<2x3x?x8xf32>) -> ()
  return
}

func.func @full_into(%q: memref<2x3x?x16xf32>, %k: memref<2x3x?x16xf32>,
                     %v: memref<2x3x?x8xf32>, %o: memref<2x3x?x8xf32>) {
  %tq = bufferization.to_tensor %q restrict : memref<2x3x?x16xf32> to tensor<2x3x?x16xf32>
  %tk = bufferization.to_tensor %k restrict : memref<2x3x?x16xf32> to tensor<2x3x?x16xf32>
  %tv = bufferization.to_tensor %v restrict : memref<2x3x?x8xf32> to tensor<2x3x?x8xf32>
  %r = linattn.attention elu %tq, %tk, %tv normalize(eps = 1.0e-06)
      : tensor<2x3x?x16xf32>, tensor<2x3x?x16xf32>, tensor<2x3x?x8xf32>
      -> tensor<2x3x?x8xf32>
  bufferization.materialize_in_destination %r in restrict writable %o
      : (tensor<2x3x?x8xf32>, memref<2x3x?x8xf32>) -> ()
  return
}
