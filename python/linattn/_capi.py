"""Loading libLinAttnCAPI.so and declaring the C functions the package uses.

The package talks to MLIR only through the C API that libLinAttnCAPI.so
exports (linattn's own C API plus the MLIR C API archives it bundles: IR,
passes, registration, the ExecutionEngine). Every function used is declared
here once, with its argument and result types.

Where the library comes from, first match wins:

1. ``LINATTN_LIBRARY``: the path of a libLinAttnCAPI.so (an error if it is set
   and does not exist);
2. ``linattn/_lib/libLinAttnCAPI.so``: the copy ``pip install`` puts in the
   package;
3. ``<repository>/build/lib/libLinAttnCAPI.so``: when the package is imported
   from a source checkout (``PYTHONPATH=python``).

ABI notes. MLIR's C API passes handles (``MlirContext`` and friends) as
structs holding one pointer, and ``MlirLogicalResult`` as a struct holding
one ``int8_t``; on the x86-64 and AArch64 C ABIs these are passed and returned
exactly like a pointer and a signed char, which is how they are declared here
(ctypes cannot return structs from callbacks). ``MlirStringRef`` (pointer and
length) is a real ctypes structure.
"""

from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
import os
import pathlib
import threading
from types import ModuleType
from typing import List, Optional

LIBRARY_NAME = "libLinAttnCAPI.so"
LIBRARY_ENV = "LINATTN_LIBRARY"

_PACKAGE_DIR = pathlib.Path(__file__).resolve().parent


class LibraryNotFoundError(ImportError):
    """libLinAttnCAPI.so could not be found or loaded."""


def candidate_paths() -> List[pathlib.Path]:
    """The places searched for libLinAttnCAPI.so, in order (see the module
    docstring)."""
    paths = []
    env = os.environ.get(LIBRARY_ENV)
    if env:
        paths.append(pathlib.Path(env))
    paths.append(_PACKAGE_DIR / "_lib" / LIBRARY_NAME)
    paths.append(_PACKAGE_DIR.parent.parent / "build" / "lib" / LIBRARY_NAME)
    return paths


def find_library() -> pathlib.Path:
    """Returns the path of the libLinAttnCAPI.so this package uses."""
    env = os.environ.get(LIBRARY_ENV)
    if env:
        path = pathlib.Path(env)
        if not path.is_file():
            raise LibraryNotFoundError(
                f"{LIBRARY_ENV}={env} does not name a file")
        return path
    tried = candidate_paths()
    for path in tried:
        if path.is_file():
            return path
    raise LibraryNotFoundError(
        f"cannot find {LIBRARY_NAME}; looked in: "
        + ", ".join(str(p) for p in tried)
        + ". Build it with `make build` at the repository root and reinstall "
        f"the package, or set {LIBRARY_ENV} to its path.")


NATIVE_CALL_NAME = "_linattn_call.abi3.so"
NATIVE_CALL_ENV = "LINATTN_NATIVE_CALL"

_native_module: Optional[ModuleType] = None
_native_module_loaded = False


def native_call_module() -> Optional[ModuleType]:
    """The native module beside libLinAttnCAPI.so (``_linattn_call.abi3.so``,
    lib/Bindings/Python/CallModule.cpp): the fast path of
    `linattn.jit.JitFunction` calls. None where the module was not built,
    cannot be imported (CPython before 3.11) or ``LINATTN_NATIVE_CALL`` is
    ``0``; calls then go through ctypes."""
    global _native_module, _native_module_loaded
    if _native_module_loaded:
        return _native_module
    with _lib_lock:
        if not _native_module_loaded:
            _native_module = _load_native_call_module()
            _native_module_loaded = True
    return _native_module


def _load_native_call_module() -> Optional[ModuleType]:
    if os.environ.get(NATIVE_CALL_ENV, "1") == "0":
        return None
    try:
        path = find_library().parent / NATIVE_CALL_NAME
    except LibraryNotFoundError:
        return None
    if not path.is_file():
        return None
    loader = importlib.machinery.ExtensionFileLoader("_linattn_call", str(path))
    spec = importlib.util.spec_from_file_location("_linattn_call", str(path),
                                                  loader=loader)
    if spec is None:
        return None
    try:
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except ImportError:
        return None
    return module


#===------------------------------------------------------------------------===#
# C types
#===------------------------------------------------------------------------===#


class MlirStringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t)]

    @staticmethod
    def of(data: bytes) -> "MlirStringRef":
        """A string ref pointing into `data`; the caller keeps `data` alive."""
        return MlirStringRef(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p),
                             len(data))

    def to_str(self) -> str:
        if not self.length:
            return ""
        return ctypes.string_at(self.data, self.length).decode(
            "utf-8", errors="replace")


def _handle(name: str) -> type:
    return type(name, (ctypes.c_void_p,), {})


MlirContext = _handle("MlirContext")
MlirDialectRegistry = _handle("MlirDialectRegistry")
MlirModule = _handle("MlirModule")
MlirOperation = _handle("MlirOperation")
MlirBlock = _handle("MlirBlock")
MlirRegion = _handle("MlirRegion")
MlirType = _handle("MlirType")
MlirAttribute = _handle("MlirAttribute")
MlirLocation = _handle("MlirLocation")
MlirIdentifier = _handle("MlirIdentifier")
MlirAffineMap = _handle("MlirAffineMap")
MlirPassManager = _handle("MlirPassManager")
MlirOpPassManager = _handle("MlirOpPassManager")
MlirOpPrintingFlags = _handle("MlirOpPrintingFlags")
MlirExecutionEngine = _handle("MlirExecutionEngine")
MlirDiagnostic = _handle("MlirDiagnostic")
MlirLogicalResult = ctypes.c_int8  # struct { int8_t value; }, 1 on success


class LinattnHostCacheStats(ctypes.Structure):
    _fields_ = [("cachedBytes", ctypes.c_uint64),
                ("cachedBlocks", ctypes.c_uint64),
                ("limitBytes", ctypes.c_uint64),
                ("hits", ctypes.c_uint64),
                ("misses", ctypes.c_uint64)]


MlirStringCallback = ctypes.CFUNCTYPE(None, MlirStringRef, ctypes.c_void_p)
MlirDiagnosticHandler = ctypes.CFUNCTYPE(ctypes.c_int8, ctypes.c_void_p,
                                         ctypes.c_void_p)

# MlirDiagnosticSeverity
SEVERITY_NAMES = {0: "error", 1: "warning", 2: "note", 3: "remark"}

_c = ctypes
_SIGNATURES = {
    # Context, registry and registration.
    "mlirContextCreate": (MlirContext, []),
    "mlirContextDestroy": (None, [MlirContext]),
    "mlirContextEnableMultithreading": (None, [MlirContext, _c.c_bool]),
    "mlirContextAppendDialectRegistry": (None, [MlirContext,
                                                MlirDialectRegistry]),
    "mlirDialectRegistryCreate": (MlirDialectRegistry, []),
    "mlirDialectRegistryDestroy": (None, [MlirDialectRegistry]),
    "mlirRegisterAllDialects": (None, [MlirDialectRegistry]),
    "mlirRegisterAllLLVMTranslations": (None, [MlirContext]),
    "mlirRegisterAllPasses": (None, []),
    "linattnRegisterAllDialects": (None, [MlirDialectRegistry]),
    "linattnRegisterAllPasses": (None, []),
    # Diagnostics.
    "mlirContextAttachDiagnosticHandler": (
        _c.c_uint64, [MlirContext, MlirDiagnosticHandler, _c.c_void_p,
                      _c.c_void_p]),
    "mlirContextDetachDiagnosticHandler": (None, [MlirContext, _c.c_uint64]),
    "mlirDiagnosticPrint": (None, [MlirDiagnostic, MlirStringCallback,
                                   _c.c_void_p]),
    "mlirDiagnosticGetLocation": (MlirLocation, [MlirDiagnostic]),
    "mlirDiagnosticGetSeverity": (_c.c_int, [MlirDiagnostic]),
    "mlirDiagnosticGetNumNotes": (_c.c_ssize_t, [MlirDiagnostic]),
    "mlirDiagnosticGetNote": (MlirDiagnostic, [MlirDiagnostic, _c.c_ssize_t]),
    "mlirLocationPrint": (None, [MlirLocation, MlirStringCallback,
                                 _c.c_void_p]),
    # Modules and operations.
    "linattnModuleCreateParseWithName": (MlirModule, [MlirContext,
                                                      MlirStringRef,
                                                      MlirStringRef]),
    "linattnVerifyRunsOnHost": (MlirLogicalResult, [MlirModule]),
    "mlirModuleDestroy": (None, [MlirModule]),
    "mlirModuleGetOperation": (MlirOperation, [MlirModule]),
    "mlirModuleGetBody": (MlirBlock, [MlirModule]),
    "mlirModuleFromOperation": (MlirModule, [MlirOperation]),
    "mlirOperationClone": (MlirOperation, [MlirOperation]),
    "mlirOperationVerify": (_c.c_bool, [MlirOperation]),
    "mlirOperationPrint": (None, [MlirOperation, MlirStringCallback,
                                  _c.c_void_p]),
    "mlirOperationPrintWithFlags": (None, [MlirOperation, MlirOpPrintingFlags,
                                           MlirStringCallback, _c.c_void_p]),
    "mlirOperationGetName": (MlirIdentifier, [MlirOperation]),
    "mlirOperationGetNextInBlock": (MlirOperation, [MlirOperation]),
    "mlirOperationGetAttributeByName": (MlirAttribute, [MlirOperation,
                                                        MlirStringRef]),
    "mlirOperationGetContext": (MlirContext, [MlirOperation]),
    "mlirBlockGetFirstOperation": (MlirOperation, [MlirBlock]),
    "mlirIdentifierStr": (MlirStringRef, [MlirIdentifier]),
    "mlirOpPrintingFlagsCreate": (MlirOpPrintingFlags, []),
    "mlirOpPrintingFlagsDestroy": (None, [MlirOpPrintingFlags]),
    "mlirOpPrintingFlagsPrintGenericOpForm": (None, [MlirOpPrintingFlags]),
    "mlirOpPrintingFlagsEnableDebugInfo": (None, [MlirOpPrintingFlags,
                                                  _c.c_bool, _c.c_bool]),
    "mlirFuncSetArgAttr": (None, [MlirOperation, _c.c_ssize_t, MlirStringRef,
                                  MlirAttribute]),
    # Attributes and types.
    "mlirStringAttrGetValue": (MlirStringRef, [MlirAttribute]),
    "mlirTypeAttrGetValue": (MlirType, [MlirAttribute]),
    "mlirAttributeIsAType": (_c.c_bool, [MlirAttribute]),
    "mlirAttributeIsAString": (_c.c_bool, [MlirAttribute]),
    "mlirBoolAttrGet": (MlirAttribute, [MlirContext, _c.c_int]),
    "mlirTypeIsAFunction": (_c.c_bool, [MlirType]),
    "mlirFunctionTypeGetNumInputs": (_c.c_ssize_t, [MlirType]),
    "mlirFunctionTypeGetNumResults": (_c.c_ssize_t, [MlirType]),
    "mlirFunctionTypeGetInput": (MlirType, [MlirType, _c.c_ssize_t]),
    "mlirFunctionTypeGetResult": (MlirType, [MlirType, _c.c_ssize_t]),
    "mlirTypeIsARankedTensor": (_c.c_bool, [MlirType]),
    "mlirTypeIsAMemRef": (_c.c_bool, [MlirType]),
    "mlirTypeIsAIndex": (_c.c_bool, [MlirType]),
    "mlirTypeIsAInteger": (_c.c_bool, [MlirType]),
    "mlirIntegerTypeGetWidth": (_c.c_uint, [MlirType]),
    "mlirTypeIsAF16": (_c.c_bool, [MlirType]),
    "mlirTypeIsABF16": (_c.c_bool, [MlirType]),
    "mlirTypeIsAF32": (_c.c_bool, [MlirType]),
    "mlirTypeIsAF64": (_c.c_bool, [MlirType]),
    "mlirShapedTypeGetElementType": (MlirType, [MlirType]),
    "mlirShapedTypeGetRank": (_c.c_int64, [MlirType]),
    "mlirShapedTypeIsDynamicDim": (_c.c_bool, [MlirType, _c.c_ssize_t]),
    "mlirShapedTypeGetDimSize": (_c.c_int64, [MlirType, _c.c_ssize_t]),
    "mlirMemRefTypeGetAffineMap": (MlirAffineMap, [MlirType]),
    "mlirAffineMapIsIdentity": (_c.c_bool, [MlirAffineMap]),
    "mlirTypePrint": (None, [MlirType, MlirStringCallback, _c.c_void_p]),
    # Passes.
    "mlirPassManagerCreate": (MlirPassManager, [MlirContext]),
    "mlirPassManagerDestroy": (None, [MlirPassManager]),
    "mlirPassManagerGetAsOpPassManager": (MlirOpPassManager,
                                          [MlirPassManager]),
    "mlirPassManagerEnableVerifier": (None, [MlirPassManager, _c.c_bool]),
    "mlirPassManagerRunOnOp": (MlirLogicalResult, [MlirPassManager,
                                                   MlirOperation]),
    "mlirParsePassPipeline": (MlirLogicalResult,
                              [MlirOpPassManager, MlirStringRef,
                               MlirStringCallback, _c.c_void_p]),
    # Execution engine.
    "mlirExecutionEngineCreate": (
        MlirExecutionEngine, [MlirModule, _c.c_int, _c.c_int,
                              _c.POINTER(MlirStringRef), _c.c_bool,
                              _c.c_bool]),
    "mlirExecutionEngineInitialize": (None, [MlirExecutionEngine]),
    "mlirExecutionEngineDestroy": (None, [MlirExecutionEngine]),
    "mlirExecutionEngineLookup": (_c.c_void_p, [MlirExecutionEngine,
                                                MlirStringRef]),
    "mlirExecutionEngineRegisterSymbol": (None, [MlirExecutionEngine,
                                                 MlirStringRef, _c.c_void_p]),
    # The caching host allocator (linattn-c/HostAllocator.h).
    "linattnHostMalloc": (_c.c_void_p, [_c.c_size_t]),
    "linattnHostAlignedAlloc": (_c.c_void_p, [_c.c_size_t, _c.c_size_t]),
    "linattnHostFree": (None, [_c.c_void_p]),
    "linattnHostCacheGetStats": (LinattnHostCacheStats, []),
    "linattnHostCacheRelease": (_c.c_uint64, []),
    "linattnHostCacheSetLimit": (_c.c_uint64, [_c.c_uint64]),
}


class _Library:
    """The loaded library with every function of `_SIGNATURES` typed."""

    def __init__(self, path: pathlib.Path) -> None:
        self.path = path
        try:
            self.dll = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            raise LibraryNotFoundError(f"cannot load {path}: {e}") from e
        for name, (restype, argtypes) in _SIGNATURES.items():
            try:
                fn = getattr(self.dll, name)
            except AttributeError as e:
                raise LibraryNotFoundError(
                    f"{path} does not export {name}: rebuild it") from e
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name, fn)
        # Registration into MLIR's global pass registry happens once per
        # process.
        self.mlirRegisterAllPasses()
        self.linattnRegisterAllPasses()


_lib: Optional[_Library] = None
_lib_lock = threading.Lock()


def lib() -> _Library:
    """The process-wide library, loaded on first use."""
    global _lib
    if _lib is None:
        with _lib_lock:
            if _lib is None:
                _lib = _Library(find_library())
    return _lib


def is_null(handle: ctypes.c_void_p) -> bool:
    return not handle.value


class StringCollector:
    """A `MlirStringCallback` that appends the pieces it receives."""

    def __init__(self) -> None:
        self.chunks: List[bytes] = []

        def append(ref: MlirStringRef, _user_data: int) -> None:
            if ref.length:
                self.chunks.append(ctypes.string_at(ref.data, ref.length))

        self.callback = MlirStringCallback(append)

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", errors="replace")
