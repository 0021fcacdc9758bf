// linattn-run on a module whose compiled code calls a function no library
// defines: the JIT names the symbol, and linattn-run says that a library is
// missing (not that the entry point's wrapper is). A module lowered without
// the wrapper gets the c-interface hint.
// RUN: not linattn-run %s --random-seed=0 2>&1 | FileCheck %s --check-prefix=LINK
// RUN: not linattn-run %s --random-seed=0 --pipeline='linattn-lower-to-cpu{c-interface=false}' 2>&1 | FileCheck %s --check-prefix=CIFACE

// LINK: Symbols not found: [ {{.*}}linattn_test_undefined ]
// LINK: linattn-run: cannot call _mlir_ciface_f: {{.*}} (the compiled code calls functions that no library given by --shared-libs defines)
// CIFACE: linattn-run: cannot call _mlir_ciface_f: {{.*}} (was the module lowered with c-interface?)

func.func private @linattn_test_undefined(f32) -> f32

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %y = func.call @linattn_test_undefined(%a) : (f32) -> f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
