// RUN: linattn-opt %s --linattn-gpu-dynamic-shared-memory -split-input-file -verify-diagnostics | FileCheck %s
// RUN: not linattn-opt %s --linattn-gpu-dynamic-shared-memory="chip=sm_86" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=SM86
// RUN: not linattn-opt %s --linattn-gpu-dynamic-shared-memory="chip=gfx90a" -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-CHIP

// Two kernels above 48 KiB share one external declaration; each buffer
// becomes a view at its offset (aligned to its llvm.align, else its element
// size) and their launches get the total. The kernel of 48 KiB or less and
// its launch stay as they are.

// CHECK-LABEL: gpu.module @kernels
//       CHECK: memref.global @linattn_dynamic_shared : memref<0xi8, #gpu.address_space<workgroup>> {alignment = 16 : i64}
//   CHECK-NOT: memref.global
//       CHECK: gpu.func @big(%[[IN:.*]]: memref<?xf16>) kernel {
//   CHECK-DAG:   %[[BASE:.*]] = memref.get_global @linattn_dynamic_shared : memref<0xi8, #gpu.address_space<workgroup>>
//   CHECK-DAG:   %[[BYTES:.*]] = memref.cast %[[BASE]] : memref<0xi8, #gpu.address_space<workgroup>> to memref<?xi8, #gpu.address_space<workgroup>>
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C40000:.*]] = arith.constant 40000 : index
//   CHECK-DAG:   %[[C40002:.*]] = arith.constant 40002 : index
//   CHECK-DAG:   %[[C40016:.*]] = arith.constant 40016 : index
//   CHECK-DAG:   %[[A:.*]] = memref.view %[[BYTES]][%[[C0]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<20000xf16, #gpu.address_space<workgroup>>
//   CHECK-DAG:   %[[B:.*]] = memref.view %[[BYTES]][%[[C40000]]][] : {{.*}} to memref<1xi8, #gpu.address_space<workgroup>>
//   CHECK-DAG:   %[[C:.*]] = memref.view %[[BYTES]][%[[C40002]]][] : {{.*}} to memref<3xf16, #gpu.address_space<workgroup>>
//   CHECK-DAG:   %[[D:.*]] = memref.view %[[BYTES]][%[[C40016]]][] : {{.*}} to memref<4096xf32, #gpu.address_space<workgroup>>
//       CHECK:   memref.store %{{.*}}, %[[A]]
//       CHECK:   memref.store %{{.*}}, %[[B]]
//       CHECK:   memref.store %{{.*}}, %[[C]]
//       CHECK:   memref.store %{{.*}}, %[[D]]
//       CHECK: gpu.func @small(%{{.*}}: memref<?xf16>) workgroup(%{{.*}} : memref<1000xf32, #gpu.address_space<workgroup>>) kernel {
//       CHECK: gpu.func @big2(%{{.*}}: memref<?xf16>) kernel {
//       CHECK:   memref.get_global @linattn_dynamic_shared
//       CHECK:   memref.view {{.*}} to memref<30000xf16, #gpu.address_space<workgroup>>
// CHECK-LABEL: func.func @host
//       CHECK: %[[S1:.*]] = arith.constant 56400 : i32
//       CHECK: gpu.launch_func @kernels::@big blocks in {{.*}} dynamic_shared_memory_size %[[S1]] args
//       CHECK: gpu.launch_func @kernels::@small blocks in {{.*}} threads in ({{[^)]*}})  args
//       CHECK: %[[S2:.*]] = arith.constant 60000 : i32
//       CHECK: gpu.launch_func @kernels::@big2 blocks in {{.*}} dynamic_shared_memory_size %[[S2]] args
//       CHECK: %[[S3:.*]] = arith.constant 56400 : i32
//       CHECK: gpu.launch_func @kernels::@big blocks in {{.*}} dynamic_shared_memory_size %[[S3]] args
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @big(%in: memref<?xf16>)
        workgroup(%a: memref<20000xf16, #gpu.address_space<workgroup>>,
                  %b: memref<1xi8, #gpu.address_space<workgroup>>,
                  %c: memref<3xf16, #gpu.address_space<workgroup>>,
                  %d: memref<4096xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
        kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %in[%c0] : memref<?xf16>
      %i = arith.constant 1 : i8
      %f = arith.extf %x : f16 to f32
      memref.store %x, %a[%c0] : memref<20000xf16, #gpu.address_space<workgroup>>
      memref.store %i, %b[%c0] : memref<1xi8, #gpu.address_space<workgroup>>
      memref.store %x, %c[%c0] : memref<3xf16, #gpu.address_space<workgroup>>
      memref.store %f, %d[%c0] : memref<4096xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
    gpu.func @small(%in: memref<?xf16>)
        workgroup(%a: memref<1000xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
    gpu.func @big2(%in: memref<?xf16>)
        workgroup(%a: memref<30000xf16, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %in[%c0] : memref<?xf16>
      memref.store %x, %a[%c0] : memref<30000xf16, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
  func.func @host(%in: memref<?xf16>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@big blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%in : memref<?xf16>)
    gpu.launch_func @kernels::@small blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%in : memref<?xf16>)
    gpu.launch_func @kernels::@big2 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%in : memref<?xf16>)
    gpu.launch_func @kernels::@big blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%in : memref<?xf16>)
    return
  }
}

// -----

// More than the chip allows per block: 120000 bytes fit sm_90 (227 KiB),
// not sm_86 (99 KiB).

// CHECK-LABEL: gpu.func @huge
//       CHECK: memref.view {{.*}} to memref<60000xf16, #gpu.address_space<workgroup>>
// SM86: error: kernel huge needs 120000 bytes of shared memory; sm_86 allows at most 101376 per block
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @huge()
        workgroup(%a: memref<60000xf16, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

// A launch that already asks for dynamic shared memory: the sizes cannot be
// combined.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @big()
        workgroup(%a: memref<30000xf16, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
  func.func @host() {
    %c1 = arith.constant 1 : index
    %size = arith.constant 1024 : i32
    // expected-error @below {{a launch of @kernels::@big, whose workgroup buffers move to dynamic shared memory, already has a dynamic shared memory size}}
    gpu.launch_func @kernels::@big blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) dynamic_shared_memory_size %size
    return
  }
}

// BAD-CHIP: error: linattn-gpu-dynamic-shared-memory: chip 'gfx90a' is not sm_ followed by a number
