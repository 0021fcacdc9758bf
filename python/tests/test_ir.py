"""Parsing, verifying, printing, pass pipelines and diagnostics."""

import pytest

from linattn import ir
from linattn.ir import MLIRError, Module, PassManager

ATTENTION = """\
func.func @attn(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>,
                %v: tensor<1x2x8x3xf32>) -> tensor<1x2x8x3xf32> {
  %o = linattn.attention elu %q, %k, %v causal normalize(eps = 1.0e-6)
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x3xf32>
      -> tensor<1x2x8x3xf32>
  return %o : tensor<1x2x8x3xf32>
}
"""


def test_parse_print_round_trip():
    m = Module.parse(ATTENTION)
    text = str(m)
    assert "linattn.attention elu" in text
    assert "causal" in text
    again = Module.parse(text)
    assert str(again) == text


def test_generic_form_and_locations():
    m = Module.parse(ATTENTION, name="attn.mlir")
    generic = m.to_string(generic=True)
    assert '"linattn.attention"' in generic
    assert str(Module.parse(generic)) == str(m)
    with_locs = m.to_string(debug_info=True)
    assert 'loc("attn.mlir":3:8)' in with_locs


def test_functions():
    m = Module.parse(ATTENTION + """
func.func private @helper(%x: f32) -> f32 {
  return %x : f32
}
""")
    funcs = {f.name: f for f in m.functions()}
    assert funcs["attn"].public
    assert funcs["attn"].inputs == ("tensor<1x2x8x4xf32>",
                                    "tensor<1x2x8x4xf32>",
                                    "tensor<1x2x8x3xf32>")
    assert funcs["attn"].results == ("tensor<1x2x8x3xf32>",)
    assert not funcs["helper"].public


def test_run_pipeline_decompose():
    m = Module.parse(ATTENTION)
    m.run_pipeline("linattn-decompose,canonicalize")
    text = str(m)
    assert "linattn.attention" not in text
    assert "linattn.feature_map elu" in text
    assert "linattn.scores" in text


def test_full_pipeline_string_and_pass_manager_reuse():
    pm = PassManager("builtin.module(linattn-decompose,"
                     "linattn-masked-to-scan,canonicalize)")
    for _ in range(2):
        m = Module.parse(ATTENTION)
        pm.run(m)
        assert "linattn.scan forward" in str(m)


def test_clone_is_independent():
    m = Module.parse(ATTENTION)
    c = m.clone()
    c.run_pipeline("linattn-decompose")
    assert "linattn.attention" in str(m)
    assert "linattn.attention" not in str(c)


def test_lower_to_cpu_reaches_llvm():
    m = Module.parse(ATTENTION)
    m.run_pipeline("linattn-lower-to-cpu")
    text = str(m)
    assert "llvm.func @attn" in text
    assert "llvm.func @_mlir_ciface_attn" in text
    assert "linattn." not in text


def test_parse_error_has_location():
    with pytest.raises(MLIRError) as info:
        Module.parse("func.func @f(%x: tensor<4xf32>) {\n"
                     "  return %y : tensor<4xf32>\n}\n", name="broken.mlir")
    e = info.value
    assert "cannot parse" in str(e)
    assert "use of undeclared SSA value name" in e.message
    d = e.diagnostics[0]
    assert (d.severity, d.file, d.line) == ("error", "broken.mlir", 2)
    assert d.column is not None
    assert e.location.startswith('"broken.mlir":2:')


def test_verifier_error_carries_op_message_and_location():
    text = ("func.func @f(%x: tensor<4x8xf32>) -> tensor<4x9xf32> {\n"
            "  %0 = linattn.feature_map elu %x : tensor<4x8xf32> -> "
            "tensor<4x9xf32>\n"
            "  return %0 : tensor<4x9xf32>\n"
            "}\n")
    with pytest.raises(MLIRError) as info:
        Module.parse(text)
    e = info.value
    assert e.message == ("'linattn.feature_map' op result feature size 9 "
                         "does not match input feature size 8")
    assert e.diagnostics[0].line == 2 and e.diagnostics[0].column == 8
    # The verifier's note (the failing op) is attached to the error.
    assert e.diagnostics[0].notes
    assert '"<input>":2:8: error:' in str(e)


def test_causal_cross_attention_is_rejected_by_the_verifier():
    text = ATTENTION.replace("%k: tensor<1x2x8x4xf32>",
                             "%k: tensor<1x2x6x4xf32>").replace(
        "%v: tensor<1x2x8x3xf32>", "%v: tensor<1x2x6x3xf32>").replace(
        ": tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x3xf32>",
        ": tensor<1x2x8x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x3xf32>")
    with pytest.raises(MLIRError, match="causal"):
        Module.parse(text)


def test_unknown_pass_is_reported():
    with pytest.raises(MLIRError) as info:
        PassManager("linattn-no-such-pass")
    assert "linattn-no-such-pass" in str(info.value)
    assert "does not refer to a registered pass" in str(info.value)


GPU_KERNEL = """\
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90">] {
    llvm.func @k(%p: !llvm.ptr<1>) attributes {gpu.kernel, nvvm.kernel} {
      %x = llvm.load %p : !llvm.ptr<1> -> TYPE
      %y = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.TYPE"(%x)
          : (TYPE) -> TYPE
      llvm.store %y, %p : TYPE, !llvm.ptr<1>
      llvm.return
    }
  }
}
"""


def test_llvm_backend_failure_raises_and_the_process_goes_on():
    # NVPTX has no 2^x on f64: its fatal error would abort the interpreter.
    m = Module.parse(GPU_KERNEL.replace("TYPE", "f64"))
    with pytest.raises(MLIRError) as info:
        m.run_pipeline("linattn-gpu-module-to-binary{format=isa}")
    assert ("LLVM could not compile the GPU module: Cannot select: "
            "intrinsic %llvm.nvvm.ex2.approx.ftz") in str(info.value)
    m = Module.parse(GPU_KERNEL.replace("TYPE", "f32"))
    m.run_pipeline("linattn-gpu-module-to-binary{format=isa}")
    assert "gpu.binary @kernels" in str(m)


@pytest.mark.parametrize("pipeline", [
    "linattn-lower-to-cpu", "linattn-lower-to-nvvm{emulate=true}"])
def test_negative_dim_index_raises_and_the_process_goes_on(pipeline):
    # Upstream's GPU canonicalization would read out of bounds on it.
    text = ("func.func @f(%t: tensor<?x?xf32>) -> index {\n"
            "  %c = arith.constant -1 : index\n"
            "  %d = tensor.dim %t, %c : tensor<?x?xf32>\n"
            "  return %d : index\n}\n")
    with pytest.raises(MLIRError) as info:
        Module.parse(text, name="dim.mlir").run_pipeline(pipeline)
    d = info.value.diagnostics[0]
    assert (d.file, d.line) == ("dim.mlir", 3)
    assert "dimension index -1 is out of range for 'tensor<?x?xf32>'" in \
        d.message
    m = Module.parse(ATTENTION)
    m.run_pipeline("linattn-lower-to-cpu")
    assert "linattn." not in str(m)


def test_failing_pass_raises_with_diagnostics():
    # linattn-check-lowered fails on any linattn op left in the module.
    m = Module.parse(ATTENTION, name="a.mlir")
    with pytest.raises(MLIRError) as info:
        m.run_pipeline("linattn-check-lowered")
    e = info.value
    assert "failed" in e.what
    assert e.diagnostics and e.diagnostics[0].file == "a.mlir"


def test_verify():
    m = Module.parse(ATTENTION)
    assert m.verify() is m


def test_separate_contexts():
    c1, c2 = ir.Context(), ir.Context()
    m1 = Module.parse(ATTENTION, c1)
    m2 = Module.parse(ATTENTION, c2)
    assert str(m1) == str(m2)
    with pytest.raises(ValueError, match="different contexts"):
        PassManager("canonicalize", c1).run(m2)


def test_context_freed_with_live_module():
    # The module keeps its context alive.
    m = Module.parse(ATTENTION, ir.Context())
    assert "linattn.attention" in str(m)


def test_docstring_examples():
    import doctest

    import linattn.ir
    import linattn.jit
    for module in (linattn.ir, linattn.jit):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0
