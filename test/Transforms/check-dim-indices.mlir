// RUN: linattn-opt %s -linattn-check-dim-indices -split-input-file -verify-diagnostics | FileCheck %s

// Indices that are dimensions, constant or not, and any non-negative index
// of an unranked operand (its rank is known only at run time) pass
// unchanged.
// CHECK-LABEL: func.func @in_range
// CHECK-COUNT-4: .dim
func.func @in_range(%t: tensor<?x?xf32>, %m: memref<2x?xf32>, %u: tensor<*xf32>, %i: index) -> (index, index, index, index) {
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %a = tensor.dim %t, %c1 : tensor<?x?xf32>
  %b = tensor.dim %t, %i : tensor<?x?xf32>
  %c = memref.dim %m, %c1 : memref<2x?xf32>
  %d = tensor.dim %u, %c7 : tensor<*xf32>
  return %a, %b, %c, %d : index, index, index, index
}

// -----

// Also in code that never runs: the canonicalizer may meet the dim before
// it folds the branch away.
func.func @unreached(%t: tensor<?xf32>) -> index {
  %false = arith.constant false
  %c-1 = arith.constant -1 : index
  %r = scf.if %false -> index {
    // expected-error @below {{dimension index -1 is out of range for 'tensor<?xf32>' (rank 1)}}
    %d = tensor.dim %t, %c-1 : tensor<?xf32>
    scf.yield %d : index
  } else {
    %c0 = arith.constant 0 : index
    scf.yield %c0 : index
  }
  return %r : index
}

// -----

func.func @negative(%t: tensor<?x?xf32>) -> index {
  %c-1 = arith.constant -1 : index
  // expected-error @below {{dimension index -1 is out of range for 'tensor<?x?xf32>' (rank 2)}}
  %d = tensor.dim %t, %c-1 : tensor<?x?xf32>
  return %d : index
}

// -----

func.func @rank(%m: memref<4x?xf32>) -> index {
  %c2 = arith.constant 2 : index
  // expected-error @below {{dimension index 2 is out of range for 'memref<4x?xf32>' (rank 2)}}
  %d = memref.dim %m, %c2 : memref<4x?xf32>
  return %d : index
}

// -----

// Indices that folding makes constant: the canonicalizer would meet them as
// constants.
func.func @folded(%t: tensor<?x?xf32>, %u: memref<*xf32>) -> (index, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %m1 = arith.subi %c0, %c1 : index
  %three = arith.addi %c1, %c2 : index
  // expected-error @below {{dimension index 3 is out of range for 'tensor<?x?xf32>' (rank 2)}}
  %a = tensor.dim %t, %three : tensor<?x?xf32>
  // expected-error @below {{dimension index -1 is out of range for 'memref<*xf32>'}}
  %b = memref.dim %u, %m1 : memref<*xf32>
  return %a, %b : index, index
}
