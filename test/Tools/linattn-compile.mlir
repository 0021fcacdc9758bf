// linattn-compile: object file, C header, link flags, target options and the
// errors it reports. The example that links and calls an object is
// linattn-compile-example.test.

// RUN: rm -rf %t && mkdir -p %t
// RUN: linattn-compile %s -o %t/x.o --header=%t/x.h --link-flags=%t/x.flags
// RUN: FileCheck %s --check-prefix=HEADER < %t/x.h
// RUN: llvm-nm %t/x.o | FileCheck %s --check-prefix=NM
// RUN: FileCheck %s --check-prefix=FLAGS < %t/x.flags

// The header compiles as C and as C++.
// RUN: %clangxx -x c -fsyntax-only -Wall -Werror -Wno-unused-command-line-argument %t/x.h
// RUN: %clangxx -x c++ -fsyntax-only -Wall -Werror -Wno-unused-command-line-argument %t/x.h

// Target options and other outputs.
// RUN: linattn-compile %s -o %t/generic.o --mcpu=generic --mattr=+avx2,+fma
// RUN: linattn-compile %s -o %t/x.ll --emit=llvm | count 0
// RUN: FileCheck %s --check-prefix=LLVM < %t/x.ll
// RUN: linattn-compile %s -o %t/x.s --emit=asm --mcpu=x86-64-v3
// RUN: FileCheck %s --check-prefix=ASM < %t/x.s
// RUN: not grep -q zmm %t/x.s
// RUN: linattn-compile %s -o %t/omp.o --openmp=on --link-flags=%t/omp.flags
// RUN: FileCheck %s --check-prefix=OMP < %t/omp.flags
// RUN: linattn-compile %s -o %t/lib.o --shared=%t/libx.so --openmp=on
// RUN: llvm-readelf -d %t/libx.so | FileCheck %s --check-prefix=SHARED

// Errors.
// RUN: not linattn-compile %s 2>&1 | FileCheck %s --check-prefix=NO-OUTPUT
// RUN: not linattn-compile %s -o %t/y.o --mattr=avx2 2>&1 | FileCheck %s --check-prefix=BAD-ATTR
// RUN: not linattn-compile %s -o %t/y.o --mcpu=bogus 2>&1 | FileCheck %s --check-prefix=BAD-CPU
// RUN: not linattn-compile %s -o %t/y.o --mattr=+avx2,+avx513 2>&1 | FileCheck %s --check-prefix=BAD-FEATURE
// RUN: not linattn-compile %s -o %t/y.o --header=%t/y.h --pipeline='linattn-lower-to-cpu{c-interface=false}' 2>&1 | FileCheck %s --check-prefix=NO-CIFACE
// RUN: not linattn-compile %s -o %t/y.o --pipeline=no-such-pass 2>&1 | FileCheck %s --check-prefix=BAD-PIPELINE
// RUN: not linattn-compile %S/Inputs/aot-f16-scalar.mlir -o %t/y.o --header=%t/y.h 2>&1 | FileCheck %s --check-prefix=BAD-TYPE

// HEADER: #ifndef LINATTN_AOT_X_H
// HEADER: extern "C" {
// HEADER-LABEL: typedef struct {
// HEADER-NEXT:   float *allocated;
// HEADER-NEXT:   float *aligned;
// HEADER-NEXT:   int64_t offset;
// HEADER-NEXT:   int64_t sizes[3];
// HEADER-NEXT:   int64_t strides[3];
// HEADER-NEXT: } linattn_memref_f32_3d;
// HEADER: } linattn_memref_f64_2d;
// HEADER: } linattn_memref_f64_1d;
// HEADER: void _mlir_ciface_attention(linattn_memref_f32_3d *result, linattn_memref_f32_3d *arg0, linattn_memref_f32_3d *arg1, linattn_memref_f32_3d *arg2);
// HEADER: typedef struct {
// HEADER-NEXT:   linattn_memref_f64_2d result0;
// HEADER-NEXT:   linattn_memref_f64_3d result1;
// HEADER-NEXT:   linattn_memref_f64_1d result2;
// HEADER-NEXT: } linattn_scan_results;
// HEADER-NEXT: void _mlir_ciface_scan(linattn_scan_results *results, linattn_memref_f64_2d *arg0,
// HEADER: double _mlir_ciface_scalar(double arg0, int64_t arg1);
// HEADER-NOT: helper
// HEADER: #endif // LINATTN_AOT_X_H

// NM-DAG: T _mlir_ciface_attention
// NM-DAG: T _mlir_ciface_scan
// NM-DAG: T _mlir_ciface_scalar

// FLAGS: -lm
// FLAGS-NOT: omp

// LLVM: target triple = "{{.*}}"
// LLVM: define {{.*}}@_mlir_ciface_attention(

// ASM: _mlir_ciface_attention:
// ASM: {{ymm|xmm}}

// OMP: {{.*}}libomp{{.*}}
// OMP: -Wl,-rpath,

// SHARED-DAG: RUNPATH
// SHARED-DAG: NEEDED{{.*}}libomp

// NO-OUTPUT: linattn-compile: no output file: give -o <file>
// BAD-ATTR: linattn-compile: --mattr: feature 'avx2' must start with + or -
// BAD-CPU: linattn-compile: --mcpu: unknown CPU 'bogus' for x86_64-
// BAD-FEATURE: linattn-compile: --mattr: unknown feature 'avx513' for x86_64-
// NO-CIFACE: linattn-compile: the lowered module has no _mlir_ciface_attention (was it lowered with c-interface?)
// BAD-PIPELINE: no-such-pass
// BAD-TYPE: linattn-compile: @half: argument #0 has type f16, which the header cannot declare

func.func @attention(%q: tensor<2x?x16xf32>, %k: tensor<2x?x16xf32>,
                     %v: tensor<2x?x16xf32>) -> tensor<2x?x16xf32> {
  %o = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6)
      : tensor<2x?x16xf32>, tensor<2x?x16xf32>, tensor<2x?x16xf32>
      -> tensor<2x?x16xf32>
  return %o : tensor<2x?x16xf32>
}

func.func @scan(%q: tensor<?x8xf64>, %k: tensor<?x8xf64>, %v: tensor<?x4xf64>)
    -> (tensor<?x4xf64>, tensor<1x8x4xf64>, tensor<8xf64>) {
  %o, %s, %z = linattn.scan forward %q, %k, %v
      : tensor<?x8xf64>, tensor<?x8xf64>, tensor<?x4xf64>
      -> tensor<?x4xf64>, tensor<8x4xf64>, tensor<8xf64>
  %e = tensor.expand_shape %s [[0, 1], [2]] output_shape [1, 8, 4]
      : tensor<8x4xf64> into tensor<1x8x4xf64>
  return %o, %e, %z : tensor<?x4xf64>, tensor<1x8x4xf64>, tensor<8xf64>
}

func.func @scalar(%a: f64, %b: i64) -> f64 {
  %c = arith.sitofp %b : i64 to f64
  %d = call @helper(%a, %c) : (f64, f64) -> f64
  return %d : f64
}

func.func private @helper(%a: f64, %b: f64) -> f64 {
  %c = arith.addf %a, %b : f64
  return %c : f64
}
