# -*- Python -*-
# The site configuration of linattn's test suite with the relocatable bundle
# (scripts/bundle.sh) in place of a build: bench/gpu/bundle_lit.py loads it
# instead of the one CMake writes. The bundle is $LINATTN_BUNDLE; the CUDA
# toolkit is the one whose ptxas is on PATH, else /usr/local/cuda.

import os
import shutil
import sys

bundle = os.environ["LINATTN_BUNDLE"]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"

config.llvm_tools_dir = os.path.join(bundle, "bin")
config.linattn_src_root = root
config.linattn_obj_root = bundle
config.linattn_tools_dir = os.path.join(bundle, "bin")
config.linattn_lib_dir = os.path.join(bundle, "lib")
config.linattn_test_install = ""
config.cmake = shutil.which("cmake") or "cmake"
config.external_cmake_args = ""
config.linattn_has_cuda = os.path.exists(ptxas)
config.cuda_bin_dir = os.path.dirname(ptxas)
config.cuobjdump = shutil.which("cuobjdump") or ""
config.host_python = sys.executable
config.cxx_compiler = os.environ.get("CXX") or shutil.which("c++") or "c++"
config.cxx_linker = ""
# No sanitizer runtime to preload or link: a bundle is made from a plain build
# (a sanitizer build's own tests of its bundle inherit the preloaded runtime).
config.sanitizer_link_flags = ""
config.sanitizer_runtime = ""
# No MLIR headers and no native Python call module: the suites that need them
# do not run on a bundle.
config.mlir_include_dirs = ""
config.linattn_has_python_call = False
# The bundle has linattn-run and linattn-compile only (lit.cfg.py).
config.linattn_bundle = True

import lit.llvm

lit.llvm.initialize(lit_config, config)

lit_config.load_config(config, os.path.join(root, "test", "lit.cfg.py"))
