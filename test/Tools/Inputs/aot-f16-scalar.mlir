// An entry point whose scalar argument has no C type with the same calling
// convention: linattn-compile --header refuses it (linattn-compile.mlir).
func.func @half(%a: f16) -> f16 {
  return %a : f16
}
