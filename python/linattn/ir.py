"""MLIR contexts, modules and pass pipelines, with diagnostics as exceptions.

    >>> from linattn import ir
    >>> m = ir.Module.parse('''
    ... func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    ...   %0 = linattn.feature_map elu %x : tensor<4x8xf32> -> tensor<4x8xf32>
    ...   return %0 : tensor<4x8xf32>
    ... }''')
    >>> m.run_pipeline("convert-linattn-to-linalg")  # doctest: +ELLIPSIS
    <linattn.ir.Module ...>

Every context knows every upstream MLIR dialect, every linattn dialect and
their LLVM IR translations; every upstream and linattn pass and pipeline can
be named in a pipeline string. Errors reported by MLIR (parse errors, verifier
failures, pass failures) are raised as `MLIRError`, which carries each
diagnostic's text, severity and location.
"""

from __future__ import annotations

import re
import threading
import warnings
from dataclasses import dataclass, field
from typing import Iterator, List, Optional, Sequence, Tuple

from . import _capi
from ._capi import MlirStringRef, StringCollector, is_null, lib

__all__ = [
    "Context",
    "Diagnostic",
    "FunctionInfo",
    "MLIRError",
    "MLIRWarning",
    "Module",
    "PassManager",
    "default_context",
]


#===------------------------------------------------------------------------===#
# Diagnostics
#===------------------------------------------------------------------------===#

_FILE_LINE_COL = re.compile(r'^"(?P<file>(?:[^"\\]|\\.)*)":(?P<line>\d+):(?P<col>\d+)')


@dataclass
class Diagnostic:
    """One MLIR diagnostic: severity, location, message and attached notes."""

    severity: str
    """``"error"``, ``"warning"``, ``"note"`` or ``"remark"``."""
    location: str
    """The location as MLIR prints it, without ``loc(...)``, e.g.
    ``"input.mlir":3:7``; ``unknown`` when there is none."""
    message: str
    notes: List["Diagnostic"] = field(default_factory=list)
    file: Optional[str] = None
    """The file name of a file:line:col location, else None."""
    line: Optional[int] = None
    """The line (1-based) of a file:line:col location, else None."""
    column: Optional[int] = None
    """The column (1-based) of a file:line:col location, else None."""

    def __str__(self) -> str:
        text = f"{self.location}: {self.severity}: {self.message}"
        for note in self.notes:
            text += "\n" + str(note)
        return text


def _diagnostic_from_c(diag: int) -> Diagnostic:
    c = lib()
    handle = _capi.MlirDiagnostic(diag)
    message = StringCollector()
    c.mlirDiagnosticPrint(handle, message.callback, None)
    location = StringCollector()
    c.mlirLocationPrint(c.mlirDiagnosticGetLocation(handle), location.callback,
                        None)
    loc = location.text()
    if loc.startswith("loc(") and loc.endswith(")"):
        loc = loc[4:-1]
    result = Diagnostic(
        severity=_capi.SEVERITY_NAMES.get(c.mlirDiagnosticGetSeverity(handle),
                                          "error"),
        location=loc,
        message=message.text())
    match = _FILE_LINE_COL.match(loc)
    if match:
        result.file = match.group("file")
        result.line = int(match.group("line"))
        result.column = int(match.group("col"))
    for i in range(c.mlirDiagnosticGetNumNotes(handle)):
        note = c.mlirDiagnosticGetNote(handle, i)
        result.notes.append(_diagnostic_from_c(note.value))
    return result


class MLIRError(Exception):
    """An MLIR operation failed: parsing, verification, a pass, or JIT
    compilation.

    ``str(error)`` is a one-line summary followed by every diagnostic MLIR
    reported, as ``location: severity: message``. The diagnostics themselves
    are in `diagnostics`; the first error's text and location are also in
    `message` and `location`.
    """

    def __init__(self, what: str, diagnostics: Sequence[Diagnostic] = ()):
        self.what = what
        self.diagnostics: List[Diagnostic] = list(diagnostics)
        errors = [d for d in self.diagnostics if d.severity == "error"]
        first = errors[0] if errors else (
            self.diagnostics[0] if self.diagnostics else None)
        self.message: Optional[str] = first.message if first else None
        self.location: Optional[str] = first.location if first else None
        lines = [what] + [str(d) for d in self.diagnostics]
        super().__init__("\n".join(lines))


class MLIRWarning(UserWarning):
    """A warning MLIR reported while an operation succeeded."""


#===------------------------------------------------------------------------===#
# Context
#===------------------------------------------------------------------------===#


class Context:
    """An MLIR context with every upstream and linattn dialect and their LLVM
    IR translations registered, and a diagnostic handler that turns MLIR's
    diagnostics into `MLIRError`.

    A context may be used from several Python threads; operations on one
    context are serialized.
    """

    def __init__(self) -> None:
        c = lib()
        self._lib = c
        registry = c.mlirDialectRegistryCreate()
        c.mlirRegisterAllDialects(registry)
        c.linattnRegisterAllDialects(registry)
        self._handle = c.mlirContextCreate()
        # Diagnostics are then reported on the thread that runs the operation.
        c.mlirContextEnableMultithreading(self._handle, False)
        c.mlirContextAppendDialectRegistry(self._handle, registry)
        c.mlirDialectRegistryDestroy(registry)
        c.mlirRegisterAllLLVMTranslations(self._handle)
        self.lock = threading.RLock()
        self._dependents = 0
        self._finalized = False
        # The handler closes over this list holder, not over self, so that
        # the context is freed as soon as it is unreachable.
        sink: List[Optional[List[Diagnostic]]] = [None]
        self._sink = sink

        def handler(diag: int, _user_data: int) -> int:
            try:
                d = _diagnostic_from_c(diag)
            except Exception:  # never let an exception unwind into C
                d = Diagnostic("error", "unknown", "(unprintable diagnostic)")
            if sink[0] is not None:
                sink[0].append(d)
            elif d.severity == "error":
                # Outside a captured operation: nothing to raise into.
                warnings.warn(str(d), MLIRWarning, stacklevel=2)
            return 1  # handled

        self._handler = _capi.MlirDiagnosticHandler(handler)
        self._handler_id = c.mlirContextAttachDiagnosticHandler(
            self._handle, self._handler, None, None)

    @property
    def handle(self) -> _capi.MlirContext:
        """The underlying ``MlirContext``."""
        return self._handle

    def capture(self) -> "_Capture":
        """A context manager that collects the diagnostics reported while it
        is active; `_Capture.fail` raises them as `MLIRError`."""
        return _Capture(self)

    # Modules and pass managers hold a reference to their context, so the
    # context normally outlives them. When they die together in a garbage
    # cycle (or at interpreter exit), Python runs the finalizers in any order:
    # the MLIR context is then destroyed by the last of them.
    def _retain(self) -> None:
        self._dependents += 1

    def _release(self) -> None:
        self._dependents -= 1
        if self._finalized and self._dependents == 0:
            self._destroy()

    def _destroy(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.value:
            self._handle = None
            self._lib.mlirContextDetachDiagnosticHandler(handle,
                                                         self._handler_id)
            self._lib.mlirContextDestroy(handle)

    def __del__(self) -> None:
        self._finalized = True
        if getattr(self, "_dependents", 0) == 0:
            self._destroy()


class _Capture:
    def __init__(self, context: Context) -> None:
        self.context = context
        self.diagnostics: List[Diagnostic] = []
        self._saved: Optional[List[Diagnostic]] = None

    def __enter__(self) -> "_Capture":
        self.context.lock.acquire()
        self._saved = self.context._sink[0]
        self.context._sink[0] = self.diagnostics
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.context._sink[0] = self._saved
        self.context.lock.release()
        if exc_type is None:
            for d in self.diagnostics:
                if d.severity == "warning":
                    warnings.warn(str(d), MLIRWarning, stacklevel=3)

    def fail(self, what: str) -> MLIRError:
        """The error to raise for a failed operation: `what` and every
        diagnostic collected so far."""
        return MLIRError(what, self.diagnostics)


_default_context: Optional[Context] = None
_default_lock = threading.Lock()


def default_context() -> Context:
    """The context used when none is given (one per process)."""
    global _default_context
    with _default_lock:
        if _default_context is None:
            _default_context = Context()
        return _default_context


#===------------------------------------------------------------------------===#
# Modules
#===------------------------------------------------------------------------===#


def _print_type(t: _capi.MlirType) -> str:
    out = StringCollector()
    lib().mlirTypePrint(t, out.callback, None)
    return out.text()


@dataclass(frozen=True)
class FunctionInfo:
    """A `func.func` of a module: its name, visibility and the MLIR types of
    its arguments and results (as printed)."""

    name: str
    public: bool
    inputs: Tuple[str, ...]
    results: Tuple[str, ...]


class Module:
    """An MLIR module (owned by this object, in a `Context`).

    Create one with `Module.parse`; ``str(module)`` prints it.
    """

    def __init__(self, handle: _capi.MlirModule, context: Context) -> None:
        self._handle = handle
        self.context = context
        self._lib = lib()
        context._retain()

    @staticmethod
    def parse(text: str, context: Optional[Context] = None, *,
              name: str = "<input>") -> "Module":
        """Parses and verifies `text`; raises `MLIRError` with the parser's or
        verifier's diagnostics when it is not a valid module. Locations and
        diagnostics name the text `name` (``"<input>":line:col``)."""
        ctx = context or default_context()
        data = text.encode("utf-8")
        source_name = name.encode("utf-8")
        with ctx.capture() as cap:
            handle = lib().linattnModuleCreateParseWithName(
                ctx.handle, MlirStringRef.of(data),
                MlirStringRef.of(source_name))
            if is_null(handle):
                raise cap.fail("cannot parse the module")
        return Module(handle, ctx)

    @property
    def operation(self) -> _capi.MlirOperation:
        """The ``builtin.module`` operation (an ``MlirOperation``)."""
        return self._lib.mlirModuleGetOperation(self._handle)

    @property
    def handle(self) -> _capi.MlirModule:
        """The underlying ``MlirModule``."""
        return self._handle

    def verify(self) -> "Module":
        """Runs the verifiers; raises `MLIRError` when one fails."""
        with self.context.capture() as cap:
            if not self._lib.mlirOperationVerify(self.operation):
                raise cap.fail("the module does not verify")
        return self

    def to_string(self, *, generic: bool = False,
                  debug_info: bool = False) -> str:
        """The module as text: custom (default) or generic op form,
        optionally with locations."""
        out = StringCollector()
        with self.context.capture():
            if not generic and not debug_info:
                self._lib.mlirOperationPrint(self.operation, out.callback,
                                             None)
            else:
                flags = self._lib.mlirOpPrintingFlagsCreate()
                try:
                    if generic:
                        self._lib.mlirOpPrintingFlagsPrintGenericOpForm(flags)
                    if debug_info:
                        self._lib.mlirOpPrintingFlagsEnableDebugInfo(
                            flags, True, False)
                    self._lib.mlirOperationPrintWithFlags(
                        self.operation, flags, out.callback, None)
                finally:
                    self._lib.mlirOpPrintingFlagsDestroy(flags)
        return out.text()

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"<linattn.ir.Module at {self._handle.value:#x}>"

    def clone(self) -> "Module":
        """A deep copy of this module, in the same context."""
        with self.context.capture():
            op = self._lib.mlirOperationClone(self.operation)
            return Module(self._lib.mlirModuleFromOperation(op), self.context)

    def run_pipeline(self, pipeline: str) -> "Module":
        """Runs a textual pass pipeline on this module, in place.

        `pipeline` is either a full pipeline (``builtin.module(...)``) or the
        list of passes inside it, e.g. ``"linattn-decompose,canonicalize"``.
        Raises `MLIRError` when the pipeline does not parse or a pass fails.
        Returns self.
        """
        PassManager(pipeline, self.context).run(self)
        return self

    def _top_level_ops(self) -> Iterator[_capi.MlirOperation]:
        c = self._lib
        op = c.mlirBlockGetFirstOperation(c.mlirModuleGetBody(self._handle))
        while not is_null(op):
            yield op
            op = c.mlirOperationGetNextInBlock(op)

    def _func_ops(self) -> Iterator[Tuple[str, _capi.MlirOperation]]:
        c = self._lib
        for op in self._top_level_ops():
            name = c.mlirIdentifierStr(c.mlirOperationGetName(op)).to_str()
            if name != "func.func":
                continue
            sym = c.mlirOperationGetAttributeByName(op,
                                                    MlirStringRef.of(b"sym_name"))
            yield c.mlirStringAttrGetValue(sym).to_str(), op

    def _function_type(self, op: _capi.MlirOperation) -> _capi.MlirType:
        c = self._lib
        attr = c.mlirOperationGetAttributeByName(
            op, MlirStringRef.of(b"function_type"))
        return c.mlirTypeAttrGetValue(attr)

    def _is_public(self, op: _capi.MlirOperation) -> bool:
        c = self._lib
        vis = c.mlirOperationGetAttributeByName(
            op, MlirStringRef.of(b"sym_visibility"))
        return is_null(vis) or c.mlirStringAttrGetValue(vis).to_str() == "public"

    def functions(self) -> List[FunctionInfo]:
        """The ``func.func`` operations at the top level of the module."""
        c = self._lib
        result = []
        with self.context.capture():
            for name, op in self._func_ops():
                ftype = self._function_type(op)
                inputs = tuple(
                    _print_type(c.mlirFunctionTypeGetInput(ftype, i))
                    for i in range(c.mlirFunctionTypeGetNumInputs(ftype)))
                results = tuple(
                    _print_type(c.mlirFunctionTypeGetResult(ftype, i))
                    for i in range(c.mlirFunctionTypeGetNumResults(ftype)))
                result.append(FunctionInfo(name, self._is_public(op), inputs,
                                           results))
        return result

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.value:
            self._handle = None
            self._lib.mlirModuleDestroy(handle)
            self.context._release()


#===------------------------------------------------------------------------===#
# Pass pipelines
#===------------------------------------------------------------------------===#


def _anchored(pipeline: str) -> str:
    text = pipeline.strip()
    if text.startswith("builtin.module(") or text.startswith("any("):
        return text
    return f"builtin.module({text})"


class PassManager:
    """A parsed pass pipeline that can run on modules of one `Context`.

        pm = PassManager("linattn-decompose,canonicalize")
        pm.run(module)
    """

    def __init__(self, pipeline: str, context: Optional[Context] = None,
                 *, verify: bool = True) -> None:
        self.context = context or default_context()
        self.pipeline = _anchored(pipeline)
        c = lib()
        self._lib = c
        self._handle = c.mlirPassManagerCreate(self.context.handle)
        self.context._retain()
        c.mlirPassManagerEnableVerifier(self._handle, verify)
        errors = StringCollector()
        text = self.pipeline.encode("utf-8")
        with self.context.capture() as cap:
            ok = c.mlirParsePassPipeline(
                c.mlirPassManagerGetAsOpPassManager(self._handle),
                MlirStringRef.of(text), errors.callback, None)
            if not ok:
                message = errors.text().strip() or "invalid pipeline"
                diags = list(cap.diagnostics) + [
                    Diagnostic("error", "pipeline", message)]
                raise MLIRError(f"cannot parse the pass pipeline "
                                f"'{self.pipeline}'", diags)

    def run(self, module: Module) -> None:
        """Runs the pipeline on `module` in place; raises `MLIRError` with the
        passes' diagnostics when one fails."""
        if module.context is not self.context:
            raise ValueError("the module and the pass manager belong to "
                             "different contexts")
        with self.context.capture() as cap:
            if not self._lib.mlirPassManagerRunOnOp(self._handle,
                                                    module.operation):
                raise cap.fail(f"pass pipeline '{self.pipeline}' failed")

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.value:
            self._handle = None
            self._lib.mlirPassManagerDestroy(handle)
            self.context._release()
