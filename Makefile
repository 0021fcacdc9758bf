# The two commands of the README:
#   make demo    install what is missing, build, run the example
#   make check   install what is missing, build, run every test
# BUILD_DIR, BUILD_TYPE and CMAKE_ARGS can be overridden on the command line.

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec

BUILD_DIR  ?= build
BUILD_TYPE ?= Release
LLVM_DIR   ?= /usr/lib/llvm-22
# Expanded when the configure recipe runs, after `deps` may have installed
# ccache: a fresh machine's first configure uses it too, and the next one
# does not rebuild everything for a changed compiler launcher.
CCACHE      = $(shell command -v ccache 2>/dev/null)
# ccache caches sources compiled with the precompiled header
# (cmake/LinAttnPrecompiledHeaders.cmake) only with this sloppiness.
CCACHE_LAUNCHER = env;CCACHE_SLOPPINESS=pch_defines,time_macros;ccache

CMAKE_CONFIGURE = cmake -G Ninja -S . -B $(BUILD_DIR) \
  -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
  -DMLIR_DIR=$(LLVM_DIR)/lib/cmake/mlir \
  -DCMAKE_C_COMPILER=$(LLVM_DIR)/bin/clang \
  -DCMAKE_CXX_COMPILER=$(LLVM_DIR)/bin/clang++ \
  -DLLVM_USE_LINKER=lld \
  -DLINATTN_ENABLE_WERROR=ON \
  $(if $(CCACHE),'-DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE_LAUNCHER)' '-DCMAKE_C_COMPILER_LAUNCHER=$(CCACHE_LAUNCHER)') \
  $(CMAKE_ARGS)

.PHONY: all deps configure build demo check clean

all: build

deps:
	scripts/install-deps.sh

configure: deps
	$(CMAKE_CONFIGURE)

build: configure
	cmake --build $(BUILD_DIR)

demo: build
	scripts/demo.sh $(BUILD_DIR)

check: build
	cmake --build $(BUILD_DIR) --target check-linattn 2>&1 | tee $(BUILD_DIR)/check.log
	@scripts/test-summary.sh $(BUILD_DIR)/check.log

clean:
	rm -rf $(BUILD_DIR)

# Every test on a build of its own with AddressSanitizer and
# UndefinedBehaviorSanitizer in linattn's code (cmake/LinAttnSanitizers.cmake):
# the memory errors and undefined behaviour that Debian's LLVM, built without
# assertions, lets through. Its tests take about three times as long as
# `check`'s; not part of CI.
SANITIZER_BUILD_DIR ?= build-sanitizers
.PHONY: check-sanitizers
check-sanitizers:
	LINATTN_SANITIZERS=1 scripts/install-deps.sh
	$(MAKE) check BUILD_DIR=$(SANITIZER_BUILD_DIR) BUILD_TYPE=RelWithDebInfo \
	  CMAKE_ARGS="'-DLLVM_USE_SANITIZER=Address;Undefined' $(CMAKE_ARGS)"

# The CPU benchmark (bench/README.md): linattn against its peers, results in
# bench/results/. BENCH_ARGS=--quick for a smoke test.
.PHONY: bench
bench: build
	bench/run.sh $(BUILD_DIR) $(BENCH_ARGS)

# The relocatable bundle for a GPU machine without LLVM 22 and without
# network (bench/gpu/README.md): $(BUILD_DIR)/linattn-bundle.tar.xz.
.PHONY: bundle
bundle: build
	scripts/bundle.sh $(BUILD_DIR)
