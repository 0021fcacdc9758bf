# -*- Python -*-
# lit configuration of the linattn test suite.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "LINATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".c", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.linattn_obj_root, "test")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

config.substitutions.append(("%linattn_src_root", config.linattn_src_root))
config.substitutions.append(("%linattn_obj_root", config.linattn_obj_root))
# One thread for numpy's BLAS in the tests' references: lit already runs a
# test per core, and OpenBLAS's idle threads spin on the cores the others
# need.
config.environment["OPENBLAS_NUM_THREADS"] = "1"

# The numerical tests need numpy: they fail, naming the fix, when it is missing.
config.substitutions.append(("%linattn_python", config.host_python or "python3"))

# Triton and flash-linear-attention's kernels (fla-core), which the project
# does not install, for the static comparison of FLA's chunk loop with
# linattn's (bench/gpu/peer_sass.py).
def _python_has(*modules):
    import subprocess
    check = "import importlib.util, sys; sys.exit(not all(importlib.util.find_spec(m) for m in sys.argv[1:]))"
    return subprocess.run([config.host_python or "python3", "-c", check, *modules],
                          capture_output=True).returncode == 0


if _python_has("triton", "fla"):
    config.available_features.add("fla-triton")

# LLVM's tools and the lit package running this suite, for the test that lays
# out a bundle.
config.substitutions.append(("%llvm_tools_dir", config.llvm_tools_dir))
config.substitutions.append(("%lit_package", os.path.dirname(lit.__file__)))

if config.linattn_has_cuda:
    config.available_features.add("cuda-toolkit")
    # ptxas of the toolkit, for its resource usage report (-v).
    config.substitutions.append(
        ("%ptxas", os.path.join(config.cuda_bin_dir, "ptxas")))
    # The toolkit itself, for the passes' cuda-path.
    config.substitutions.append(
        ("%cuda_path", os.path.dirname(config.cuda_bin_dir)))
    # cuobjdump (the toolkit's or NVIDIA's wheel's), for the SASS tests.
    if config.cuobjdump:
        config.available_features.add("cuobjdump")
        config.substitutions.append(("%cuobjdump", config.cuobjdump))
    # The fake libcuda.so.1 (test/FakeCuda) the Driver tests run the real
    # runtime over, first on LD_LIBRARY_PATH.
    config.substitutions.append(
        ("%fake_cuda_dir", getattr(config, "fake_cuda_dir", "")))
    # cuda.h, for programs that call the driver API (dlopen'ed).
    config.substitutions.append(
        ("%cuda_include",
         os.path.join(os.path.dirname(config.cuda_bin_dir), "include")))

# An instruction-set feature this host's CPU lacks, as LLVM's host detection
# sees it (clang's -march=native reports that detection), for the tests of
# code compiled for other CPUs.
def host_lacked_feature():
    import subprocess
    try:
        out = subprocess.run(
            [config.cxx_compiler, "-###", "-march=native", "-x", "c", "-c",
             os.devnull], capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.SubprocessError):
        return None
    for feature in ("avx512fp16", "amx-tile", "avx512vp2intersect", "avx10.2",
                    "amx-movrs"):
        if f'"-{feature}"' in out:
            return feature
    return None


lacked = host_lacked_feature()
if lacked:
    config.available_features.add("host-lacks-isa-feature")
    config.substitutions.append(("%host_lacked_feature", lacked))

# MLIR's headers, for programs that include linattn's C API headers
# (they include mlir-c/Support.h).
config.substitutions.append(
    ("%mlir_include_dir", config.mlir_include_dirs.split(";")[0]))

# Debian's own mlir-opt (not linattn-opt) and the plugin it loads: the Plugin
# tests check that linattn works inside an upstream tool.
config.substitutions.append(
    ("%mlir_opt", os.path.join(config.llvm_tools_dir, "mlir-opt")))
config.substitutions.append(
    ("%linattn_plugin", os.path.join(config.linattn_lib_dir, "LinAttnPlugin.so")))

# The ExternalProject tests: the prefix linattn is installed into for them and
# how to configure a client project with this build's compilers.
config.substitutions.append(("%linattn_test_install", config.linattn_test_install))
config.substitutions.append(("%cmake", config.cmake))
config.substitutions.append(("%external_cmake_args", config.external_cmake_args))

# Our tools come from the build tree; FileCheck, not and friends from LLVM 22.
# The relocatable bundle (bench/gpu/bundle.lit.site.cfg.py) has linattn-run and
# linattn-compile only: the suites that use the others fail there.
tool_dirs = [config.linattn_tools_dir, config.llvm_tools_dir]
build_only = "ignore" if getattr(config, "linattn_bundle", False) else "fatal"
tools = [
    ToolSubst("linattn-opt", unresolved=build_only),
    ToolSubst("linattn-capi-test", unresolved=build_only),
    ToolSubst("linattn-float16-bits-test", unresolved=build_only),
    ToolSubst("linattn-run", unresolved="fatal"),
    ToolSubst("linattn-compile", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# `cuda-gpu` when the CUDA driver sees a device (test/Integration/GPU/CUDA runs
# only then), and `cuda-sm90` when device 0 is compute capability 9.x (the
# sm_90a instructions: wgmma). Probed in a child process so that lit never
# initializes CUDA; LINATTN_CUDA_GPU=0/1 overrides the probe (1: a device of
# unknown capability).
def _cuda_gpu_capability():
    """(major, minor) of device 0, (0, 0) if unknown, None without one."""
    forced = os.environ.get("LINATTN_CUDA_GPU")
    if forced is not None:
        return None if forced in ("", "0") else (0, 0)
    import subprocess
    probe = (
        "import ctypes, sys\n"
        "try:\n"
        "    cuda = ctypes.CDLL('libcuda.so.1')\n"
        "except OSError:\n"
        "    sys.exit(1)\n"
        "count, major, minor = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(0)\n"
        "ok = cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0\n"
        "if not ok or count.value == 0:\n"
        "    sys.exit(1)\n"
        "# CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR: 75, 76.\n"
        "cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, 0)\n"
        "cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, 0)\n"
        "print(major.value, minor.value)\n")
    try:
        proc = subprocess.run([config.host_python or "python3", "-c", probe],
                              timeout=60, capture_output=True, text=True)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    try:
        major, minor = (int(x) for x in proc.stdout.split())
        return major, minor
    except ValueError:
        return (0, 0)


_capability = _cuda_gpu_capability() if config.linattn_has_cuda else None
if _capability is not None:
    config.available_features.add("cuda-gpu")
    if _capability[0] == 9:
        config.available_features.add("cuda-sm90")

# The C++ compiler (and linker) this build uses: the AOT example tests compile
# and link against linattn-compile's objects with it (and against linattn's
# libraries: with sanitizers, linking their runtime as those do).
config.substitutions.append(
    ("%clangxx", config.cxx_compiler +
     (" -fuse-ld=" + config.cxx_linker if config.cxx_linker else "") +
     (" " + config.sanitizer_link_flags
      if config.sanitizer_link_flags else "")))

# A sanitizer build (`make check-sanitizers`, cmake/LinAttnSanitizers.cmake):
# every process the tests start loads the sanitizer runtime first, since
# python3, Debian's mlir-opt and LLVM's tools load or run next to linattn's
# instrumented libraries without being instrumented themselves. Not reported:
# leaks (LLVM keeps its globals to the end, and a thread that met a fatal
# error of LLVM's backend is parked with its frames for good:
# lib/Conversion/LinAttnToGPU/LLVMFatalErrors.cpp), and memory that LLVM's
# allocators poison from code inlined into linattn's instrumented sources and
# then hand to Debian's uninstrumented LLVM, which writes it without
# unpoisoning it (allow_user_poisoning=0). UBSan stops at the first error.
# Options set by the caller come after these and win.
if config.sanitizer_runtime:
    config.available_features.add("sanitizers")
    config.environment["LD_PRELOAD"] = config.sanitizer_runtime
    for name, ours in (("ASAN_OPTIONS", "detect_leaks=0:allow_user_poisoning=0"),
                       ("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")):
        config.environment[name] = ":".join(
            filter(None, (ours, os.environ.get(name))))
