// RUN: linattn-opt %s --linattn-gpu-linalg-kernels -split-input-file | FileCheck %s
// RUN: not linattn-opt %s --linattn-gpu-linalg-kernels=block-size=100 -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BLOCK

// BLOCK: error: linattn-gpu-linalg-kernels: block-size 100 is not a multiple of 32 up to 1024

// A fill: one thread per element, in a grid-stride loop over the points.
// CHECK-LABEL: func.func @fill(
//  CHECK-SAME: %[[BUF:.*]]: memref<4x?xf32>)
//       CHECK: %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[BUF]]
//       CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%{{.*}}], strides: [1] : memref<f32> to memref<?xf32>
//       CHECK: %[[DIM:.*]] = memref.dim %[[BUF]], %{{.*}}
//       CHECK: %[[POINTS:.*]] = arith.muli %[[DIM]], %{{.*}}
//       CHECK: %[[TILES:.*]] = arith.ceildivui %[[POINTS]], %{{.*}}
//       CHECK: %[[AT_LEAST_ONE:.*]] = arith.maxui %[[TILES]]
//       CHECK: %[[BLOCKS:.*]] = arith.minui %[[AT_LEAST_ONE]]
//       CHECK: call @__linattn_launch_linattn_linalg_fill(%[[BLOCKS]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[FLAT]], %[[OFF]], %[[STRIDES]]#0, %[[STRIDES]]#1, %{{.*}}, %[[DIM]])
//   CHECK-NOT: linalg.fill
// The whole buffer is written: it is an output, not one to copy in first.
//       CHECK: gpu.module @linattn_kernels
//       CHECK: gpu.func @linattn_linalg_fill(%[[OUT:.*]]: memref<?xf32>, %[[OOFF:.*]]: index, %[[OS0:.*]]: index, %[[OS1:.*]]: index, %[[N0:.*]]: index, %[[N1:.*]]: index) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
//       CHECK: %[[ZERO:.*]] = arith.constant 0.0
//       CHECK: %[[KPOINTS:.*]] = arith.muli %[[N0]], %[[N1]]
//       CHECK: scf.for %[[P:.*]] = %{{.*}} to %[[KPOINTS]] step %{{.*}} {
//       CHECK:   %[[J:.*]] = arith.remui %[[P]], %[[N1]]
//       CHECK:   %[[I:.*]] = arith.divui %[[P]], %[[N1]]
//       CHECK:   %[[R:.*]] = arith.muli %[[I]], %[[OS0]]
//       CHECK:   %[[R1:.*]] = arith.addi %[[OOFF]], %[[R]]
//       CHECK:   %[[C:.*]] = arith.muli %[[J]], %[[OS1]]
//       CHECK:   %[[AT:.*]] = arith.addi %[[R1]], %[[C]]
//       CHECK:   memref.store %[[ZERO]], %[[OUT]][%[[AT]]]
//       CHECK: func.func private @__linattn_launch_linattn_linalg_fill({{.*}}) attributes {linattn.gpu_kernel = @linattn_kernels::@linattn_linalg_fill, linattn.gpu_outputs = array<i64: 0>}
func.func @fill(%buf: memref<4x?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%buf : memref<4x?xf32>)
  return
}

// -----

// A copy into a column slice of a wider buffer (V into [V, 1]): the target
// is passed as the flat buffer it views with its offset and strides, and is
// updated (its other elements kept).
// CHECK-LABEL: func.func @copy_into_slice(
//       CHECK: %[[SLICE:.*]] = memref.subview
//       CHECK: memref.extract_strided_metadata %[[SLICE]]
//       CHECK: call @__linattn_launch_linattn_linalg_copy(
//       CHECK: gpu.func @linattn_linalg_copy(%[[IN:.*]]: memref<?xf32>, %[[IOFF:.*]]: index, %[[IS0:.*]]: index, %[[IS1:.*]]: index, %[[OUT:.*]]: memref<?xf32>, %[[OOFF:.*]]: index, %[[OS0:.*]]: index, %[[OS1:.*]]: index, %{{.*}}: index, %{{.*}}: index)
//       CHECK: %[[X:.*]] = memref.load %[[IN]]
//       CHECK: memref.store %[[X]], %[[OUT]]
//       CHECK: linattn.gpu_outputs = array<i64: 4>, linattn.gpu_updated = array<i64: 4>
func.func @copy_into_slice(%v: memref<?x8xf32>, %wide: memref<?x9xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %v, %c0 : memref<?x8xf32>
  %slice = memref.subview %wide[0, 0] [%n, 8] [1, 1] : memref<?x9xf32> to memref<?x8xf32, strided<[9, 1]>>
  memref.copy %v, %slice : memref<?x8xf32> to memref<?x8xf32, strided<[9, 1]>>
  return
}

// -----

// A reduction along rows (dO·N per row): a group of 8 lanes (the row's 8
// elements, a power of two) per row, each lane from its own column on, from
// the sum's neutral element; in a warp the groups take consecutive rows and
// every lane runs the same rounds (a group past the last row sums nothing).
// Three butterfly shuffles add the group's sums; its first lane adds the
// output's value and stores it. The launch covers 256 / 8 rows a block.
// CHECK-LABEL: func.func @row_dot(
//       CHECK: %[[ROWS:.*]] = memref.dim
//       CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[ROWS]], %c32
//       CHECK: call @__linattn_launch_linattn_linalg_generic(
// CHECK-LABEL: gpu.func @linattn_linalg_generic(
//  CHECK-SAME: %[[A:[a-z0-9]+]]: memref<?xf32>, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index,
//  CHECK-SAME: %[[B:[a-z0-9]+]]: memref<?xf32>, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index,
//  CHECK-SAME: %[[O:[a-z0-9]+]]: memref<?xf32>, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index,
//  CHECK-SAME: %[[KROWS:[a-z0-9]+]]: index, %[[COLS:[a-z0-9]+]]: index)
//       CHECK: %[[TID:.*]] = gpu.thread_id x
//       CHECK: %[[IN_WARP:.*]] = arith.remui %[[TID]], %c32
//       CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c8
//       CHECK: %[[ZERO:.*]] = arith.constant 0.0{{.*}} : f32
//       CHECK: scf.for %[[BASE:.*]] = %{{.*}} to %[[KROWS]] step
//       CHECK:   %[[GROUP:.*]] = arith.divui %[[IN_WARP]], %c8
//       CHECK:   %[[ROW:.*]] = arith.addi %[[BASE]], %[[GROUP]]
//       CHECK:   %[[ACTIVE:.*]] = arith.cmpi ult, %[[ROW]], %[[KROWS]]
//       CHECK:   %[[TRIPS:.*]] = arith.select %[[ACTIVE]], %{{.*}}, %c0
//       CHECK:   %[[PART:.*]] = scf.for %{{.*}} = %[[LANE]] to %[[TRIPS]] step %c8{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
//       CHECK:     %[[X:.*]] = memref.load %[[A]]
//       CHECK:     %[[Y:.*]] = memref.load %[[B]]
//       CHECK:     %[[P:.*]] = arith.mulf %[[X]], %[[Y]]
//       CHECK:     %[[S:.*]] = arith.addf %[[ACC]], %[[P]]
//       CHECK:     scf.yield %[[S]]
//       CHECK:   %[[O1:.*]], %{{.*}} = gpu.shuffle xor %[[PART]], %c1_i32, %c32_i32 : f32
//       CHECK:   %[[S1:.*]] = arith.addf %[[PART]], %[[O1]]
//       CHECK:   %[[O2:.*]], %{{.*}} = gpu.shuffle xor %[[S1]], %c2_i32, %c32_i32 : f32
//       CHECK:   %[[S2:.*]] = arith.addf %[[S1]], %[[O2]]
//       CHECK:   %[[O4:.*]], %{{.*}} = gpu.shuffle xor %[[S2]], %c4_i32, %c32_i32 : f32
//       CHECK:   %[[SUM:.*]] = arith.addf %[[S2]], %[[O4]]
//   CHECK-NOT:   gpu.shuffle
//       CHECK:   %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0
//       CHECK:   %[[STORES:.*]] = arith.andi %[[ACTIVE]], %[[FIRST]]
//       CHECK:   scf.if %[[STORES]] {
//       CHECK:     %[[INIT:.*]] = memref.load %[[O]][%[[AT:.*]]]
//       CHECK:     %[[OUT:.*]] = arith.addf %[[INIT]], %[[SUM]]
//       CHECK:     memref.store %[[OUT]], %[[O]][%[[AT]]]
func.func @row_dot(%a: memref<?x8xf32>, %b: memref<?x8xf32>, %out: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a, %b : memref<?x8xf32>, memref<?x8xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A dynamic row length: a warp per row. A 16-bit maximum is combined across
// the lanes in f32.
// CHECK-LABEL: gpu.func @linattn_linalg_generic(
//       CHECK: arith.remui %{{.*}}, %c32
//       CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32
//       CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF80 : bf16
//       CHECK: scf.for %{{.*}} = %[[LANE]] to %{{.*}} step %c32{{.*}} iter_args(%{{.*}} = %[[NEG_INF]]) -> (bf16)
//       CHECK:   arith.maximumf
//       CHECK: %[[WIDE:.*]] = arith.extf %{{.*}} : bf16 to f32
//       CHECK: gpu.shuffle xor %[[WIDE]], %c1_i32, %c32_i32 : f32
// CHECK-COUNT-4: gpu.shuffle xor
//       CHECK: %[[NARROW:.*]] = arith.truncf %{{.*}} : f32 to bf16
//       CHECK: scf.if
//       CHECK:   arith.maximumf %{{.*}}, %[[NARROW]] : bf16
func.func @row_max(%a: memref<?x?xbf16>, %out: memref<?xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : memref<?x?xbf16>) outs(%out : memref<?xbf16>) {
  ^bb0(%x: bf16, %acc: bf16):
    %m = arith.maximumf %x, %acc : bf16
    linalg.yield %m : bf16
  }
  return
}

// -----

// One thread per point where the groups would not help: a reduction down
// the columns (consecutive threads read consecutive columns), a row's
// reduction by a combiner that is not associative and commutative
// (arith.subf), and a row of 1.
// CHECK-LABEL: func.func @per_thread(
// CHECK-COUNT-3: arith.ceildivui %{{.*}}, %c256
//   CHECK-NOT: gpu.shuffle
func.func @per_thread(%a: memref<?x40xf32>, %sums: memref<40xf32>, %diffs: memref<?xf32>, %b: memref<?x1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : memref<?x40xf32>) outs(%sums : memref<40xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : memref<?x40xf32>) outs(%diffs : memref<?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.subf %acc, %x : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%b : memref<?x1xf32>) outs(%diffs : memref<?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A transpose reads its input through the permutation.
// CHECK-LABEL: gpu.func @linattn_linalg_transpose(
//  CHECK-SAME: %[[IN:[a-z0-9]+]]: memref<?xf32>, %[[IOFF:[a-z0-9]+]]: index, %[[IS0:[a-z0-9]+]]: index, %[[IS1:[a-z0-9]+]]: index,
//       CHECK: %[[J:.*]] = arith.remui
//       CHECK: %[[I:.*]] = arith.divui
//       CHECK: %[[T0:.*]] = arith.muli %[[J]], %[[IS0]]
//       CHECK: %[[T1:.*]] = arith.addi %[[IOFF]], %[[T0]]
//       CHECK: %[[T2:.*]] = arith.muli %[[I]], %[[IS1]]
//       CHECK: %[[AT:.*]] = arith.addi %[[T1]], %[[T2]]
//       CHECK: memref.load %[[IN]][%[[AT]]]
func.func @transpose(%a: memref<16x8xf32>, %b: memref<8x16xf32>) {
  linalg.transpose ins(%a : memref<16x8xf32>) outs(%b : memref<8x16xf32>) permutation = [1, 0]
  return
}

// -----

// The body's indices, a buffer it loads from by index, a scalar argument
// and a constant from above (poly2's chain rule reads its quadratic block
// so): the buffer and the scalar become kernel arguments, the constant is
// cloned, linalg.index is the loop's index.
// CHECK-LABEL: func.func @gather(
//  CHECK-SAME: %[[TABLE:[a-z0-9]+]]: memref<?x32xf32>, %{{.*}}: memref<?x4xf32>, %[[SCALE:[a-z0-9]+]]: f32)
//       CHECK: memref.extract_strided_metadata %[[TABLE]]
//       CHECK: call @__linattn_launch_linattn_linalg_generic({{.*}}, %[[SCALE]])
//       CHECK: gpu.func @linattn_linalg_generic(
//  CHECK-SAME: %[[OUT:[a-z0-9]+]]: memref<?xf32>, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index, %{{[a-z0-9]+}}: index,
//  CHECK-SAME: %[[T:[a-z0-9]+]]: memref<?xf32>, %[[TOFF:[a-z0-9]+]]: index, %[[TS0:[a-z0-9]+]]: index, %[[TS1:[a-z0-9]+]]: index,
//  CHECK-SAME: %{{[a-z0-9]+}}: index, %[[N1:[a-z0-9]+]]: index, %[[S:[a-z0-9]+]]: f32)
//       CHECK: %[[C8:.*]] = arith.constant 8 : index
//       CHECK: %[[J:.*]] = arith.remui %{{.*}}, %[[N1]]
//       CHECK: %[[I:.*]] = arith.divui
//   CHECK-NOT: linalg.index
//       CHECK: %[[COL:.*]] = arith.muli %[[J]], %[[C8]]
//       CHECK: %[[R:.*]] = arith.muli %[[I]], %[[TS0]]
//       CHECK: %[[R2:.*]] = arith.addi %[[TOFF]], %[[R]]
//       CHECK: %[[C2:.*]] = arith.muli %[[COL]], %[[TS1]]
//       CHECK: %[[AT:.*]] = arith.addi %[[R2]], %[[C2]]
//       CHECK: %[[X:.*]] = memref.load %[[T]][%[[AT]]]
//       CHECK: arith.mulf %[[X]], %[[S]]
func.func @gather(%table: memref<?x32xf32>, %out: memref<?x4xf32>, %scale: f32) {
  %c8 = arith.constant 8 : index
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%out : memref<?x4xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %col = arith.muli %j, %c8 : index
    %x = memref.load %table[%i, %col] : memref<?x32xf32>
    %y = arith.mulf %x, %scale : f32
    linalg.yield %y : f32
  }
  return
}

// -----

// Left to the host, with the reason (device-buffers repeats it): an output
// that several points of the parallel loops write, and a body that stores.
// CHECK-LABEL: func.func @left(
//       CHECK: linalg.generic
//  CHECK-SAME: linattn.gpu_no_kernel = "output #1 is not indexed by exactly the parallel loops"
//       CHECK: linalg.generic
//  CHECK-SAME: linattn.gpu_no_kernel = "its body has memory effects other than loads of buffers defined above it"
//   CHECK-NOT: call
//   CHECK-NOT: gpu.module
func.func @left(%x: memref<8x16xf32>, %rows: memref<8xf32>, %log: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x16xf32>) outs(%rows : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%rows : memref<8xf32>) {
  ^bb0(%out: f32):
    memref.store %out, %log[%c0] : memref<1xf32>
    linalg.yield %out : f32
  }
  return
}
