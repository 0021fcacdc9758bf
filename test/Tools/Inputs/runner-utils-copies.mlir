// Strided views copied with memref.copy, which upstream's lowering turns into
// calls of memrefCopy (innermost strides 2 and 1), for
// test/Tools/runner-utils.test.
func.func @main(%x: memref<3x6x10xf32>) -> (memref<3x2x5xf32>, memref<2x6x4xf32>) {
  %va = memref.subview %x[0, 1, 0] [3, 2, 5] [1, 3, 2]
      : memref<3x6x10xf32> to memref<3x2x5xf32, strided<[60, 30, 2], offset: 10>>
  %a = memref.alloc() : memref<3x2x5xf32>
  memref.copy %va, %a : memref<3x2x5xf32, strided<[60, 30, 2], offset: 10>> to memref<3x2x5xf32>
  %vb = memref.subview %x[1, 0, 3] [2, 6, 4] [1, 1, 1]
      : memref<3x6x10xf32> to memref<2x6x4xf32, strided<[60, 10, 1], offset: 63>>
  %b = memref.alloc() : memref<2x6x4xf32>
  memref.copy %vb, %b : memref<2x6x4xf32, strided<[60, 10, 1], offset: 63>> to memref<2x6x4xf32>
  return %a, %b : memref<3x2x5xf32>, memref<2x6x4xf32>
}
